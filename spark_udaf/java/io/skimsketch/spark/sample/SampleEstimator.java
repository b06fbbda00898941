package io.skimsketch.spark.sample;

import io.skimsketch.spark.CorruptSketchError;
import io.skimsketch.spark.IncompatibleSketchError;
import io.skimsketch.spark.common.Estimate;
import io.skimsketch.spark.common.NormalBounds;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;

/**
 * The core's join-sample estimates (skimsketch/sample/estimator.py, JoinSample.join_size, self_join_size,
 * frequency) on the JVM, over key fingerprints. With f, g the totals of the fingerprints both samples kept
 * and p = min(1, tau_f f^2, tau_g g^2), J^ = sum f g / p is unbiased; the interval ({@link SampleInterval},
 * skimsketch/sample/interval.py) joins sure bounds from what both samples know with a Chernoff bound on the
 * random rest, and the value is J^ clamped into the sure bounds. Both samples complete: exact.
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
        int[] ia = new int[Math.min(a.fps.length, b.fps.length)];
        int[] ib = new int[ia.length];
        int m = 0;
        for (int i = 0; i < a.fps.length; i++) {
            Integer j = inB.get(a.fps[i]);
            if (j != null) {
                ia[m] = i;
                ib[m++] = j;
            }
        }
        if (a.complete() && b.complete()) { // both samples kept every key: exact
            double value = 0.0;
            for (int k = 0; k < m; k++) {
                value += a.total(ia[k]) * b.total(ib[k]);
            }
            return new Estimate(value, value, value, 1.0, METHOD);
        }
        return SampleInterval.estimate(new SampleInterval.Side(sa, a), new SampleInterval.Side(sb, b),
                Arrays.copyOf(ia, m), Arrays.copyOf(ib, m), conf, METHOD);
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
        double bound = Math.scalb(Math.sqrt(SampleRank.unit(fp) / f.tau), -f.scale);
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
