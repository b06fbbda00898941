package io.skimsketch.spark.sql;

import io.skimsketch.spark.KeyTypeError;
import io.skimsketch.spark.common.Hashing;
import io.skimsketch.spark.common.Keys;
import org.apache.spark.sql.types.Decimal;

/**
 * The core's per-row weight rules where Spark's SUM does the adding (SampleRule's GROUP BY of the key):
 * a NaN weight is skipped (NULL), an infinite one is an error; a DECIMAL(p, 0) weight must fit in int64.
 * String and binary keys are grouped by their canonical key, fingerprint64 (the key the sample keeps),
 * so that the shuffle carries fixed-width bigint keys. Public static: called from generated code (StaticInvoke).
 */
public final class SampleWeights {
    private SampleWeights() {}

    /** A double weight: NULL for NaN (skipped), the core's error for an infinity. */
    public static Double doubleWeight(double w) {
        if (Double.isNaN(w)) {
            return null;
        }
        if (Double.isInfinite(w)) {
            throw new KeyTypeError("weights contain NaN or infinity");
        }
        return w;
    }

    /** A string/binary key's canonical key: the first 64 bits of its MurmurHash3 x64-128 (Hashing.fingerprint64). */
    public static long fingerprint(byte[] key) {
        return Hashing.fingerprint64(key);
    }

    /** A key's integer total (a TRY SUM) is NULL over some weights: it overflowed int64. The core's
     * CounterOverflowError, naming the remedy (SampleRule.checked calls it only then). */
    public static long totalOverflow() {
        throw new io.skimsketch.spark.CounterOverflowError("skim_sample_agg: a key's total weight (the SUM of its "
                + "weights) would overflow the sample's int64 totals: for larger sums use float totals, "
                + "skim_sample_agg(key, CAST(weight AS DOUBLE))");
    }

    /** An integral DECIMAL weight as an int64 (the core's message when it does not fit). */
    public static long decimalWeight(Decimal w) {
        return Keys.decimalWeight(w);
    }
}
