package io.skimsketch.spark.common;

/**
 * The error function, accurate to about 1e-14 (the core uses math.erf; the sample's normal quantile,
 * SampleEstimator, agrees far within 1e-9). The skimmed sketch's interval on the JVM is the
 * Chebyshev-median one (Estimator.chebyshevK); the core's bound="normal" has no JVM twin.
 */
public final class NormalBounds {
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
}
