package io.skimsketch.spark.sample;

import java.io.Serializable;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * The buffer of skim_sample_agg's bucketed build (integer totals): the exact totals of one bucket of 52-bit
 * key fingerprints ({@link SampleRank}) as a sorted run of (fingerprint, non-zero total), plus an unsorted tail
 * of new (fingerprint, weight) rows. When the tail is full and at least as long as the run (or 2^14), it is
 * radix-sorted, its equal fingerprints summed, and merged into the run: no hash table, every pass sequential,
 * amortised O(1) per row, memory at most about 3 x 16 bytes per distinct fingerprint (the run, the tail and the
 * sort's scratch). Merged buffers (other tasks' runs of the same bucket) wait as runs and merge in a balanced tree
 * when the buffer is finished. Totals are exact int64 sums (the core's overflow error), a zero total leaves (the
 * key is not in the table), so a finished bucket gives its exact key count and the exact totals of every
 * fingerprint in it: whatever the order of the rows and of the merges, the same run.
 */
public final class SampleRuns implements Serializable {
    private static final long serialVersionUID = 1L;
    static final int MIN_TAIL = 1 << 14;
    private static final long[] NONE = new long[0];
    private static final int DIGIT = 11;
    private static final int PASSES = 5; // 55 bits >= the 52 of a fingerprint

    /** Rows carry weights (else every row counts 1 and the tail keeps fingerprints only). */
    final boolean weighted;
    /** The total weight of the rows with a key, and the null key's weight. */
    long total;
    long nullW;
    int keyDomain; // 0 none, 1 integers, 2 strings/bytes
    /** A row of a non-null key had a negative weight (clears the sample's sign flag). */
    boolean negative;
    /** The run: ascending fingerprints and their non-zero totals, m of them. */
    long[] rk = NONE;
    long[] rv = NONE;
    int m;
    /** The tail: unsorted rows, n of them. */
    private long[] tk = NONE;
    private long[] tv = NONE;
    private int n;
    /** Runs merged in, not yet merged into this one (each exactly sized: {keys, totals}). */
    private final List<long[][]> pending = new ArrayList<>();

    public SampleRuns(boolean weighted) {
        this.weighted = weighted;
    }

    /** One row: a fingerprint and its weight (1 when unweighted); a zero weight changes nothing. */
    public void add(long fp, long w, int kd) {
        keyDomain = kd;
        if (w < 0) {
            negative = true;
        }
        if (w == 0) {
            return;
        }
        total = sum(total, w);
        if (n == tk.length) {
            makeRoom();
        }
        tk[n] = fp;
        if (weighted) {
            tv[n] = w;
        }
        n++;
    }

    /** a + b, or the core's CounterOverflowError naming the remedy (float totals) when int64 overflows. */
    static long sum(long a, long b) {
        try {
            return Math.addExact(a, b);
        } catch (ArithmeticException e) {
            throw new io.skimsketch.spark.CounterOverflowError("skim_sample_agg: a total weight (the SUM of the "
                    + "weights) would overflow the int64 totals of the sample: for larger sums use float totals, "
                    + "skim_sample_agg(key, CAST(weight AS DOUBLE))");
        }
    }

    /** A row with a NULL key adds to the null weight. */
    public void addNull(long w) {
        nullW = sum(nullW, w);
    }

    private void makeRoom() {
        int limit = Math.max(MIN_TAIL, m);
        if (tk.length < limit) {
            int len = Math.min(limit, Math.max(16, tk.length * 2));
            tk = Arrays.copyOf(tk, len);
            if (weighted) {
                tv = Arrays.copyOf(tv, len);
            }
            return;
        }
        compact();
    }

    /** Sorts the tail, sums it and merges it into the run. */
    private void compact() {
        if (n == 0) {
            return;
        }
        long[][] sorted = sortTail();
        long[][] run = combine(sorted[0], sorted[1], n);
        n = 0;
        if (m == 0) {
            setRun(run);
        } else {
            setRun(merge(rk, rv, m, run[0], run[1], run[0].length));
        }
    }

    private void setRun(long[][] run) {
        rk = run[0];
        rv = run[1];
        m = run[0].length;
    }

    /** The tail sorted by fingerprint (LSD radix, 11-bit digits, constant digits skipped): {keys, weights}. */
    private long[][] sortTail() {
        int[][] counts = new int[PASSES][1 << DIGIT];
        int mask = (1 << DIGIT) - 1;
        for (int i = 0; i < n; i++) {
            long k = tk[i];
            for (int p = 0; p < PASSES; p++) {
                counts[p][(int) (k >>> (p * DIGIT)) & mask]++;
            }
        }
        long[] k = tk;
        long[] v = weighted ? tv : null;
        long[] k2 = new long[n];
        long[] v2 = weighted ? new long[n] : null;
        for (int p = 0; p < PASSES; p++) {
            int[] c = counts[p];
            int shift = p * DIGIT;
            if (c[(int) (k[0] >>> shift) & mask] == n) {
                continue; // every key has this digit
            }
            int sum = 0;
            for (int d = 0; d <= mask; d++) {
                int x = c[d];
                c[d] = sum;
                sum += x;
            }
            for (int i = 0; i < n; i++) {
                int d = (int) (k[i] >>> shift) & mask;
                int to = c[d]++;
                k2[to] = k[i];
                if (v2 != null) {
                    v2[to] = v[i];
                }
            }
            long[] t = k;
            k = k2;
            k2 = t.length >= n ? t : new long[n];
            if (v2 != null) {
                long[] tw = v;
                v = v2;
                v2 = tw.length >= n ? tw : new long[n];
            }
        }
        return new long[][] {k, v}; // (may be the tail's arrays: combine copies before new rows overwrite them)
    }

    /** The sums of equal fingerprints of sorted rows (weights w, or 1 each when w is null), zero sums dropped. */
    private static long[][] combine(long[] k, long[] w, int len) {
        long[] ok = new long[len];
        long[] ov = new long[len];
        int j = 0;
        for (int i = 0; i < len;) {
            long key = k[i];
            long t = 0;
            if (w == null) {
                int s = i;
                while (i < len && k[i] == key) {
                    i++;
                }
                t = i - s;
            } else {
                while (i < len && k[i] == key) {
                    t = sum(t, w[i++]);
                }
            }
            if (t != 0) {
                ok[j] = key;
                ov[j++] = t;
            }
        }
        return new long[][] {j == len ? ok : Arrays.copyOf(ok, j), j == len ? ov : Arrays.copyOf(ov, j)};
    }

    /** Two runs merged (equal fingerprints summed, zero sums dropped), exactly sized. */
    static long[][] merge(long[] ak, long[] av, int an, long[] bk, long[] bv, int bn) {
        long[] ok = new long[an + bn];
        long[] ov = new long[an + bn];
        int i = 0;
        int j = 0;
        int o = 0;
        while (i < an && j < bn) {
            long a = ak[i];
            long b = bk[j];
            if (a < b) {
                ok[o] = a;
                ov[o++] = av[i++];
            } else if (b < a) {
                ok[o] = b;
                ov[o++] = bv[j++];
            } else {
                long t = sum(av[i++], bv[j++]);
                if (t != 0) {
                    ok[o] = a;
                    ov[o++] = t;
                }
            }
        }
        while (i < an) {
            ok[o] = ak[i];
            ov[o++] = av[i++];
        }
        while (j < bn) {
            ok[o] = bk[j];
            ov[o++] = bv[j++];
        }
        return o == ok.length ? new long[][] {ok, ov} : new long[][] {Arrays.copyOf(ok, o), Arrays.copyOf(ov, o)};
    }

    /** Absorbs another buffer of the same bucket (its rows or runs). Returns this. */
    public SampleRuns absorb(SampleRuns o) {
        total = sum(total, o.total);
        nullW = sum(nullW, o.nullW);
        keyDomain = Math.max(keyDomain, o.keyDomain);
        negative |= o.negative;
        o.compact();
        if (o.m > 0) {
            pending.add(new long[][] {o.m == o.rk.length ? o.rk : Arrays.copyOf(o.rk, o.m),
                o.m == o.rv.length ? o.rv : Arrays.copyOf(o.rv, o.m)});
        }
        pending.addAll(o.pending);
        return this;
    }

    /** Every row and merged run in the run (sorted, summed); returns this. */
    SampleRuns finish() {
        compact();
        if (!pending.isEmpty()) {
            List<long[][]> runs = new ArrayList<>(pending);
            pending.clear();
            if (m > 0) {
                runs.add(new long[][] {Arrays.copyOf(rk, m), Arrays.copyOf(rv, m)});
            }
            while (runs.size() > 1) { // a balanced tree of pairwise merges
                List<long[][]> next = new ArrayList<>();
                for (int i = 0; i + 1 < runs.size(); i += 2) {
                    long[][] a = runs.get(i);
                    long[][] b = runs.get(i + 1);
                    next.add(merge(a[0], a[1], a[0].length, b[0], b[1], b[0].length));
                }
                if (runs.size() % 2 == 1) {
                    next.add(runs.get(runs.size() - 1));
                }
                runs = next;
            }
            setRun(runs.get(0));
        }
        return this;
    }

    /** The 52-bit sample fingerprint of a canonical key (SampleRank.fp), for the bucketed build's projection. */
    public static long fingerprint(long key, long seed) {
        return SampleRank.of(seed).fp(key);
    }

    void setRun(long[] keys, long[] totals) {
        setRun(new long[][] {keys, totals});
    }
}
