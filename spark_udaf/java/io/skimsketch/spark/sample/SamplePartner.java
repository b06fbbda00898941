package io.skimsketch.spark.sample;

import java.util.Arrays;

/**
 * Partner totals of the keys only one sample kept (skimsketch/sample/partner.py): for a key that a
 * kept and b did not, |g| <= c = sqrt(u / tau_b), estimated as
 * E = min(c, max(d, (integral of S over [0, c] - c S(c)) / (1 - S(c)))) with
 * S(v) = (min(1, d / v) + N>=(v)) / (1 + N(v)) over the deciders (a's certain keys): N(v) those with
 * c_j <= v, N>=(v) those b kept with |g_j| >= v; d is b's dropped mean.
 */
final class SamplePartner {
    private SamplePartner() {}

    /**
     * E for each bound of {@code query} (positive) from the deciders' bounds {@code dec} and partner totals
     * {@code partner} (|g_j|, NaN where b did not keep the decider).
     */
    static double[] means(double[] dec, double[] partner, double[] query, double d) {
        double[] out = new double[query.length];
        if (query.length == 0) {
            return out;
        }
        int nk = 0;
        for (double p : partner) {
            nk += Double.isNaN(p) ? 0 : 1;
        }
        double[] cKept = new double[nk];
        double[] gKept = new double[nk];
        for (int j = 0, k = 0; j < dec.length; j++) {
            if (!Double.isNaN(partner[j])) {
                cKept[k] = dec[j];
                gKept[k++] = partner[j];
            }
        }
        double[] cAll = dec.clone();
        Arrays.sort(cAll);
        Arrays.sort(cKept);
        Arrays.sort(gKept);
        double[] pts = points(d, cAll, gKept, query);
        int n = pts.length;
        int[] nLe = countLe(cAll, pts, true);
        int[] kcLe = countLe(cKept, pts, true);
        int[] gLt = countLe(gKept, pts, false);
        int[] gLe = countLe(gKept, pts, true);
        double[] integral = new double[n];
        for (int i = 0; i + 1 < n; i++) {
            double lo = pts[i];
            double hi = pts[i + 1];
            double prior = Math.min(hi, d) - Math.min(lo, d);
            if (d > 0) {
                prior += d * (Math.log(Math.max(hi, d)) - Math.log(Math.max(lo, d)));
            }
            integral[i + 1] = integral[i] + (prior + (kcLe[i] - gLe[i]) * (hi - lo)) / (1.0 + nLe[i]);
        }
        for (int q = 0; q < query.length; q++) {
            double c = query[q];
            int at = Arrays.binarySearch(pts, c);
            double s = (Math.min(1.0, d / c) + (kcLe[at] - gLt[at])) / (1.0 + nLe[at]);
            double mean = s < 1.0 ? (integral[at] - c * s) / (1.0 - s) : c;
            out[q] = Math.min(c, Math.max(d, mean));
        }
        return out;
    }

    /** The sorted distinct values of 0, d and the three arrays. */
    private static double[] points(double d, double[] a, double[] b, double[] c) {
        double[] all = new double[2 + a.length + b.length + c.length];
        all[0] = 0.0;
        all[1] = d;
        System.arraycopy(a, 0, all, 2, a.length);
        System.arraycopy(b, 0, all, 2 + a.length, b.length);
        System.arraycopy(c, 0, all, 2 + a.length + b.length, c.length);
        Arrays.sort(all);
        int n = 0;
        for (int i = 0; i < all.length; i++) {
            if (n == 0 || all[i] != all[n - 1]) {
                all[n++] = all[i];
            }
        }
        return Arrays.copyOf(all, n);
    }

    /** For each of the sorted {@code pts}: how many of the sorted {@code xs} are {@code <=} it (or {@code <}). */
    private static int[] countLe(double[] xs, double[] pts, boolean orEqual) {
        int[] out = new int[pts.length];
        int k = 0;
        for (int i = 0; i < pts.length; i++) {
            while (k < xs.length && (xs[k] < pts[i] || (orEqual && xs[k] == pts[i]))) {
                k++;
            }
            out[i] = k;
        }
        return out;
    }
}
