package io.skimsketch.spark.sketch;

import io.skimsketch.spark.common.Hashing;

/**
 * Where a canonical key goes in a sketch of one spec: its cell and sign in each main table (and in
 * each level of the prefix hierarchy), through the seed's hash family; in the virtual layout the key
 * is first its signed virtual id (y = mix(key ^ salt), id = top lg bits, sign = bit 0). Built on the
 * first update; reuses its arrays, so one per sketch state (not shared across threads).
 */
final class CellHasher {
    private final Spec spec;
    private final Hashing.Family family;
    private final Hashing.Prefixes prefixes;
    private final long[] words;
    private final long salt; // search="virtual": the seed's salt T_0[0][2^22]
    /** 2 * counter index + (1 if the sign is -1), one per table, after {@link #cells}. */
    final int[] mainCells;
    /** The same for the hierarchy's tables and levels; null without a hierarchy. */
    final int[] hierCells;

    CellHasher(Spec spec) {
        this.spec = spec;
        salt = spec.virtualLg > 0 ? Hashing.entry(Hashing.state(spec.seed, 1), 0, Hashing.HIER_WORD_BASE) : 0;
        family = Hashing.family(spec.seed, (spec.depth + 1) / 2);
        words = new long[family.nWords];
        mainCells = new int[spec.depth];
        prefixes = spec.hierLg > 0 ? Hashing.prefixes(spec.seed, spec.hierDepth) : null;
        hierCells = spec.hierLg > 0 ? new int[Hashing.LEVELS * spec.hierDepth] : null;
    }

    /** Hashes the key into mainCells (and hierCells). */
    void cells(long key) {
        int flip = 0;
        if (spec.virtualLg > 0) {
            long y = Hashing.mix(key ^ salt);
            flip = (int) (y & 1);
            key = y >>> (64 - spec.virtualLg);
        }
        family.words(key, words);
        for (int p = 0; p < spec.depth; p++) {
            int u = Hashing.rowHash(words, p);
            mainCells[p] = ((p * spec.width + Hashing.bucket(u, spec.width)) << 1) | ((u >>> 31) ^ flip);
        }
        if (prefixes != null) {
            prefixes.cells(key, spec.hierLg, hierCells);
        }
    }

    /**
     * Adds +w or -w (each table's sign) to the key's cells of the main counters a: the cells of
     * {@link #cells} and IntCounters.addCells in one loop (no cell array, no sign branch). w must not
     * be Long.MIN_VALUE (its negation does not exist); an overflow is an ArithmeticException.
     */
    void hashAdd(long[] a, long key, long w) {
        if (spec.virtualLg > 0) {
            long y = Hashing.mix(key ^ salt);
            w = (y & 1) == 0 ? w : -w;
            key = y >>> (64 - spec.virtualLg);
        }
        family.words(key, words);
        int width = spec.width;
        for (int p = 0, base = 0; p < spec.depth; p++, base += width) {
            int u = Hashing.rowHash(words, p);
            long neg = u >> 31; // 0 or all ones: the sign bit of the row hash
            int i = base + Hashing.bucket(u, width);
            a[i] = Math.addExact(a[i], (w ^ neg) - neg);
        }
    }
}
