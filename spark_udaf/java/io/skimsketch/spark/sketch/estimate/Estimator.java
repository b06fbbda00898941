package io.skimsketch.spark.sketch.estimate;

import io.skimsketch.spark.IncompatibleSketchError;
import io.skimsketch.spark.common.Estimate;
import io.skimsketch.spark.common.Hashing;
import io.skimsketch.spark.sketch.SketchState;
import io.skimsketch.spark.sketch.Spec;
import java.math.BigInteger;
import java.util.Arrays;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The core's estimators of AGMS and hash sketches (skimsketch/sketch/base.py, agms.py, hash_sketch.py,
 * bounds.py) and every exact-mode answer, on the JVM: join size, self-join size and frequency with
 * the Chebyshev-median interval, and the sketch's description. Plain Java (the self-test runs it
 * without Spark); EstimateFunctions wraps it for SQL. A skimmed sketch's self-join size and
 * frequency are its hash sketch's (in the virtual layout through the key's signed virtual id); its
 * join size is ESTSKIMJOINSIZE over SKIMDENSE ({@link SkimJoin}) in every layout (a domain, the
 * virtual ids, a key range, the prefix hierarchy).
 */
public final class Estimator {
    private static final ConcurrentHashMap<String, Double> CHEBYSHEV = new ConcurrentHashMap<>();

    private Estimator() {}

    private static String method(Spec s) {
        return s.kind == SketchState.KIND_AGMS ? "agms" : s.kind == SketchState.KIND_HASH ? "hash" : "skimmed";
    }

    private static Estimate exact(double v) {
        return new Estimate(v, v, v, 1.0, "exact");
    }

    // -- the queries ------------------------------------------------------------------------
    /** Sketch.join_size of every kind (skimmed: SkimJoin), with SignedJoin's sign and rescale rules. */
    public static Estimate join(SketchState a, SketchState b, double confidence, String fn) {
        return join(a, b, null, null, confidence, fn);
    }

    /**
     * Sketch.join_size with the skims of skimmed sketches a caller kept (sql.Summaries: each stored sketch
     * skimmed once); null where there is none (Skim.of then finds or computes it).
     */
    public static Estimate join(SketchState a, SketchState b, Skim ka, Skim kb, double confidence, String fn) {
        a.spec().checkCompatible(b.spec(), "join (" + fn + ")", false);
        int da = a.keyDomain();
        int db = b.keyDomain();
        if (da != 0 && db != 0 && da != db) {
            throw new IncompatibleSketchError("cannot join (" + fn + ") sketches: key_domain differs ('"
                    + SketchState.domainName(da) + "' != '" + SketchState.domainName(db) + "')");
        }
        double conf = Estimate.checkConfidence(confidence);
        return SignedJoin.join(a, b, ka, kb, conf, fn, (x, y, kx, ky) -> unsignedJoin(x, y, kx, ky, conf, fn));
    }

    /** Each kind's join estimate before the rule of {@link SignedJoin} (float rescaling, the sign rule). */
    private static Estimate unsignedJoin(SketchState a, SketchState b, Skim ka, Skim kb, double conf, String fn) {
        if (a.exactMode() && b.exactMode()) {
            return exact(dot(a.exactEntries(), b.exactEntries()));
        }
        if (a.spec().kind == SketchState.KIND_SKIMMED) {
            return SkimJoin.join(a, b, ka, kb, conf, fn);
        }
        double[] rows = joinTables(a, b);
        double j = median(rows);
        double var = (f2Bound(selfTables(a)) * f2Bound(selfTables(b)) + j * j) / a.spec().width;
        return medianEstimate(rows, var, conf, method(a.spec()));
    }

    /** Sketch.self_join_size (on a rescaled copy for float counters far from 1, as SketchQueries.self_join_size). */
    public static Estimate selfJoin(SketchState a, double confidence, String fn) {
        double conf = Estimate.checkConfidence(confidence);
        if (a.exactMode()) {
            return exact(dot(a.exactEntries(), a.exactEntries()));
        }
        int e = SignedJoin.rescaleExponent(a);
        if (e != 0) { // float counters far from 1: F2^2 would overflow; an exactly rescaled copy, scaled back
            Estimate est = selfJoin(a.scaled(e), conf, fn);
            return new Estimate(Math.scalb(est.value, -2 * e), Math.scalb(est.low, -2 * e),
                    Math.scalb(est.high, -2 * e), est.confidence, est.method);
        }
        double[] rows = selfTables(a);
        double f2 = f2Bound(rows);
        return atLeastZero(medianEstimate(rows, 2.0 * f2 * f2 / a.spec().width, conf, method(a.spec())));
    }

    /**
     * Sketch.frequency of a canonical key of key domain kd. A key of the other domain (a string in a
     * sketch of integers, or the reverse) is a KeyTypeError: such keys never match.
     */
    public static Estimate frequency(SketchState a, long key, int kd, String keyRepr, double confidence, String fn) {
        double conf = Estimate.checkConfidence(confidence);
        int sd = a.keyDomain();
        if (sd != 0 && sd != kd) {
            throw new IncompatibleSketchError(crossTypeMessage(keyRepr, kd, sd));
        }
        if (a.exactMode()) {
            Number w = a.exactEntries().get(key);
            return exact(w == null ? 0.0 : w.doubleValue());
        }
        Spec s = a.spec();
        double[][] c = a.counterRows();
        double sign = 1.0;
        if (s.virtualLg > 0) { // SkimmedSketch._point_tables: the key's signed virtual id
            long y = Hashing.mix(key ^ Hashing.entry(Hashing.state(s.seed, 1), 0, Hashing.HIER_WORD_BASE));
            key = y >>> (64 - s.virtualLg);
            sign = (y & 1) == 0 ? 1.0 : -1.0;
        }
        double[] rows = new double[s.depth];
        if (s.kind == SketchState.KIND_AGMS) {
            double[][] sg = Hashing.agmsSigns(s.seed, key, s.width, s.depth);
            for (int p = 0; p < s.depth; p++) {
                double acc = 0;
                for (int q = 0; q < s.width; q++) {
                    acc += c[p][q] * sg[p][q];
                }
                rows[p] = acc / s.width;
            }
        } else {
            Hashing.Family fam = Hashing.family(s.seed, (s.depth + 1) / 2);
            long[] words = new long[fam.nWords];
            fam.words(key, words);
            for (int p = 0; p < s.depth; p++) {
                int u = Hashing.rowHash(words, p);
                rows[p] = c[p][Hashing.bucket(u, s.width)] * (u < 0 ? -1.0 : 1.0) * sign;
            }
        }
        double f2 = f2Bound(selfTables(a));
        double var = f2 / s.width;
        if (s.virtualLg > 0) { // SkimmedSketch._point_variance: the keys sharing the id
            var += f2 / (1L << s.virtualLg);
        }
        Estimate e = medianEstimate(rows, var, conf, method(s));
        return a.nonnegative() ? atLeastZero(e) : e;
    }

    /** Estimate.at_least(0): the interval cut at 0 and the value projected onto it (the core's sign rule). */
    static Estimate atLeastZero(Estimate e) {
        if (!(e.low < 0.0)) {
            return e;
        }
        return new Estimate(Math.max(e.value, 0.0), 0.0, Math.max(e.high, 0.0), e.confidence, e.method);
    }

    /** The core's message of a frequency query whose key type is not the sketch's (Sketch.frequency). */
    static String crossTypeMessage(String keyRepr, int keyDomain, int sketchDomain) {
        String k = SketchState.domainName(keyDomain);
        String s = SketchState.domainName(sketchDomain);
        String sk = sketchDomain == SketchState.KEY_INT ? "integer" : "string/bytes";
        String kk = keyDomain == SketchState.KEY_INT ? "integer" : "string/bytes";
        return "cannot query frequency(" + keyRepr + "): key_domain differs ('" + s + "' != '" + k + "'); this sketch "
                + "holds " + sk + " keys, which a " + kk + " key never equals: query with "
                + (sketchDomain == SketchState.KEY_INT ? "an " : "a ") + sk + " key";
    }

    // -- per-table estimates -------------------------------------------------------------------
    private static double[][] rows(SketchState a) {
        if (a.spec().kind == SketchState.KIND_AGMS && a.exactMode()) {
            Spec s = a.spec();
            double[][] out = new double[s.depth][s.width];
            for (Map.Entry<Long, ? extends Number> x : a.exactEntries().entrySet()) {
                double w = x.getValue().doubleValue();
                double[][] sg = Hashing.agmsSigns(s.seed, x.getKey(), s.width, s.depth);
                for (int p = 0; p < s.depth; p++) {
                    for (int q = 0; q < s.width; q++) {
                        out[p][q] += w * sg[p][q];
                    }
                }
            }
            return out;
        }
        return a.counterRows();
    }

    /** Per-table estimates of f.g: row dot products (AGMS: their means over the row). */
    static double[] joinTables(SketchState a, SketchState b) {
        double[][] x = rows(a);
        double[][] y = a == b ? x : rows(b);
        Spec s = a.spec();
        double[] out = new double[s.depth];
        for (int p = 0; p < s.depth; p++) {
            double acc = 0;
            for (int q = 0; q < s.width; q++) {
                acc += x[p][q] * y[p][q];
            }
            out[p] = s.kind == SketchState.KIND_AGMS ? acc / s.width : acc;
        }
        return out;
    }

    /** Sketch.self_join_tables: the exact F2 in every table in exact mode. */
    static double[] selfTables(SketchState a) {
        if (a.exactMode()) {
            double[] out = new double[a.spec().depth];
            Arrays.fill(out, dot(a.exactEntries(), a.exactEntries()));
            return out;
        }
        return joinTables(a, a);
    }

    /** sum_v f(v) g(v) over the common keys: exact for integer weights, float64 otherwise. */
    static double dot(Map<Long, ? extends Number> f, Map<Long, ? extends Number> g) {
        boolean floats = f.values().stream().anyMatch(v -> v instanceof Double)
                || g.values().stream().anyMatch(v -> v instanceof Double);
        long[] keys = f.keySet().stream().mapToLong(Long::longValue).filter(k -> g.containsKey(k)).sorted().toArray();
        if (floats) {
            double acc = 0;
            for (long k : keys) {
                acc += f.get(k).doubleValue() * g.get(k).doubleValue();
            }
            return acc;
        }
        BigInteger acc = BigInteger.ZERO;
        for (long k : keys) {
            acc = acc.add(BigInteger.valueOf(f.get(k).longValue()).multiply(BigInteger.valueOf(g.get(k).longValue())));
        }
        return acc.doubleValue();
    }

    // -- bounds (skimsketch/stats/bounds.py) ------------------------------------------------------------
    static double median(double[] xs) {
        double[] s = xs.clone();
        Arrays.sort(s);
        int n = s.length;
        return n % 2 == 1 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2.0;
    }

    private static double mean(double[] xs) {
        double acc = 0;
        for (double x : xs) {
            acc += x;
        }
        return acc / xs.length;
    }

    /** A self-join size for variance bounds: the larger of the tables' mean and median, at least 0. */
    static double f2Bound(double[] tables) {
        return Math.max(Math.max(mean(tables), median(tables)), 0.0);
    }

    static Estimate medianEstimate(double[] rows, double var, double confidence, String method) {
        double value = median(rows);
        double half = chebyshevK(rows.length, confidence) * Math.sqrt(Math.max(var, 0.0));
        return new Estimate(value, value - half, value + half, confidence, method);
    }

    private static double medianFailure(int d, double q) {
        int m = (d + 1) / 2;
        double acc = 0;
        for (int i = m; i <= d; i++) {
            acc += comb(d, i) * Math.pow(q, i) * Math.pow(1 - q, d - i);
        }
        return acc;
    }

    private static double comb(int n, int k) {
        BigInteger c = BigInteger.ONE;
        for (int i = 0; i < k; i++) {
            c = c.multiply(BigInteger.valueOf(n - i)).divide(BigInteger.valueOf(i + 1));
        }
        return c.doubleValue();
    }

    /** Smallest k with P[Bin(depth, 1/k^2) >= ceil(depth/2)] <= 1 - confidence (bisection, as the core). */
    static double chebyshevK(int depth, double confidence) {
        return CHEBYSHEV.computeIfAbsent(depth + "/" + confidence, key -> {
            double delta = 1.0 - Estimate.checkConfidence(confidence);
            double lo = 0.0;
            double hi = 1.0;
            for (int i = 0; i < 100; i++) {
                double mid = (lo + hi) / 2;
                if (medianFailure(depth, mid) <= delta) {
                    lo = mid;
                } else {
                    hi = mid;
                }
            }
            return 1.0 / Math.sqrt(lo);
        });
    }
}
