package io.skimsketch.spark.sql;

import io.skimsketch.spark.common.Hashing;
import io.skimsketch.spark.common.Keys;
import io.skimsketch.spark.sample.SampleRuns;
/**
 * The per-row expressions of skim_sample_agg's bucketed build (called from generated code: public static): a
 * key's 52-bit sample fingerprint (SampleRank.fp) from its canonical key (bigint; a double or float
 * holding an integer, NaN a NULL key; a string or binary key through fingerprint64), and the bucket of a
 * fingerprint, its top bits scaled to [0, buckets): every row of one fingerprint lands in one bucket, so a
 * bucket's totals and key count are exact.
 */
public final class SampleFastKeys {
    private SampleFastKeys() {}

    public static long fp(long key, long seed) {
        return SampleRuns.fingerprint(key, seed);
    }

    public static Long fp(double key, long seed) {
        Long k = Keys.doubleKey(key);
        return k == null ? null : SampleRuns.fingerprint(k, seed);
    }

    public static Long fp(float key, long seed) {
        Long k = Keys.floatKey(key);
        return k == null ? null : SampleRuns.fingerprint(k, seed);
    }

    public static long fp(byte[] key, long seed) {
        return SampleRuns.fingerprint(Hashing.fingerprint64(key), seed);
    }

    /** The bucket of a fingerprint in [0, 2^52): ((fp >>> 20) buckets) >>> 32, in [0, buckets). */
    public static int bucket(long fp, int buckets) {
        return (int) (((fp >>> 20) * buckets) >>> 32);
    }
}
