package io.skimsketch.spark.sketch;

import java.util.HashMap;

/** Exact mode with float64 weights: key -> summed weight (never zero). */
final class FloatEntries {
    final HashMap<Long, Double> map = new HashMap<>();

    void add(long key, double w) {
        double v = map.getOrDefault(key, 0.0) + w;
        if (v == 0) {
            map.remove(key);
        } else {
            map.put(key, v);
        }
    }

    int size() {
        return map.size();
    }
}
