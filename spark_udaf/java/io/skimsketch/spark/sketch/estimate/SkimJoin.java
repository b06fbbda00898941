package io.skimsketch.spark.sketch.estimate;

import io.skimsketch.spark.common.Estimate;
import io.skimsketch.spark.common.Sums;
import io.skimsketch.spark.sketch.SketchState;
import io.skimsketch.spark.sketch.Spec;
import java.util.Arrays;

/**
 * ESTSKIMJOINSIZE (SkimmedSketch.join_size of skimsketch/sketch/skim/skimmed.py with its default
 * bound="chebyshev", the SQL functions' bound): the median over tables p of
 * {@code f_d.g_d + D_f[p].H'_g[p] + H'_f[p].D_g[p] + H'_f[p].H'_g[p]} with the dense sketches D and
 * residuals H' of both skims ({@link Skim}), and the interval {@code median +- (hypot(k sd, k1 virt)
 * + rounding floor + doubt)}: sd is one table's deviation of the three sketched terms with their
 * covariances (tableSd), k the Chebyshev-median factor of d tables (k1 of one), virt is the virtual
 * layout's id-collision deviation (_virtual_sd), doubt the largest change were the dense keys a
 * report would not name chance passes (_doubt). The sign rule is the caller's (Estimator.join).
 */
final class SkimJoin {
    static final int MAX_PAIR_SIDE = 2048;
    static final double ROUNDING = 1e-9;

    private SkimJoin() {}

    static Estimate join(SketchState sa, SketchState sb, double conf, String fn) {
        return join(sa, sb, null, null, conf, fn);
    }

    /** The join over skims a caller kept ({@code ka}, {@code kb}; null: Skim.of, the cache of recent skims). */
    static Estimate join(SketchState sa, SketchState sb, Skim ka, Skim kb, double conf, String fn) {
        Spec s = sa.spec();
        Skim a = ka != null ? ka : Skim.of(sa, fn);
        Skim b = kb != null ? kb : Skim.of(sb, fn);
        int d = s.depth;
        // the common dense keys (both key lists ascending)
        int[] ia = new int[Math.min(a.keys.length, b.keys.length)];
        int[] ib = new int[ia.length];
        int c = 0;
        for (int i = 0, j = 0; i < a.keys.length && j < b.keys.length;) {
            if (a.keys[i] < b.keys[j]) {
                i++;
            } else if (a.keys[i] > b.keys[j]) {
                j++;
            } else {
                ia[c] = i++;
                ib[c++] = j++;
            }
        }
        ia = Arrays.copyOf(ia, c);
        ib = Arrays.copyOf(ib, c);
        double denseDense = Sums.dot(pick(a.values, ia), pick(b.values, ib));
        double[][] terms = {Sums.rowDots(a.dense, b.residual), Sums.rowDots(a.residual, b.dense),
            Sums.rowDots(a.residual, b.residual)};
        double[] tables = new double[d];
        double widest = 0.0;
        for (int p = 0; p < d; p++) {
            tables[p] = denseDense + ((terms[0][p] + terms[1][p]) + terms[2][p]);
            widest = Math.max(widest, (Math.abs(terms[0][p]) + Math.abs(terms[1][p])) + Math.abs(terms[2][p]));
        }
        double value = Sums.median(tables);
        double f2DenseA = Sums.dot(a.values, a.values);
        double f2DenseB = Sums.dot(b.values, b.values);
        double f2ResA = Sums.mean(Sums.rowDots(a.residual, a.residual));
        double f2ResB = Sums.mean(Sums.rowDots(b.residual, b.residual));
        double ownA = Sums.mean(Sums.rowDots(a.dense, a.residual));
        double ownB = Sums.mean(Sums.rowDots(b.dense, b.residual));
        double sd = tableSd(new double[][] {{f2DenseA, ownA}, {ownA, f2ResA}},
                new double[][] {{f2DenseB, ownB}, {ownB, f2ResB}},
                new double[][] {{denseDense, Sums.mean(terms[0])}, {Sums.mean(terms[1]), Sums.mean(terms[2])}},
                s.width);
        double k = Estimator.chebyshevK(d, conf);
        double k1 = Estimator.chebyshevK(1, conf);
        double virt = virtualSd(sa, sb, value, a, b, denseDense, f2DenseA, f2DenseB, conf);
        double half = Math.hypot(k * sd, k1 * virt) + ROUNDING * (Math.abs(denseDense) + widest);
        half += doubt(a, b, ia, ib) + incomplete(sa, sb, a, b);
        return new Estimate(value, value - half, value + half, conf, "skimmed");
    }

    /** The sketched terms (part of f, part of g): part 0 dense, 1 residual (skimmed.SKETCHED). */
    private static final int[][] SKETCHED = {{0, 1}, {1, 0}, {1, 1}};

    /**
     * _table_sd: one table's deviation of the sketched terms together, from
     * |Cov(Z(a,b), Z(c,d))| <= (|a.c| |b.d| + |a.d| |b.c|) / width over every pair of terms.
     */
    static double tableSd(double[][] ff, double[][] gg, double[][] fg, int width) {
        double var = 0.0;
        for (int[] t : SKETCHED) {
            for (int[] u : SKETCHED) {
                int i = t[0];
                int j = t[1];
                int k = u[0];
                int m = u[1];
                var += Math.abs(ff[i][k] * gg[j][m]) + Math.abs(fg[i][m] * fg[k][j]);
            }
        }
        return Math.sqrt(Math.max(var, 0.0) / width);
    }

    private static double[] pick(double[] v, int[] at) {
        double[] out = new double[at.length];
        for (int i = 0; i < at.length; i++) {
            out[i] = v[at[i]];
        }
        return out;
    }

    /** _incomplete: sqrt(F2(residual) F2(other side)) for each side whose skim was taken as complete. */
    static double incomplete(SketchState sa, SketchState sb, Skim a, Skim b) {
        double out = 0.0;
        if (a.complete) {
            out += Math.sqrt(Sums.mean(Sums.rowDots(a.residual, a.residual))
                    * Estimator.f2Bound(Estimator.selfTables(sb)));
        }
        if (b.complete) {
            out += Math.sqrt(Sums.mean(Sums.rowDots(b.residual, b.residual))
                    * Estimator.f2Bound(Estimator.selfTables(sa)));
        }
        return out;
    }

    /** _virtual_sd: the deviation of the virtual ids' collision terms (0 outside the virtual layout). */
    static double virtualSd(SketchState sa, SketchState sb, double value, Skim a, Skim b, double denseDense,
                            double f2DenseA, double f2DenseB, double conf) {
        int lg = sa.spec().virtualLg;
        if (lg == 0) {
            return 0.0;
        }
        double f2f = Estimator.f2Bound(Estimator.selfTables(sa));
        double f2g = Estimator.f2Bound(Estimator.selfTables(sb));
        double var = Math.max(f2f * f2g - f2DenseA * f2DenseB, 0.0)
                + Math.max(value * value - denseDense * denseDense, 0.0);
        long rare = (long) (0.1 * (1.0 - conf) * (1L << lg));
        double[] sqa = heaviestSquares(a.values);
        double[] sqb = heaviestSquares(b.values);
        var += Math.max(f2DenseA * f2DenseB - Sums.accurate(sqa, sqa.length) * Sums.accurate(sqb, sqb.length), 0.0);
        long n = (long) sqa.length * sqb.length;
        if (rare < n) {
            double[] prod = new double[(int) n];
            int i = 0;
            for (double x : sqa) {
                for (double y : sqb) {
                    prod[i++] = x * y;
                }
            }
            int keep = (int) (n - rare); // the smallest n - rare products: np.partition(...)[: n - rare].sum()
            Select.smallest(prod, keep);
            var += Sums.accurate(prod, keep);
        }
        return Math.sqrt(Math.max(var, 0.0) / (1L << lg));
    }

    /** _heaviest_squares: the squares of the MAX_PAIR_SIDE largest |values| (all of them when fewer). */
    private static double[] heaviestSquares(double[] values) {
        double[] sq = new double[values.length];
        for (int i = 0; i < sq.length; i++) {
            sq[i] = values[i] * values[i];
        }
        if (sq.length <= MAX_PAIR_SIDE) {
            return sq;
        }
        double[] s = sq.clone();
        Arrays.sort(s);
        return Arrays.copyOfRange(s, s.length - MAX_PAIR_SIDE, s.length);
    }

    /**
     * _doubt: the median over tables of |change| of a table's estimate were the dense keys a report
     * would not name chance passes (the estimate's collision correction of those keys is in doubt).
     */
    private static double doubt(Skim a, Skim b, int[] ia, int[] ib) {
        boolean[] ma = a.doubtful();
        boolean[] mb = b.doubtful();
        if (!(Skim.any(ma) || Skim.any(mb))) {
            return 0.0;
        }
        double[][] ua = a.doubtSketch();
        double[][] ub = b.doubtSketch();
        double[] x = Sums.rowDots(ua, b.dense);
        double[] y = Sums.rowDots(a.dense, ub);
        double[] z = Sums.rowDots(ua, ub);
        int m = 0;
        double[] va = new double[ia.length];
        double[] vb = new double[ia.length];
        for (int i = 0; i < ia.length; i++) {
            if (ma[ia[i]] || mb[ib[i]]) {
                va[m] = a.values[ia[i]];
                vb[m++] = b.values[ib[i]];
            }
        }
        double common = Sums.dot(Arrays.copyOf(va, m), Arrays.copyOf(vb, m));
        double[] corr = new double[x.length];
        for (int p = 0; p < x.length; p++) {
            corr[p] = Math.abs((x[p] + y[p] - z[p]) - common);
        }
        return Sums.median(corr);
    }
}
