package io.skimsketch.spark.sketch;

import java.nio.ByteBuffer;

/**
 * Integer counters of a sketch being built: the main tables, the prefix hierarchy (empty without
 * one), the total and the null weight, held as int64 and added exactly (Math.addExact: an
 * ArithmeticException, which SketchState reports as CounterOverflowError). Written at the
 * narrowest width holding every value (int32 or int64), as the core's LinearState.
 */
final class IntCounters {
    final long[] main;
    final long[] hier;
    long total;
    long nullWeight;

    IntCounters(int n, int hn) {
        main = new long[n];
        hier = new long[hn];
    }

    /**
     * Adds +w or -w (the cell's sign bit) to each cell's counter (cells: 2 * index + (1 if the sign is
     * -1)). Branch-free on the sign, which is a coin flip per cell (a sign branch mispredicts half the
     * time and doubled the cost of a row).
     */
    static void addCells(long[] a, int[] cells, long w) {
        if (w == Long.MIN_VALUE) { // -w does not exist: subtract instead
            for (int c : cells) {
                a[c >>> 1] = (c & 1) == 0 ? Math.addExact(a[c >>> 1], w) : Math.subtractExact(a[c >>> 1], w);
            }
            return;
        }
        for (int c : cells) {
            long neg = -(long) (c & 1); // 0 or all ones
            int i = c >>> 1;
            a[i] = Math.addExact(a[i], (w ^ neg) - neg);
        }
    }

    /** Adds w to the main cells and (when given) the hierarchy cells; not to the total. */
    void add(int[] mainCells, int[] hierCells, long w) {
        addCells(main, mainCells, w);
        if (hierCells != null) {
            addCells(hier, hierCells, w);
        }
    }

    void addTotal(long w) {
        total = Math.addExact(total, w);
    }

    void addNull(long w) {
        nullWeight = Math.addExact(nullWeight, w);
    }

    /** Adds the counters and weights of o (same shape). */
    void merge(IntCounters o) {
        for (int i = 0; i < main.length; i++) {
            main[i] = Math.addExact(main[i], o.main[i]);
        }
        for (int i = 0; i < hier.length; i++) {
            hier[i] = Math.addExact(hier[i], o.hier[i]);
        }
        addWeights(o);
    }

    /** Adds o's total and null weight. */
    void addWeights(IntCounters o) {
        total = Math.addExact(total, o.total);
        nullWeight = Math.addExact(nullWeight, o.nullWeight);
    }

    boolean allZero() {
        for (long v : main) {
            if (v != 0) {
                return false;
            }
        }
        for (long v : hier) {
            if (v != 0) {
                return false;
            }
        }
        return true;
    }

    boolean weightsZero() {
        return total == 0 && nullWeight == 0;
    }

    static boolean fits32(long[] a) {
        for (long v : a) {
            if (v != (int) v) {
                return false;
            }
        }
        return true;
    }

    /** Bytes a counter takes when written: 4 while every value fits int32, else 8. */
    int width() {
        return fits32(main) && fits32(hier) ? 4 : 8;
    }

    static void put(ByteBuffer b, long[] a, int cw) {
        for (long v : a) {
            if (cw == 4) {
                b.putInt((int) v);
            } else {
                b.putLong(v);
            }
        }
    }

    static void read(ByteBuffer b, long[] a, int cw) {
        for (int i = 0; i < a.length; i++) {
            a[i] = cw == 4 ? b.getInt() : b.getLong();
        }
    }
}
