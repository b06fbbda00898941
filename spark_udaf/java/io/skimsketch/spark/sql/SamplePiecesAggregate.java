package io.skimsketch.spark.sql;

import io.skimsketch.spark.sample.SampleBuffer;
import io.skimsketch.spark.sample.SamplePieces;
import io.skimsketch.spark.sample.SampleState;
import java.util.Objects;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.aggregate.ImperativeAggregate;
import org.apache.spark.sql.catalyst.expressions.aggregate.TypedImperativeAggregate;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import scala.collection.immutable.IndexedSeq;
import scala.collection.immutable.Seq;

/**
 * The outer aggregate of skim_sample_agg's bucketed build ({@link SampleFastPlan}): the union of the buckets'
 * pieces ({@link SamplePieces#pieceBytes}: exact key counts, the C + 1 smallest (rank, fp) entries of disjoint
 * fingerprint sets) as a bounded {@link SampleState} of exact totals, written as the core's bytes. Its partial
 * buffer is the rewritten skim_sample_agg's (a selection of at most C + 1 entries).
 */
public final class SamplePiecesAggregate extends TypedImperativeAggregate<SampleState>
        implements java.io.Serializable {
    private static final long serialVersionUID = 1L;
    private final String name;
    private final int capacity;
    private final long seed;
    private final boolean bytesKeys;
    /** The plan's note: the bucketed build and its number of fingerprint buckets. */
    private final String path;
    private final Seq<Expression> children;
    private final int mutableAggBufferOffset;
    private final int inputAggBufferOffset;

    public SamplePiecesAggregate(String name, Integer capacity, Long seed, Boolean bytesKeys, String path,
                                 Seq<Expression> children, Integer mutableAggBufferOffset,
                                 Integer inputAggBufferOffset) {
        this.name = name;
        this.capacity = capacity;
        this.seed = seed;
        this.bytesKeys = bytesKeys;
        this.path = path;
        this.children = children;
        this.mutableAggBufferOffset = mutableAggBufferOffset;
        this.inputAggBufferOffset = inputAggBufferOffset;
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
    public int mutableAggBufferOffset() {
        return mutableAggBufferOffset;
    }

    @Override
    public int inputAggBufferOffset() {
        return inputAggBufferOffset;
    }

    @Override
    public ImperativeAggregate withNewMutableAggBufferOffset(int offset) {
        return new SamplePiecesAggregate(name, capacity, seed, bytesKeys, path, children, offset,
                inputAggBufferOffset);
    }

    @Override
    public ImperativeAggregate withNewInputAggBufferOffset(int offset) {
        return new SamplePiecesAggregate(name, capacity, seed, bytesKeys, path, children, mutableAggBufferOffset,
                offset);
    }

    @Override
    public Seq<Expression> children() {
        return children;
    }

    @Override
    public Expression withNewChildrenInternal(IndexedSeq<Expression> newChildren) {
        return new SamplePiecesAggregate(name, capacity, seed, bytesKeys, path, newChildren,
                mutableAggBufferOffset, inputAggBufferOffset);
    }

    @Override
    public boolean nullable() {
        return false;
    }

    @Override
    public DataType dataType() {
        return DataTypes.BinaryType;
    }

    @Override
    public String prettyName() {
        return name;
    }

    @Override
    public String toString() {
        return name + "(" + children.mkString(", ") + ") as JoinSample(nbytes=" + capacity + ", seed="
                + Long.toUnsignedString(seed) + "; " + path + ")";
    }

    @Override
    public int productArity() {
        return 8;
    }

    @Override
    public Object productElement(int n) {
        switch (n) {
            case 0: return name;
            case 1: return capacity;
            case 2: return seed;
            case 3: return bytesKeys;
            case 4: return path;
            case 5: return children;
            case 6: return mutableAggBufferOffset;
            case 7: return inputAggBufferOffset;
            default: throw new IndexOutOfBoundsException(Integer.toString(n));
        }
    }

    @Override
    public boolean canEqual(Object o) {
        return o instanceof SamplePiecesAggregate;
    }

    @Override
    public boolean equals(Object o) {
        if (!(o instanceof SamplePiecesAggregate)) {
            return false;
        }
        SamplePiecesAggregate x = (SamplePiecesAggregate) o;
        return name.equals(x.name) && capacity == x.capacity && seed == x.seed && bytesKeys == x.bytesKeys
                && path.equals(x.path) && children.equals(x.children)
                && mutableAggBufferOffset == x.mutableAggBufferOffset && inputAggBufferOffset == x.inputAggBufferOffset;
    }

    @Override
    public int hashCode() {
        return Objects.hash(name, capacity, seed, bytesKeys, path, children, mutableAggBufferOffset,
                inputAggBufferOffset);
    }
}
