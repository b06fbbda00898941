package io.skimsketch.spark.sql;

import io.skimsketch.spark.sample.SampleBuffer;
import io.skimsketch.spark.sample.SamplePieces;
import io.skimsketch.spark.sample.SampleState;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.Expression;
import scala.collection.immutable.Seq;

/**
 * The outer aggregate of skim_sample_agg's bucketed build ({@link SampleFastPlan}): the union of the buckets'
 * pieces ({@link SamplePieces#pieceBytes}: exact key counts, the C + 1 smallest (rank, fp) entries of disjoint
 * fingerprint sets) as a bounded {@link SampleState} of exact totals, written as the core's bytes. Its partial
 * buffer is the rewritten skim_sample_agg's (a selection of at most C + 1 entries).
 */
public final class SamplePiecesAggregate extends SkimAggregate<SampleState> {
    private static final long serialVersionUID = 1L;
    private final int capacity;
    private final long seed;
    private final boolean bytesKeys;
    /** The plan's note: the bucketed build and its number of fingerprint buckets. */
    private final String path;

    public SamplePiecesAggregate(String name, Integer capacity, Long seed, Boolean bytesKeys, String path,
                                 Seq<Expression> children, Integer mutableAggBufferOffset,
                                 Integer inputAggBufferOffset) {
        super(name, children, mutableAggBufferOffset, inputAggBufferOffset);
        this.capacity = capacity;
        this.seed = seed;
        this.bytesKeys = bytesKeys;
        this.path = path;
    }

    @Override
    public SampleState createAggregationBuffer() {
        return SampleState.totals(capacity, seed, false);
    }

    @Override
    public SampleState update(SampleState b, InternalRow row) {
        Object piece = children.apply(0).eval(row);
        if (piece != null) {
            SamplePieces.offerPiece((byte[]) piece, b);
        }
        return b;
    }

    @Override
    public SampleState merge(SampleState a, SampleState b) {
        return a.merge(b);
    }

    @Override
    public Object eval(SampleState b) {
        return b.toBytes();
    }

    @Override
    public byte[] serialize(SampleState b) {
        return SampleBuffer.write(b);
    }

    @Override
    public SampleState deserialize(byte[] bytes) {
        return SampleBuffer.read(createAggregationBuffer(), bytes);
    }

    @Override
    public String toString() {
        return name + "(" + children.mkString(", ") + ") as JoinSample(nbytes=" + capacity + ", seed="
                + Long.toUnsignedString(seed) + "; " + path + ")";
    }

    @Override
    Object[] leadingArgs() {
        return new Object[] {name, capacity, seed, bytesKeys, path};
    }

    @Override
    SamplePiecesAggregate copyWith(Seq<Expression> children, int mutableAggBufferOffset,
                                   int inputAggBufferOffset) {
        return new SamplePiecesAggregate(name, capacity, seed, bytesKeys, path, children, mutableAggBufferOffset,
                inputAggBufferOffset);
    }
}
