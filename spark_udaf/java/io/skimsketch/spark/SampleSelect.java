package io.skimsketch.spark;

import java.io.Serializable;
import java.util.Arrays;

/**
 * The smallest (rank, key) entries of a set of keys with exact totals, and the thresholds of the
 * finished pieces merged in: enough to write the sample of their union exactly (skimsketch/sample.py,
 * _select). It holds at most cap = m + 1 entries (a max-heap on (rank, key)) and the m + 1 smallest
 * finite thresholds, so the chosen k <= m entries and tau (the (k+1)-th smallest of the ranks and the
 * thresholds) are those of the full set. Totals are longs, or a double's raw bits with float totals.
 * Keys offered must be distinct (a key's total is exact where it is offered).
 */
final class SampleSelect implements Serializable {
    private static final long serialVersionUID = 1L;
    final int cap;
    int size;
    long[] keys;
    long[] totals;
    double[] ranks;
    /** Keys with a non-zero total in the set, kept or not. */
    long nKeys;
    /** The finite thresholds of merged finished pieces (at most cap, the smallest). */
    double[] taus = new double[0];

    SampleSelect(int m) {
        this.cap = m + 1;
        int init = Math.min(cap, 64);
        keys = new long[init];
        totals = new long[init];
        ranks = new double[init];
    }

    private static boolean before(double ra, long ka, double rb, long kb) {
        return ra < rb || (ra == rb && ka < kb);
    }

    /** Offers one key with its exact non-zero total (not counted in nKeys: the caller counts). */
    void offer(long key, long total, double rank) {
        if (size < cap) {
            if (size == keys.length) {
                int n = Math.min(cap, Math.max(16, size * 2));
                keys = Arrays.copyOf(keys, n);
                totals = Arrays.copyOf(totals, n);
                ranks = Arrays.copyOf(ranks, n);
            }
            int i = size++;
            while (i > 0) { // sift up (max-heap)
                int p = (i - 1) >> 1;
                if (!before(ranks[p], keys[p], rank, key)) {
                    break;
                }
                keys[i] = keys[p];
                totals[i] = totals[p];
                ranks[i] = ranks[p];
                i = p;
            }
            keys[i] = key;
            totals[i] = total;
            ranks[i] = rank;
            return;
        }
        if (!before(rank, key, ranks[0], keys[0])) {
            return;
        }
        int i = 0; // replace the largest, sift down
        while (true) {
            int l = 2 * i + 1;
            if (l >= size) {
                break;
            }
            int c = l + 1 < size && before(ranks[l], keys[l], ranks[l + 1], keys[l + 1]) ? l + 1 : l;
            if (!before(rank, key, ranks[c], keys[c])) {
                break;
            }
            keys[i] = keys[c];
            totals[i] = totals[c];
            ranks[i] = ranks[c];
            i = c;
        }
        keys[i] = key;
        totals[i] = total;
        ranks[i] = rank;
    }

    /** Adds a finite threshold of a merged finished piece. */
    void addTau(double tau) {
        if (Double.isInfinite(tau)) {
            return;
        }
        double[] t = Arrays.copyOf(taus, taus.length + 1);
        t[taus.length] = tau;
        Arrays.sort(t);
        taus = t.length > cap ? Arrays.copyOf(t, cap) : t;
    }

    /** The union with another selection over disjoint keys. */
    void absorb(SampleSelect o) {
        for (int i = 0; i < o.size; i++) {
            offer(o.keys[i], o.totals[i], o.ranks[i]);
        }
        for (double t : o.taus) {
            addTau(t);
        }
        nKeys += o.nKeys;
    }

    /** The entries' indices sorted by (rank, key). */
    Integer[] order() {
        Integer[] idx = new Integer[size];
        for (int i = 0; i < size; i++) {
            idx[i] = i;
        }
        Arrays.sort(idx, (x, y) -> SampleRank.compare(ranks[x], keys[x], ranks[y], keys[y]));
        return idx;
    }

    /**
     * The sample of capacity m: k = min(m, nKeys) smallest entries, or, for a whole sample of integer
     * totals that do not all fit in int32, min(floor(3m/4), nKeys) of them; tau the (k+1)-th smallest
     * of the ranks and thresholds (inf when k = nKeys).
     */
    SampleState.Fin finish(int m, boolean wholeInts, boolean isFloat) {
        Integer[] idx = order();
        int k = (int) Math.min(m, nKeys);
        if (k > size) {
            throw new IllegalStateException("sample selection holds " + size + " entries, needs " + k);
        }
        boolean wide = false; // int64 totals among the min(m, K) smallest: written as int64
        for (int i = 0; i < k && !isFloat; i++) {
            long t = totals[idx[i]];
            wide |= t != (int) t;
        }
        if (wholeInts && wide) {
            k = (int) Math.min((3L * m) / 4, nKeys);
        }
        long[] ks = new long[k];
        long[] ts = new long[k];
        for (int i = 0; i < k; i++) {
            ks[i] = keys[idx[i]];
            ts[i] = totals[idx[i]];
        }
        double tau = Double.POSITIVE_INFINITY;
        if (k < nKeys) {
            double[] cand = new double[size + taus.length];
            for (int i = 0; i < size; i++) {
                cand[i] = ranks[i];
            }
            System.arraycopy(taus, 0, cand, size, taus.length);
            Arrays.sort(cand);
            tau = cand[k];
        }
        return new SampleState.Fin(ks, ts, tau, nKeys, isFloat, wide);
    }
}
