package io.skimsketch.spark.sample;

import io.skimsketch.spark.CorruptSketchError;
import io.skimsketch.spark.IncompatibleSketchError;
import io.skimsketch.spark.common.Estimate;
import io.skimsketch.spark.common.NormalBounds;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;

/**
 * The core's join-sample estimates (skimsketch/sample/estimator.py, JoinSample.join_size,
 * self_join_size, frequency) on the JVM, over key fingerprints. With f, g the totals of the
 * fingerprints both samples kept and
 * p = min(1, tau_f f^2, tau_g g^2), J^ = sum f g / p is unbiased; the interval is
 * [J^ - z s, J^ + min(z s + A, z sqrt(s^2 + r^2 + r0^2))] with s^2 the Horvitz-Thompson variance plus
 * its largest term and A the smaller of min(M^, z r) + min(M0, z r0) and min(M^ + M0, z sqrt(r^2 + r0^2)):
 * M^ the missing mass of keys only one side kept (each at its partner estimate, SamplePartner), r^2
 * their variance bound sum f^2 / tau_g, M0 and r0^2 the mass and variance of keys neither kept at the
 * dropped means (skimsketch/sample/estimator.py). Both samples complete: exact.
 */
public final class SampleEstimator {
    static final String METHOD = "sample";

    private SampleEstimator() {}

    /** NormalDist().inv_cdf(0.5 + c / 2) = sqrt(2) erfinv(c). */
    static double z(double c) {
        double lo = 0.0;
        double hi = 10.0;
        for (int i = 0; i < 200; i++) {
            double mid = (lo + hi) / 2;
            if (NormalBounds.erf(mid) < c) {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        return Math.sqrt(2.0) * (lo + hi) / 2;
    }

    private static void checkJoin(SampleState a, SampleState b) {
        if (a.seed != b.seed) {
            throw SampleState.incompatible("seed", Long.toUnsignedString(a.seed), Long.toUnsignedString(b.seed),
                    "join");
        }
        int da = a.nKeys() > 0 ? a.keyDomain : 0;
        int db = b.nKeys() > 0 ? b.keyDomain : 0;
        if (da != 0 && db != 0 && da != db) {
            throw SampleState.incompatible("key_domain", SampleState.domainName(da), SampleState.domainName(db), "join");
        }
        a.checkRankHash(b, "join");
    }

    public static Estimate join(SampleState a, SampleState b, double confidence) {
        checkJoin(a, b);
        double conf = Estimate.checkConfidence(confidence);
        return estimate(a, b, conf);
    }

    public static Estimate selfJoin(SampleState a, double confidence) {
        double conf = Estimate.checkConfidence(confidence);
        Estimate e = estimate(a, a, conf);
        if (!(e.low < 0.0)) {
            return e;
        }
        return new Estimate(Math.max(e.value, 0.0), 0.0, Math.max(e.high, 0.0), e.confidence, e.method);
    }

    private static Estimate estimate(SampleState sa, SampleState sb, double conf) {
        SampleState.Fin a = sa.sample();
        SampleState.Fin b = sb.sample();
        Map<Long, Integer> inB = new HashMap<>();
        for (int j = 0; j < b.fps.length; j++) {
            inB.put(b.fps[j], j);
        }
        double[] partnerA = nans(a.fps.length);
        double[] partnerB = nans(b.fps.length);
        double value = 0.0;
        double var = 0.0;
        double v0 = 0.0;
        boolean exact = a.complete() && b.complete();
        for (int i = 0; i < a.fps.length; i++) {
            Integer j = inB.get(a.fps[i]);
            if (j == null) {
                continue;
            }
            double f = a.total(i);
            double g = b.total(j);
            partnerA[i] = Math.abs(g);
            partnerB[j] = Math.abs(f);
            if (exact) {
                value += f * g;
                continue;
            }
            double pf = a.complete() ? 1.0 : a.tau * f * f;
            double pg = b.complete() ? 1.0 : b.tau * g * g;
            double p = Math.min(1.0, Math.min(pf, pg));
            double t = f * g / p;
            value += t;
            double v = t * t * (1.0 - p);
            var += v;
            if (p < 1) {
                v0 = Math.max(v0, v);
            }
        }
        if (exact) {
            return new Estimate(value, value, value, 1.0, METHOD);
        }
        double da = droppedMean(sa, a);
        double db = droppedMean(sb, b);
        double[] ma = missing(a, partnerA, sb, b, db);
        double[] mb = missing(b, partnerB, sa, a, da);
        double z = z(conf);
        double spread = z * Math.sqrt(var + v0);
        double[] m0 = neither(a, b, da, db);
        double missing = ma[0] + mb[0];
        double missingVar = ma[1] + mb[1];
        double allowance = Math.min(
                Math.min(missing, z * Math.sqrt(missingVar)) + Math.min(m0[0], z * Math.sqrt(m0[1])),
                Math.min(missing + m0[0], z * Math.sqrt(missingVar + m0[1])));
        double upper = Math.min(spread + allowance, z * Math.sqrt(var + v0 + missingVar + m0[1]));
        return new Estimate(value, value - spread, value + upper, conf, METHOD);
    }

    /** Mean |total| of the keys the sample dropped. */
    private static double droppedMean(SampleState s, SampleState.Fin f) {
        long rest = f.nKeys - f.fps.length;
        if (rest <= 0) {
            return 0.0;
        }
        double kept = 0.0;
        for (int i = 0; i < f.fps.length; i++) {
            kept += Math.abs(f.total(i));
        }
        return Math.max(0.0, Math.abs(s.totalWeight()) - kept) / rest;
    }

    /** {M0, r0^2} of the keys neither sample kept: n0 = the smaller dropped-key count, at the dropped means da, db. */
    private static double[] neither(SampleState.Fin a, SampleState.Fin b, double da, double db) {
        if (a.complete() || b.complete()) {
            return new double[] {0.0, 0.0};
        }
        long n0 = Math.min(a.nKeys - a.fps.length, b.nKeys - b.fps.length);
        if (n0 <= 0) {
            return new double[] {0.0, 0.0};
        }
        return new double[] {n0 * da * db, n0 * Math.max(db * db / a.tau, da * da / b.tau)};
    }

    private static double[] nans(int n) {
        double[] out = new double[n];
        Arrays.fill(out, Double.NaN);
        return out;
    }

    /**
     * {M^, r^2}'s parts on the keys a kept and b did not: each |f| times its partner estimate (SamplePartner, from
     * a's certain keys); {@code partner} holds |g| of a's entries b kept (NaN elsewhere); db is b's dropped mean.
     */
    private static double[] missing(SampleState.Fin a, double[] partner, SampleState sb, SampleState.Fin b,
                                    double db) {
        if (b.complete()) {
            return new double[] {0.0, 0.0};
        }
        int n = a.fps.length;
        double[] dec = new double[n];
        double[] decPartner = new double[n];
        double[] query = new double[n];
        double[] weight = new double[n];
        int nDec = 0;
        int nOnly = 0;
        double squares = 0.0;
        for (int i = 0; i < n; i++) {
            double u = SampleRank.unit(a.fps[i]);
            double bound = Math.sqrt(u / b.tau);
            double f = a.total(i);
            if (a.complete() || a.tau * f * f >= 1.0) {  // a keeps it whatever its u: a decider
                dec[nDec] = bound;
                decPartner[nDec++] = partner[i];
            }
            if (Double.isNaN(partner[i]) && (sb.isFloat || u >= b.tau)) {  // integer g with u < tau_b: g = 0
                query[nOnly] = bound;
                weight[nOnly++] = Math.abs(f);
                squares += f * f;
            }
        }
        double[] means = SamplePartner.means(Arrays.copyOf(dec, nDec), Arrays.copyOf(decPartner, nDec),
                Arrays.copyOf(query, nOnly), db);
        double sum = 0.0;
        for (int q = 0; q < nOnly; q++) {
            sum += weight[q] * means[q];
        }
        return new double[] {sum, squares / b.tau};
    }

    /** f(key): exact for a kept fingerprint fp(key); a dropped one 0 within +- sqrt(u(fp) / tau); both confidence 1. */
    public static Estimate frequency(SampleState s, long key, int kd, double confidence) {
        Estimate.checkConfidence(confidence);
        int sd = s.nKeys() > 0 ? s.keyDomain : 0;
        if (sd != 0 && sd != kd) {
            throw SampleState.incompatible("key_domain", SampleState.domainName(sd), SampleState.domainName(kd),
                    "query");
        }
        SampleState.Fin f = s.sample();
        long fp = s.fp(key);
        for (int i = 0; i < f.fps.length; i++) {
            if (f.fps[i] == fp) {
                double v = f.total(i);
                return new Estimate(v, v, v, 1.0, METHOD);
            }
        }
        if (f.complete()) {
            return new Estimate(0.0, 0.0, 0.0, 1.0, METHOD);
        }
        double bound = Math.sqrt(SampleRank.unit(fp) / f.tau);
        return new Estimate(0.0, -bound, bound, 1.0, METHOD);
    }

    /** The incompatibility of a sample and a sketch (the core's type check). */
    public static IncompatibleSketchError mixed(byte[] a, byte[] b, String op) {
        return SampleState.incompatible("type", "'" + SampleFormat.typeName(a) + "'", "'" + SampleFormat.typeName(b)
                + "'", op);
    }

    // -- on bytes (the SQL functions): a sample against a sketch is the core's incompatibility error --
    public static SampleState load(byte[] blob, String what) {
        try {
            return SampleFormat.decode(blob);
        } catch (CorruptSketchError e) {
            throw new CorruptSketchError(what + ": " + e.getMessage());
        }
    }

    public static Estimate join(byte[] a, byte[] b, double confidence, String fn) {
        if (!(SampleFormat.isSample(a) && SampleFormat.isSample(b))) {
            throw SampleEstimator.mixed(a, b, "join");
        }
        return SampleEstimator.join(load(a, fn + "(a)"), load(b, fn + "(b)"), confidence);
    }

    public static Estimate selfJoin(byte[] a, double confidence, String fn) {
        return SampleEstimator.selfJoin(load(a, fn + "(a)"), confidence);
    }

    public static double frequency(byte[] a, long key, int kd, double confidence, String fn) {
        return SampleEstimator.frequency(load(a, fn + "(a)"), key, kd, confidence).value;
    }

    /** skim_union(a, b) on two samples (a sample and a sketch: the core's incompatibility error). */
    public static byte[] union(byte[] a, byte[] b) {
        if (!(SampleFormat.isSample(a) && SampleFormat.isSample(b))) {
            throw SampleEstimator.mixed(a, b, "merge");
        }
        return SampleFormat.decode(a).merge(SampleFormat.decode(b)).toBytes();
    }
}
