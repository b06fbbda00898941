package io.skimsketch.spark.common;

import java.util.concurrent.ConcurrentHashMap;

/**
 * normal_median_k of skimsketch/stats/bounds.py: the k such that median +- k sd(one table) covers at the
 * confidence for normal table errors, from the median's order-statistic density integrated as the
 * core integrates it (trapezoid rule on numpy's linspace(-8, 8, 32001)), with an erf accurate to
 * about 1e-14 (the core uses math.erf; the interval widths agree far within 1e-9).
 */
public final class NormalBounds {
    private static final ConcurrentHashMap<String, Double> CACHE = new ConcurrentHashMap<>();
    private static final int POINTS = 32001;

    private NormalBounds() {}

    /** erf(x) = 2/sqrt(pi) exp(-x^2) sum_n 2^n x^(2n+1) / (1 3 5 ... (2n+1)): positive terms, no cancellation. */
    public static double erf(double x) {
        if (x == 0.0 || Double.isNaN(x)) {
            return x;
        }
        double ax = Math.abs(x);
        if (ax > 6.0) {
            return Math.signum(x); // |1 - erf| < 1e-17
        }
        double x2 = ax * ax;
        double term = ax;
        double sum = ax;
        for (int n = 1; n < 1000; n++) {
            term *= 2.0 * x2 / (2 * n + 1);
            sum += term;
            if (term < 1e-17 * sum) {
                break;
            }
        }
        double r = Math.min(1.0, 2.0 / Math.sqrt(Math.PI) * Math.exp(-x2) * sum);
        return x < 0 ? -r : r;
    }

    private static double erfinv(double y) {
        double lo = 0.0;
        double hi = 10.0;
        for (int i = 0; i < 200; i++) {
            double mid = (lo + hi) / 2;
            if (erf(mid) < y) {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        return (lo + hi) / 2;
    }

    private static double comb(int n, int k) {
        double c = 1.0;
        for (int i = 0; i < k; i++) {
            c = c * (n - i) / (i + 1);
        }
        return Math.rint(c);
    }

    /** normal_median_k(depth, confidence). */
    public static double k(int depth, double confidence) {
        return k(depth, confidence, 0.0);
    }

    /** normal_median_k(depth, confidence, bias). */
    public static double k(int depth, double confidence, double bias) {
        return CACHE.computeIfAbsent(depth + "/" + confidence + "/" + bias, key -> compute(depth, confidence, bias));
    }

    /** biased_normal_z: z with P(|Z - bias| <= z) = confidence (the normal quantile when bias is 0). */
    static double biasedZ(double confidence, double bias) {
        double c = Estimate.checkConfidence(confidence);
        double b = Math.abs(bias);
        if (b == 0.0) {
            return Math.sqrt(2.0) * erfinv(c);
        }
        double lo = 0.0;
        double hi = 40.0;
        for (int i = 0; i < 200; i++) {
            double mid = (lo + hi) / 2;
            if (0.5 * (erf((mid - b) / Math.sqrt(2.0)) + erf((mid + b) / Math.sqrt(2.0))) < c) {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        return hi;
    }

    private static double compute(int depth, double confidence, double bias) {
        Estimate.checkConfidence(confidence);
        double z = biasedZ(confidence, bias);
        double step = 16.0 / (POINTS - 1);
        double[] x = new double[POINTS];
        double[] y = new double[POINTS];
        int lo = (depth - 1) / 2;
        int hi = depth / 2;
        int o = lo == hi ? lo : hi; // even depth: the larger order statistic's second moment
        double front = comb(depth - 1, o) * depth;
        for (int i = 0; i < POINTS; i++) {
            x[i] = i == POINTS - 1 ? 8.0 : i * step + -8.0;
            double pdf = Math.exp(-x[i] * x[i] / 2) / Math.sqrt(2 * Math.PI);
            double cdf = 0.5 * (1 + erf(x[i] / Math.sqrt(2)));
            double dens = front * Math.pow(cdf, o) * Math.pow(1 - cdf, depth - 1 - o) * pdf;
            y[i] = x[i] * x[i] * dens;
        }
        double[] parts = new double[POINTS - 1];
        for (int i = 0; i < POINTS - 1; i++) {
            parts[i] = (x[i + 1] - x[i]) * (y[i + 1] + y[i]) / 2.0;
        }
        double var = Sums.pairwise(parts);
        return Math.sqrt(var) * z;
    }
}
