package io.skimsketch.spark;

import java.util.concurrent.ConcurrentHashMap;

/**
 * The ranks of a coordinated priority sample (skimsketch/sample_rank.py), bit for bit: from the seeded
 * tabulation words h = word_{2^23}(k) and q = word_{2^23+1}(k) of the canonical key,
 * u = (2 (h >>> 12) + 1) 2^-53, rank = u / (w w) with w = |double(total)|, and the key-hash
 * partition part_P(k) = ((q >>> 32) P) >>> 32. Entries are ordered by (rank, key).
 */
final class SampleRank {
    static final long RANK_WORD = 1L << 23;
    static final int MAX_PARTITIONS = 4096;
    private static final double TWO_M53 = 0x1p-53;
    private static final ConcurrentHashMap<Long, SampleRank> CACHE = new ConcurrentHashMap<>();

    private final Hashing.Family fam;
    /** k_i = state_i + (j 2^18 + 1) G for the words j = RANK_WORD (h) and RANK_WORD + 1 (q). */
    private final long h0;
    private final long h1;
    private final long h2;
    private final long q0;
    private final long q1;
    private final long q2;

    private SampleRank(long seed) {
        fam = Hashing.family(seed, 1);
        long s1 = Hashing.state(seed, 1);
        long s2 = Hashing.state(seed, 2);
        long s3 = Hashing.state(seed, 3);
        long jh = (RANK_WORD << 18) + 1;
        long jq = ((RANK_WORD + 1) << 18) + 1;
        h0 = s1 + jh * Hashing.G;
        h1 = s2 + jh * Hashing.G;
        h2 = s3 + jh * Hashing.G;
        q0 = s1 + jq * Hashing.G;
        q1 = s2 + jq * Hashing.G;
        q2 = s3 + jq * Hashing.G;
    }

    static SampleRank of(long seed) {
        return CACHE.computeIfAbsent(seed, SampleRank::new);
    }

    /** u(k): an odd multiple of 2^-53 in (0, 1). */
    double unit(long key) {
        int f = fam.fold(key);
        long c0 = f & 0xFFFFL;
        long c1 = f >>> 16;
        long h = Hashing.mix(h0 + c0 * Hashing.G) ^ Hashing.mix(h1 + c1 * Hashing.G)
                ^ Hashing.mix(h2 + (c0 + c1) * Hashing.G);
        return (double) (((h >>> 12) << 1) + 1) * TWO_M53;
    }

    /** part_P(k) in [0, P). */
    int partition(long key, int parts) {
        int f = fam.fold(key);
        long c0 = f & 0xFFFFL;
        long c1 = f >>> 16;
        long q = Hashing.mix(q0 + c0 * Hashing.G) ^ Hashing.mix(q1 + c1 * Hashing.G)
                ^ Hashing.mix(q2 + (c0 + c1) * Hashing.G);
        return (int) (((q >>> 32) * parts) >>> 32);
    }

    /** rank(k) = u / (w w), w = |total| as a double. */
    double rank(long key, double total) {
        double w = Math.abs(total);
        return unit(key) / (w * w);
    }

    /** (rank, key) order: negative when (ra, ka) comes first. */
    static int compare(double ra, long ka, double rb, long kb) {
        int c = Double.compare(ra, rb);
        return c != 0 ? c : Long.compare(ka, kb);
    }
}
