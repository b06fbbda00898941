package io.skimsketch.spark.sketch.estimate;

import io.skimsketch.spark.common.Hashing;
import java.lang.ref.SoftReference;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The candidate keys SKIMDENSE tests (skimsketch/sketch/skim/skimdense.py Candidates), with their buckets and
 * signs in the main tables and the bucket index (Candidates.bucket_index: the candidates of each
 * bucket in ascending position). A scan, every key of {@code [lo, lo + n)} (domain_candidates for
 * a domain or the virtual ids, range_candidates for a key range), is built once per (seed, width,
 * depth, lo, n) and kept in a small least-recently-used cache bounded in memory (128 MB, or a sixteenth of
 * the heap when that is smaller: Memory; a join skims two
 * sketches of one shape; the virtual layout's 2^20 ids take about 40 MB at depth 5; a larger scan,
 * up to 2^22 keys, is held softly, the last one only); the keys of a prefix search ({@link #ofKeys}) are hashed per query. Read-only once built, so queries share them
 * across threads.
 */
final class Candidates {
    /** Cached int entries at most (4 bytes each): 2^25 (128 MB), or a sixteenth of the heap when smaller. */
    static final long CACHE_INTS = Memory.cacheBound(128L << 20, 16) / 4;
    private static final Map<String, Candidates> CACHE = new LinkedHashMap<>(8, 0.75f, true);
    private static long cachedInts;
    /** The last scan too large for the cache (2^22 ids), softly held: the garbage collector may take it. */
    private static SoftReference<Candidates> large = new SoftReference<>(null);
    private static String largeKey = "";

    final long lo;
    /** The keys in candidate order; null for a scan (key i is lo + i). */
    final long[] keys;
    final int n;
    final int width;
    final int depth;
    /** cells[p * n + i] = bucket << 1 | (1 when the sign of candidate i in table p is -1). */
    final int[] cells;
    /** order[p * n + starts[p * (width + 1) + b] ..] are the candidates of bucket b of table p, ascending. */
    final int[] order;
    final int[] starts;

    private Candidates(long seed, int width, int depth, long lo, int n, long[] keys) {
        this.lo = lo;
        this.keys = keys;
        this.n = n;
        this.width = width;
        this.depth = depth;
        cells = new int[depth * n];
        Hashing.Family fam = Hashing.family(seed, (depth + 1) / 2);
        long[] words = new long[fam.nWords];
        for (int i = 0; i < n; i++) {
            fam.words(key(i), words);
            for (int p = 0; p < depth; p++) {
                int u = Hashing.rowHash(words, p);
                cells[p * n + i] = Hashing.bucket(u, width) << 1 | (u >>> 31);
            }
        }
        order = new int[depth * n];
        starts = new int[depth * (width + 1)];
        for (int p = 0; p < depth; p++) { // a counting sort: stable, as the core's argsort(kind="stable")
            int sb = p * (width + 1);
            for (int i = 0; i < n; i++) {
                starts[sb + (cells[p * n + i] >>> 1) + 1]++;
            }
            for (int b = 0; b < width; b++) {
                starts[sb + b + 1] += starts[sb + b];
            }
            int[] next = new int[width];
            for (int i = 0; i < n; i++) {
                int b = cells[p * n + i] >>> 1;
                order[p * n + starts[sb + b] + next[b]++] = i;
            }
        }
    }

    /** Empties the cache (Memory.dropCaches). */
    static void dropCache() {
        synchronized (CACHE) {
            CACHE.clear();
            cachedInts = 0;
            large = new SoftReference<>(null);
            largeKey = "";
        }
    }

    long key(int i) {
        return keys == null ? lo + i : keys[i];
    }

    /** The given keys as candidates, in that order (prefix_candidates; not cached). */
    static Candidates ofKeys(long seed, int width, int depth, long[] keys) {
        return new Candidates(seed, width, depth, 0, keys.length, keys);
    }

    int bucket(int p, int i) {
        return cells[p * n + i] >>> 1;
    }

    double sign(int p, int i) {
        return (cells[p * n + i] & 1) == 0 ? 1.0 : -1.0;
    }

    long ints() {
        return (long) cells.length + order.length + starts.length;
    }

    /** The candidates [lo, lo + n) of one shape, from the cache or built (and cached while they fit). */
    static Candidates of(long seed, int width, int depth, long lo, int n) {
        String key = seed + "/" + width + "/" + depth + "/" + lo + "/" + n;
        synchronized (CACHE) {
            Candidates c = CACHE.get(key);
            if (c == null && key.equals(largeKey)) {
                c = large.get();
            }
            if (c != null) {
                return c;
            }
        }
        Candidates c;
        try {
            c = new Candidates(seed, width, depth, lo, n, null);
        } catch (OutOfMemoryError e) { // the caches may hold the room: drop them and try once more
            Memory.dropCaches();
            c = new Candidates(seed, width, depth, lo, n, null);
        }
        if (c.ints() > CACHE_INTS) {
            synchronized (CACHE) {
                large = new SoftReference<>(c);
                largeKey = key;
            }
        } else {
            synchronized (CACHE) {
                if (CACHE.putIfAbsent(key, c) == null) {
                    cachedInts += c.ints();
                    Iterator<Candidates> it = CACHE.values().iterator();
                    while (cachedInts > CACHE_INTS && it.hasNext()) {
                        Candidates old = it.next();
                        if (old != c) {
                            cachedInts -= old.ints();
                            it.remove();
                        }
                    }
                }
            }
        }
        return c;
    }
}
