package io.skimsketch.spark.sql;

import io.skimsketch.spark.CorruptSketchError;
import io.skimsketch.spark.sample.SampleFormat;
import io.skimsketch.spark.sample.SampleState;
import io.skimsketch.spark.sketch.SketchState;
import io.skimsketch.spark.sketch.estimate.Memory;
import io.skimsketch.spark.sketch.estimate.Skim;
import java.util.Arrays;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Stored summaries as the estimate functions read them: decoded and prepared once per JVM, not once
 * per row. A self cross join of n stored summaries calls skim_join_size n^2 / 2 times on n distinct
 * byte strings; each is decoded (and a skimmed sketch skimmed, with what its join estimates read
 * from its skim) the first time, then found by content (skimsketch/format/reuse.py does the same
 * for Python's from_bytes).
 *
 * <p>Keyed by content: the length and the CRC-32 every summary ends with (docs/format.md), confirmed
 * by comparing the bytes (so bytes that merely share a cached summary's length and checksum are
 * decoded, and refused, on their own). Never stale: equal bytes are one summary, and a prepared
 * summary is only read (the estimators do not change their arguments). Bounded: least recently used
 * out beyond CACHE_BYTES (64 MB, or a thirty-second of the heap when smaller), counting each entry's
 * bytes, decoded state and skim (a skimmed sketch skims on its first join, not on a frequency or
 * self-join query); only bytes that decoded without error are kept.
 */
public final class Summaries {
    static final long CACHE_BYTES = Memory.cacheBound(64L << 20, 32);

    /** A decoded summary: a sample, or a sketch (with its skim once a join needed it). */
    public static final class Prepared {
        public final SampleState sample;
        public final SketchState sketch;
        final long footprint;
        private final String fn;
        private volatile Skim skim;

        Prepared(SampleState sample, SketchState sketch, long footprint, String fn) {
            this.sample = sample;
            this.sketch = sketch;
            this.footprint = footprint;
            this.fn = fn;
        }

        /**
         * The skim of a counter-mode skimmed sketch with what its joins read from it alone (Skim.prepared),
         * computed on the first join (two threads may both compute it: the same skim); null for other sketches.
         */
        public Skim skim() {
            Skim k = skim;
            if (k == null && skimmed(sketch)) {
                k = skim = Skim.prepared(sketch, fn);
            }
            return k;
        }
    }

    private static boolean skimmed(SketchState s) {
        return s != null && s.spec().kind == SketchState.KIND_SKIMMED && !s.exactMode();
    }

    /** A summary's bytes as a key: hashed by length and trailing checksum, equal by content. */
    private static final class Key {
        final byte[] blob;
        final int hash;

        Key(byte[] blob) {
            this.blob = blob;
            int n = blob.length;
            int crc = n >= 4 ? (blob[n - 4] & 0xff) | (blob[n - 3] & 0xff) << 8 | (blob[n - 2] & 0xff) << 16
                    | (blob[n - 1] & 0xff) << 24 : 0;
            this.hash = 31 * crc + n;
        }

        @Override
        public int hashCode() {
            return hash;
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof Key && ((Key) o).hash == hash && Arrays.equals(((Key) o).blob, blob);
        }
    }

    private static final LinkedHashMap<Key, Prepared> KEPT = new LinkedHashMap<>(64, 0.75f, true);
    private static long keptBytes;
    private static long hits;
    private static long misses;

    private Summaries() {}

    /** The decoded, prepared summary of {@code blob}; what names the argument in error messages. */
    public static Prepared of(byte[] blob, String what, String fn) {
        Key key = new Key(blob);
        synchronized (KEPT) {
            Prepared hit = KEPT.get(key);
            if (hit != null) {
                hits++;
                return hit;
            }
            misses++;
        }
        Prepared p = prepare(blob, what, fn);
        if (p.footprint <= CACHE_BYTES / 4) {
            synchronized (KEPT) {
                Prepared old = KEPT.put(new Key(blob.clone()), p);
                keptBytes += p.footprint - (old == null ? 0 : old.footprint);
                Iterator<Map.Entry<Key, Prepared>> it = KEPT.entrySet().iterator();
                while (keptBytes > CACHE_BYTES && it.hasNext()) {
                    keptBytes -= it.next().getValue().footprint;
                    it.remove();
                }
            }
        }
        return p;
    }

    private static Prepared prepare(byte[] blob, String what, String fn) {
        try {
            if (SampleFormat.isSample(blob)) {
                SampleState s = SampleFormat.decode(blob);
                return new Prepared(s, null, 2L * blob.length + s.footprint(), fn);
            }
            SketchState s = SketchState.fromBytes(blob);
            // a skim holds the residual, the dense sketch and the doubtful keys' sketch: 3 float64 copies of the counters
            long skim = skimmed(s) ? 24L * s.spec().depth * s.spec().width : 0;
            return new Prepared(null, s, 2L * blob.length + s.stateBytes() + skim, fn);
        } catch (CorruptSketchError e) {
            throw new CorruptSketchError(what + ": " + e.getMessage());
        }
    }

    /** Empties the cache (Memory.dropCaches, tests). */
    public static void clear() {
        synchronized (KEPT) {
            KEPT.clear();
            keptBytes = 0;
        }
    }

    /** {summaries kept, their bytes, hits, misses} since the JVM started. */
    public static long[] stats() {
        synchronized (KEPT) {
            return new long[] {KEPT.size(), keptBytes, hits, misses};
        }
    }
}
