package io.skimsketch.spark.common;

import java.nio.charset.StandardCharsets;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The seeded hash family of skimsketch (skimsketch/keys/hashing.py, skimsketch/sketch/skim/hierarchy.py) and the
 * key fingerprint (skimsketch/keys/fingerprints.py), bit for bit. All arithmetic is on 64-bit words modulo 2^64.
 */
public final class Hashing {
    public static final long G = 0x9E3779B97F4A7C15L;
    public static final long HIER_WORD_BASE = 1L << 22;
    public static final int LEVELS = 6;
    public static final int TOP_BITS = 12;
    public static final int FANOUT_BITS = 8;
    private static final int ZMUL = 0x9E3779B1;
    private static final ConcurrentHashMap<String, Family> FAMILIES = new ConcurrentHashMap<>();
    private static final ConcurrentHashMap<String, Prefixes> PREFIXES = new ConcurrentHashMap<>();

    private Hashing() {}

    /** splitmix64 finaliser. */
    public static long mix(long z) {
        z ^= z >>> 30;
        z *= 0xBF58476D1CE4E5B9L;
        z ^= z >>> 27;
        z *= 0x94D049BB133111EBL;
        z ^= z >>> 31;
        return z;
    }

    /** Stream s of the seed: mix(seed + (s+1) G). */
    public static long state(long seed, int s) {
        return mix(seed + (s + 1) * G);
    }

    /** T_i[c][j] where stateI = state(seed, i+1). */
    public static long entry(long stateI, long c, long j) {
        return mix(stateI + (j * (1L << 18) + c + 1) * G);
    }

    /** The tabulation tables of one seed, holding word indices 0 .. nWords-1. */
    public static Family family(long seed, int nWords) {
        return FAMILIES.computeIfAbsent(seed + "/" + nWords, k -> new Family(seed, nWords));
    }

    /** The prefix-hierarchy tables of one seed and hierarchy depth. */
    public static Prefixes prefixes(long seed, int hierDepth) {
        return PREFIXES.computeIfAbsent(seed + "/" + hierDepth, k -> new Prefixes(seed, hierDepth));
    }

    /**
     * The tabulation hash of one seed: word_j(key) = T_0[c0][j] ^ T_1[c1][j] ^ T_2[c0 + c1][j] over the
     * key's 32-bit fold (c0, c1 its 16-bit halves). The core keeps the tables in memory; here each
     * entry is computed from its definition (3 splitmix64 calls per word), which is as fast as a
     * lookup in a warm cache and does not stall on the tables' 6 MB (per seed, depth 5) when a Spark
     * task's other work has evicted them.
     */
    public static final class Family {
        public final int nWords;
        final long a;
        final long b;
        /** k_i[j] = s_i + (j 2^18 + 1) G, so that entry(s_i, c, j) = mix(k_i[j] + c G). */
        private final long[] k0;
        private final long[] k1;
        private final long[] k2;

        Family(long seed, int nWords) {
            this.nWords = nWords;
            this.a = state(seed, 0);
            this.b = mix(a + G);
            this.k0 = offsets(state(seed, 1), nWords);
            this.k1 = offsets(state(seed, 2), nWords);
            this.k2 = offsets(state(seed, 3), nWords);
        }

        private static long[] offsets(long st, int nWords) {
            long[] k = new long[nWords];
            for (int j = 0; j < nWords; j++) {
                k[j] = st + (((long) j << 18) + 1) * G;
            }
            return k;
        }

        /** 64 -> 32 bit fold: lo32(x) XOR hi32(a*hi32(x) + b), as an unsigned value in an int. */
        public int fold(long key) {
            long hi = key >>> 32;
            long g = a * hi + b;
            return (int) key ^ (int) (g >>> 32);
        }

        /** word_0 .. word_{nWords-1} of the key into out (entry(s_i, c, j) = T_i[c][j]). */
        public void words(long key, long[] out) {
            int f = fold(key);
            long c0 = f & 0xFFFF;
            long c1 = f >>> 16;
            long g0 = c0 * G; // entry(st, c, j) = mix(st + (j 2^18 + c + 1) G) = mix(k[j] + c G)
            long g1 = c1 * G;
            long g2 = (c0 + c1) * G;
            for (int j = 0; j < nWords; j++) {
                out[j] = mix(k0[j] + g0) ^ mix(k1[j] + g1) ^ mix(k2[j] + g2);
            }
        }
    }

    /** AGMS word base: counter (p, q) of an AGMS sketch takes bit q & 63 of word 2^20 + p 2^12 + (q >> 6). */
    static final long AGMS_WORD_BASE = 1L << 20;

    /** word_j(key) for any word index j (computed from the definition; AGMS signs use j >= 2^20). */
    static long word(long seed, long key, long j) {
        int f = family(seed, 1).fold(key);
        long c0 = f & 0xFFFF;
        long c1 = f >>> 16;
        return entry(state(seed, 1), c0, j) ^ entry(state(seed, 2), c1, j) ^ entry(state(seed, 3), c0 + c1, j);
    }

    /** The AGMS signs of a key: signs[p][q] = +1 or -1 (skimsketch.hashing.agms_sign_bits). */
    public static double[][] agmsSigns(long seed, long key, int width, int depth) {
        double[][] out = new double[depth][width];
        for (int p = 0; p < depth; p++) {
            long w = 0;
            for (int q = 0; q < width; q++) {
                if ((q & 63) == 0) {
                    w = word(seed, key, AGMS_WORD_BASE + ((long) p << 12) + (q >> 6));
                }
                out[p][q] = ((w >>> (q & 63)) & 1) == 0 ? 1.0 : -1.0;
            }
        }
        return out;
    }

    /** The 32-bit row hash u of table p from the key's words. */
    public static int rowHash(long[] words, int p) {
        long w = words[p >> 1];
        return (p & 1) == 0 ? (int) w : (int) (w >>> 32);
    }

    /** Bucket of a row hash in a table of the given width. */
    public static int bucket(int u, int width) {
        return (int) (((u & 0x7FFFFFFFL) * width) >>> 31);
    }

    /** Prefix hierarchy of unbounded-key skimmed sketches (skimsketch/sketch/skim/hierarchy.py). */
    public static final class Prefixes {
        public final long salt;
        final int depth;
        /** tables[i][c * depth + t]: P_i[c][t]. */
        public final int[][] tables = new int[LEVELS][];

        Prefixes(long seed, int depth) {
            this.depth = depth;
            long st = state(seed, 1);
            this.salt = entry(st, 0, HIER_WORD_BASE);
            for (int i = 0; i < LEVELS; i++) {
                int size = 1 << (i == 0 ? TOP_BITS : FANOUT_BITS);
                int[] t = new int[size * depth];
                for (int c = 0; c < size; c++) {
                    for (int p = 0; p < depth; p++) {
                        long w = entry(st, c, HIER_WORD_BASE + 1 + 16L * i + (p >> 1));
                        t[c * depth + p] = (p & 1) == 0 ? (int) w : (int) (w >>> 32);
                    }
                }
                tables[i] = t;
            }
        }

        /**
         * The signed cells of one key in the hierarchy counters (level, table, bucket order):
         * out[l * depth + t] = 2 * counter index + (1 if the sign is -1).
         */
        public void cells(long key, int lg, int[] out) {
            int width = 1 << lg;
            int shift = 31 - lg;
            int[] chars = chars(key);
            for (int t = 0; t < depth; t++) {
                int u = 0;
                for (int l = 0; l < LEVELS; l++) {
                    u ^= tables[l][chars[l] * depth + t];
                    int cell = (u * ZMUL) >>> shift;
                    int idx = (l * depth + t) * width + (cell & (width - 1));
                    out[l * depth + t] = (idx << 1) | (cell >>> lg);
                }
            }
        }

        private int[] chars(long key) {
            long y = mix(key ^ salt);
            int[] c = new int[LEVELS];
            c[0] = (int) (y >>> (64 - TOP_BITS));
            for (int i = 1; i < LEVELS; i++) {
                c[i] = (int) ((y >>> (64 - TOP_BITS - FANOUT_BITS * i)) & 0xFF);
            }
            return c;
        }
    }

    // -- keys: fingerprint64 = first 64 bits of MurmurHash3 x64-128 (seed 0), signed ----------
    private static final long C1 = 0x87C37B91114253D5L;
    private static final long C2 = 0x4CF5AD432745937FL;

    private static long fmix(long k) {
        k ^= k >>> 33;
        k *= 0xFF51AFD7ED558CCDL;
        k ^= k >>> 33;
        k *= 0xC4CEB9FE1A85EC53L;
        k ^= k >>> 33;
        return k;
    }

    private static long le64(byte[] d, int off, int n) {
        long v = 0;
        for (int i = n - 1; i >= 0; i--) {
            v = (v << 8) | (d[off + i] & 0xFFL);
        }
        return v;
    }

    /** The canonical int64 key of a byte string (strings: their UTF-8 bytes). */
    public static long fingerprint64(byte[] data) {
        int len = data.length;
        int nblocks = len / 16;
        long h1 = 0, h2 = 0;
        for (int i = 0; i < nblocks; i++) {
            long k1 = le64(data, 16 * i, 8);
            long k2 = le64(data, 16 * i + 8, 8);
            k1 *= C1;
            k1 = Long.rotateLeft(k1, 31);
            k1 *= C2;
            h1 ^= k1;
            h1 = Long.rotateLeft(h1, 27);
            h1 += h2;
            h1 = h1 * 5 + 0x52DCE729;
            k2 *= C2;
            k2 = Long.rotateLeft(k2, 33);
            k2 *= C1;
            h2 ^= k2;
            h2 = Long.rotateLeft(h2, 31);
            h2 += h1;
            h2 = h2 * 5 + 0x38495AB5;
        }
        int tail = 16 * nblocks;
        int rest = len - tail;
        if (rest > 8) {
            long k2 = le64(data, tail + 8, rest - 8);
            k2 *= C2;
            k2 = Long.rotateLeft(k2, 33);
            k2 *= C1;
            h2 ^= k2;
        }
        if (rest > 0) {
            long k1 = le64(data, tail, Math.min(rest, 8));
            k1 *= C1;
            k1 = Long.rotateLeft(k1, 31);
            k1 *= C2;
            h1 ^= k1;
        }
        h1 ^= len;
        h2 ^= len;
        h1 += h2;
        h2 += h1;
        h1 = fmix(h1);
        h2 = fmix(h2);
        h1 += h2;
        return h1;
    }

    public static long fingerprint64(String s) {
        return fingerprint64(s.getBytes(StandardCharsets.UTF_8));
    }
}
