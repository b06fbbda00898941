package io.skimsketch.spark.sql;

import io.skimsketch.spark.CounterOverflowError;
import io.skimsketch.spark.common.Hashing;
import io.skimsketch.spark.common.Keys;
import io.skimsketch.spark.sample.SampleBuffer;
import io.skimsketch.spark.sample.SampleState;
import java.util.ArrayList;
import java.util.List;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.BoundReference;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.Decimal;
import org.apache.spark.sql.types.LongType;
import scala.collection.immutable.Seq;
import scala.jdk.javaapi.CollectionConverters;

/**
 * skim_sample_agg: the JoinSample.for_bytes(nbytes, seed) of a key column (optionally weighted), as the
 * core's bytes. Two forms:
 * <ul>
 * <li>raw rows (what the function builds): the buffer holds every key's exact total (a building
 * sample), so a task's memory grows with the distinct keys it sees. Exact, never wrong; used when
 * {@link SampleRule} cannot rewrite the aggregate;</li>
 * <li>totals (what {@link SampleRule} rewrites it into, above a GROUP BY of the key that Spark's shuffle
 * does): each input row is one key with its exact total and keys are distinct across rows, so a buffer
 * keeps only the m + 1 smallest (rank, key) entries and merges by keeping the smallest: bounded
 * partials, the same bytes.</li>
 * </ul>
 * Children: the key (bigint; double holding an integer; binary hashed through fingerprint64; in the
 * totals form a string/binary key arrives as its fingerprint64, the rule's grouping key), then the
 * weight (raw: bigint, DECIMAL(p, 0) or double; totals: the per-key bigint or double total, or NULL
 * when every weight of the key was NULL). NULL keys add to the null weight; NULL (or NaN) weights are
 * skipped, as the core's builders do.
 */
public final class SampleAggregate extends SkimAggregate<SampleState> {
    private static final long serialVersionUID = 1L;
    private final int capacity;
    private final long seed;
    private final boolean isFloat;
    private final boolean bytesKeys;
    private final boolean totals;
    /** How the sample is built, shown in the plan: the raw form, or why the rule kept Spark's GROUP BY of the key. */
    private final String path;
    /** Bound (bigint key, bigint or double total) columns of the totals form, read without boxing; else null. */
    private final int[] totalsOrdinals;

    public SampleAggregate(String name, Integer capacity, Long seed, Boolean isFloat, Boolean bytesKeys,
                           Boolean totals, String path, Seq<Expression> children, Integer mutableAggBufferOffset,
                           Integer inputAggBufferOffset) {
        super(name, children, mutableAggBufferOffset, inputAggBufferOffset);
        this.capacity = capacity;
        this.seed = seed;
        this.isFloat = isFloat;
        this.bytesKeys = bytesKeys;
        this.totals = totals;
        this.path = path;
        this.totalsOrdinals = totals ? ordinals(children, isFloat) : null;
    }

    /**
     * The bound columns of the totals form, (bigint key, bigint or double total[, its type's minimum weight]),
     * as {key, total, minimum or -1}; null when they are not all bound columns of those types.
     */
    private static int[] ordinals(Seq<Expression> children, boolean isFloat) {
        int n = children.length();
        DataType t = isFloat ? DataTypes.DoubleType : DataTypes.LongType;
        if (n < 2 || n > 3 || !(children.apply(0).dataType() instanceof LongType)) {
            return null;
        }
        int[] out = {-1, -1, -1};
        for (int i = 0; i < n; i++) {
            Expression c = children.apply(i);
            if (!(c instanceof BoundReference) || (i > 0 && !c.dataType().equals(t))) {
                return null;
            }
            out[i] = ((BoundReference) c).ordinal();
        }
        return out;
    }

    boolean isTotals() {
        return totals;
    }

    boolean isFloatTotals() {
        return isFloat;
    }

    String name() {
        return name;
    }

    int capacity() {
        return capacity;
    }

    long seed() {
        return seed;
    }

    boolean bytesKeys() {
        return bytesKeys;
    }

    Expression key() {
        return children.apply(0);
    }

    Expression weight() {
        return children.length() > 1 ? children.apply(1) : null;
    }

    /**
     * The totals form over (key, total[, minimum weight]) columns: what SampleRule puts above Spark's GROUP BY of
     * the key (the minimum, null for a count, clears the sign flag when negative: a negative weight of a non-null
     * key), the plan saying why the bucketed build did not apply (why).
     */
    SampleAggregate overTotals(Expression key, Expression total, Expression minimum, String why) {
        return new SampleAggregate(name, capacity, seed, isFloat, bytesKeys, true, "Spark GROUP BY key: " + why,
                SampleSql.seq(minimum == null ? java.util.List.of(key, total) : java.util.List.of(key, total, minimum)),
                0, 0);
    }

    @Override
    public SampleState createAggregationBuffer() {
        return totals ? SampleState.totals(capacity, seed, isFloat) : SampleState.building(capacity, seed, isFloat);
    }

    private Long canonical(Object k) {
        if (k == null) {
            return null;
        }
        if (k instanceof Double) {
            return Keys.doubleKey((Double) k);
        }
        if (k instanceof Float) {
            return Keys.floatKey((Float) k);
        }
        return k instanceof byte[] ? Hashing.fingerprint64((byte[]) k) : (Long) k; // totals: already canonical
    }

    /** A key's float total as raw bits; an infinity (SUM overflowed) is the core's overflow error. */
    private static long finiteBits(double t) {
        if (!Double.isFinite(t)) {
            throw new CounterOverflowError("update would overflow a float64 weight to infinity; the sample is "
                    + "unchanged");
        }
        return Double.doubleToRawLongBits(t);
    }

    private int keyDomain() {
        return bytesKeys ? 2 : 1;
    }

    @Override
    public SampleState update(SampleState b, InternalRow row) {
        if (totalsOrdinals != null) { // (canonical bigint key, bigint or double total[, minimum]): no boxing
            int to = totalsOrdinals[1];
            int ko = totalsOrdinals[0];
            int mo = totalsOrdinals[2];
            if (mo >= 0 && !row.isNullAt(mo) && !row.isNullAt(ko)
                    && (isFloat ? row.getDouble(mo) < 0 : row.getLong(mo) < 0)) {
                b.negativeWeight();
            }
            if (!row.isNullAt(to)) {
                long t = isFloat ? finiteBits(row.getDouble(to)) : row.getLong(to);
                if (row.isNullAt(ko)) {
                    b.offerNull(t);
                } else {
                    b.offerTotal(row.getLong(ko), keyDomain(), t);
                }
            }
            return b;
        }
        Long k = canonical(key().eval(row));
        if (totals && children.length() > 2 && k != null) {
            Object low = children.apply(2).eval(row);
            if (low != null && ((Number) low).doubleValue() < 0) {
                b.negativeWeight();
            }
        }
        Expression we = weight();
        Object w = we == null ? Long.valueOf(1L) : we.eval(row);
        if (w == null) {
            return b;
        }
        if (totals) {
            long t = isFloat ? finiteBits((Double) w) : (Long) w;
            if (k == null) {
                b.offerNull(t);
            } else {
                b.offerTotal(k, keyDomain(), t);
            }
            return b;
        }
        if (isFloat) {
            Double x = SampleWeights.doubleWeight((Double) w);
            if (x != null) {
                b.add(k, keyDomain(), (double) x);
            }
            return b;
        }
        b.add(k, keyDomain(), w instanceof Decimal ? Keys.decimalWeight((Decimal) w) : (Long) w);
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

    // -- the partial buffer: its own compact bytes (a building sample's totals, or the selection: SampleBuffer) --
    @Override
    public byte[] serialize(SampleState b) {
        return SampleBuffer.write(b);
    }

    @Override
    public SampleState deserialize(byte[] bytes) {
        return SampleBuffer.read(createAggregationBuffer(), bytes);
    }

    /** The column name of an unaliased call: the arguments, then nbytes and seed where they are not the defaults
     * (two samples of one key with other parameters get other names, as skim_sketch_agg's calls do). */
    @Override
    public String sql(boolean isDistinct) {
        List<String> args = new ArrayList<>();
        for (Expression e : CollectionConverters.asJava(children)) {
            args.add(e.sql());
        }
        if (capacity != io.skimsketch.spark.SkimFunctions.DEFAULT_NBYTES) {
            args.add("nbytes => " + capacity);
        }
        if (seed != io.skimsketch.spark.SkimFunctions.DEFAULT_SEED) {
            args.add("seed => " + Long.toUnsignedString(seed));
        }
        return name + "(" + (isDistinct ? "DISTINCT " : "") + String.join(", ", args) + ")";
    }

    @Override
    public String toString() {
        return name + "(" + children.mkString(", ") + ") as JoinSample(nbytes=" + capacity + ", seed="
                + Long.toUnsignedString(seed) + (isFloat ? ", dtype='float64'" : "") + "; " + path + ")";
    }

    @Override
    Object[] leadingArgs() {
        return new Object[] {name, capacity, seed, isFloat, bytesKeys, totals, path};
    }

    @Override
    SampleAggregate copyWith(Seq<Expression> children, int mutableAggBufferOffset,
                             int inputAggBufferOffset) {
        return new SampleAggregate(name, capacity, seed, isFloat, bytesKeys, totals, path, children,
                mutableAggBufferOffset, inputAggBufferOffset);
    }
}
