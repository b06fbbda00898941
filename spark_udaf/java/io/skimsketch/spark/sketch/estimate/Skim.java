package io.skimsketch.spark.sketch.estimate;

import io.skimsketch.spark.common.Hashing;
import io.skimsketch.spark.common.Sums;
import io.skimsketch.spark.sketch.SketchState;
import io.skimsketch.spark.sketch.Spec;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.TreeMap;

/**
 * A skimmed sketch's skim (SkimmedSketch.skim of skimsketch/sketch/skim/skimmed.py): its dense keys and values,
 * the residual counters and the dense sketch (counters - residual). The candidates are those of
 * SkimmedSketch._source: the domain [0, m), the virtual ids [0, 2^lg), the inserted key range
 * (widened to multiples of 1024; none when it spans more than 2^22 keys or holds no integer key).
 * In exact mode every key is dense and known exactly (SkimmedSketch._exact_skim): the entries, or
 * in the virtual layout their signed sums per virtual id, with a zero residual. Without a domain
 * and with a prefix hierarchy the candidates are the keys its top-down search finds
 * ({@link PrefixSearch}) down to SkimmedSketch._search_floor.
 */
public final class Skim {
    static final long RANGE_ALIGN = 1024;

    public final long[] keys;
    public final double[] values;
    final double[][] residual;
    final double[][] dense;
    final boolean exact;
    /** Counter mode: the dense keys' bucket cells per table and the number of candidates tested. */
    final int[][] cells;
    final long tested;
    /** SkimResult.complete: taken because it explained every counter (SkimDense.explains). */
    boolean complete;
    /** doubtful() and doubtSketch(), computed once (benign race: both threads compute the same arrays). */
    private volatile boolean[] doubtfulMemo;
    private volatile double[][] doubtSketchMemo;

    private Skim(long[] keys, double[] values, double[][] residual, double[][] counters, boolean exact, int[][] cells,
                 long tested) {
        this.keys = keys;
        this.values = values;
        this.residual = residual;
        this.exact = exact;
        this.cells = cells;
        this.tested = tested;
        dense = new double[counters.length][];
        for (int p = 0; p < counters.length; p++) {
            dense[p] = new double[counters[p].length];
            for (int q = 0; q < dense[p].length; q++) {
                dense[p][q] = counters[p][q] - residual[p][q];
            }
        }
    }

    /** Memory the cache of recent skims may hold (their residual and dense counters): 64 MB, or a
     * thirty-second of the heap when smaller (Memory). */
    static final long CACHE_BYTES = Memory.cacheBound(64L << 20, 32);
    private static final LinkedHashMap<ByteBuffer, Skim> RECENT = new LinkedHashMap<>(16, 0.75f, true);
    private static long recentBytes;

    /**
     * The skim of a skimmed sketch (fn names the SQL function in messages). Counter-mode skims are
     * cached by the sketch's bytes (least recently used first out, at most CACHE_BYTES): a query that
     * joins each of n sketches with m others skims n + m times, not 2 n m (the core caches a
     * sketch's skim on the object the same way). A skim is never changed after it is built.
     */
    public static Skim of(SketchState a, String fn) {
        if (a.exactMode()) {
            return compute(a, fn);
        }
        ByteBuffer key = ByteBuffer.wrap(a.toBytes());
        synchronized (RECENT) {
            Skim hit = RECENT.get(key);
            if (hit != null) {
                return hit;
            }
        }
        Skim skim = compute(a, fn);
        long size = skim.footprint();
        if (size <= CACHE_BYTES / 4) {
            synchronized (RECENT) {
                if (RECENT.put(key, skim) == null) {
                    recentBytes += size;
                }
                Iterator<Map.Entry<ByteBuffer, Skim>> it = RECENT.entrySet().iterator();
                while (recentBytes > CACHE_BYTES && it.hasNext()) {
                    recentBytes -= it.next().getValue().footprint();
                    it.remove();
                }
            }
        }
        return skim;
    }

    /**
     * The skim of a skimmed sketch with what its joins read from it alone (the doubtful keys and their
     * sketch) computed, for a caller that keeps it (sql.Summaries); not put in the cache of recent skims.
     */
    public static Skim prepared(SketchState a, String fn) {
        Skim skim = compute(a, fn);
        skim.doubtSketch();
        return skim;
    }

    /** Empties the cache of recent skims (Memory.dropCaches). */
    static void dropCache() {
        synchronized (RECENT) {
            RECENT.clear();
            recentBytes = 0;
        }
    }

    /** Bytes this skim holds (its counters' copies dominate). */
    public long footprint() {
        long cellsLen = 0;
        for (double[] row : residual) {
            cellsLen += 2L * row.length;
        }
        return 8L * (cellsLen + 2L * keys.length) + 64;
    }

    private static Skim compute(SketchState a, String fn) {
        Spec s = a.spec();
        double[][] counters = a.counterRows();
        if (a.exactMode()) {
            return exactSkim(a, counters);
        }
        Candidates cand;
        if (s.domain != 0) {
            cand = Candidates.of(s.seed, s.width, s.depth, 0, (int) s.domain);
        } else if (s.virtualLg > 0) {
            cand = Candidates.of(s.seed, s.width, s.depth, 0, 1 << s.virtualLg);
        } else if (s.range) {
            cand = rangeCandidates(s, a.keyRange());
        } else {
            long[] keys = new PrefixSearch(s.seed, s.hierLg, s.hierDepth).search(a.hierRows(), searchFloor(a, counters));
            cand = Candidates.ofKeys(s.seed, s.width, s.depth, keys);
        }
        SkimDense.Result r = SkimDense.run(counters, cand, s.param);
        Skim out = new Skim(r.keys, r.values, r.residual, counters, false, r.cells, r.tested);
        out.complete = r.complete;
        return out;
    }

    /**
     * SkimmedSketch._search_floor: the prefix search's lowest threshold, skim_factor * max(|total
     * weight|, sqrt(F2)) / width with F2 the larger of the self-join tables' mean and median.
     */
    public static double searchFloor(SketchState a, double[][] counters) {
        double[] rows = Sums.rowDots(counters, counters);
        double f2 = Math.max(Math.max(Sums.mean(rows), Sums.median(rows)), 0.0);
        double n = Math.max(Math.abs(a.totalWeight()), Math.sqrt(f2));
        return a.spec().param * n / a.spec().width;
    }

    /** range_candidates of the key range, or null (no candidates: the sketch cannot scan its keys). */
    private static Candidates rangeCandidates(Spec s, long[] kr) {
        if (kr == null || Long.compareUnsigned(kr[1] - kr[0], Spec.MAX_SCAN_DOMAIN) >= 0) {
            return null;
        }
        long lo = kr[0] - Math.floorMod(kr[0], RANGE_ALIGN);
        long hi = kr[1] - Math.floorMod(kr[1], RANGE_ALIGN) + RANGE_ALIGN - 1;
        if (hi - lo >= Spec.MAX_SCAN_DOMAIN) {
            lo = kr[0];
            hi = kr[1];
        }
        return Candidates.of(s.seed, s.width, s.depth, lo, (int) (hi - lo + 1));
    }

    private static Skim exactSkim(SketchState a, double[][] counters) {
        Spec s = a.spec();
        TreeMap<Long, Double> sorted = new TreeMap<>();
        for (Map.Entry<Long, ? extends Number> x : a.exactEntries().entrySet()) {
            sorted.put(x.getKey(), x.getValue().doubleValue());
        }
        TreeMap<Long, Double> out = sorted;
        if (s.virtualLg > 0) { // signed sums per virtual id, summed in key order as np.bincount does
            long salt = Hashing.entry(Hashing.state(s.seed, 1), 0, Hashing.HIER_WORD_BASE);
            out = new TreeMap<>();
            for (Map.Entry<Long, Double> x : sorted.entrySet()) {
                long y = Hashing.mix(x.getKey() ^ salt);
                long id = y >>> (64 - s.virtualLg);
                double v = x.getValue() * ((y & 1) == 0 ? 1.0 : -1.0);
                out.put(id, out.getOrDefault(id, 0.0) + v);
            }
        }
        long[] keys = new long[out.size()];
        double[] values = new double[out.size()];
        int i = 0;
        for (Map.Entry<Long, Double> x : out.entrySet()) {
            keys[i] = x.getKey();
            values[i++] = x.getValue();
        }
        double[][] zero = new double[s.depth][s.width];
        return new Skim(keys, values, zero, counters, true, null, keys.length);
    }

    /**
     * SkimmedSketch._doubtful: the mask of the dense keys a report would not name (skimdense.reported:
     * each key's estimates with its value put back must pass the report's rules) and the sketch of
     * those keys' values; none in exact mode.
     */
    public boolean[] doubtful() {
        boolean[] m = doubtfulMemo;
        if (m == null) {
            m = doubtfulMemo = computeDoubtful();
        }
        return m;
    }

    /** The sketch of the doubtful keys' values, sketchOf(doubtful()) (memoised: a skim never changes). */
    double[][] doubtSketch() {
        double[][] u = doubtSketchMemo;
        if (u == null) {
            u = doubtSketchMemo = sketchOf(doubtful());
        }
        return u;
    }

    private boolean[] computeDoubtful() {
        boolean[] out = new boolean[keys.length];
        if (exact || keys.length == 0) {
            return out;
        }
        PassRules rules = PassRules.report(residual, values, tested);
        int d = residual.length;
        double[] e = new double[d];
        for (int j = 0; j < keys.length; j++) {
            for (int p = 0; p < d; p++) {
                e[p] = residual[p][cells[p][j] >>> 1] * SkimDense.sign(cells[p][j]) + values[j];
            }
            out[j] = !rules.passing(e);
        }
        return out;
    }

    /** The (depth, width) sketch of the values of the keys in mask (np.bincount sums, in key order). */
    double[][] sketchOf(boolean[] mask) {
        int d = residual.length;
        int w = residual[0].length;
        double[][] out = new double[d][w];
        if (exact) {
            return out;
        }
        for (int p = 0; p < d; p++) {
            for (int j = 0; j < keys.length; j++) {
                double v = mask[j] ? values[j] : 0.0;
                out[p][cells[p][j] >>> 1] += v * SkimDense.sign(cells[p][j]);
            }
        }
        return out;
    }

    static boolean any(boolean[] m) {
        for (boolean b : m) {
            if (b) {
                return true;
            }
        }
        return false;
    }

    @Override
    public String toString() {
        return "Skim(" + Arrays.toString(keys) + ", " + Arrays.toString(values) + ")";
    }
}
