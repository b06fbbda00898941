package io.skimsketch.spark.sketch;

/**
 * search="range": the smallest and largest integer key inserted with a non-zero weight (the core's
 * key range, the KRNG extension of docs/format.md).
 */
final class KeyRange {
    boolean has;
    long lo;
    long hi;

    void observe(long key) {
        if (!has) {
            has = true;
            lo = key;
            hi = key;
        } else {
            lo = Math.min(lo, key);
            hi = Math.max(hi, key);
        }
    }

    void set(KeyRange o) {
        has = o.has;
        lo = o.lo;
        hi = o.hi;
    }
}
