package io.skimsketch.spark.sql;

import io.skimsketch.spark.KeyTypeError;
import io.skimsketch.spark.common.Hashing;
import io.skimsketch.spark.common.Keys;
import io.skimsketch.spark.sketch.SketchState;
import io.skimsketch.spark.sketch.Spec;
import io.skimsketch.spark.sketch.estimate.Memory;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.BoundReference;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.aggregate.TypedImperativeAggregate;
import org.apache.spark.sql.types.Decimal;
import org.apache.spark.sql.types.LongType;
import scala.collection.immutable.Seq;

/**
 * The build aggregates (skim_sketch_agg, skim_hash_sketch_agg, skim_sketch_like_agg): one sketch of
 * a key column, optionally weighted, as a TypedImperativeAggregate, so Spark plans an
 * ObjectHashAggregate with a map-side partial step and evaluates the key directly (no encoder
 * round trip per row). Children: the key (bigint; double holding an integer below 2^53 or float one
 * below 2^24, NaN being NULL; or binary hashed through fingerprint64) and optionally the weight (bigint or DECIMAL(p, 0)
 * for integer counters, double for float counters). NULL keys add their weight to the
 * null weight; rows with a NULL (or NaN) weight are skipped, as the Python builders do. The
 * partial buffer is shuffled as the core's bytes. Named (a column's default name) as written, with its
 * constant parameters ({@code skim_sketch_agg(k, nbytes => 4096)}, NamedCall.shown), as the Python builders are.
 */
public final class BuildAggregate extends SkimAggregate<SketchState> {
    private static final long serialVersionUID = 1L;
    private final String shown;
    private final Spec spec;
    private final boolean bytesKeys;
    private final Expression key;
    private final Expression weight;
    /** The input column of an unweighted bigint key once bound (read without boxing), else -1. */
    private final int longKeyOrdinal;

    public BuildAggregate(String name, String shown, Spec spec, Boolean bytesKeys, Seq<Expression> children,
                          Integer mutableAggBufferOffset, Integer inputAggBufferOffset) {
        super(name, children, mutableAggBufferOffset, inputAggBufferOffset);
        this.shown = shown;
        this.spec = spec;
        this.bytesKeys = bytesKeys;
        this.key = children.apply(0);
        this.weight = children.length() > 1 ? children.apply(1) : null;
        this.longKeyOrdinal = weight == null && !bytesKeys && key instanceof BoundReference
                && key.dataType() instanceof LongType ? ((BoundReference) key).ordinal() : -1;
    }

    @Override
    public SketchState createAggregationBuffer() {
        try {
            return new SketchState(spec);
        } catch (OutOfMemoryError e) {
            throw Memory.failed(name + " (a " + spec + ")", e);
        }
    }

    @Override
    public SketchState update(SketchState b, InternalRow row) {
        try {
            return updateRow(b, row);
        } catch (OutOfMemoryError e) {
            throw Memory.failed(name, e);
        }
    }

    private SketchState updateRow(SketchState b, InternalRow row) {
        if (longKeyOrdinal >= 0) {
            if (row.isNullAt(longKeyOrdinal)) {
                b.addNull(1L);
            } else {
                b.add(row.getLong(longKeyOrdinal), SketchState.KEY_INT, 1L);
            }
            return b;
        }
        Object k = key.eval(row);
        if (k instanceof Double) {
            k = Keys.doubleKey((Double) k);
        } else if (k instanceof Float) {
            k = Keys.floatKey((Float) k);
        }
        if (weight == null) {
            add(b, k, 1L);
            return b;
        }
        Object w = weight.eval(row);
        if (w == null) {
            return b;
        }
        if (spec.isFloat) {
            double x = (Double) w;
            if (Double.isNaN(x)) {
                return b;
            }
            if (Double.isInfinite(x)) {
                throw new KeyTypeError("weights contain NaN or infinity");
            }
            if (k == null) {
                b.addNull(x);
            } else {
                b.add(canonical(k), keyDomain(), x);
            }
            return b;
        }
        add(b, k, w instanceof Decimal ? Keys.decimalWeight((Decimal) w) : (Long) w);
        return b;
    }

    private void add(SketchState b, Object k, long w) {
        if (k == null) {
            b.addNull(w);
        } else {
            b.add(canonical(k), keyDomain(), w);
        }
    }

    private int keyDomain() {
        return bytesKeys ? SketchState.KEY_BYTES : SketchState.KEY_INT;
    }

    private long canonical(Object k) {
        return bytesKeys ? Hashing.fingerprint64((byte[]) k) : (Long) k; // float keys: Keys.doubleKey/floatKey first
    }

    @Override
    public SketchState merge(SketchState a, SketchState b) {
        try {
            return a.merge(b);
        } catch (OutOfMemoryError e) {
            throw Memory.failed(name, e);
        }
    }

    @Override
    public Object eval(SketchState b) {
        return serialize(b);
    }

    @Override
    public byte[] serialize(SketchState b) {
        try {
            return b.toBytes();
        } catch (OutOfMemoryError e) {
            throw Memory.failed(name, e);
        }
    }

    @Override
    public SketchState deserialize(byte[] bytes) {
        try {
            return SketchState.fromBytes(bytes);
        } catch (OutOfMemoryError e) {
            throw Memory.failed(name, e);
        }
    }

    /** The same aggregate however it was written (one buffer for skim_sketch_agg(k) and skim_sketch_agg(key => k)). */
    @Override
    public Expression canonicalized() {
        return new BuildAggregate(name, name, spec, bytesKeys, withCanonicalizedChildren().children(),
                mutableAggBufferOffset, inputAggBufferOffset);
    }

    @Override
    public String sql(boolean isDistinct) {
        return isDistinct ? name + "(DISTINCT " + shown.substring(name.length() + 1) : shown;
    }

    @Override
    public String toString() {
        return name + "(" + children.mkString(", ") + ") as " + spec;
    }

    @Override
    Object[] leadingArgs() {
        return new Object[] {name, shown, spec, bytesKeys};
    }

    @Override
    BuildAggregate copyWith(Seq<Expression> children, int mutableAggBufferOffset,
                            int inputAggBufferOffset) {
        return new BuildAggregate(name, shown, spec, bytesKeys, children, mutableAggBufferOffset,
                inputAggBufferOffset);
    }
}
