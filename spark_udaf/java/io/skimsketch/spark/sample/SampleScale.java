package io.skimsketch.spark.sample;

import io.skimsketch.spark.CorruptSketchError;
import io.skimsketch.spark.CounterOverflowError;
import io.skimsketch.spark.common.Keys;

/**
 * Float totals of any finite magnitude (skimsketch/sample/scale.py, bit for bit). Scaling every total by 2^e scales
 * every rank u / w^2 by exactly 2^-2e while nothing under- or overflows, so the sample is defined by the exact
 * ranks: a rank is the pair (r, k), value r 2^k, with k = 0 and r the double rank of {@link SampleRank} for totals
 * within 2^-511 .. 2^484 (where it is exact and normal) and else, with w = m 2^E (m in [0.5, 1)), r = u / (m m)
 * and k = -2E. A finished sample stores tau at its scale exponent sigma (the rank at totals times 2^sigma):
 * 0 when every kept |total| is in 2^-511 .. 2^511 and tau is a normal double or infinite (layout 2), else
 * 484 - E_K (the largest kept total scales into [2^483, 2^484); layout 3), refused (CounterOverflowError) when the
 * smallest kept total then scales below 2^-511 or tau beyond the doubles.
 */
final class SampleScale {
    static final double LOW = 0x1p-511;
    static final double OLD_HIGH = 0x1p511;
    static final double FAST_HIGH = 0x1p484;
    static final int TOP = 484;

    private SampleScale() {}

    /** The unbiased binary exponent of a finite positive double, subnormals included: x in [2^e, 2^(e+1)). */
    static int exp(double x) {
        return x < Double.MIN_NORMAL ? Math.getExponent(x * 0x1p64) - 64 : Math.getExponent(x);
    }

    /** The shift k of the rank of a total of magnitude w (0 where the double rank is exact). */
    static int shift(double w) {
        return w >= LOW && w < FAST_HIGH ? 0 : -2 * (exp(w) + 1);
    }

    /** r of the rank (r, k) of a fingerprint with a total of magnitude w. */
    static double rank(long fp, double w, int k) {
        if (k == 0) {
            return SampleRank.rank(fp, w);
        }
        double m = Math.scalb(w, k / 2);
        return SampleRank.unit(fp) / (m * m);
    }

    /** The order of rank values r_a 2^k_a and r_b 2^k_b (positive, finite), exact. */
    static int compareValue(double ra, int ka, double rb, int kb) {
        if (ka == kb) {
            return Double.compare(ra, rb);
        }
        int ea = exp(ra);
        int eb = exp(rb);
        if (ea + ka != eb + kb) {
            return Integer.compare(ea + ka, eb + kb);
        }
        return Double.compare(Math.scalb(ra, -ea), Math.scalb(rb, -eb));
    }

    /** (rank, fp) order of rank pairs: negative when (a) comes first. */
    static int compare(double ra, int ka, long fa, double rb, int kb, long fb) {
        int c = compareValue(ra, ka, rb, kb);
        return c != 0 ? c : Long.compare(fa, fb);
    }

    private static boolean normal(int frexpExponent) {
        return frexpExponent >= -1021 && frexpExponent <= 1024;
    }

    /**
     * The finished sample of the kept entries (rank order) with the threshold r 2^k (r infinite: every key kept):
     * tau stored at the sample's scale exponent, or the core's CounterOverflowError (scale.storage).
     */
    static SampleState.Fin fin(long[] fps, long[] ts, double r, int k, long nKeys, boolean isFloat) {
        boolean inf = Double.isInfinite(r);
        int x = inf ? 0 : exp(r) + 1 + k; // tau = q 2^x, q in [0.5, 1)
        double q = inf ? r : Math.scalb(r, -exp(r) - 1);
        int sigma = sigma(ts, isFloat, inf, x);
        return new SampleState.Fin(fps, ts, inf ? r : Math.scalb(q, x - 2 * sigma), nKeys, isFloat, sigma);
    }

    private static int sigma(long[] ts, boolean isFloat, boolean inf, int x) {
        if (ts.length == 0) {
            return inf || normal(x) ? 0 : Math.floorDiv(x, 2);
        }
        double top = 0.0;
        double low = Double.POSITIVE_INFINITY;
        for (long t : ts) {
            double w = Math.abs(isFloat ? Double.longBitsToDouble(t) : (double) t);
            top = Math.max(top, w);
            low = Math.min(low, w);
        }
        if (low >= LOW && top < OLD_HIGH && (inf || normal(x))) {
            return 0;
        }
        int sigma = TOP - (exp(top) + 1);
        if (Math.scalb(low, sigma) < LOW || (!inf && !normal(x - 2 * sigma))) {
            String tau = inf ? "" : " and its threshold tau about 2**" + x + " at totals of scale 1";
            throw new CounterOverflowError("a JoinSample of float totals keeps totals from " + Keys.pyRepr(low)
                    + " to " + Keys.pyRepr(top) + " in magnitude" + tau + ": more than the doubles can rank at one "
                    + "scale (the kept totals, and the first dropped key's, within about 2**994 of the largest kept "
                    + "one); drop or clip the negligible totals (below 2**-990 times the largest), or sample the "
                    + "extreme keys separately and add their join answers");
        }
        return sigma;
    }

    /** A layout-3 sample's scale exponent must be its entries' and threshold's (scale.check_stored). */
    static void checkStored(long[] ts, double tau, int sigma) {
        String want;
        try {
            boolean inf = Double.isInfinite(tau);
            int s = sigma(ts, true, inf, inf ? 0 : exp(tau) + 1 + 2 * sigma);
            want = Integer.toString(s);
        } catch (CounterOverflowError e) {
            want = "None";
        }
        if (!want.equals(Integer.toString(sigma))) {
            throw new CorruptSketchError("sample scale exponent " + sigma + " is not its entries' and threshold's ("
                    + want + "): altered bytes");
        }
    }
}
