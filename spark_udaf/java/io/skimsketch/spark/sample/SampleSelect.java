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
 * Ranks are exact pairs (rank, shift), value rank 2^shift ({@link SampleScale}): float totals of any magnitude.
 */
final class SampleSelect implements Serializable {
    private static final long serialVersionUID = 3L;
    final int cap;
    final boolean isFloat;
    int size;
    /** The held fingerprints (the heap), their totals and ranks (rank 2^shift). */
    long[] keys;
    long[] totals;
    double[] ranks;
    int[] shifts;
    /** Fingerprints with a non-zero total in the set, kept or not. */
    long nKeys;
    /** The finite thresholds of merged finished pieces (tau 2^tauShift: 2 sigma of the piece's scale). */
    double[] taus = new double[0];
    int[] tauShifts = new int[0];
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
        shifts = new int[init];
        held = new long[128];
        filter = new long[8];
    }

    private static boolean before(double ra, int sa, long ka, double rb, int sb, long kb) {
        return sa == sb ? ra < rb || (ra == rb && ka < kb) : SampleScale.compare(ra, sa, ka, rb, sb, kb) < 0;
    }

    private boolean before(int i, double r, int sh, long fp) {
        return before(ranks[i], shifts[i], keys[i], r, sh, fp);
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
    private void set(int i, long fp, long t, double r, int sh) {
        keys[i] = fp;
        totals[i] = t;
        ranks[i] = r;
        shifts[i] = sh;
    }

    private void siftUp(int i, long fp, long t, double r, int sh) {
        while (i > 0) {
            int p = (i - 1) >> 1;
            if (!before(p, r, sh, fp)) {
                break;
            }
            set(i, keys[p], totals[p], ranks[p], shifts[p]);
            i = p;
        }
        set(i, fp, t, r, sh);
    }

    private void siftDown(int i, long fp, long t, double r, int sh) {
        while (true) {
            int l = 2 * i + 1;
            if (l >= size) {
                break;
            }
            int c = l + 1 < size && before(l, ranks[l + 1], shifts[l + 1], keys[l + 1]) ? l + 1 : l;
            if (!before(r, sh, fp, ranks[c], shifts[c], keys[c])) {
                break;
            }
            set(i, keys[c], totals[c], ranks[c], shifts[c]);
            i = c;
        }
        set(i, fp, t, r, sh);
    }

    /** Puts (fp, t, r 2^sh) at i (a hole) where it belongs. */
    private void resettle(int i, long fp, long t, double r, int sh) {
        if (i > 0 && before((i - 1) >> 1, r, sh, fp)) {
            siftUp(i, fp, t, r, sh);
        } else {
            siftDown(i, fp, t, r, sh);
        }
    }

    /** Offers one fingerprint with its non-zero total (counted in nKeys by the caller), ranked exactly. */
    void offer(long fp, long total) {
        double w = Math.abs(isFloat ? Double.longBitsToDouble(total) : (double) total);
        int sh = SampleScale.shift(w);
        offer(fp, total, SampleScale.rank(fp, w, sh), sh);
    }

    private void offer(long fp, long total, double rank, int sh) {
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
                shifts = Arrays.copyOf(shifts, n);
            }
            hold(fp);
            siftUp(size++, fp, total, rank, sh);
            return;
        }
        if (!before(rank, sh, fp, ranks[0], shifts[0], keys[0])) {
            return;
        }
        release(keys[0]);
        hold(fp);
        siftDown(0, fp, total, rank, sh);
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
                resettle(i, keys[size], totals[size], ranks[size], shifts[size]);
            }
            return;
        }
        double w = Math.abs(isFloat ? Double.longBitsToDouble(t) : (double) t);
        int sh = SampleScale.shift(w);
        resettle(i, fp, t, SampleScale.rank(fp, w, sh), sh);
    }

    /** Adds a finite threshold of a merged finished piece, stored at scale exponent {@code scale}. */
    void addTau(double tau, int scale) {
        if (Double.isInfinite(tau)) {
            return;
        }
        taus = Arrays.copyOf(taus, taus.length + 1);
        tauShifts = Arrays.copyOf(tauShifts, tauShifts.length + 1);
        taus[taus.length - 1] = tau;
        tauShifts[taus.length - 1] = 2 * scale;
    }

    /** The union with another selection (the same fingerprint in both adds the totals). */
    void absorb(SampleSelect o) {
        nKeys += o.nKeys;
        for (int i = 0; i < o.size; i++) {
            offer(o.keys[i], o.totals[i], o.ranks[i], o.shifts[i]);
        }
        for (int i = 0; i < o.taus.length; i++) {
            addTau(o.taus[i], o.tauShifts[i] / 2);
        }
    }

    /** The entries' indices sorted by (rank, fp). */
    Integer[] order() {
        Integer[] idx = new Integer[size];
        for (int i = 0; i < size; i++) {
            idx[i] = i;
        }
        Arrays.sort(idx, (x, y) -> SampleScale.compare(ranks[x], shifts[x], keys[x], ranks[y], shifts[y], keys[y]));
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
        int tauShift = 0;
        if (n < nKeys) {
            int c = size + taus.length;
            double[] cr = Arrays.copyOf(ranks, c);
            int[] cs = Arrays.copyOf(shifts, c);
            System.arraycopy(taus, 0, cr, size, taus.length);
            System.arraycopy(tauShifts, 0, cs, size, taus.length);
            if (n < c) {
                Integer[] ci = new Integer[c];
                for (int i = 0; i < c; i++) {
                    ci[i] = i;
                }
                Arrays.sort(ci, (x, y) -> SampleScale.compareValue(cr[x], cs[x], cr[y], cs[y]));
                tau = cr[ci[n]];
                tauShift = cs[ci[n]];
            }
        }
        return SampleScale.fin(fps, ts, tau, tauShift, nKeys, isFloat);
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
