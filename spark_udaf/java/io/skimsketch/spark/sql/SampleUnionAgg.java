package io.skimsketch.spark.sql;

import io.skimsketch.spark.sample.SampleEstimator;
import io.skimsketch.spark.sample.SampleFormat;
import io.skimsketch.spark.sample.SampleState;
import io.skimsketch.spark.sketch.SketchState;
import java.io.Serializable;
import org.apache.spark.sql.Encoder;
import org.apache.spark.sql.Encoders;
import org.apache.spark.sql.expressions.Aggregator;

/**
 * skim_union_agg over sketch bytes (UnionAgg's merge) or join samples (JoinSample.merge's rule: pieces of
 * disjoint key-hash partitions merge exactly, a sample without keys adds its weights, two finished samples
 * holding keys are refused with the core's SampleMergeError message, also when both kept every key). A sketch and a sample in one group are
 * the core's incompatibility error. NULLs are skipped; NULL when there is nothing.
 */
public final class SampleUnionAgg extends Aggregator<byte[], SampleUnionAgg.Buffer, byte[]> {
    private static final long serialVersionUID = 1L;
    private static final UnionAgg SKETCHES = new UnionAgg();

    /** Either a sketch union or a sample union (whichever the first input was). */
    public static final class Buffer implements Serializable {
        private static final long serialVersionUID = 1L;
        SketchState sketch;
        SampleState sample;
        byte[] first; // the first input (its kind names the type in an incompatibility message)
    }

    @Override
    public Buffer zero() {
        return new Buffer();
    }

    private static Buffer combine(Buffer b, byte[] blob, SampleState sample, SketchState sketch) {
        if (b.first == null) {
            b.first = blob;
        } else if ((b.sample != null) != (sample != null)) {
            throw SampleEstimator.mixed(b.first, blob, "merge");
        }
        if (sample != null) {
            b.sample = b.sample == null ? sample : b.sample.merge(sample);
        } else {
            b.sketch = SKETCHES.merge(b.sketch == null ? SKETCHES.zero() : b.sketch, sketch);
        }
        return b;
    }

    @Override
    public Buffer reduce(Buffer b, byte[] in) {
        if (in == null) {
            return b;
        }
        if (SampleFormat.isSample(in)) {
            return combine(b, in, SampleEstimator.load(in, "skim_union_agg"), null);
        }
        return combine(b, in, null, SKETCHES.reduce(SKETCHES.zero(), in));
    }

    @Override
    public Buffer merge(Buffer a, Buffer b) {
        if (b.first == null) {
            return a;
        }
        return combine(a, b.first, b.sample, b.sketch);
    }

    @Override
    public byte[] finish(Buffer b) {
        if (b.sample != null) {
            return b.sample.toBytes();
        }
        return b.sketch == null ? null : SKETCHES.finish(b.sketch);
    }

    @Override
    public Encoder<Buffer> bufferEncoder() {
        return Encoders.javaSerialization(Buffer.class);
    }

    @Override
    public Encoder<byte[]> outputEncoder() {
        return Encoders.BINARY();
    }

    /** skim_union(a, b): sketches (UnionAgg.union) or samples. */
    public static byte[] union(byte[] a, byte[] b) {
        if (SampleFormat.isSample(a) || SampleFormat.isSample(b)) {
            return SampleEstimator.union(a, b);
        }
        return UnionAgg.union(a, b);
    }
}
