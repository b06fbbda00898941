package io.skimsketch.spark.sql;

import io.skimsketch.spark.CorruptSketchError;
import io.skimsketch.spark.common.Estimate;
import io.skimsketch.spark.common.Hashing;
import io.skimsketch.spark.common.Keys;
import io.skimsketch.spark.sample.SampleEstimator;
import io.skimsketch.spark.sample.SampleFormat;
import io.skimsketch.spark.sample.SampleFunctions;
import io.skimsketch.spark.sketch.SketchState;
import io.skimsketch.spark.sketch.Spec;
import io.skimsketch.spark.sketch.estimate.Estimator;
import io.skimsketch.spark.sketch.estimate.Memory;
import java.math.BigDecimal;
import java.math.BigInteger;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.Decimal;
import org.apache.spark.unsafe.types.UTF8String;

/**
 * The scalar estimate functions as Spark calls them (StaticInvoke; NULL arguments give NULL before
 * these run): skim_join_size[_bounds], skim_self_join_size[_bounds], skim_frequency and
 * skim_sketch_info on sketch bytes. The numbers are Estimator's, the struct types those of
 * spark_udaf/schemas.py.
 */
public final class EstimateFunctions {
    /** spark_udaf.schemas.ESTIMATE. */
    static final String ESTIMATE_DDL = "struct<value: double, low: double, high: double, confidence: double, "
            + "method: string>";
    /** spark_udaf.schemas.INFO. */
    static final String INFO_DDL = "struct<kind: string, width: int, depth: int, seed: decimal(20,0), "
            + "total_weight: double, null_weight: double, nbytes: bigint>";

    private EstimateFunctions() {}

    static DataType estimateType() {
        return DataType.fromDDL(ESTIMATE_DDL);
    }

    static DataType infoType() {
        return DataType.fromDDL(INFO_DDL);
    }

    private static SketchState load(byte[] blob, String what) {
        try {
            return SketchState.fromBytes(blob);
        } catch (CorruptSketchError e) {
            throw new CorruptSketchError(what + ": " + e.getMessage());
        }
    }

    private static InternalRow row(Estimate e) {
        return new GenericInternalRow(new Object[] {e.value, e.low, e.high, e.confidence,
            UTF8String.fromString(e.method)});
    }

    private static Estimate join(byte[] a, byte[] b, double confidence) {
        String fn = "skim_join_size";
        if (SampleFormat.isSample(a) != SampleFormat.isSample(b)) {
            throw SampleEstimator.mixed(a, b, "join");
        }
        try {
            Summaries.Prepared pa = Summaries.of(a, fn + "(a)", fn);
            Summaries.Prepared pb = Summaries.of(b, fn + "(b)", fn);
            if (pa.sample != null) {
                return SampleEstimator.join(pa.sample, pb.sample, confidence);
            }
            return Estimator.join(pa.sketch, pb.sketch, pa.skim(), pb.skim(), confidence, fn);
        } catch (OutOfMemoryError e) {
            throw failed(fn, e);
        }
    }

    /** Memory.failed, after dropping the stored summaries' cache too. */
    private static RuntimeException failed(String fn, OutOfMemoryError e) {
        Summaries.clear();
        return Memory.failed(fn, e);
    }

    public static double joinSize(byte[] a, byte[] b, double confidence) {
        return join(a, b, confidence).value;
    }

    public static InternalRow joinSizeBounds(byte[] a, byte[] b, double confidence) {
        return row(join(a, b, confidence));
    }

    private static Estimate self(byte[] a, double confidence) {
        String fn = "skim_self_join_size";
        try {
            Summaries.Prepared p = Summaries.of(a, fn + "(a)", fn);
            return p.sample != null ? SampleEstimator.selfJoin(p.sample, confidence)
                    : Estimator.selfJoin(p.sketch, confidence, fn);
        } catch (OutOfMemoryError e) {
            throw failed(fn, e);
        }
    }

    public static double selfJoinSize(byte[] a, double confidence) {
        return self(a, confidence).value;
    }

    public static InternalRow selfJoinSizeBounds(byte[] a, double confidence) {
        return row(self(a, confidence));
    }

    private static double frequency(byte[] a, long key, int kd, String repr, double confidence) {
        String fn = "skim_frequency";
        try {
            Summaries.Prepared p = Summaries.of(a, fn + "(a)", fn);
            return p.sample != null ? SampleEstimator.frequency(p.sample, key, kd, confidence).value
                    : Estimator.frequency(p.sketch, key, kd, repr, confidence, fn).value;
        } catch (OutOfMemoryError e) {
            throw failed(fn, e);
        }
    }

    /** Integer keys. */
    public static double frequencyLong(byte[] a, long key, double confidence) {
        return frequency(a, key, SketchState.KEY_INT, Long.toString(key), confidence);
    }

    /** DOUBLE keys holding integers below 2^53 (a NaN key, which is NULL, never reaches here). */
    public static double frequencyDouble(byte[] a, double key, double confidence) {
        return frequency(a, Keys.doubleKey(key), SketchState.KEY_INT, Keys.pyRepr(key), confidence);
    }

    /** FLOAT keys holding integers below 2^24 (a NaN key, which is NULL, never reaches here). */
    public static double frequencyFloat(byte[] a, float key, double confidence) {
        return frequency(a, Keys.floatKey(key), SketchState.KEY_INT, Keys.pyRepr((double) key), confidence);
    }

    /** String keys: their UTF-8 bytes. */
    public static double frequencyString(byte[] a, UTF8String key, double confidence) {
        return frequency(a, Hashing.fingerprint64(key.getBytes()), SketchState.KEY_BYTES, Keys.pyRepr(key.toString()),
                confidence);
    }

    /** Binary keys. */
    public static double frequencyBinary(byte[] a, byte[] key, double confidence) {
        return frequency(a, Hashing.fingerprint64(key), SketchState.KEY_BYTES, Keys.pyRepr(key), confidence);
    }

    /** skim_sketch_info: kind, width, depth, seed, total_weight, null_weight, nbytes. */
    public static InternalRow info(byte[] a) {
        if (SampleFormat.isSample(a)) {
            return SampleFunctions.info(a);
        }
        SketchState s;
        try {
            s = load(a, "skim_sketch_info(a)");
        } catch (OutOfMemoryError e) {
            throw Memory.failed("skim_sketch_info", e);
        }
        Spec spec = s.spec();
        BigInteger seed = new BigInteger(Long.toUnsignedString(spec.seed));
        return new GenericInternalRow(new Object[] {UTF8String.fromString(Spec.kindName(spec.kind)), spec.width,
            spec.depth, Decimal.apply(new BigDecimal(seed), 20, 0), s.totalWeight(), s.nullWeight(),
            s.stateBytes()});
    }
}
