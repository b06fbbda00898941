package io.skimsketch.spark.sql;

import io.skimsketch.spark.sample.SamplePieces;
import io.skimsketch.spark.sample.SampleRuns;
import java.util.Objects;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.BoundReference;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.aggregate.ImperativeAggregate;
import org.apache.spark.sql.catalyst.expressions.aggregate.TypedImperativeAggregate;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import scala.collection.immutable.IndexedSeq;
import scala.collection.immutable.Seq;

/**
 * The inner aggregate of skim_sample_agg's bucketed build ({@link SampleFastPlan}), grouped by a bucket of
 * key fingerprints: its children are a row's 52-bit fingerprint (NULL for a NULL key) and, for a weighted
 * sample, its int64 weight (NULL skipped). Each task sums its rows of the bucket in a {@link SampleRuns}
 * (sorted runs, no hash table); the partial buffer is that run, the merge keeps the runs and merges them once;
 * the result is the bucket's piece: its exact key count and its C + 1 smallest (rank, fp) entries, which
 * {@link SamplePiecesAggregate} unions into the core's sample.
 */
public final class SampleRunsAggregate extends TypedImperativeAggregate<SampleRuns> implements java.io.Serializable {
    private static final long serialVersionUID = 1L;
    private final String name;
    private final int capacity;
    private final long seed;
    private final boolean bytesKeys;
    private final Seq<Expression> children;
    private final int mutableAggBufferOffset;
    private final int inputAggBufferOffset;
    /** Bound (fingerprint, weight) ordinals, read without boxing (weight -1: unweighted); else null. */
    private final int[] ordinals;

    public SampleRunsAggregate(String name, Integer capacity, Long seed, Boolean bytesKeys, Seq<Expression> children,
                               Integer mutableAggBufferOffset, Integer inputAggBufferOffset) {
        this.name = name;
        this.capacity = capacity;
        this.seed = seed;
        this.bytesKeys = bytesKeys;
        this.children = children;
        this.mutableAggBufferOffset = mutableAggBufferOffset;
        this.inputAggBufferOffset = inputAggBufferOffset;
        boolean bound = children.apply(0) instanceof BoundReference
                && (children.length() == 1 || children.apply(1) instanceof BoundReference);
        this.ordinals = bound ? new int[] {((BoundReference) children.apply(0)).ordinal(),
            children.length() == 1 ? -1 : ((BoundReference) children.apply(1)).ordinal()} : null;
    }

    private boolean weighted() {
        return children.length() > 1;
    }

    @Override
    public SampleRuns createAggregationBuffer() {
        return new SampleRuns(weighted());
    }

    @Override
    public SampleRuns update(SampleRuns b, InternalRow row) {
        int kd = bytesKeys ? 2 : 1;
        if (ordinals != null) {
            int wo = ordinals[1];
            if (wo >= 0 && row.isNullAt(wo)) {
                return b;
            }
            long w = wo < 0 ? 1L : row.getLong(wo);
            int ko = ordinals[0];
            if (row.isNullAt(ko)) {
                b.addNull(w);
            } else {
                b.add(row.getLong(ko), w, kd);
            }
            return b;
        }
        Object w = weighted() ? children.apply(1).eval(row) : Long.valueOf(1L);
        if (w == null) {
            return b;
        }
        Object k = children.apply(0).eval(row);
        if (k == null) {
            b.addNull((Long) w);
        } else {
            b.add((Long) k, (Long) w, kd);
        }
        return b;
    }

    @Override
    public SampleRuns merge(SampleRuns a, SampleRuns b) {
        return a.absorb(b);
    }

    @Override
    public Object eval(SampleRuns b) {
        return SamplePieces.pieceBytes(b, capacity);
    }

    @Override
    public byte[] serialize(SampleRuns b) {
        return SamplePieces.runBytes(b);
    }

    @Override
    public SampleRuns deserialize(byte[] bytes) {
        return SamplePieces.fromRunBytes(bytes, weighted());
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
        return new SampleRunsAggregate(name, capacity, seed, bytesKeys, children, offset, inputAggBufferOffset);
    }

    @Override
    public ImperativeAggregate withNewInputAggBufferOffset(int offset) {
        return new SampleRunsAggregate(name, capacity, seed, bytesKeys, children, mutableAggBufferOffset, offset);
    }

    @Override
    public Seq<Expression> children() {
        return children;
    }

    @Override
    public Expression withNewChildrenInternal(IndexedSeq<Expression> newChildren) {
        return new SampleRunsAggregate(name, capacity, seed, bytesKeys, newChildren, mutableAggBufferOffset,
                inputAggBufferOffset);
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
        return name + "_bucket";
    }

    @Override
    public String toString() {
        return name + "_bucket(" + children.mkString(", ") + ") as the bucket's piece of JoinSample(nbytes="
                + capacity + ", seed=" + Long.toUnsignedString(seed) + "): sorted runs of fingerprint totals";
    }

    @Override
    public int productArity() {
        return 7;
    }

    @Override
    public Object productElement(int n) {
        switch (n) {
            case 0: return name;
            case 1: return capacity;
            case 2: return seed;
            case 3: return bytesKeys;
            case 4: return children;
            case 5: return mutableAggBufferOffset;
            case 6: return inputAggBufferOffset;
            default: throw new IndexOutOfBoundsException(Integer.toString(n));
        }
    }

    @Override
    public boolean canEqual(Object o) {
        return o instanceof SampleRunsAggregate;
    }

    @Override
    public boolean equals(Object o) {
        if (!(o instanceof SampleRunsAggregate)) {
            return false;
        }
        SampleRunsAggregate x = (SampleRunsAggregate) o;
        return name.equals(x.name) && capacity == x.capacity && seed == x.seed && bytesKeys == x.bytesKeys
                && children.equals(x.children) && mutableAggBufferOffset == x.mutableAggBufferOffset
                && inputAggBufferOffset == x.inputAggBufferOffset;
    }

    @Override
    public int hashCode() {
        return Objects.hash(name, capacity, seed, bytesKeys, children, mutableAggBufferOffset, inputAggBufferOffset);
    }
}
