package io.skimsketch.spark.sketch.estimate;

import java.util.Arrays;

/**
 * The adaptive pass rules of SKIMDENSE (skimsketch/sketch/skim/skimdense.py: chance_passes, pass_rules,
 * _passing, _report_rules): for every majority r of the tables, the smallest threshold t_r (the
 * floor or a residual magnitude) at which the tested candidates, were they absent keys landing in
 * random buckets with random signs, would pass "at least r tables clear t_r with one sign" at most
 * budget / (number of rules) times in expectation (a Poisson-binomial tail). The thresholds are
 * searched as the core searches them (a grid of at most 129 points, then the bracketing gap), with
 * the same floating-point operations, so both pick the same threshold.
 */
final class PassRules {
    static final double BUDGET = 0.25;
    static final double REPORT_BUDGET = 1e-3;
    static final double REPORT_FLOOR = 1e-9;
    private static final int GRID = 129;

    /** rules: thresholds[j] for majority r = firstMajority + j (infinite: the rule passes nothing). */
    final double[] thresholds;
    final int firstMajority;

    private PassRules(double[] thresholds, int firstMajority) {
        this.thresholds = thresholds;
        this.firstMajority = firstMajority;
    }

    /** The lowest threshold of the rules (the round's threshold). */
    double lowest() {
        double m = Double.POSITIVE_INFINITY;
        for (double t : thresholds) {
            m = Math.min(m, t);
        }
        return m;
    }

    /** pass_rules(residual, tested, budget, floor, extra). */
    static PassRules of(double[][] residual, long tested, double budget, double floor, int extra) {
        int d = residual.length;
        int w = residual[0].length;
        int first = d / 2 + 1;
        int nr = d - first + 1;
        double[] out = new double[nr];
        Arrays.fill(out, Double.POSITIVE_INFINITY);
        if (tested == 0) {
            return new PassRules(out, first);
        }
        double[][] mags = new double[d][];
        double[] all = new double[d * w];
        int m = 0;
        for (int p = 0; p < d; p++) {
            mags[p] = new double[w];
            for (int q = 0; q < w; q++) {
                mags[p][q] = Math.abs(residual[p][q]);
                if (mags[p][q] > floor) {
                    all[m++] = mags[p][q];
                }
            }
            Arrays.sort(mags[p]);
        }
        Arrays.sort(all, 0, m);
        int u = 0;
        boolean withFloor = floor > 0;
        double[] xs = new double[m + 1];
        if (withFloor) {
            xs[u++] = floor;
        }
        for (int i = 0; i < m; i++) {
            if (i == 0 || all[i] != all[i - 1]) {
                xs[u++] = all[i];
            }
        }
        if (u == 0) {
            return new PassRules(out, first);
        }
        double limit = budget / nr;
        double scaled = tested * 2.0;
        // the coarse grid: unique(linspace(0, len(xs) - 1, min(len(xs), 129)).astype(intp))
        int num = Math.min(u, GRID);
        int[] grid = new int[num];
        int g = 0;
        double step = num > 1 ? (double) (u - 1) / (num - 1) : 0.0;
        for (int i = 0; i < num; i++) {
            int v = i == num - 1 && num > 1 ? u - 1 : (int) (i * step);
            if (g == 0 || grid[g - 1] != v) {
                grid[g++] = v;
            }
        }
        boolean[][] coarse = new boolean[g][];
        for (int i = 0; i < g; i++) {
            coarse[i] = passes(mags, w, xs[grid[i]], extra, scaled, limit, first);
        }
        for (int j = 0; j < nr; j++) {
            int i = 0;
            while (i < g && !coarse[i][j]) {
                i++;
            }
            if (i == g) {
                continue;
            }
            int best = grid[i];
            if (i > 0) { // an earlier threshold inside the gap may already pass
                for (int a = grid[i - 1] + 1; a < grid[i]; a++) {
                    if (passes(mags, w, xs[a], extra, scaled, limit, first)[j]) {
                        best = a;
                        break;
                    }
                }
            }
            out[j] = xs[best];
        }
        return new PassRules(out, first);
    }

    /** Per rule: tested absent keys pass it at threshold x by chance at most limit times (chance_passes). */
    private static boolean[] passes(double[][] mags, int w, double x, int extra, double scaled, double limit,
                                    int first) {
        int d = mags.length;
        double[] tail = chanceTail(mags, w, x, extra);
        boolean[] out = new boolean[d - first + 1];
        for (int r = first; r <= d; r++) {
            out[r - first] = scaled * tail[r] <= limit;
        }
        return out;
    }

    /**
     * tail[r]: the probability that an absent key clears x with one sign in at least r of the d tables,
     * table p's share of buckets with |counter| >= x being (buckets at or above x in the sorted
     * magnitudes mags[p], plus extra, at most w) / w, halved for the sign (a Poisson-binomial tail).
     */
    static double[] chanceTail(double[][] mags, int w, double x, int extra) {
        int d = mags.length;
        double[] dist = new double[d + 1];
        dist[0] = 1.0;
        for (int p = 0; p < d; p++) {
            int above = w - searchsortedLeft(mags[p], x) + extra;
            double qp = (double) Math.min(w, above) / w / 2.0;
            double keep = 1 - qp;
            for (int r = d; r >= 1; r--) {
                dist[r] = dist[r] * keep + dist[r - 1] * qp;
            }
            dist[0] *= keep;
        }
        double[] tail = new double[d + 1];
        double acc = 0.0;
        for (int r = d; r >= 0; r--) {
            acc = r == d ? dist[d] : acc + dist[r];
            tail[r] = acc;
        }
        return tail;
    }

    /** numpy.searchsorted(sorted, x, side="left"). */
    static int searchsortedLeft(double[] sorted, double x) {
        int lo = 0;
        int hi = sorted.length;
        while (lo < hi) {
            int mid = (lo + hi) >>> 1;
            if (sorted[mid] < x) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        return lo;
    }

    /** _passing for one key's table estimates e (sorted in place): some rule (t, r) has r tables >= t or <= -t. */
    boolean passing(double[] e) {
        Arrays.sort(e);
        int d = e.length;
        for (int j = 0; j < thresholds.length; j++) {
            double t = thresholds[j];
            int r = firstMajority + j;
            if (Double.isFinite(t) && (e[d - r] >= t || e[r - 1] <= -t)) {
                return true;
            }
        }
        return false;
    }

    /** _report_rules: the rules a report of the dense keys applies (per query budget, own bucket counted). */
    static PassRules report(double[][] residual, double[] values, long tested) {
        double scale = 0.0;
        for (double[] row : residual) {
            for (double v : row) {
                scale = Math.max(scale, Math.abs(v));
            }
        }
        for (double v : values) {
            scale = Math.max(scale, Math.abs(v));
        }
        return of(residual, tested, REPORT_BUDGET, REPORT_FLOOR * scale, 1);
    }
}
