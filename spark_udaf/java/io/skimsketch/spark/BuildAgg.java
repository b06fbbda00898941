package io.skimsketch.spark;

import org.apache.spark.sql.Encoder;
import org.apache.spark.sql.Encoders;
import scala.Tuple2;

/**
 * Builds one sketch of a key column (bigint keys as themselves, binary keys through fingerprint64),
 * optionally weighted: NULL keys add their weight to the null weight, rows with a NULL (or NaN) weight
 * are skipped, as the Python builders do.
 */
final class BuildAgg extends SketchAggregator<Object> {
    private static final long serialVersionUID = 1L;
    private final Spec spec;
    private final boolean bytesKeys;
    private final boolean weighted;

    BuildAgg(Spec spec, boolean bytesKeys, boolean weighted) {
        this.spec = spec;
        this.bytesKeys = bytesKeys;
        this.weighted = weighted;
    }

    @Override
    public String toString() {
        return spec.toString() + (bytesKeys ? " of binary keys" : " of bigint keys") + (weighted ? ", weighted" : "");
    }

    @Override
    public SketchState zero() {
        return new SketchState(spec);
    }

    @Override
    public SketchState reduce(SketchState b, Object in) {
        Object key = in;
        Object w = null;
        if (weighted) {
            Tuple2<?, ?> t = (Tuple2<?, ?>) in;
            key = t._1();
            w = t._2();
            if (w == null) {
                return b;
            }
        }
        if (spec.isFloat) {
            double x = ((Double) w).doubleValue();
            if (Double.isNaN(x)) {
                return b;
            }
            if (Double.isInfinite(x)) {
                throw new IllegalArgumentException("skimsketch.errors.KeyTypeError: weights contain NaN or infinity ("
                        + x + ")");
            }
            if (key == null) {
                b.addNull(x);
            } else {
                b.add(canonical(key), kd(), x);
            }
            return b;
        }
        long x = w == null ? 1L : ((Long) w).longValue();
        if (key == null) {
            b.addNull(x);
        } else {
            b.add(canonical(key), kd(), x);
        }
        return b;
    }

    private int kd() {
        return bytesKeys ? SketchState.KEY_BYTES : SketchState.KEY_INT;
    }

    private long canonical(Object key) {
        return bytesKeys ? Hashing.fingerprint64((byte[]) key) : ((Long) key).longValue();
    }

    @Override
    public byte[] finish(SketchState b) {
        return b.toBytes();
    }


    /** The input encoder matching this aggregator's (key [, weight]) columns. */
    @SuppressWarnings("unchecked")
    Encoder<Object> inputEncoder() {
        Encoder<?> k = bytesKeys ? Encoders.BINARY() : Encoders.LONG();
        if (!weighted) {
            return (Encoder<Object>) k;
        }
        Encoder<?> w = spec.isFloat ? Encoders.DOUBLE() : Encoders.LONG();
        return (Encoder<Object>) (Encoder<?>) Encoders.tuple(k, w);
    }
}
