package io.skimsketch.spark.sketch.estimate;

import io.skimsketch.spark.common.Sums;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * SKIMDENSE (Ganguly, Garofalakis, Rastogi, EDBT 2004) as the core runs it (skimsketch/sketch/skim/skimdense.py
 * skimdense, _refine, _least_squares) over the candidates of a scan ({@link Candidates}): rounds
 * of adaptive pass rules ({@link PassRules}) on the residual, greedy peeling (a passing candidate
 * is accepted when its |mean estimate| ranks first in each of its buckets) with the median of its
 * table estimates as its value, one least-squares refinement of the keys already dense per round,
 * and a final conjugate-gradient least-squares fit of the dense values. The residual counters are
 * exactly the counters minus the sketch of the dense values.
 */
final class SkimDense {
    static final int MAX_ROUNDS = 64;
    static final int LSQ_ITERATIONS = 50;
    static final double GRADIENT_ROUNDING = 1e-12;

    /** Dense keys (ascending), their values, the residual counters, and the number of candidates tested. */
    static final class Result {
        final long[] keys;
        final double[] values;
        final double[][] residual;
        final long tested;
        /** buckets/signs of the dense keys: cells[p][j] = bucket << 1 | (1 when the sign is -1). */
        final int[][] cells;

        /** taken because it explained every counter (skimdense.explains; SkimResult.complete). */
        boolean complete;

        Result(long[] keys, double[] values, double[][] residual, long tested, int[][] cells) {
            this.keys = keys;
            this.values = values;
            this.residual = residual;
            this.tested = tested;
            this.cells = cells;
        }
    }

    private SkimDense() {}

    /** skimmed.JUSTIFY_Z: a key is skimmed only at this many standard errors of its mean over the tables. */
    static final double JUSTIFY_Z = 6.0;

    /**
     * max(skim_factor, JUSTIFY_Z / sqrt(depth)) * sqrt(F2(residual) / width): the lowest threshold of a round
     * (SkimmedSketch._floor, skimmed.justified_factor).
     */
    static double floor(double[][] residual, double skimFactor, boolean justified) {
        double noise = Math.sqrt(Sums.mean(Sums.rowDots(residual, residual)) / residual[0].length);
        return justified ? Math.max(skimFactor, JUSTIFY_Z / Math.sqrt(residual.length)) * noise : skimFactor * noise;
    }

    /** skimdense.COMPLETE: residual F2 / counters' F2 of a skim that found every key. */
    static final double COMPLETE = 1e-6;

    /** skimdense.explains: mean row dot of the residual <= COMPLETE * that of the counters. */
    static boolean explains(double[][] residual, double[][] counters) {
        return Sums.mean(Sums.rowDots(residual, residual)) <= COMPLETE * Sums.mean(Sums.rowDots(counters, counters));
    }

    /**
     * SkimmedSketch._skim_at with the default floor: the skim at skim_factor noises when it explains every
     * counter (exact), else the justified skim (SkimmedSketch._floor).
     */
    static Result run(double[][] counters, Candidates cand, double skimFactor) {
        Result complete = run(counters, cand, skimFactor, false);
        if (explains(complete.residual, counters)) {
            complete.complete = true;
            return complete;
        }
        return justified(run(counters, cand, skimFactor, true), counters);
    }

    /** skimdense.MIN_DENSE_SHARE: the share of the counters' F2 a kept skim's dense keys hold at least. */
    static final double MIN_DENSE_SHARE = 0.65;
    /** skimdense.MIN_DENSE_SHARE_DEPTH_2: the same at depth 2. */
    static final double MIN_DENSE_SHARE_DEPTH_2 = 0.9;

    /** skimdense.justified: r, or no skim when its dense keys hold under MIN_DENSE_SHARE of the counters' F2. */
    static Result justified(Result r, double[][] counters) {
        double f2 = Sums.mean(Sums.rowDots(counters, counters));
        double share = counters.length == 2 ? MIN_DENSE_SHARE_DEPTH_2 : MIN_DENSE_SHARE;
        if (r.keys.length == 0 || Sums.dot(r.values, r.values) >= share * f2) {
            return r;
        }
        double[][] residual = new double[counters.length][];
        for (int p = 0; p < counters.length; p++) {
            residual[p] = counters[p].clone();
        }
        int[][] cells = new int[counters.length][0];
        return new Result(new long[0], new double[0], residual, r.tested, cells);
    }

    /** skimdense(counters, cand, floor): SkimmedSketch._floor (justified) or _complete_floor; cand null: none. */
    static Result run(double[][] counters, Candidates cand, double skimFactor, boolean justified) {
        int d = counters.length;
        int w = counters[0].length;
        double[][] residual = new double[d][];
        for (int p = 0; p < d; p++) {
            residual[p] = counters[p].clone();
        }
        int n = cand == null ? 0 : cand.n;
        boolean[] dense = new boolean[n];
        int[] densePos = new int[0]; // the dense candidates' positions, ascending, and their values
        double[] denseVal = new double[0];
        int denseCount = 0;
        int need = d / 2 + 1;
        short[] count = new short[n];
        int[] first = new int[w];
        for (int round = 0; round < MAX_ROUNDS; round++) {
            double fl = floor(residual, skimFactor, justified);
            PassRules rules = PassRules.of(residual, n - denseCount, PassRules.BUDGET, fl, 0);
            double t = rules.lowest();
            if (!Double.isFinite(t) || n == 0) {
                break;
            }
            int[] pre = hot(cand, residual, t, dense, need, count);
            // the passing candidates, their table estimates (table order kept), medians and mean magnitudes
            int k = 0;
            int[] idx = new int[pre.length];
            double[] med = new double[pre.length];
            double[] mag = new double[pre.length];
            double[] e = new double[d];
            double[] sorted = new double[d];
            for (int i : pre) {
                double sum = 0.0;
                for (int p = 0; p < d; p++) {
                    e[p] = residual[p][cand.bucket(p, i)] * cand.sign(p, i);
                    sum = p == 0 ? e[0] : sum + e[p];
                }
                System.arraycopy(e, 0, sorted, 0, d);
                if (!rules.passing(sorted)) {
                    continue;
                }
                idx[k] = i;
                med[k] = d % 2 == 1 ? sorted[d / 2] : (sorted[d / 2 - 1] + sorted[d / 2]) / 2.0;
                mag[k] = Math.abs(sum / d);
                k++;
            }
            if (k == 0) {
                break;
            }
            // rank by |mean estimate| descending, ties by position; accept the first of each bucket
            Integer[] byRank = new Integer[k];
            for (int j = 0; j < k; j++) {
                byRank[j] = j;
            }
            final double[] mg = mag;
            Arrays.sort(byRank, (x, y) -> mg[x] > mg[y] ? -1 : mg[x] < mg[y] ? 1 : Integer.compare(x, y));
            int[] rank = new int[k];
            for (int j = 0; j < k; j++) {
                rank[byRank[j]] = j;
            }
            boolean[] ok = new boolean[k];
            Arrays.fill(ok, true);
            for (int p = 0; p < d; p++) {
                Arrays.fill(first, Integer.MAX_VALUE);
                for (int j = 0; j < k; j++) {
                    int b = cand.bucket(p, idx[j]);
                    first[b] = Math.min(first[b], rank[j]);
                }
                for (int j = 0; j < k; j++) {
                    ok[j] &= rank[j] == first[cand.bucket(p, idx[j])];
                }
            }
            List<Integer> acc = new ArrayList<>();
            List<Double> accVal = new ArrayList<>();
            for (int j = 0; j < k; j++) {
                if (ok[j]) {
                    acc.add(idx[j]);
                    accVal.add(med[j]);
                }
            }
            int[] accIdx = acc.stream().mapToInt(Integer::intValue).toArray();
            double[] accV = accVal.stream().mapToDouble(Double::doubleValue).toArray();
            subtract(residual, cells(cand, d, accIdx), accV);
            // the keys dense before this round (ascending) get one refinement step on the new residual
            refine(residual, cells(cand, d, densePos), denseVal);
            for (int i : accIdx) {
                dense[i] = true;
            }
            denseCount += accIdx.length;
            int[] pos = new int[denseCount];
            double[] val = new double[denseCount];
            for (int x = 0, y = 0, z = 0; z < denseCount; z++) { // merge: both ascending
                boolean fromOld = y == accIdx.length || (x < densePos.length && densePos[x] < accIdx[y]);
                pos[z] = fromOld ? densePos[x] : accIdx[y];
                val[z] = fromOld ? denseVal[x++] : accV[y++];
            }
            densePos = pos;
            denseVal = val;
        }
        final int[] sel = densePos;
        double[] vals = denseVal;
        int[][] cells = cells(cand, d, sel);
        leastSquares(residual, cells, vals, LSQ_ITERATIONS); // in candidate order, as the core
        // then in ascending key order (a scan's candidates already are)
        Integer[] order = new Integer[sel.length];
        for (int j = 0; j < sel.length; j++) {
            order[j] = j;
        }
        Arrays.sort(order, (x, y) -> Long.compare(cand.key(sel[x]), cand.key(sel[y])));
        long[] keys = new long[sel.length];
        double[] sortedVals = new double[sel.length];
        int[][] sortedCells = new int[d][sel.length];
        for (int j = 0; j < sel.length; j++) {
            keys[j] = cand.key(sel[order[j]]);
            sortedVals[j] = vals[order[j]];
            for (int p = 0; p < d; p++) {
                sortedCells[p][j] = cells[p][order[j]];
            }
        }
        return new Result(keys, sortedVals, residual, n, sortedCells);
    }

    /**
     * hot_candidates: positions (ascending) of the candidates not yet dense with |residual| >= t in at
     * least need of their buckets.
     */
    private static int[] hot(Candidates cand, double[][] residual, double t, boolean[] dense, int need,
                             short[] count) {
        int d = residual.length;
        int w = residual[0].length;
        int n = cand.n;
        int[] found = new int[16];
        int f = 0;
        List<int[]> touched = new ArrayList<>();
        for (int p = 0; p < d; p++) {
            int sb = p * (w + 1);
            for (int b = 0; b < w; b++) {
                if (!(Math.abs(residual[p][b]) >= t)) {
                    continue;
                }
                int from = cand.starts[sb + b];
                int to = cand.starts[sb + b + 1];
                for (int j = from; j < to; j++) {
                    int i = cand.order[p * n + j];
                    if (++count[i] == need && !dense[i]) {
                        if (f == found.length) {
                            found = Arrays.copyOf(found, 2 * f);
                        }
                        found[f++] = i;
                    }
                }
                touched.add(new int[] {p, b});
            }
        }
        for (int[] pb : touched) {
            int sb = pb[0] * (w + 1);
            for (int j = cand.starts[sb + pb[1]]; j < cand.starts[sb + pb[1] + 1]; j++) {
                count[cand.order[pb[0] * n + j]] = 0;
            }
        }
        int[] out = Arrays.copyOf(found, f);
        Arrays.sort(out);
        return out;
    }

    /** [p][j]: the bucket and sign cell of candidate idx[j] in table p. */
    private static int[][] cells(Candidates cand, int d, int[] idx) {
        int[][] out = new int[d][idx.length];
        for (int p = 0; p < d; p++) {
            for (int j = 0; j < idx.length; j++) {
                out[p][j] = cand.cells[p * cand.n + idx[j]];
            }
        }
        return out;
    }

    static double sign(int cell) {
        return (cell & 1) == 0 ? 1.0 : -1.0;
    }

    /** _subtract: residual[p] -= bincount(buckets[p], weights=values * signs[p]) (sums in key order). */
    static void subtract(double[][] residual, int[][] cells, double[] values) {
        int w = residual.length == 0 ? 0 : residual[0].length;
        double[] bins = new double[w];
        for (int p = 0; p < cells.length; p++) {
            Arrays.fill(bins, 0.0);
            for (int j = 0; j < values.length; j++) {
                bins[cells[p][j] >>> 1] += values[j] * sign(cells[p][j]);
            }
            for (int q = 0; q < w; q++) {
                residual[p][q] -= bins[q];
            }
        }
    }

    /** Column sums over the tables (in table order) of the estimates residual[p][bucket] * sign. */
    private static double[] estimateSums(double[][] residual, int[][] cells, int m) {
        double[] out = new double[m];
        for (int j = 0; j < m; j++) {
            double acc = 0.0;
            for (int p = 0; p < cells.length; p++) {
                double e = residual[p][cells[p][j] >>> 1] * sign(cells[p][j]);
                acc = p == 0 ? e : acc + e;
            }
            out[j] = acc;
        }
        return out;
    }

    /** _refine: one least-squares step of the dense values (a Jacobi step scaled by the buckets' occupancy). */
    static void refine(double[][] residual, int[][] cells, double[] values) {
        int m = values.length;
        if (m == 0) {
            return;
        }
        int w = residual[0].length;
        long[] occ = new long[m];
        int[] per = new int[w];
        for (int p = 0; p < cells.length; p++) {
            Arrays.fill(per, 0);
            for (int j = 0; j < m; j++) {
                per[cells[p][j] >>> 1]++;
            }
            for (int j = 0; j < m; j++) {
                occ[j] += per[cells[p][j] >>> 1];
            }
        }
        double[] step = estimateSums(residual, cells, m);
        for (int j = 0; j < m; j++) {
            step[j] = step[j] / occ[j];
            values[j] += step[j];
        }
        subtract(residual, cells, step);
    }

    /** _least_squares: conjugate gradients on the normal equations (CGLS), as the core stops them. */
    static void leastSquares(double[][] residual, int[][] cells, double[] values, int iterations) {
        int m = values.length;
        if (m == 0 || iterations <= 0) {
            return;
        }
        int d = residual.length;
        int w = residual[0].length;
        double[] step = new double[m];
        double[][] r = new double[d][];
        double scale = 0.0;
        for (int p = 0; p < d; p++) {
            r[p] = residual[p].clone();
            for (double v : residual[p]) {
                scale = Math.max(scale, Math.abs(v));
            }
        }
        for (double v : values) {
            scale = Math.max(scale, Math.abs(v));
        }
        double[] g = estimateSums(r, cells, m);
        double[] dir = g.clone();
        double gamma = Sums.dot(g, g);
        double gamma0 = gamma;
        double noise = GRADIENT_ROUNDING * scale * (GRADIENT_ROUNDING * scale) * d * m;
        double[] q = new double[d * w];
        for (int it = 0; it < iterations; it++) {
            if (gamma <= 1e-12 * gamma0 || gamma <= noise) {
                break;
            }
            Arrays.fill(q, 0.0);
            for (int p = 0; p < d; p++) {
                for (int j = 0; j < m; j++) {
                    q[p * w + (cells[p][j] >>> 1)] += dir[j] * sign(cells[p][j]);
                }
            }
            double[] sq = new double[d * w];
            for (int i = 0; i < sq.length; i++) {
                sq[i] = q[i] * q[i];
            }
            double qq = Sums.pairwise(sq);
            if (qq == 0.0) {
                break;
            }
            double alpha = gamma / qq;
            for (int j = 0; j < m; j++) {
                step[j] += alpha * dir[j];
            }
            for (int p = 0; p < d; p++) {
                for (int x = 0; x < w; x++) {
                    r[p][x] -= alpha * q[p * w + x];
                }
            }
            g = estimateSums(r, cells, m);
            double fresh = Sums.dot(g, g);
            double beta = fresh / gamma;
            for (int j = 0; j < m; j++) {
                dir[j] = g[j] + beta * dir[j];
            }
            gamma = fresh;
        }
        for (int j = 0; j < m; j++) {
            values[j] += step[j];
        }
        subtract(residual, cells, step);
    }
}
