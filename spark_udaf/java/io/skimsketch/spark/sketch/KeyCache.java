package io.skimsketch.spark.sketch;

import io.skimsketch.spark.common.Hashing;

/**
 * The key cache of integer counters without a hierarchy: a direct-mapped table of recent keys and
 * their summed weights, hashed into the counters only when a key is evicted or the state is read (the
 * counters are linear, so the result is the same). On skewed keys most rows only add to a cached sum;
 * if fewer than a quarter of the first PROBE_ROWS rows hit, the cache is flushed and turned off.
 */
final class KeyCache {
    /** Where an evicted (key, summed weight) goes: hashed into the counters. */
    interface Sink {
        void add(long key, long w);
    }

    private static final int BITS = 12;
    private static final int PROBE_ROWS = 1 << 16;
    private final long[] keys = new long[1 << BITS];
    private final long[] sums = new long[1 << BITS];
    private final boolean[] used = new boolean[1 << BITS];
    private int rows;
    private int hits;
    private boolean off;

    /** Whether the probe turned the cache off (rows then go straight to the counters). */
    boolean off() {
        return off;
    }

    /** Adds w for key (an overflow in the sink is an ArithmeticException). */
    void add(long key, long w, Sink sink) {
        int slot = (int) ((key * Hashing.G) >>> (64 - BITS));
        if (used[slot] && keys[slot] == key) {
            hits++;
            long sum = sums[slot] + w;
            if (((sums[slot] ^ sum) & (w ^ sum)) < 0) { // the key's own sum would overflow
                flushSlot(slot, sink);
                sum = w;
                used[slot] = true;
            }
            sums[slot] = sum;
        } else {
            if (used[slot]) {
                flushSlot(slot, sink);
            }
            keys[slot] = key;
            sums[slot] = w;
            used[slot] = true;
        }
        if (++rows == PROBE_ROWS && hits < PROBE_ROWS / 4) {
            flush(sink);
            off = true;
        }
    }

    private void flushSlot(int slot, Sink sink) {
        long sum = sums[slot];
        if (sum == Long.MIN_VALUE) { // added as two halves: -sum does not exist
            sink.add(keys[slot], sum / 2);
            sink.add(keys[slot], sum / 2);
        } else if (sum != 0) {
            sink.add(keys[slot], sum);
        }
        used[slot] = false;
    }

    /** Hashes every cached sum into the counters (before the counters are read). */
    void flush(Sink sink) {
        for (int slot = 0; slot < used.length; slot++) {
            if (used[slot]) {
                flushSlot(slot, sink);
            }
        }
    }
}
