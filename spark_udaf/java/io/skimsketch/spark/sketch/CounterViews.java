package io.skimsketch.spark.sketch;

import io.skimsketch.spark.common.Hashing;
import java.util.Map;

/**
 * The float64 views of a {@link SketchState}'s counters that the estimators read: the main tables as rows
 * (an exact-mode sketch's entries converted first, as the core's counter view, the state unchanged) and the
 * prefix hierarchy's counters. Integer counters are widened to float64 as the core's astype(float64).
 */
final class CounterViews {
    private CounterViews() {}

    /** search="prefix", counter mode: the hierarchy counters as float64 [level][table][bucket]. */
    static double[][][] hierRows(SketchState s) {
        s.flushCache();
        int w = 1 << s.spec.hierLg;
        double[][][] out = new double[Hashing.LEVELS][s.spec.hierDepth][w];
        for (int l = 0; l < Hashing.LEVELS; l++) {
            for (int t = 0; t < s.spec.hierDepth; t++) {
                for (int b = 0; b < w; b++) {
                    int i = (l * s.spec.hierDepth + t) * w + b;
                    out[l][t][b] = s.spec.isFloat ? s.floats.hier[i] : (double) s.ints.hier[i];
                }
            }
        }
        return out;
    }

    /**
     * The counters as float64 rows [depth][width]: an exact-mode hash or skimmed sketch's entries are
     * converted first (as the core's counter view of it), without changing this state.
     */
    static double[][] counterRows(SketchState s) {
        s.flushCache();
        if (s.exact()) {
            if (s.spec.kind == SketchState.KIND_AGMS) {
                throw new UnsupportedOperationException("an exact-mode AGMS sketch's counters are computed by Estimator");
            }
            SketchState c = new SketchState(s.spec.withExact(false));
            c.keyDomain = s.keyDomain;
            for (Map.Entry<Long, ? extends Number> x : s.exactEntries().entrySet()) {
                if (s.spec.isFloat) {
                    c.addCounters(x.getKey(), s.keyDomain, x.getValue().doubleValue());
                } else {
                    c.addCounters(x.getKey(), s.keyDomain, x.getValue().longValue());
                }
            }
            return c.counterRows();
        }
        double[][] rows = new double[s.spec.depth][s.spec.width];
        for (int p = 0; p < s.spec.depth; p++) {
            for (int q = 0; q < s.spec.width; q++) {
                int i = p * s.spec.width + q;
                rows[p][q] = s.spec.isFloat ? s.floats.main[i] : (double) s.ints.main[i];
            }
        }
        return rows;
    }
}
