package io.skimsketch.spark.sample;

import io.skimsketch.spark.common.Hashing;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The ranks of a coordinated priority sample (skimsketch/sample/rank.py), bit for bit: from the seeded
 * tabulation word h = word_{2^23}(k) of the canonical key and mix(k), the splitmix64 finalizer of the key
 * as u64 ({@link Hashing#mix}), the 52-bit key fingerprint fp = (h ^ mix(k)) >>> 12, u = (2 fp + 1) 2^-53,
 * rank = u / (w w) with w = |double(total)|, and the fingerprint partition
 * part_P = ((fp &amp; 0xFFFFFFFF) P) >>> 32. Entries are ordered by (rank, fp). The sample is over
 * fingerprints: two keys of one fingerprint are one entry with the sum of their totals. The family
 * hashes a 32-bit fold of the key, so h alone separates string keys by 32 bits only; XOR with mix, a
 * bijection of the whole key, keeps h's uniformity and makes equal fingerprints about K^2 / 2^53 likely.
 * A legacy sample (read from layout 1, whose ranks came from h >>> 12) keeps fp = h >>> 12.
 */
final class SampleRank {
    static final long RANK_WORD = 1L << 23;
    static final int MAX_PARTITIONS = 4096;
    /** Fingerprints are in [0, FP_LIMIT). */
    static final long FP_LIMIT = 1L << 52;
    private static final double TWO_M53 = 0x1p-53;
    private static final ConcurrentHashMap<Long, SampleRank> CACHE = new ConcurrentHashMap<>();

    private final Hashing.Family fam;
    /** k_i = state_i + (j 2^18 + 1) G for the word j = RANK_WORD (h). */
    private final long h0;
    private final long h1;
    private final long h2;

    private SampleRank(long seed) {
        fam = Hashing.family(seed, 1);
        long jh = (RANK_WORD << 18) + 1;
        h0 = Hashing.state(seed, 1) + jh * Hashing.G;
        h1 = Hashing.state(seed, 2) + jh * Hashing.G;
        h2 = Hashing.state(seed, 3) + jh * Hashing.G;
    }

    static SampleRank of(long seed) {
        return CACHE.computeIfAbsent(seed, SampleRank::new);
    }

    /** h(k) = word_{RANK_WORD}(k). */
    private long word(long key) {
        int f = fam.fold(key);
        long c0 = f & 0xFFFFL;
        long c1 = f >>> 16;
        return Hashing.mix(h0 + c0 * Hashing.G) ^ Hashing.mix(h1 + c1 * Hashing.G)
                ^ Hashing.mix(h2 + (c0 + c1) * Hashing.G);
    }

    /** fp(k) = (h(k) ^ mix(k)) >>> 12, in [0, 2^52). */
    long fp(long key) {
        return (word(key) ^ Hashing.mix(key)) >>> 12;
    }

    /** The fingerprint of a sample: a legacy one's (layout 1) is h(k) >>> 12. */
    long fp(long key, boolean legacy) {
        return legacy ? word(key) >>> 12 : fp(key);
    }

    /** u of a fingerprint: an odd multiple of 2^-53 in (0, 1). */
    static double unit(long fp) {
        return (double) ((fp << 1) + 1) * TWO_M53;
    }

    /** part_P of a fingerprint, in [0, P). */
    static int partition(long fp, int parts) {
        return (int) (((fp & 0xFFFFFFFFL) * parts) >>> 32);
    }

    /** rank = u(fp) / (w w), w = |total| as a double. */
    static double rank(long fp, double total) {
        double w = Math.abs(total);
        return unit(fp) / (w * w);
    }

    /** (rank, fp) order: negative when (ra, fa) comes first. */
    static int compare(double ra, long fa, double rb, long fb) {
        int c = Double.compare(ra, rb);
        return c != 0 ? c : Long.compare(fa, fb);
    }
}
