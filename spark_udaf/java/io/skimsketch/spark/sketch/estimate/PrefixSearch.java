package io.skimsketch.spark.sketch.estimate;

import io.skimsketch.spark.common.Hashing;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * The prefix hierarchy's top-down search for candidate keys (PrefixHierarchy.search of
 * skimsketch/sketch/skim/hierarchy.py): the 2^12 top-level prefixes of y = mix(key ^ salt) are tested; at each
 * of the LEVELS levels the prefixes passing the level's rules (peeled heaviest first for
 * PEEL_ROUNDS rounds at PEEL_BUDGET chance passes, then the rest at max(LEVEL_BUDGET_MIN,
 * tested / 512)) are expanded into their 256 children (at most MAX_EXPAND, the heaviest; MAX_EXPAND
 * / 4 at the last level, whose prefixes give 2^12 candidate keys each). The same float operations
 * as the core, so both find the same candidates.
 */
public final class PrefixSearch {
    static final int LEVELS = Hashing.LEVELS;
    static final int TOP_BITS = Hashing.TOP_BITS;
    static final int FANOUT_BITS = Hashing.FANOUT_BITS;
    static final int BOTTOM_BITS = 64 - TOP_BITS - FANOUT_BITS * (LEVELS - 1);
    static final int MAX_EXPAND = 512;
    static final int MAX_BOTTOM_DIVISOR = 4;
    static final double CHANCE_RATE = 1.0 / 512;
    static final double LEVEL_BUDGET_MIN = 8.0;
    static final double PEEL_BUDGET = 0.01;
    static final int PEEL_ROUNDS = 3;
    private static final int ZMUL = 0x9E3779B1;
    private static final long M1_INV = inverse(0xBF58476D1CE4E5B9L);
    private static final long M2_INV = inverse(0x94D049BB133111EBL);

    private final Hashing.Prefixes tables;
    private final int lg;
    private final int width;
    private final int depth;

    public PrefixSearch(long seed, int lg, int depth) {
        this.tables = Hashing.prefixes(seed, depth);
        this.lg = lg;
        this.width = 1 << lg;
        this.depth = depth;
    }

    /** The multiplicative inverse of an odd m modulo 2^64 (Newton's iteration). */
    private static long inverse(long m) {
        long x = m;
        for (int i = 0; i < 6; i++) {
            x *= 2 - m * x;
        }
        return x;
    }

    /** unmix: the inverse of Hashing.mix (skimsketch/keys/hashing.py). */
    static long unmix(long z) {
        z = z ^ (z >>> 31) ^ (z >>> 62);
        z *= M2_INV;
        z = z ^ (z >>> 27) ^ (z >>> 54);
        z *= M1_INV;
        return z ^ (z >>> 30) ^ (z >>> 60);
    }

    /** Candidate keys (in the core's order) of hierarchy counters [level][table][bucket] down to threshold t. */
    public long[] search(double[][][] counters, double t) {
        return search(counters, t, MAX_EXPAND);
    }

    /** search with another expansion cap (the core's max_expand; the golden vectors test the cap with it). */
    public long[] search(double[][][] counters, double t, int maxExpand) {
        int n = 1 << TOP_BITS;
        long[] prefixes = new long[n];
        int[] words = new int[n * depth]; // words[i * depth + p]: u of prefix i in table p
        for (int i = 0; i < n; i++) {
            prefixes[i] = i;
            System.arraycopy(tables.tables[0], i * depth, words, i * depth, depth);
        }
        for (int lvl = 0; lvl < LEVELS; lvl++) {
            Selected sel = levelSelect(counters[lvl], words, prefixes.length, t);
            int[] keep = sel.idx;
            int cap = lvl + 1 < LEVELS ? maxExpand : Math.max(1, maxExpand / MAX_BOTTOM_DIVISOR);
            if (keep.length > cap) { // the heaviest cap prefixes (stable on ties), back in index order
                Integer[] order = new Integer[keep.length];
                for (int j = 0; j < keep.length; j++) {
                    order[j] = j;
                }
                final double[] mag = sel.mag;
                Arrays.sort(order, (x, y) -> Double.compare(-mag[x] + 0.0, -mag[y] + 0.0));
                int[] top = new int[cap];
                for (int j = 0; j < cap; j++) {
                    top[j] = keep[order[j]];
                }
                Arrays.sort(top);
                keep = top;
            }
            int step = lvl + 1 < LEVELS ? FANOUT_BITS : BOTTOM_BITS;
            int fan = 1 << step;
            long[] next = new long[keep.length * fan];
            int[] nextWords = lvl + 1 < LEVELS ? new int[next.length * depth] : null;
            for (int j = 0; j < keep.length; j++) {
                for (int c = 0; c < fan; c++) {
                    int at = j * fan + c;
                    next[at] = prefixes[keep[j]] << step | c;
                    if (nextWords != null) {
                        for (int p = 0; p < depth; p++) {
                            nextWords[at * depth + p] = words[keep[j] * depth + p] ^ tables.tables[lvl + 1][c * depth + p];
                        }
                    }
                }
            }
            prefixes = next;
            words = nextWords;
        }
        long[] keys = new long[prefixes.length];
        for (int i = 0; i < keys.length; i++) {
            keys[i] = unmix(prefixes[i]) ^ tables.salt;
        }
        return keys;
    }

    private static final class Selected {
        final int[] idx;
        final double[] mag;

        Selected(int[] idx, double[] mag) {
            this.idx = idx;
            this.mag = mag;
        }
    }

    private int cell(int u) {
        return (u * ZMUL) >>> (31 - lg);
    }

    /** _level_select: the passing prefixes (ascending) with their |median| estimates. */
    private Selected levelSelect(double[][] counters, int[] words, int n, double t) {
        double[][] c = new double[depth][];
        for (int p = 0; p < depth; p++) {
            c[p] = counters[p].clone();
        }
        int[] bucket = new int[n * depth];
        double[] sign = new double[n * depth];
        for (int i = 0; i < n * depth; i++) {
            int cl = cell(words[i]);
            bucket[i] = cl & (width - 1);
            sign[i] = 1.0 - 2.0 * (cl >>> lg);
        }
        boolean[] removed = new boolean[n];
        List<Integer> foundIdx = new ArrayList<>();
        List<Double> foundMag = new ArrayList<>();
        int remaining = n;
        double[] e = new double[depth];
        for (int round = 0; round < PEEL_ROUNDS; round++) {
            double[][] rules = rules(c, t, n, PEEL_BUDGET);
            if (remaining == 0) {
                break;
            }
            List<Integer> pass = new ArrayList<>();
            List<Double> med = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                if (removed[i]) {
                    continue;
                }
                estimates(c, bucket, sign, i, e);
                if (passes(e, rules)) {
                    pass.add(i);
                    med.add(Math.abs(median(e)));
                }
            }
            if (pass.isEmpty()) {
                break;
            }
            Integer[] order = new Integer[pass.size()];
            for (int j = 0; j < order.length; j++) {
                order[j] = j;
            }
            Arrays.sort(order, (x, y) -> Double.compare(-med.get(x) + 0.0, -med.get(y) + 0.0));
            List<Integer> peeled = new ArrayList<>();
            for (int j : order) {
                int i = pass.get(j);
                estimates(c, bucket, sign, i, e);
                if (passes(e, rules)) { // _row_passes: re-checked on what the ones before left
                    double m = median(e);
                    for (int p = 0; p < depth; p++) {
                        c[p][bucket[i * depth + p]] -= m * sign[i * depth + p];
                    }
                    peeled.add(i);
                    foundIdx.add(i);
                    foundMag.add(Math.abs(m));
                }
            }
            if (peeled.isEmpty()) {
                break;
            }
            for (int i : peeled) {
                removed[i] = true;
            }
            remaining -= peeled.size();
        }
        double[][] rules = rules(c, t, n, Math.max(LEVEL_BUDGET_MIN, n * CHANCE_RATE));
        for (int i = 0; i < n; i++) {
            if (removed[i]) {
                continue;
            }
            estimates(c, bucket, sign, i, e);
            if (passes(e, rules)) {
                foundIdx.add(i);
                foundMag.add(Math.abs(median(e)));
            }
        }
        Integer[] order = new Integer[foundIdx.size()];
        for (int j = 0; j < order.length; j++) {
            order[j] = j;
        }
        Arrays.sort(order, (x, y) -> Integer.compare(foundIdx.get(x), foundIdx.get(y)));
        int[] idx = new int[order.length];
        double[] mag = new double[order.length];
        for (int j = 0; j < order.length; j++) {
            idx[j] = foundIdx.get(order[j]);
            mag[j] = foundMag.get(order[j]);
        }
        return new Selected(idx, mag);
    }

    private void estimates(double[][] c, int[] bucket, double[] sign, int i, double[] e) {
        for (int p = 0; p < depth; p++) {
            e[p] = c[p][bucket[i * depth + p]] * sign[i * depth + p];
        }
    }

    /** np.median of one prefix's table estimates. */
    private static double median(double[] e) {
        double[] s = e.clone();
        Arrays.sort(s);
        int n = s.length;
        return n % 2 == 1 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2.0;
    }

    /** _passes / _row_passes: some rule (x, r) has at least r estimates >= x, or at least r <= -x. */
    private static boolean passes(double[] e, double[][] rules) {
        for (double[] rule : rules) {
            double x = rule[0];
            int r = (int) rule[1];
            int up = 0;
            int down = 0;
            for (double v : e) {
                up += v >= x ? 1 : 0;
                down += v <= -x ? 1 : 0;
            }
            if (Double.isFinite(x) && (up >= r || down >= r)) {
                return true;
            }
        }
        return false;
    }

    /** PrefixHierarchy._rules: per majority r, the smallest threshold >= t (t or a counter magnitude) within budget. */
    private double[][] rules(double[][] counters, double t, long tested, double budget) {
        int d = depth;
        int first = d / 2 + 1;
        int nr = d - first + 1;
        double share = budget / nr;
        double[][] srt = new double[d][];
        double[] all = new double[d * width];
        int m = 0;
        for (int p = 0; p < d; p++) {
            srt[p] = new double[width];
            for (int q = 0; q < width; q++) {
                srt[p][q] = Math.abs(counters[p][q]);
                if (srt[p][q] > t) {
                    all[m++] = srt[p][q];
                }
            }
            Arrays.sort(srt[p]);
        }
        Arrays.sort(all, 0, m);
        double[] xs = new double[m + 1];
        int u = 0;
        xs[u++] = t;
        for (int i = 0; i < m; i++) {
            if (i == 0 || all[i] != all[i - 1]) {
                xs[u++] = all[i];
            }
        }
        double[][] out = new double[nr][];
        for (int j = 0; j < nr; j++) {
            out[j] = new double[] {Double.POSITIVE_INFINITY, first + j};
        }
        int open = nr;
        for (int i = 0; i < u && open > 0; i++) {
            double[] tail = PassRules.chanceTail(srt, width, xs[i], 0);
            for (int j = 0; j < nr; j++) {
                if (out[j][0] == Double.POSITIVE_INFINITY && tested * 2.0 * tail[first + j] <= share) {
                    out[j][0] = xs[i];
                    open--;
                }
            }
        }
        return out;
    }
}
