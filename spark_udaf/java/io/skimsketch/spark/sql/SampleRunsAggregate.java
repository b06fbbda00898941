package io.skimsketch.spark.sql;

import io.skimsketch.spark.sample.SamplePieces;
import io.skimsketch.spark.sample.SampleRuns;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.BoundReference;
import org.apache.spark.sql.catalyst.expressions.Expression;
import scala.collection.immutable.Seq;

/**
 * The inner aggregate of skim_sample_agg's bucketed build ({@link SampleFastPlan}), grouped by a bucket of
 * key fingerprints: its children are a row's 52-bit fingerprint (NULL for a NULL key) and, for a weighted
 * sample, its int64 weight (NULL skipped). Each task sums its rows of the bucket in a {@link SampleRuns}
 * (sorted runs, no hash table); the partial buffer is that run, the merge keeps the runs and merges them once;
 * the result is the bucket's piece: its exact key count and its C + 1 smallest (rank, fp) entries, which
 * {@link SamplePiecesAggregate} unions into the core's sample.
 */
public final class SampleRunsAggregate extends SkimAggregate<SampleRuns> {
    private static final long serialVersionUID = 1L;
    private final int capacity;
    private final long seed;
    private final boolean bytesKeys;
    /** Bound (fingerprint, weight) ordinals, read without boxing (weight -1: unweighted); else null. */
    private final int[] ordinals;

    public SampleRunsAggregate(String name, Integer capacity, Long seed, Boolean bytesKeys, Seq<Expression> children,
                               Integer mutableAggBufferOffset, Integer inputAggBufferOffset) {
        super(name, children, mutableAggBufferOffset, inputAggBufferOffset);
        this.capacity = capacity;
        this.seed = seed;
        this.bytesKeys = bytesKeys;
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
    public String prettyName() {
        return name + "_bucket";
    }

    @Override
    public String toString() {
        return name + "_bucket(" + children.mkString(", ") + ") as the bucket's piece of JoinSample(nbytes="
                + capacity + ", seed=" + Long.toUnsignedString(seed) + "): sorted runs of fingerprint totals";
    }

    @Override
    Object[] leadingArgs() {
        return new Object[] {name, capacity, seed, bytesKeys};
    }

    @Override
    SampleRunsAggregate copyWith(Seq<Expression> children, int mutableAggBufferOffset,
                                 int inputAggBufferOffset) {
        return new SampleRunsAggregate(name, capacity, seed, bytesKeys, children, mutableAggBufferOffset,
                inputAggBufferOffset);
    }
}
