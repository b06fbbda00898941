package io.skimsketch.spark;

import org.apache.spark.sql.Encoder;
import org.apache.spark.sql.Encoders;
import org.apache.spark.sql.expressions.Aggregator;

/** What the build and union aggregates share: the buffer (a sketch state, shuffled as the core's bytes) and BINARY output. */
abstract class SketchAggregator<IN> extends Aggregator<IN, SketchState, byte[]> {
    private static final long serialVersionUID = 1L;

    @Override
    public SketchState merge(SketchState a, SketchState b) {
        return a.merge(b);
    }

    @Override
    public Encoder<SketchState> bufferEncoder() {
        return Encoders.javaSerialization(SketchState.class);
    }

    @Override
    public Encoder<byte[]> outputEncoder() {
        return Encoders.BINARY();
    }
}
