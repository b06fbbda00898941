package io.skimsketch.spark.sample;

import io.skimsketch.spark.CounterOverflowError;
import io.skimsketch.spark.common.Hashing;
import java.io.Serializable;
import java.util.Arrays;

/**
 * A building sample's exact totals: key -> total (a long, or a double's raw bits), open addressing.
 * A total that returns to zero stays in the table and is skipped (the key is not in the table).
 */
final class SampleTotals implements Serializable {
    private static final long serialVersionUID = 1L;
    private final boolean isFloat;
    private long[] keys = new long[16];
    private long[] vals = new long[16];
    private boolean[] used = new boolean[16];
    private int size;

    SampleTotals(boolean isFloat) {
        this.isFloat = isFloat;
    }

    interface Visitor {
        void visit(long key, long total);
    }

    private static int slot(long key, int mask) {
        return (int) (Hashing.mix(key) & mask);
    }

    /** Adds a weight (long, or raw double bits) to key's total. */
    void add(long key, long w) {
        if (2 * (size + 1) > keys.length) {
            grow();
        }
        int mask = keys.length - 1;
        int i = slot(key, mask);
        while (used[i] && keys[i] != key) {
            i = (i + 1) & mask;
        }
        if (!used[i]) {
            used[i] = true;
            keys[i] = key;
            vals[i] = w;
            size++;
            return;
        }
        if (isFloat) {
            double x = Double.longBitsToDouble(vals[i]) + Double.longBitsToDouble(w);
            if (!Double.isFinite(x)) {
                throw new CounterOverflowError("update would overflow a float64 weight to infinity; the sample is "
                        + "unchanged");
            }
            vals[i] = Double.doubleToRawLongBits(x == 0.0 ? 0.0 : x);
        } else {
            vals[i] = SampleState.addExact(vals[i], w);
        }
    }

    private void grow() {
        long[] k = keys;
        long[] v = vals;
        boolean[] u = used;
        int n = k.length * 2;
        keys = new long[n];
        vals = new long[n];
        used = new boolean[n];
        size = 0;
        for (int i = 0; i < k.length; i++) {
            if (u[i]) {
                int mask = n - 1;
                int j = slot(k[i], mask);
                while (used[j]) {
                    j = (j + 1) & mask;
                }
                used[j] = true;
                keys[j] = k[i];
                vals[j] = v[i];
                size++;
            }
        }
    }

    private boolean zero(long v) {
        return isFloat ? Double.longBitsToDouble(v) == 0.0 : v == 0;
    }

    /** Visits every key with a non-zero total. */
    void forEach(Visitor f) {
        for (int i = 0; i < keys.length; i++) {
            if (used[i] && !zero(vals[i])) {
                f.visit(keys[i], vals[i]);
            }
        }
    }

    long nonZero() {
        long n = 0;
        for (int i = 0; i < keys.length; i++) {
            if (used[i] && !zero(vals[i])) {
                n++;
            }
        }
        return n;
    }

    void addAll(SampleTotals o) {
        o.forEach(this::add);
    }

    SampleTotals copy() {
        SampleTotals t = new SampleTotals(isFloat);
        t.keys = Arrays.copyOf(keys, keys.length);
        t.vals = Arrays.copyOf(vals, vals.length);
        t.used = Arrays.copyOf(used, used.length);
        t.size = size;
        return t;
    }
}
