package io.skimsketch.spark.sql;

import io.skimsketch.spark.sketch.SketchState;
import io.skimsketch.spark.sketch.estimate.Memory;
import org.apache.spark.sql.Encoder;
import org.apache.spark.sql.Encoders;
import org.apache.spark.sql.expressions.Aggregator;

/**
 * skim_union_agg: merges sketch bytes (NULLs skipped); NULL when there is none. An Aggregator
 * wrapped in Spark's ScalaAggregator (one sketch per input row, so the encoder's per-row cost
 * does not matter); the buffer is shuffled as the core's bytes.
 */
public final class UnionAgg extends Aggregator<byte[], SketchState, byte[]> {
    private static final long serialVersionUID = 1L;

    @Override
    public SketchState zero() {
        return new SketchState();
    }

    @Override
    public SketchState reduce(SketchState b, byte[] in) {
        try {
            return in == null ? b : b.merge(SketchState.fromBytes(in));
        } catch (OutOfMemoryError e) {
            throw Memory.failed("skim_union_agg", e);
        }
    }

    @Override
    public SketchState merge(SketchState a, SketchState b) {
        try {
            return a.merge(b);
        } catch (OutOfMemoryError e) {
            throw Memory.failed("skim_union_agg", e);
        }
    }

    @Override
    public byte[] finish(SketchState b) {
        try {
            return b.isSet() ? b.toBytes() : null;
        } catch (OutOfMemoryError e) {
            throw Memory.failed("skim_union_agg", e);
        }
    }

    @Override
    public Encoder<SketchState> bufferEncoder() {
        return Encoders.javaSerialization(SketchState.class);
    }

    @Override
    public Encoder<byte[]> outputEncoder() {
        return Encoders.BINARY();
    }

    /** skim_union(a, b): the merge of two sketches (NULL if either is NULL). */
    public static byte[] union(byte[] a, byte[] b) {
        try {
            return SketchState.fromBytes(a).merge(SketchState.fromBytes(b)).toBytes();
        } catch (OutOfMemoryError e) {
            throw Memory.failed("skim_union", e);
        }
    }
}
