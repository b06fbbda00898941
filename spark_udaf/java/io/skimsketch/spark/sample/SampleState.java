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
 * partitioning with disjoint partitions merge, else {@link #mergeError}. A legacy sample (read from
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

    /** The sample proper: fingerprints in (rank, fp) order, their totals (longs or raw double bits), tau, K. */
    static final class Fin implements Serializable {
        private static final long serialVersionUID = 2L;
        final long[] fps;
        final long[] totals;
        final double tau;
        final long nKeys;
        final boolean isFloat;

        Fin(long[] fps, long[] totals, double tau, long nKeys, boolean isFloat) {
            this.fps = fps;
            this.totals = totals;
            this.tau = tau;
            this.nKeys = nKeys;
            this.isFloat = isFloat;
        }

        boolean complete() {
            return Double.isInfinite(tau);
        }

        double total(int i) {
            return isFloat ? Double.longBitsToDouble(totals[i]) : (double) totals[i];
        }
    }

    private static BitSet initialCover() {
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
        sel.offer(fp, t, SampleRank.rank(fp, isFloat ? Double.longBitsToDouble(t) : (double) t));
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

    private static double finite(double x) {
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
                    s.offer(fp, t, SampleRank.rank(fp, isFloat ? Double.longBitsToDouble(t) : (double) t));
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
        fin = new Fin(fps, ts, fin.tau, fin.nKeys, isFloat);
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

    // -- merges ----------------------------------------------------------------------------------
    static String dtype(boolean f) {
        return f ? "'float64'" : "'int64'";
    }

    /** The core's _check_compatible for a merge. */
    void checkMerge(SampleState o) {
        if (seed != o.seed) {
            throw incompatible("seed", Long.toUnsignedString(seed), Long.toUnsignedString(o.seed), "merge");
        }
        if (isFloat != o.isFloat) {
            throw incompatible("dtype", dtype(isFloat), dtype(o.isFloat), "merge");
        }
        if (nbytes != o.nbytes) {
            throw incompatible("nbytes", Integer.toString(nbytes), Integer.toString(o.nbytes), "merge");
        }
        int da = nKeys() > 0 ? keyDomain : 0;
        int db = o.nKeys() > 0 ? o.keyDomain : 0;
        if (da != 0 && db != 0 && da != db) {
            throw incompatible("key_domain", domainName(da), domainName(db), "merge");
        }
        checkRankHash(o, "merge");
    }

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

    /** The core's SampleMergeError (an IncompatibleSketchError) with its remedy. */
    static IncompatibleSketchError mergeError(String why) {
        return new IncompatibleSketchError("cannot merge finished join samples: " + why + ". A finished sample "
                + "keeps only its sample, not the totals of the keys it dropped, so the union's sample is unknown "
                + "(refused even when both kept every key, so that a union refused on a big day is refused on the "
                + "first). Merge the building pieces (before to_bytes), or build one sample from the union of the "
                + "rows (over days: keep each day's per-key totals, GROUP BY key, and sample the union of the "
                + "totals; or union skimmed sketches), or build the pieces for disjoint key-hash partitions "
                + "(JoinSample.for_bytes(..., partition=(i, P)))");
    }

    /**
     * Every key's exact total is here: building, or finished without a key. A finished sample that kept every key
     * is not taken as exact (the core's JoinSample._exact): a daily union that worked while every day's sample
     * kept every key would fail on the first day one did not.
     */
    private boolean exactTotals() {
        return map != null || (finishedOnly() && fin.nKeys == 0);
    }

    private SampleTotals totalsMap() {
        if (map != null) {
            return map;
        }
        SampleTotals t = new SampleTotals(isFloat);
        for (int i = 0; i < fin.fps.length; i++) {
            t.add(fin.fps[i], fin.totals[i]);
        }
        return t;
    }

    /**
     * The union (JoinSample.merge): exact totals add; a stream of disjoint keys absorbs another;
     * finished pieces of disjoint partitions keep the smallest; anything else is refused. Returns this.
     */
    public SampleState merge(SampleState o) {
        checkMerge(o);
        long t2;
        long n2;
        if (isFloat) {
            t2 = Double.doubleToRawLongBits(finite(totalWeight() + o.totalWeight()));
            n2 = Double.doubleToRawLongBits(finite(nullWeight() + o.nullWeight()));
        } else {
            try {
                t2 = Math.addExact(total, o.total);
                n2 = Math.addExact(nullW, o.nullW);
            } catch (ArithmeticException e) {
                throw new CounterOverflowError("merge would overflow the int64 total weight; the sample is unchanged");
            }
        }
        int kd = nKeys() > 0 ? keyDomain : o.keyDomain;
        boolean hash = nKeys() > 0 ? legacy : o.legacy; // an empty sample takes the other's rank hash
        boolean flag = signFlag && o.signFlag;
        if (sel != null && o.sel != null) {
            sel.absorb(o.sel); // two streams of disjoint keys (the rewritten aggregate's partial buffers)
        } else {
            boolean both = exactTotals() && o.exactTotals();
            if (!both && (nKeys() == 0 || o.nKeys() == 0) && !(parts == o.parts && parts > 1)) {
                // a side without keys (and not a sibling piece, whose claim counts) adds its weights only
                SampleState keyed = nKeys() == 0 ? o : this;
                Fin f = keyed.sample();
                parts = keyed.parts;
                covered = (BitSet) keyed.covered.clone();
                map = null;
                sel = null;
                fin = f;
                total = t2;
                nullW = n2;
                keyDomain = kd;
                signFlag = flag;
                legacy = hash;
                return this;
            }
            claims(o, !both);
            if (both) {
                SampleTotals mine = totalsMap();
                SampleTotals theirs = o.totalsMap();
                if (mine == o.map) {
                    theirs = theirs.copy();
                }
                mine.addAll(theirs);
                map = mine;
                sel = null;
            } else {
                Fin a = sample();
                Fin b = o.sample();
                SampleSelect s = new SampleSelect(maxEntries(nbytes, isFloat), isFloat);
                for (Fin f : new Fin[] {a, b}) {
                    s.nKeys += f.nKeys; // (disjoint partitions: disjoint fingerprints)
                    for (int i = 0; i < f.fps.length; i++) {
                        s.offer(f.fps[i], f.totals[i], SampleRank.rank(f.fps[i], f.total(i)));
                    }
                    s.addTau(f.tau);
                }
                map = null;
                sel = null;
                parts = newParts;
                covered = newCovered;
                fin = s.finish(nbytes, whole());
                total = t2;
                nullW = n2;
                keyDomain = kd;
                signFlag = flag;
                legacy = hash;
                return this;
            }
            parts = newParts;
            covered = newCovered;
        }
        fin = null;
        total = t2;
        nullW = n2;
        keyDomain = kd;
        signFlag = flag;
        legacy = hash;
        return this;
    }

    private transient int newParts;
    private transient BitSet newCovered;

    /** _union_claims: the union's (P, covered); with needDisjoint the claims must be disjoint pieces. */
    private void claims(SampleState o, boolean needDisjoint) {
        boolean same = parts == o.parts && parts > 1;
        if (needDisjoint) {
            if (!same) {
                throw mergeError("their keys may overlap (they are not pieces of one key-hash partitioning)");
            }
            BitSet both = (BitSet) covered.clone();
            both.and(o.covered);
            if (!both.isEmpty()) {
                throw mergeError("both cover partitions " + pyList(both) + " of " + parts);
            }
        }
        if (!same) {
            newParts = 1;
            newCovered = initialCover();
            return;
        }
        BitSet c = (BitSet) covered.clone();
        c.or(o.covered);
        if (c.cardinality() == parts) {
            newParts = 1;
            newCovered = initialCover();
        } else {
            newParts = parts;
            newCovered = c;
        }
    }

    static String pyList(BitSet b) {
        StringBuilder sb = new StringBuilder("[");
        for (int i = b.nextSetBit(0); i >= 0; i = b.nextSetBit(i + 1)) {
            sb.append(sb.length() > 1 ? ", " : "").append(i);
        }
        return sb.append(']').toString();
    }
}
