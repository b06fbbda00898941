package io.skimsketch.spark.common;

/**
 * Float64 sums in the order numpy computes them, so that the skimmed estimator's discrete decisions
 * (thresholds, pass rules) see the same bits as the core: {@link #pairwise} is numpy's pairwise
 * summation (np.sum / np.mean along a contiguous axis), {@link #einsumDot} the order of
 * {@code np.einsum("pq,pq->p")} (two SSE lanes, blocks of eight read back to front, no fused
 * multiply-add; numpy's x86-64 baseline build). {@link #dot} stands for BLAS {@code np.dot}, whose
 * order depends on the CPU's kernel: it is a compensated dot product (within an ulp or two of any
 * order), used only where the core's value, not a decision, depends on it.
 */
public final class Sums {
    private static final int PW_BLOCKSIZE = 128;

    private Sums() {}

    /** numpy's pairwise_sum of a[off .. off + n). */
    public static double pairwise(double[] a, int off, int n) {
        if (n < 8) {
            double res = 0.0;
            for (int i = 0; i < n; i++) {
                res += a[off + i];
            }
            return res;
        }
        if (n <= PW_BLOCKSIZE) {
            double r0 = a[off];
            double r1 = a[off + 1];
            double r2 = a[off + 2];
            double r3 = a[off + 3];
            double r4 = a[off + 4];
            double r5 = a[off + 5];
            double r6 = a[off + 6];
            double r7 = a[off + 7];
            int i;
            for (i = 8; i < n - (n % 8); i += 8) {
                r0 += a[off + i];
                r1 += a[off + i + 1];
                r2 += a[off + i + 2];
                r3 += a[off + i + 3];
                r4 += a[off + i + 4];
                r5 += a[off + i + 5];
                r6 += a[off + i + 6];
                r7 += a[off + i + 7];
            }
            double res = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7));
            for (; i < n; i++) {
                res += a[off + i];
            }
            return res;
        }
        int n2 = n / 2;
        n2 -= n2 % 8;
        return pairwise(a, off, n2) + pairwise(a, off + n2, n - n2);
    }

    public static double pairwise(double[] a) {
        return pairwise(a, 0, a.length);
    }

    /** np.mean of a 1-d array (pairwise sum / n). */
    public static double mean(double[] a) {
        return pairwise(a) / a.length;
    }

    /** One row of np.einsum("pq,pq->p", x, y): sum_q x[q] y[q] in numpy's order. */
    static double einsumDot(double[] x, double[] y) {
        int n = x.length;
        double acc0 = 0.0;
        double acc1 = 0.0;
        int i = 0;
        for (; n - i >= 8; i += 8) {
            for (int blk = 3; blk >= 0; blk--) {
                int j = i + 2 * blk;
                acc0 = x[j] * y[j] + acc0;
                acc1 = x[j + 1] * y[j + 1] + acc1;
            }
        }
        for (; i < n; i += 2) {
            acc0 = x[i] * y[i] + acc0;
            if (i + 1 < n) {
                acc1 = x[i + 1] * y[i + 1] + acc1;
            } else {
                acc1 = 0.0 * 0.0 + acc1;
            }
        }
        return 0.0 + (acc0 + acc1);
    }

    /** row_dots(x, y) of the core (skimsketch/sketch/hash_sketch.py): per-table einsum dots. */
    public static double[] rowDots(double[][] x, double[][] y) {
        double[] out = new double[x.length];
        for (int p = 0; p < x.length; p++) {
            out[p] = einsumDot(x[p], y[p]);
        }
        return out;
    }

    /** A compensated dot product (Ogita, Rump, Oishi: Dot2), standing for np.dot of 1-d arrays. */
    public static double dot(double[] x, double[] y) {
        double s = 0.0;
        double c = 0.0;
        for (int i = 0; i < x.length; i++) {
            double h = x[i] * y[i];
            double r = Math.fma(x[i], y[i], -h);
            double t = s + h;
            double z = t - s;
            c += (s - (t - z)) + (h - z) + r;
            s = t;
        }
        return s + c;
    }

    /** A compensated sum (Neumaier) of a[0 .. n), for sums whose numpy order is not reproducible. */
    public static double accurate(double[] a, int n) {
        double s = 0.0;
        double c = 0.0;
        for (int i = 0; i < n; i++) {
            double t = s + a[i];
            c += Math.abs(s) >= Math.abs(a[i]) ? (s - t) + a[i] : (a[i] - t) + s;
            s = t;
        }
        return s + c;
    }

    /** np.median of a 1-d array. */
    public static double median(double[] xs) {
        double[] s = xs.clone();
        java.util.Arrays.sort(s);
        int n = s.length;
        return n % 2 == 1 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2.0;
    }
}
