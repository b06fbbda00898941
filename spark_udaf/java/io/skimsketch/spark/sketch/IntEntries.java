package io.skimsketch.spark.sketch;

import java.util.HashMap;

/** Exact mode with integer weights: key -> summed weight (never zero), added exactly (ArithmeticException). */
final class IntEntries {
    final HashMap<Long, Long> map = new HashMap<>();

    void add(long key, long w) {
        long v = Math.addExact(map.getOrDefault(key, 0L), w);
        if (v == 0) {
            map.remove(key);
        } else {
            map.put(key, v);
        }
    }

    int size() {
        return map.size();
    }

    /** Bytes a weight takes when written: 4 while every weight fits int32, else 8. */
    int width() {
        for (long v : map.values()) {
            if (v != (int) v) {
                return 8;
            }
        }
        return 4;
    }
}
