package io.skimsketch.spark.sample;

import io.skimsketch.spark.CounterOverflowError;
import io.skimsketch.spark.IncompatibleSketchError;
import io.skimsketch.spark.KeyTypeError;
import java.io.Serializable;
import java.util.BitSet;

/**
 * A JoinSample (skimsketch/sample/join_sample.py) on the JVM: parameters (the byte budget B, seed, integer or float
 * totals, the fingerprint partitions it covers), the table's total and null weights and key domain,
 * and its 52-bit key fingerprints ({@link SampleRank}) in one of three forms:
 * <ul>
 * <li>building: every fingerprint's exact total ({@link SampleTotals} keyed by fingerprint; memory grows
 * with the distinct keys);</li>
 * <li>a stream of exact totals of disjoint keys (the rewritten skim_sample_agg, after Spark grouped
 * the rows by key): a bounded {@link SampleSelect} of the C + 1 smallest (rank, fp), merged by keeping
 * the smallest (a fingerprint met again while held adds its total);</li>
 * <li>finished (read from bytes): the sample only ({@link Fin}).</li>
 * </ul>
 * Merges follow the core's rule: exact totals add; otherwise only pieces of one fingerprint
 * partitioning with disjoint partitions merge, else the core's SampleMergeError ({@link SampleMerge}). A legacy sample (read from
 * layout 1: fingerprints h >>> 12) merges, unions and joins only legacy samples, or empty ones (no fingerprint to
 * disagree on: the merge takes the non-empty side's rank hash).
 */
public final class SampleState implements Serializable {
    private static final long serialVersionUID = 3L;
    static final int KIND = 5;
    /** The bytes of a sample besides its sections: 64-byte header, CRC 4, extension head 32, r 1, L 4. */
    static final int OVERHEAD = SampleFormat.OVERHEAD;
    static final int MIN_BUDGET = 148;
    static final int MAX_BUDGET = 1 << 30;
    static final int MAX_ENTRIES = 1 << 26;

    /** The byte budget B (the header's width field). */
    public final int nbytes;
    public final long seed;
    final boolean isFloat;
    int parts = 1;
    BitSet covered = initialCover();
    /** Total and null weights: longs, or a double's raw bits with float totals. */
    long total;
    long nullW;
    int keyDomain; // 0 none, 1 integers, 2 strings/bytes
    /**
     * The sign flag (format header bit 4): no weight of a non-null key was negative. A negative weight clears it
     * ({@link #negativeWeight} in the totals form), merges AND it, the bytes carry it.
     */
    boolean signFlag = true;
    /** Read from layout 1: fingerprints h >>> 12 (SampleRank), written with the extension's flag bit 1. */
    boolean legacy;
    SampleTotals map; // building, keyed by fingerprint
    SampleSelect sel; // a stream of disjoint exact totals, or finished pieces being merged
    Fin fin; // finished (or the cached sample of the other forms)
    private transient SampleRank ranker; // SampleRank.of(seed), looked up once

    private SampleRank ranker() {
        if (ranker == null) {
            ranker = SampleRank.of(seed);
        }
        return ranker;
    }

    /** The fingerprint of a key in this sample (h >>> 12 for a legacy one). */
    long fp(long key) {
        return ranker().fp(key, legacy);
    }

    /**
     * The sample proper: fingerprints in (rank, fp) order, their totals (longs or raw double bits), tau (the rank
     * at totals times 2^scale, {@link SampleScale}), K.
     */
    static final class Fin implements Serializable {
        private static final long serialVersionUID = 2L;
        final long[] fps;
        final long[] totals;
        final double tau;
        final long nKeys;
        final boolean isFloat;
        final int scale;

        Fin(long[] fps, long[] totals, double tau, long nKeys, boolean isFloat) {
            this(fps, totals, tau, nKeys, isFloat, 0);
        }

        Fin(long[] fps, long[] totals, double tau, long nKeys, boolean isFloat, int scale) {
            this.fps = fps;
            this.totals = totals;
            this.tau = tau;
            this.nKeys = nKeys;
            this.isFloat = isFloat;
            this.scale = scale;
        }

        boolean complete() {
            return Double.isInfinite(tau);
        }

        double total(int i) {
            return isFloat ? Double.longBitsToDouble(totals[i]) : (double) totals[i];
        }
    }

    static BitSet initialCover() {
        BitSet b = new BitSet();
        b.set(0);
        return b;
    }

    private SampleState(int nbytes, long seed, boolean isFloat) {
        this.nbytes = nbytes;
        this.seed = seed;
        this.isFloat = isFloat;
    }

    /** An empty building sample (every key's exact total). */
    public static SampleState building(int nbytes, long seed, boolean isFloat) {
        SampleState s = new SampleState(nbytes, seed, isFloat);
        s.map = new SampleTotals(isFloat);
        return s;
    }

    /** An empty sample of exact totals of disjoint keys (each key offered once, with its final total). */
    public static SampleState totals(int nbytes, long seed, boolean isFloat) {
        SampleState s = new SampleState(nbytes, seed, isFloat);
        s.sel = new SampleSelect(maxEntries(nbytes, isFloat), isFloat);
        return s;
    }

    /** A finished sample (from bytes). */
    static SampleState finished(int nbytes, long seed, boolean isFloat, Fin fin) {
        SampleState s = new SampleState(nbytes, seed, isFloat);
        s.fin = fin;
        return s;
    }

    /** JoinSample.for_bytes(nbytes)'s budget B: nbytes itself, in [148, 2^30]. */
    public static int budget(String fn, long nbytes) {
        if (nbytes < MIN_BUDGET || nbytes > MAX_BUDGET) {
            throw new IllegalArgumentException(fn + ": nbytes must be in [" + MIN_BUDGET + ", " + MAX_BUDGET
                    + "], got " + nbytes);
        }
        return (int) nbytes;
    }

    /**
     * C(B), the most entries a sample of budget B may keep (sample_max_entries): floor(8 (B - 105) / 9) for
     * integer totals (an entry costs at least one bit of its fingerprint's gap and one varint byte),
     * floor(8 (B - 105) / 65) for float totals, at most 2^26.
     */
    static int maxEntries(long nbytes, boolean isFloat) {
        return (int) Math.min(MAX_ENTRIES, Math.max(0, 8 * (nbytes - OVERHEAD)) / (isFloat ? 65 : 9));
    }

    boolean whole() {
        return parts == 1;
    }

    boolean finishedOnly() {
        return map == null && sel == null;
    }

    // -- building ---------------------------------------------------------------------------
    private void domain(int kd) {
        if (keyDomain != 0 && kd != keyDomain) {
            throw new KeyTypeError("this sample holds " + kindWords(keyDomain) + " keys, got " + kindWords(kd)
                    + " keys: a sample holds one key domain (integer and string keys never join); use another "
                    + "sample or cast the keys");
        }
        keyDomain = kd;
    }

    private static String kindWords(int kd) {
        return kd == 1 ? "integer" : "string/bytes";
    }

    /** Adds w (an integer weight) to a key's total (building) or the null weight (key == null). */
    public void add(Long key, int kd, long w) {
        if (key == null) {
            nullW = addExact(nullW, w);
            return;
        }
        domain(kd);
        if (w < 0) {
            signFlag = false;
        }
        total = addExact(total, w);
        map.add(fp(key), w);
        fin = null;
    }

    /** Adds a float weight. */
    public void add(Long key, int kd, double w) {
        if (key == null) {
            nullW = Double.doubleToRawLongBits(finite(Double.longBitsToDouble(nullW) + w));
            return;
        }
        domain(kd);
        if (w < 0) {
            signFlag = false;
        }
        total = Double.doubleToRawLongBits(finite(Double.longBitsToDouble(total) + w));
        map.add(fp(key), Double.doubleToRawLongBits(w));
        fin = null;
    }

    /** One key's exact final total (a stream of disjoint keys): a zero total is not in the table. */
    public void offerTotal(long key, int kd, long t) {
        if (t == 0) {
            return;
        }
        domain(kd);
        total = isFloat ? Double.doubleToRawLongBits(finite(Double.longBitsToDouble(total)
                + Double.longBitsToDouble(t))) : addExact(total, t);
        long fp = fp(key);
        sel.nKeys++;
        sel.offer(fp, t);
        fin = null;
    }

    /** A non-null key had a negative weight (the totals form: the minimum weight of its rows was negative). */
    public void negativeWeight() {
        signFlag = false;
    }

    /** A null key's total (the null weight). */
    public void offerNull(long t) {
        nullW = isFloat ? Double.doubleToRawLongBits(finite(Double.longBitsToDouble(nullW)
                + Double.longBitsToDouble(t))) : addExact(nullW, t);
    }

    static long addExact(long a, long b) {
        try {
            return Math.addExact(a, b);
        } catch (ArithmeticException e) {
            throw new CounterOverflowError("update would overflow the int64 totals; the sample is unchanged");
        }
    }

    static double finite(double x) {
        if (!Double.isFinite(x)) {
            throw new CounterOverflowError("update would overflow a float64 weight to infinity; the sample is "
                    + "unchanged");
        }
        return x;
    }

    // -- the sample ---------------------------------------------------------------------------
    /** The sample this state writes. */
    Fin sample() {
        if (fin == null) {
            if (map != null) {
                SampleSelect s = new SampleSelect(maxEntries(nbytes, isFloat), isFloat);
                map.forEach((fp, t) -> {
                    s.nKeys++;
                    s.offer(fp, t);
                });
                fin = s.finish(nbytes, whole());
            } else {
                fin = sel.finish(nbytes, whole());
            }
        }
        return fin;
    }

    /** This finished state with its entries sorted by (rank, fp) (ranks[i]: entry i's rank); returns this. */
    SampleState inRankOrder(double[] ranks) {
        long[] f = fin.fps;
        Integer[] idx = new Integer[f.length];
        for (int i = 0; i < idx.length; i++) {
            idx[i] = i;
        }
        java.util.Arrays.sort(idx, (x, y) -> SampleRank.compare(ranks[x], f[x], ranks[y], f[y]));
        long[] fps = new long[f.length];
        long[] ts = new long[f.length];
        for (int i = 0; i < idx.length; i++) {
            fps[i] = f[idx[i]];
            ts[i] = fin.totals[idx[i]];
        }
        fin = new Fin(fps, ts, fin.tau, fin.nKeys, isFloat, fin.scale);
        return this;
    }

    long nKeys() {
        return map != null ? map.nonZero() : sel != null ? sel.nKeys : fin.nKeys;
    }

    boolean isEmpty() {
        return nKeys() == 0 && nullW == 0;
    }

    /**
     * Every key's total is known to be >= 0 (JoinSample.nonnegative): the sign flag, or the sample kept every key
     * and none is negative.
     */
    boolean nonnegative() {
        if (signFlag) {
            return true;
        }
        Fin f = sample();
        if (!f.complete()) {
            return false;
        }
        for (int i = 0; i < f.fps.length; i++) {
            if (f.total(i) < 0) {
                return false;
            }
        }
        return true;
    }

    /** Bytes a finished state holds (its sample's fingerprints and totals), for the callers' cache bounds. */
    public long footprint() {
        return 16L * sample().fps.length + 128;
    }

    public double totalWeight() {
        return isFloat ? Double.longBitsToDouble(total) : (double) total;
    }

    public double nullWeight() {
        return isFloat ? Double.longBitsToDouble(nullW) : (double) nullW;
    }

    public byte[] toBytes() {
        return SampleFormat.encode(this);
    }

    // -- compatibility (joins and merges) and the merge (SampleMerge) --------------------------------
    /** The core's rank-hash rule: a legacy sample (layout 1) combines only with legacy samples or empty ones. */
    void checkRankHash(SampleState o, String op) {
        if (legacy != o.legacy && nKeys() > 0 && o.nKeys() > 0) {
            throw incompatible("rank hash", rankHash(legacy), rankHash(o.legacy), op);
        }
    }

    private static String rankHash(boolean legacy) {
        return legacy ? "'layout 1'" : "'layout 2'";
    }

    static String domainName(int kd) {
        return kd == 1 ? "'int'" : "'str'";
    }

    static IncompatibleSketchError incompatible(String field, String mine, String theirs, String op) {
        return new IncompatibleSketchError("cannot " + op + " sketches: " + field + " differs (" + mine + " != "
                + theirs + ")");
    }

    /**
     * The union (JoinSample.merge): exact totals add; a stream of disjoint keys absorbs another;
     * finished pieces of disjoint partitions keep the smallest; anything else is refused ({@link SampleMerge}).
     * Returns this.
     */
    public SampleState merge(SampleState o) {
        return SampleMerge.merge(this, o);
    }
}
