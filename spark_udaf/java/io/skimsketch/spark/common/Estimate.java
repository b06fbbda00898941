package io.skimsketch.spark.common;

/**
 * An estimate: value, interval, confidence, method (as skimsketch.Estimate without its detail); what
 * every family's estimator answers (the sketch's Estimator, the sample's SampleEstimator).
 */
public final class Estimate {
    public final double value;
    public final double low;
    public final double high;
    public final double confidence;
    public final String method;

    public Estimate(double value, double low, double high, double confidence, String method) {
        this.value = value;
        this.low = low;
        this.high = high;
        this.confidence = confidence;
        this.method = method;
    }

    /** The confidence of an interval, checked to be in (0, 1) (the core's message). */
    public static double checkConfidence(double c) {
        if (!(c > 0.0 && c < 1.0)) {
            throw new IllegalArgumentException("confidence must be in (0, 1), got " + Keys.pyRepr(c));
        }
        return c;
    }

    @Override
    public String toString() {
        return "Estimate(" + value + ", " + low + ", " + high + ", " + confidence + ", '" + method + "')";
    }
}
