package io.skimsketch.spark.sample;

import static io.skimsketch.spark.sample.SampleFormat.EXT_HEAD;
import static io.skimsketch.spark.sample.SampleFormat.HEADER;
import static io.skimsketch.spark.sample.SampleFormat.bad;
import static io.skimsketch.spark.sample.SampleFormat.checkState;
import static io.skimsketch.spark.sample.SampleFormat.fitsInt;
import static io.skimsketch.spark.sample.SampleFormat.state;

import io.skimsketch.spark.sample.SampleFormat.Head;
import java.nio.ByteBuffer;
import java.util.BitSet;
import java.util.HashSet;
import java.util.Set;

/**
 * Layout 1 of format kind 5 (the previous release; read compatibility, never written): keys and fixed-width
 * totals, width = the capacity m, read into legacy fingerprints h >>> 12 with the same ranks and tau at the budget
 * 100 + 12 m (100 + 16 m with float totals). A layout-1 partial piece (its partition bitmap as in layout 2, min(m, K)
 * entries at any total width) reads as a legacy piece: it joins legacy samples and merges its sibling pieces, as in
 * the core (skimsketch/sample/layout.py, _decode_sample_v1). Called by {@link SampleFormat#decode} after the checks
 * both layouts share.
 */
final class SampleLayout1 {
    private static final int V1_MAX_CAPACITY = 1 << 26;
    private static final int V1_MIN_CAPACITY = 4;

    private SampleLayout1() {}

    /** Layout 1 (the previous release): keys and fixed-width totals, converted to fingerprints. */
    static SampleState decode(byte[] blob, ByteBuffer b, Head h, int ctype, long width, long e) {
        boolean partial = h.parts > 1;
        int nb = partial ? (h.parts + 7) / 8 : 0;
        if (e < EXT_HEAD + nb) {
            throw bad("sample extension truncated inside its partition bitmap");
        }
        BitSet covered = new BitSet();
        covered.set(0);
        if (partial) {
            covered = SampleFormat.cover(blob, HEADER + EXT_HEAD, nb, h.parts);
        }
        if (width < V1_MIN_CAPACITY || width > V1_MAX_CAPACITY) {
            throw bad("sample capacity " + width + " outside [" + V1_MIN_CAPACITY + ", " + V1_MAX_CAPACITY + "]");
        }
        int m = (int) width;
        int cw = ctype == 3 ? 4 : 8;
        long n = h.n;
        long size = EXT_HEAD + nb + (8L + cw) * n;
        if (e != size) {
            throw bad("sample extension size mismatch: " + e + " bytes, " + n + " entries imply " + size);
        }
        boolean wide = !h.isFloat && cw == 8;
        long nKeys = h.nKeys;
        long want = Long.compareUnsigned(nKeys, Long.MAX_VALUE) > 0 ? -1
                : Math.min(nKeys, wide && !partial ? (3L * m) / 4 : m);
        if (n != want) {
            throw bad("sample of capacity " + m + " with " + n + " entries of " + Long.toUnsignedString(nKeys)
                    + " keys (format.py, kind 5, layout 1: the entries kept)");
        }
        int off = HEADER + EXT_HEAD + nb;
        long[] keys = new long[(int) n];
        long[] totals = new long[(int) n];
        for (int i = 0; i < n; i++) {
            keys[i] = b.getLong(off + 8 * i);
            totals[i] = cw == 4 ? b.getInt(off + 8 * (int) n + 4 * i) : b.getLong(off + 8 * (int) n + 8 * i);
        }
        if (wide && (partial || Double.isInfinite(h.tau)) && fitsInt(totals)) {
            throw bad("non-canonical total width: int64 totals that all fit in int32");
        }
        checkState(h, totals);
        // keys in (rank, key) order -> legacy fingerprints (distinct, ranks non-decreasing), then the rank-above-tau rule
        SampleRank r = SampleRank.of(h.seed);
        Set<Long> seenKeys = new HashSet<>();
        Set<Long> seenFps = new HashSet<>();
        long[] fps = new long[(int) n];
        double[] ranks = new double[(int) n];
        boolean ok = true;
        for (int i = 0; i < n; i++) {
            fps[i] = r.fp(keys[i], true);
            ranks[i] = SampleRank.rank(fps[i], h.isFloat ? Double.longBitsToDouble(totals[i]) : (double) totals[i]);
            ok &= seenKeys.add(keys[i]) && seenFps.add(fps[i]) && (i == 0 || !(ranks[i] < ranks[i - 1]));
        }
        if (!ok) {
            throw bad("layout-1 sample entries are not distinct keys in rank order");
        }
        for (double rk : ranks) {
            if (rk > h.tau) {
                throw bad("a sample entry ranks above tau: altered bytes or another seed");
            }
        }
        return state(h, (int) (100L + (h.isFloat ? 16L : 12L) * m), fps, totals, covered).inRankOrder(ranks);
    }
}
