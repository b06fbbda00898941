package io.skimsketch.spark.sample;

import io.skimsketch.spark.CounterOverflowError;
import io.skimsketch.spark.common.Keys;
import java.io.Serializable;
import java.util.Arrays;

/**
 * The smallest (rank, fp) entries of a set of fingerprints with exact totals, and the thresholds of the
 * finished pieces merged in: enough to write the sample of their union exactly (skimsketch/sample/join_sample.py,
 * _select). It holds at most cap = C + 1 entries (C = {@link SampleState#maxEntries}; a max-heap on
 * (rank, fp)) and the finite thresholds, so the chosen n &lt;= C entries and tau are those of the full set.
 * Totals are longs, or a double's raw bits with float totals. An offered fingerprint already held (two
 * keys of one fingerprint, met while the first is kept) adds its total to the held one; a zero sum leaves.
 */
final class SampleSelect implements Serializable {
    private static final long serialVersionUID = 2L;
    final int cap;
    final boolean isFloat;
    int size;
    /** The held fingerprints (the heap), their totals and ranks. */
    long[] keys;
    long[] totals;
    double[] ranks;
    /** Fingerprints with a non-zero total in the set, kept or not. */
    long nKeys;
    /** The finite thresholds of merged finished pieces. */
    double[] taus = new double[0];
    /** The held fingerprints + 1 (0: empty), open addressing by the fingerprint's low bits. */
    private long[] held;
    /**
     * A bit per fingerprint hash (bits 20.. of the fingerprint), set for every held one and cleared only when
     * rebuilt: a clear bit proves a fingerprint is not held without probing the larger table (most offers).
     */
    private long[] filter;
    /** Fingerprints released since the filter was rebuilt (their bits may be stale). */
    private int stale;

    SampleSelect(int maxEntries, boolean isFloat) {
        this.cap = maxEntries + 1;
        this.isFloat = isFloat;
        int init = Math.min(cap, 64);
        keys = new long[init];
        totals = new long[init];
        ranks = new double[init];
        held = new long[128];
        filter = new long[8];
    }

    private static boolean before(double ra, long ka, double rb, long kb) {
        return ra < rb || (ra == rb && ka < kb);
    }

    // -- the set of held fingerprints ------------------------------------------------------------
    private int slot(long fp) {
        int mask = held.length - 1;
        int i = (int) (fp & mask);
        while (held[i] != 0 && held[i] != fp + 1) {
            i = (i + 1) & mask;
        }
        return i;
    }

    private void hold(long fp) {
        if (2 * (size + 1) > held.length) {
            long[] old = held;
            held = new long[old.length * 2];
            for (long h : old) {
                if (h != 0) {
                    held[slot(h - 1)] = h;
                }
            }
            filter = new long[held.length / 16]; // 4 bits a slot
            refilter();
        }
        held[slot(fp)] = fp + 1;
        int bit = filterBit(fp);
        filter[bit >>> 6] |= 1L << bit;
    }

    private int filterBit(long fp) {
        return (int) (fp >>> 20) & (filter.length * 64 - 1);
    }

    private boolean maybeHeld(long fp) {
        int bit = filterBit(fp);
        return (filter[bit >>> 6] & (1L << bit)) != 0;
    }

    /** Rebuilds the filter from the held fingerprints. */
    private void refilter() {
        java.util.Arrays.fill(filter, 0L);
        for (long h : held) {
            if (h != 0) {
                int bit = filterBit(h - 1);
                filter[bit >>> 6] |= 1L << bit;
            }
        }
        stale = 0;
    }

    private void release(long fp) {
        if (++stale > held.length / 4) {
            stale = -1; // rebuilt once the table is updated (below)
        }
        int mask = held.length - 1;
        int i = slot(fp);
        held[i] = 0;
        for (int j = (i + 1) & mask; held[j] != 0; j = (j + 1) & mask) { // backward-shift deletion
            int home = (int) ((held[j] - 1) & mask);
            if (((j - home) & mask) >= ((j - i) & mask)) {
                held[i] = held[j];
                held[j] = 0;
                i = j;
            }
        }
        if (stale < 0) {
            refilter();
        }
    }

    // -- the heap ------------------------------------------------------------------------------------
    private void set(int i, long fp, long t, double r) {
        keys[i] = fp;
        totals[i] = t;
        ranks[i] = r;
    }

    private void siftUp(int i, long fp, long t, double r) {
        while (i > 0) {
            int p = (i - 1) >> 1;
            if (!before(ranks[p], keys[p], r, fp)) {
                break;
            }
            set(i, keys[p], totals[p], ranks[p]);
            i = p;
        }
        set(i, fp, t, r);
    }

    private void siftDown(int i, long fp, long t, double r) {
        while (true) {
            int l = 2 * i + 1;
            if (l >= size) {
                break;
            }
            int c = l + 1 < size && before(ranks[l], keys[l], ranks[l + 1], keys[l + 1]) ? l + 1 : l;
            if (!before(r, fp, ranks[c], keys[c])) {
                break;
            }
            set(i, keys[c], totals[c], ranks[c]);
            i = c;
        }
        set(i, fp, t, r);
    }

    /** Puts (fp, t, r) at i (a hole) where it belongs. */
    private void resettle(int i, long fp, long t, double r) {
        if (i > 0 && before(ranks[(i - 1) >> 1], keys[(i - 1) >> 1], r, fp)) {
            siftUp(i, fp, t, r);
        } else {
            siftDown(i, fp, t, r);
        }
    }

    /**
     * A float total outside 2^-511 .. 2^511 in magnitude (its rank u / total^2 would leave the doubles) is the
     * core's CounterOverflowError (skimsketch/sample/selection.py, RANKABLE), raised when the sample is selected.
     */
    static void checkRankable(double t) {
        double w = Math.abs(t);
        if (w < 0x1p-511 || w >= 0x1p511) {
            throw new CounterOverflowError("a JoinSample float total must lie within 2**-511 .. 2**511 in magnitude "
                    + "(about 1.5e-154 .. 6.7e153), got " + Keys.pyRepr(t) + ": its rank u / total^2 would leave the "
                    + "doubles; scale the weights by a power of two 2**k and the join answer by 2**-2k (the sample is "
                    + "unchanged)");
        }
    }

    /** Offers one fingerprint with its non-zero total (counted in nKeys by the caller). */
    void offer(long fp, long total, double rank) {
        if (isFloat) {
            checkRankable(Double.longBitsToDouble(total));
        }
        if (maybeHeld(fp) && held[slot(fp)] != 0) {
            combine(fp, total);
            return;
        }
        if (size < cap) {
            if (size == keys.length) {
                int n = Math.min(cap, Math.max(16, size * 2));
                keys = Arrays.copyOf(keys, n);
                totals = Arrays.copyOf(totals, n);
                ranks = Arrays.copyOf(ranks, n);
            }
            hold(fp);
            siftUp(size++, fp, total, rank);
            return;
        }
        if (!before(rank, fp, ranks[0], keys[0])) {
            return;
        }
        release(keys[0]);
        hold(fp);
        siftDown(0, fp, total, rank);
    }

    /** A second total for a held fingerprint: the sum (one entry), or the entry leaves when it is zero. */
    private void combine(long fp, long total) {
        int i = 0;
        while (keys[i] != fp) {
            i++;
        }
        long t;
        boolean zero;
        if (isFloat) {
            double x = Double.longBitsToDouble(totals[i]) + Double.longBitsToDouble(total);
            if (!Double.isFinite(x)) {
                throw new CounterOverflowError("update would overflow a float64 weight to infinity; the sample is "
                        + "unchanged");
            }
            zero = x == 0.0;
            t = Double.doubleToRawLongBits(zero ? 0.0 : x);
        } else {
            t = SampleState.addExact(totals[i], total);
            zero = t == 0;
        }
        nKeys--; // one fingerprint, counted twice
        if (zero) {
            nKeys--;
            release(fp);
            size--;
            if (i < size) {
                resettle(i, keys[size], totals[size], ranks[size]);
            }
            return;
        }
        resettle(i, fp, t, SampleRank.rank(fp, isFloat ? Double.longBitsToDouble(t) : (double) t));
    }

    /** Adds a finite threshold of a merged finished piece. */
    void addTau(double tau) {
        if (Double.isInfinite(tau)) {
            return;
        }
        double[] t = Arrays.copyOf(taus, taus.length + 1);
        t[taus.length] = tau;
        taus = t;
    }

    /** The union with another selection (the same fingerprint in both adds the totals). */
    void absorb(SampleSelect o) {
        nKeys += o.nKeys;
        for (int i = 0; i < o.size; i++) {
            offer(o.keys[i], o.totals[i], o.ranks[i]);
        }
        for (double t : o.taus) {
            addTau(t);
        }
    }

    /** The entries' indices sorted by (rank, fp). */
    Integer[] order() {
        Integer[] idx = new Integer[size];
        for (int i = 0; i < size; i++) {
            idx[i] = i;
        }
        Arrays.sort(idx, (x, y) -> SampleRank.compare(ranks[x], keys[x], ranks[y], keys[y]));
        return idx;
    }

    /**
     * The sample of budget B: a whole sample keeps the longest (rank, fp) prefix whose bytes fit in B, a
     * partial piece min(K, C) entries (fewer when merged pieces held fewer: the layout-1 pieces, min(m, K) each);
     * tau is the (n+1)-th smallest of the held ranks and the merged pieces' finite thresholds, as the core's
     * selection.select (inf when every fingerprint is kept).
     */
    SampleState.Fin finish(int budget, boolean whole) {
        Integer[] idx = order();
        int n = (int) Math.min(cap - 1, nKeys);
        if (n > size && taus.length == 0) { // offered every key: it holds the C + 1 smallest
            throw new IllegalStateException("sample selection holds " + size + " entries, needs " + n);
        }
        n = Math.min(n, size);
        long[] fps = new long[n];
        long[] ts = new long[n];
        for (int i = 0; i < n; i++) {
            fps[i] = keys[idx[i]];
            ts[i] = totals[idx[i]];
        }
        if (whole) {
            n = longestPrefix(fps, ts, n, budget, isFloat);
            fps = Arrays.copyOf(fps, n);
            ts = Arrays.copyOf(ts, n);
        }
        double tau = Double.POSITIVE_INFINITY;
        if (n < nKeys) {
            double[] cand = new double[size + taus.length];
            int c = 0;
            for (int i = 0; i < size; i++) {
                cand[c++] = ranks[i];
            }
            for (double t : taus) {
                if (!Double.isInfinite(t)) {
                    cand[c++] = t;
                }
            }
            if (n < c) {
                double[] sorted = Arrays.copyOf(cand, c);
                Arrays.sort(sorted);
                tau = sorted[n];
            }
        }
        return new SampleState.Fin(fps, ts, tau, nKeys, isFloat);
    }

    /** The serialised bytes of a whole sample of the first n of fps (in rank order) and their totals. */
    static long wholeBytes(long[] fps, long[] ts, int n, boolean isFloat) {
        long[] sorted = Arrays.copyOf(fps, n);
        Arrays.sort(sorted);
        long t = 0;
        if (isFloat) {
            t = 8L * n;
        } else {
            for (int i = 0; i < n; i++) {
                t += SampleCodec.varintSize(ts[i]);
            }
        }
        return SampleFormat.OVERHEAD + SampleCodec.sectionBytes(sorted, n) + t;
    }

    /** The largest n' &lt;= n whose whole sample fits in the budget (the size grows with n'). */
    static int longestPrefix(long[] fps, long[] ts, int n, int budget, boolean isFloat) {
        int lo = 0;
        int hi = n;
        while (lo < hi) {
            int mid = (int) (((long) lo + hi + 1) >>> 1);
            if (wholeBytes(fps, ts, mid, isFloat) <= budget) {
                lo = mid;
            } else {
                hi = mid - 1;
            }
        }
        return lo;
    }
}
