package io.skimsketch.spark.sketch;

import io.skimsketch.spark.CounterOverflowError;
import java.nio.ByteBuffer;

/**
 * Float (float64) counters of a SUM sketch being built: the main tables, the prefix hierarchy
 * (empty without one), the total and the null weight. Sums in the order the rows come, as the
 * core's (byte identical whenever the sums are exact); infinity or NaN is refused when written.
 */
final class FloatCounters {
    final double[] main;
    final double[] hier;
    double total;
    double nullWeight;

    FloatCounters(int n, int hn) {
        main = new double[n];
        hier = new double[hn];
    }

    static void addCells(double[] a, int[] cells, double w) {
        for (int c : cells) {
            a[c >>> 1] += w * (1 - ((c & 1) << 1));
        }
    }

    /** Adds w to the main cells and (when given) the hierarchy cells; not to the total. */
    void add(int[] mainCells, int[] hierCells, double w) {
        addCells(main, mainCells, w);
        if (hierCells != null) {
            addCells(hier, hierCells, w);
        }
    }

    void merge(FloatCounters o) {
        for (int i = 0; i < main.length; i++) {
            main[i] += o.main[i];
        }
        for (int i = 0; i < hier.length; i++) {
            hier[i] += o.hier[i];
        }
        addWeights(o);
    }

    void addWeights(FloatCounters o) {
        total += o.total;
        nullWeight += o.nullWeight;
    }

    /** The largest |counter| or |weight| (0 when all are zero): the core's LinearState.magnitude. */
    double magnitude() {
        double top = Math.max(Math.abs(total), Math.abs(nullWeight));
        for (double v : main) {
            top = Math.max(top, Math.abs(v));
        }
        for (double v : hier) {
            top = Math.max(top, Math.abs(v));
        }
        return top;
    }

    /** A copy with every counter and weight times 2^e, exact barring underflow (the core's LinearState.scaled). */
    FloatCounters scaled(int e) {
        FloatCounters out = new FloatCounters(main.length, hier.length);
        for (int i = 0; i < main.length; i++) {
            out.main[i] = Math.scalb(main[i], e);
        }
        for (int i = 0; i < hier.length; i++) {
            out.hier[i] = Math.scalb(hier[i], e);
        }
        out.total = Math.scalb(total, e);
        out.nullWeight = Math.scalb(nullWeight, e);
        return out;
    }

    boolean allZero() {
        for (double v : main) {
            if (v != 0) {
                return false;
            }
        }
        for (double v : hier) {
            if (v != 0) {
                return false;
            }
        }
        return true;
    }

    boolean weightsZero() {
        return total == 0 && nullWeight == 0;
    }

    /** Refuses counters or weights that overflowed to infinity or NaN (the core's check when writing). */
    void checkFinite() {
        boolean ok = Double.isFinite(total) && Double.isFinite(nullWeight);
        for (double v : main) {
            ok &= Double.isFinite(v);
        }
        for (double v : hier) {
            ok &= Double.isFinite(v);
        }
        if (!ok) {
            throw new CounterOverflowError("the float64 counters would overflow to infinity or NaN");
        }
    }

    static void put(ByteBuffer b, double[] a) {
        for (double v : a) {
            b.putDouble(v);
        }
    }

    static void read(ByteBuffer b, double[] a) {
        for (int i = 0; i < a.length; i++) {
            a[i] = b.getDouble();
        }
    }
}
