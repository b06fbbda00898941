package io.skimsketch.spark.sample;

import io.skimsketch.spark.common.Estimate;
import java.util.Arrays;

/**
 * The join sample's interval (skimsketch/sample/interval.py, whose docstring holds the argument): sure bounds
 * from what the two samples know (a key kept by one sample only has a partner |g| <= sqrt(u / tau_g); at most
 * min(K_f - n_f, K_g - n_g) keys neither kept, each |f| < 1 / sqrt(tau_f); a non-negative table's dropped keys
 * sum to its dropped mass) and a Chernoff bound on the random rest (exact terms of keys kept by both, s - 1 + e^-s
 * for an unresolved partner, lambda^2 W mu+ / 2 for the light-light keys, mu+ the Poisson-binomial count bound),
 * lambda searched on the grid 2^(i/8) lambda0, i in [-48, 48]. The value is J^ clamped into the sure bounds. The
 * totals are scaled by a power of two so that the largest |total| is in [0.5, 1) (tau by its square): no
 * overflow or underflow anywhere in float64's range. Coverage: at least the confidence for every input.
 */
final class SampleInterval {
    /** lambda / lambda0: 2^(i/8), i in [-48, 48]. */
    static final double[] GRID = grid();
    /** The share of the count bound mu+ in each end's failure probability. */
    static final double COUNT_SHARE = 0.2;

    private SampleInterval() {}

    private static double[] grid() {
        double[] g = new double[97];
        for (int i = 0; i < g.length; i++) {
            g[i] = Math.pow(2.0, (i - 48) / 8.0);
        }
        return g;
    }

    /**
     * What one sample knows, its totals scaled by 2^-e (tau by 2^2e): the entries' u and totals, tau, the key
     * count, the total weight, whether every key's total is known non-negative, and unit, the smallest non-zero
     * |total| the table can hold (2^-e for integer totals, 0 for floats).
     */
    static final class Side {
        final double[] units;
        final double[] totals;
        final double tau;
        final long nKeys;
        final double totalWeight;
        final boolean nonnegative;
        final double unit;
        final int exponent;

        Side(SampleState s, SampleState.Fin f) {
            int n = f.fps.length;
            units = new double[n];
            double[] t = new double[n];
            double top = 0.0;
            for (int i = 0; i < n; i++) {
                units[i] = SampleRank.unit(f.fps[i]);
                t[i] = f.total(i);
                top = Math.max(top, Math.abs(t[i]));
            }
            int e = top > 0 && Double.isFinite(top) ? frexpExponent(top) : 0;
            for (int i = 0; i < n; i++) {
                t[i] = Math.scalb(t[i], -e);
            }
            totals = t;
            double tf = Math.scalb(f.tau, 2 * (e + f.scale)); // tau stored at the sample's scale exponent
            tau = Double.isInfinite(tf) && !f.complete() ? Double.MAX_VALUE : tf; // beyond the doubles: bounds widen
            nKeys = f.nKeys;
            totalWeight = Math.scalb(s.totalWeight(), -e);
            nonnegative = s.nonnegative();
            unit = s.isFloat ? 0.0 : Math.scalb(1.0, -e);
            exponent = e;
        }

        boolean complete() {
            return Double.isInfinite(tau);
        }

        /** The dropped keys' sum of totals when every total is non-negative (it bounds their sum |f|), else NaN. */
        double droppedMass() {
            if (!nonnegative) {
                return Double.NaN;
            }
            double kept = 0.0;
            for (double t : totals) {
                kept += t;
            }
            return Math.max(0.0, totalWeight - kept);
        }
    }

    /** Python's math.frexp(x)[1] for a finite x > 0: x = m 2^e with m in [0.5, 1). */
    static int frexpExponent(double x) {
        int e = Math.getExponent(x);
        if (e < Double.MIN_EXPONENT) { // subnormal
            return Math.getExponent(x * 0x1p54) - 54 + 1;
        }
        return e + 1;
    }

    /** mu+: the largest mean of a sum of independent Bernoulli variables with P(N <= n) >= delta (Chernoff). */
    static double countUpper(long n, double delta) {
        double logD = Math.log(delta);
        if (n == 0) {
            return -logD;
        }
        double lo = n;
        double hi = n + 2.0 * (-logD) + 2.0 * Math.sqrt(-2.0 * n * logD) + 1.0;
        while (excess(hi, n, logD) > 0) {
            hi *= 2.0;
        }
        for (int i = 0; i < 100; i++) {
            double mid = 0.5 * (lo + hi);
            if (excess(mid, n, logD) > 0) {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        return hi;
    }

    private static double excess(double mu, long n, double logD) {
        return n * Math.log(Math.E * mu / n) - mu - logD;
    }

    /**
     * T: the Chernoff bound at delta on the shortfall from the random kept keys' a = |fg| and p (exact phi), the
     * unresolved one-side keys' |f| / sqrt(tau_other) and the light-light term W mu+.
     */
    static double tailBound(double[] a, double[] p, int n, double[] su, int m, double wMu, double delta) {
        double v2 = 0.0;
        for (int i = 0; i < n; i++) {
            v2 += a[i] * a[i] / p[i];
        }
        double dot = 0.0;
        for (int i = 0; i < m; i++) {
            dot += su[i] * su[i];
        }
        v2 = v2 + dot + wMu;
        if (v2 <= 0.0) {
            return 0.0;
        }
        double logInv = -Math.log(delta);
        double lam0 = Math.sqrt(2.0 * logInv / v2);
        double best = Double.POSITIVE_INFINITY;
        for (double g : GRID) {
            double lam = lam0 * g;
            double psi = 0.0;
            for (int i = 0; i < n; i++) {
                double x = lam * a[i];
                psi += x + Math.log1p(p[i] * Math.expm1(-x / p[i]));
            }
            double s = 0.0;
            for (int i = 0; i < m; i++) {
                double y = lam * su[i];
                s += y + Math.expm1(-y);
            }
            psi = psi + s + 0.5 * lam * lam * wMu;
            best = Math.min(best, (psi + logInv) / lam);
        }
        return best;
    }

    /** S0: a sure bound on |sum fg| over the keys neither sample kept. */
    private static double neitherBound(Side a, Side b) {
        if (a.complete() || b.complete()) {
            return 0.0;
        }
        long n0 = Math.min(a.nKeys - a.totals.length, b.nKeys - b.totals.length);
        if (n0 <= 0) {
            return 0.0;
        }
        double ma = 1.0 / Math.sqrt(a.tau);
        double mb = 1.0 / Math.sqrt(b.tau);
        double bound = n0 * ma * mb;
        double da = a.droppedMass();
        double db = b.droppedMass();
        if (!Double.isNaN(da)) {
            bound = Math.min(bound, da * mb);
        }
        if (!Double.isNaN(db)) {
            bound = Math.min(bound, db * ma);
        }
        return bound;
    }

    /** a's entries b did not keep and could not prove absent: |f|, c = sqrt(u / tau_b), certain in a. */
    private static final class OneSide {
        final double[] f;
        final double[] c;
        final boolean[] certain;
        final int n;

        OneSide(Side a, Side b, boolean[] matched) {
            int len = a.totals.length;
            f = new double[len];
            c = new double[len];
            certain = new boolean[len];
            int k = 0;
            if (!b.complete()) {
                double floor = b.tau * (b.unit * b.unit); // u < tau_b unit^2: b would have kept a non-zero total
                for (int i = 0; i < len; i++) {
                    if (matched[i] || (b.unit > 0 && !(a.units[i] >= floor))) {
                        continue;
                    }
                    f[k] = Math.abs(a.totals[i]);
                    c[k] = Math.sqrt(a.units[i] / b.tau);
                    certain[k] = a.complete() || a.tau * f[k] * f[k] >= 1.0;
                    k++;
                }
            }
            n = k;
        }

        int uncertain() {
            int u = 0;
            for (int i = 0; i < n; i++) {
                u += certain[i] ? 0 : 1;
            }
            return u;
        }

        /** max sum f x over 0 <= x <= c, sum x <= budget (NaN: no budget), greedy by f: the sure one-side bound. */
        double knapsack(double budget) {
            if (Double.isNaN(budget)) {
                double s = 0.0;
                for (int i = 0; i < n; i++) {
                    s += f[i] * c[i];
                }
                return s;
            }
            Integer[] order = new Integer[n];
            for (int i = 0; i < n; i++) {
                order[i] = i;
            }
            Arrays.sort(order, (x, y) -> Double.compare(-f[x], -f[y])); // stable, as argsort(-f, kind="stable")
            double cum = 0.0;
            double s = 0.0;
            for (int i : order) {
                cum += c[i];
                double take = Math.min(c[i], Math.max(0.0, budget - (cum - c[i])));
                s += f[i] * take;
            }
            return s;
        }
    }

    /** sqrt(the sum of the observed variance terms + the largest of them). */
    private static double spread(double sum, double max, boolean any) {
        return any ? Math.sqrt(sum + max) : 0.0;
    }

    /**
     * The estimate and interval of the two samples' (scaled) facts, scaled back; ia[k], ib[k] index the k-th
     * entry both samples kept.
     */
    static Estimate estimate(Side a, Side b, int[] ia, int[] ib, double confidence, String method) {
        int m = ia.length;
        double[] prod = new double[m];
        double[] p = new double[m];
        boolean[] lightA = new boolean[m];
        boolean[] lightB = new boolean[m];
        double jB = 0.0;
        double est = 0.0;
        boolean[] matchedA = new boolean[a.totals.length];
        boolean[] matchedB = new boolean[b.totals.length];
        for (int k = 0; k < m; k++) {
            double f = a.totals[ia[k]];
            double g = b.totals[ib[k]];
            double pa = a.complete() ? 1.0 : a.tau * f * f;
            double pb = b.complete() ? 1.0 : b.tau * g * g;
            lightA[k] = pa < 1.0;
            lightB[k] = pb < 1.0;
            p[k] = Math.min(1.0, Math.min(pa, pb));
            prod[k] = f * g;
            jB += prod[k];
            est += prod[k] / p[k];
            matchedA[ia[k]] = true;
            matchedB[ib[k]] = true;
        }
        OneSide ua = new OneSide(a, b, matchedA);
        OneSide ub = new OneSide(b, a, matchedB);
        // sure bounds
        double sA = ua.knapsack(b.droppedMass());
        double sB = ub.knapsack(a.droppedMass());
        double sure = sA + sB + neitherBound(a, b);
        boolean nonneg = a.nonnegative && b.nonnegative;
        double sureLow = nonneg ? jB : jB - sure;
        double sureHigh = jB + sure;
        // the Chernoff part
        double side = (1.0 - confidence) / 2.0;
        double dTail = side * (1.0 - COUNT_SHARE);
        double dCount = side * COUNT_SHARE;
        double[] aPos = new double[m];
        double[] pPos = new double[m];
        double[] aNeg = new double[m];
        double[] pNeg = new double[m];
        int nPos = 0;
        int nNeg = 0;
        long bothLight = 0;
        double varPos = 0.0;
        double maxPos = 0.0;
        double varNeg = 0.0;
        double maxNeg = 0.0;
        boolean anyPos = false;
        boolean anyNeg = false;
        for (int k = 0; k < m; k++) {
            if (!(p[k] < 1.0)) {
                continue;
            }
            double t = prod[k] / p[k];
            double v = t * t * (1.0 - p[k]);
            if (prod[k] > 0) {
                varPos += v;
                maxPos = anyPos ? Math.max(maxPos, v) : v;
                anyPos = true;
            } else if (prod[k] < 0) {
                varNeg += v;
                maxNeg = anyNeg ? Math.max(maxNeg, v) : v;
                anyNeg = true;
            }
            if (lightA[k] && lightB[k]) {
                bothLight++;
            } else if (prod[k] > 0) {
                aPos[nPos] = Math.abs(prod[k]);
                pPos[nPos++] = p[k];
            } else if (prod[k] < 0) {
                aNeg[nNeg] = Math.abs(prod[k]);
                pNeg[nNeg++] = p[k];
            }
        }
        double wMu = 0.0;
        if (!(a.complete() || b.complete())) {
            long n3 = bothLight + ua.uncertain() + ub.uncertain();
            wMu = countUpper(n3, dCount) / (a.tau * b.tau);
        }
        // certain keys of one side whose partner is unresolved: |partner| < 1 / sqrt(tau) of the other side
        double[] unk = new double[ua.n + ub.n];
        int nu = 0;
        for (int i = 0; i < ua.n; i++) {
            if (ua.certain[i]) {
                unk[nu++] = ua.f[i] * invSqrt(b.tau);
            }
        }
        for (int i = 0; i < ub.n; i++) {
            if (ub.certain[i]) {
                unk[nu++] = ub.f[i] * invSqrt(a.tau);
            }
        }
        double tPos = tailBound(aPos, pPos, nPos, unk, nu, wMu, dTail);
        // a partner of unknown sign may make a negative product: unresolved keys count in both tails
        double tNeg = nonneg ? 0.0 : tailBound(aNeg, pNeg, nNeg, unk, nu, wMu, dTail);
        double z = SampleEstimator.z(1.0 - 2.0 * side);
        double high = Math.min(sureHigh, est + tPos + z * spread(varNeg, maxNeg, anyNeg));
        double low = Math.max(sureLow, est - z * spread(varPos, maxPos, anyPos) - tNeg);
        double value = Math.min(Math.max(est, sureLow), sureHigh);
        low = Math.min(low, value);
        high = Math.max(high, value);
        int e = a.exponent + b.exponent;
        return new Estimate(Math.scalb(value, e), Math.scalb(low, e), Math.scalb(high, e), confidence, method);
    }

    private static double invSqrt(double tau) {
        return Double.isInfinite(tau) ? 0.0 : 1.0 / Math.sqrt(tau);
    }
}
