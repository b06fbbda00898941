package io.skimsketch.spark.sketch.estimate;

import io.skimsketch.spark.common.Estimate;
import io.skimsketch.spark.sketch.SketchState;

/**
 * The rule every kind's join estimate obeys (the core's skimsketch/sketch/signed_join.py), applied by
 * {@link Estimator#join} to the estimate of each kind.
 * <ul>
 * <li>Float counters far from 1 (largest magnitude outside 2^-RESCALE .. 2^RESCALE, counter mode): the
 * variance bound multiplies four counter magnitudes (F2(f) F2(g)), which would overflow or underflow; the
 * estimate is taken on copies scaled by an exact power of two and its value and interval scaled back, so
 * the answer is the one at scale 1 times the scale.</li>
 * <li>Signs: when both sketches know their frequencies are non-negative the estimate is clipped at 0; an
 * interval wholly below 0 falls back to Cauchy-Schwarz, {@code 0 <= J <= sqrt(F2(f) F2(g))} (the self-join
 * bounds of the copies the estimate was taken on).</li>
 * </ul>
 */
final class SignedJoin {
    /** signed_join.RESCALE: float counters beyond 2^+-RESCALE in magnitude are rescaled for a join. */
    static final int RESCALE = 120;

    /** A kind's join estimate without the rule (Estimator's per-kind estimators). */
    interface Join {
        Estimate of(SketchState a, SketchState b, Skim ka, Skim kb);
    }

    private SignedJoin() {}

    /** FloatRescale._rescale_exponent: -e with 2^e the magnitude of counter-mode float counters far from 1, else 0. */
    static int rescaleExponent(SketchState s) {
        double top = s.floatMagnitude();
        if (top == 0.0 || !Double.isFinite(top)) {
            return 0;
        }
        int e = frexpExponent(top);
        return Math.abs(e) > RESCALE ? -e : 0;
    }

    /** Python's math.frexp(x)[1] of a finite x != 0: x = m 2^e with 0.5 <= |m| < 1 (subnormals included). */
    static int frexpExponent(double x) {
        int e = Math.getExponent(x);
        if (e < Double.MIN_EXPONENT) { // subnormal: normalise first (exact)
            return Math.getExponent(Math.scalb(x, 64)) - 64 + 1;
        }
        return e + 1;
    }

    /**
     * The estimate of join on (rescaled copies of) a and b with the sign rule: ka, kb are skims a caller kept
     * (null: none), used only for a side that is not rescaled (a rescaled copy has a skim of its own).
     */
    static Estimate join(SketchState a, SketchState b, Skim ka, Skim kb, double conf, String fn, Join join) {
        int ea = rescaleExponent(a);
        int eb = rescaleExponent(b);
        SketchState sa = ea != 0 ? a.scaled(ea) : a;
        SketchState sb = eb != 0 ? b.scaled(eb) : b;
        Estimate est = join.of(sa, sb, ea != 0 ? null : ka, eb != 0 ? null : kb);
        int back = -(ea + eb);
        if (back != 0) {
            est = new Estimate(Math.scalb(est.value, back), Math.scalb(est.low, back), Math.scalb(est.high, back),
                    est.confidence, est.method);
        }
        if (!(a.nonnegative() && b.nonnegative())) {
            return est;
        }
        if (est.high < 0) { // the interval missed (J >= 0): Cauchy-Schwarz, J <= sqrt(F2(f) F2(g))
            double top = Math.sqrt(Math.max(Estimator.selfJoin(sa, est.confidence, fn).high, 0.0))
                    * Math.sqrt(Math.max(Estimator.selfJoin(sb, est.confidence, fn).high, 0.0));
            return new Estimate(0.0, 0.0, Math.scalb(top, back), est.confidence, est.method);
        }
        return Estimator.atLeastZero(est);
    }
}
