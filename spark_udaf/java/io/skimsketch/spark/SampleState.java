package io.skimsketch.spark;

import java.io.Serializable;
import java.util.BitSet;

/**
 * A JoinSample (skimsketch/sample.py) on the JVM: parameters (capacity m, seed, integer or float
 * totals, the key-hash partitions it covers), the table's total and null weights and key domain,
 * and its keys in one of three forms:
 * <ul>
 * <li>building: every key's exact total ({@link SampleTotals}; memory grows with the distinct keys);</li>
 * <li>a stream of exact totals of disjoint keys (the rewritten skim_sample_agg, after Spark grouped
 * the rows by key): a bounded {@link SampleSelect}, merged by keeping the smallest (rank, key);</li>
 * <li>finished (read from bytes): the sample only ({@link Fin}).</li>
 * </ul>
 * Merges follow the core's rule: exact totals add; otherwise only pieces of one key-hash
 * partitioning with disjoint partitions merge, else {@link #mergeError}.
 */
final class SampleState implements Serializable {
    private static final long serialVersionUID = 1L;
    static final int KIND = 5;
    static final int OVERHEAD = 100; // 64-byte header, 4-byte CRC, 32-byte extension head
    static final int MAX_CAPACITY = 1 << 26;
    static final int MIN_CAPACITY = 4; // so that a sample of int64 totals keeps floor(3m/4) >= 3 entries

    final int m;
    final long seed;
    final boolean isFloat;
    int parts = 1;
    BitSet covered = initialCover();
    /** Total and null weights: longs, or a double's raw bits with float totals. */
    long total;
    long nullW;
    int keyDomain; // 0 none, 1 integers, 2 strings/bytes
    SampleTotals map; // building
    SampleSelect sel; // a stream of disjoint exact totals, or finished pieces being merged
    Fin fin; // finished (or the cached sample of the other forms)
    private transient SampleRank ranker; // SampleRank.of(seed), looked up once

    private SampleRank ranker() {
        if (ranker == null) {
            ranker = SampleRank.of(seed);
        }
        return ranker;
    }

    /** The sample proper: keys in (rank, key) order, their totals (longs or raw double bits), tau, K. */
    static final class Fin implements Serializable {
        private static final long serialVersionUID = 1L;
        final long[] keys;
        final long[] totals;
        final double tau;
        final long nKeys;
        final boolean isFloat;
        /** Integer totals written as int64 (the core's _Finished.wide). */
        final boolean wide;

        Fin(long[] keys, long[] totals, double tau, long nKeys, boolean isFloat, boolean wide) {
            this.keys = keys;
            this.totals = totals;
            this.tau = tau;
            this.nKeys = nKeys;
            this.isFloat = isFloat;
            boolean big = false;
            for (long t : totals) {
                big |= t != (int) t;
            }
            this.wide = !isFloat && (wide || big);
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

    private SampleState(int m, long seed, boolean isFloat) {
        this.m = m;
        this.seed = seed;
        this.isFloat = isFloat;
    }

    /** An empty building sample (every key's exact total). */
    static SampleState building(int m, long seed, boolean isFloat) {
        SampleState s = new SampleState(m, seed, isFloat);
        s.map = new SampleTotals(isFloat);
        return s;
    }

    /** An empty sample of exact totals of disjoint keys (each key offered once, with its final total). */
    static SampleState totals(int m, long seed, boolean isFloat) {
        SampleState s = new SampleState(m, seed, isFloat);
        s.sel = new SampleSelect(m);
        return s;
    }

    /** A finished sample (from bytes). */
    static SampleState finished(int m, long seed, boolean isFloat, Fin fin) {
        SampleState s = new SampleState(m, seed, isFloat);
        s.fin = fin;
        return s;
    }

    /** JoinSample.for_bytes(nbytes)'s capacity: (nbytes - 100) // 12 (integer totals) or // 16 (float). */
    static int capacity(String fn, long nbytes, boolean isFloat) {
        long least = OVERHEAD + MIN_CAPACITY * (isFloat ? 16L : 12L);
        if (nbytes < least || nbytes > (1L << 40)) {
            throw new IllegalArgumentException(fn + ": nbytes must be in [" + least + ", 1099511627776], got "
                    + nbytes);
        }
        return (int) Math.min(MAX_CAPACITY, (nbytes - OVERHEAD) / (isFloat ? 16 : 12));
    }

    boolean wholeInts() {
        return parts == 1 && !isFloat;
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
    void add(Long key, int kd, long w) {
        if (key == null) {
            nullW = addExact(nullW, w);
            return;
        }
        domain(kd);
        total = addExact(total, w);
        map.add(key, w);
        fin = null;
    }

    /** Adds a float weight. */
    void add(Long key, int kd, double w) {
        if (key == null) {
            nullW = Double.doubleToRawLongBits(finite(Double.longBitsToDouble(nullW) + w));
            return;
        }
        domain(kd);
        total = Double.doubleToRawLongBits(finite(Double.longBitsToDouble(total) + w));
        map.add(key, Double.doubleToRawLongBits(w));
        fin = null;
    }

    /** One key's exact final total (a stream of disjoint keys): a zero total is not in the table. */
    void offerTotal(long key, int kd, long t) {
        if (t == 0) {
            return;
        }
        domain(kd);
        total = isFloat ? Double.doubleToRawLongBits(finite(Double.longBitsToDouble(total)
                + Double.longBitsToDouble(t))) : addExact(total, t);
        sel.nKeys++;
        sel.offer(key, t, ranker().rank(key, isFloat ? Double.longBitsToDouble(t) : (double) t));
        fin = null;
    }

    /** A null key's total (the null weight). */
    void offerNull(long t) {
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
                SampleSelect s = new SampleSelect(m);
                map.forEach((k, t) -> {
                    s.nKeys++;
                    s.offer(k, t, ranker().rank(k, isFloat ? Double.longBitsToDouble(t) : (double) t));
                });
                fin = s.finish(m, wholeInts(), isFloat);
            } else {
                fin = sel.finish(m, wholeInts(), isFloat);
            }
        }
        return fin;
    }

    long nKeys() {
        return map != null ? map.nonZero() : sel != null ? sel.nKeys : fin.nKeys;
    }

    boolean isEmpty() {
        return nKeys() == 0 && nullW == 0;
    }

    double totalWeight() {
        return isFloat ? Double.longBitsToDouble(total) : (double) total;
    }

    double nullWeight() {
        return isFloat ? Double.longBitsToDouble(nullW) : (double) nullW;
    }

    byte[] toBytes() {
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
        if (m != o.m) {
            throw incompatible("capacity", Integer.toString(m), Integer.toString(o.m), "merge");
        }
        int da = nKeys() > 0 ? keyDomain : 0;
        int db = o.nKeys() > 0 ? o.keyDomain : 0;
        if (da != 0 && db != 0 && da != db) {
            throw incompatible("key_domain", domainName(da), domainName(db), "merge");
        }
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
                + "keeps only its sample, not the totals of the keys it dropped, so the union's sample is unknown. "
                + "Merge the building pieces (before to_bytes), or build one sample from the union of the rows, or "
                + "build the pieces for disjoint key-hash partitions (JoinSample.for_bytes(..., partition=(i, P)))");
    }

    private boolean exactTotals() {
        return map != null || (finishedOnly() && fin.complete());
    }

    private SampleTotals totalsMap() {
        if (map != null) {
            return map;
        }
        SampleTotals t = new SampleTotals(isFloat);
        for (int i = 0; i < fin.keys.length; i++) {
            t.add(fin.keys[i], fin.totals[i]);
        }
        return t;
    }

    /**
     * The union (JoinSample.merge): exact totals add; a stream of disjoint keys absorbs another;
     * finished pieces of disjoint partitions keep the smallest; anything else is refused. Returns this.
     */
    SampleState merge(SampleState o) {
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
        if (sel != null && o.sel != null) {
            sel.absorb(o.sel); // two streams of disjoint keys (the rewritten aggregate's partial buffers)
        } else {
            boolean both = exactTotals() && o.exactTotals();
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
                SampleSelect s = new SampleSelect(m);
                for (Fin f : new Fin[] {a, b}) {
                    SampleRank r = SampleRank.of(seed);
                    for (int i = 0; i < f.keys.length; i++) {
                        s.offer(f.keys[i], f.totals[i], r.rank(f.keys[i], f.total(i)));
                    }
                    s.addTau(f.tau);
                    s.nKeys += f.nKeys;
                }
                map = null;
                sel = null;
                parts = newParts;
                covered = newCovered;
                fin = s.finish(m, wholeInts(), isFloat);
                total = t2;
                nullW = n2;
                keyDomain = kd;
                return this;
            }
            parts = newParts;
            covered = newCovered;
        }
        fin = null;
        total = t2;
        nullW = n2;
        keyDomain = kd;
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
