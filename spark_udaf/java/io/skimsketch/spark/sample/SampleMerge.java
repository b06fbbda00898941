package io.skimsketch.spark.sample;

import io.skimsketch.spark.CounterOverflowError;
import io.skimsketch.spark.IncompatibleSketchError;
import java.util.BitSet;

/**
 * The union of two {@link SampleState}s ({@link SampleState#merge}; the core's JoinSample.merge,
 * skimsketch/sample/merging.py): exact totals add; a stream of disjoint keys absorbs another; a side without
 * keys adds its weights; finished pieces of disjoint partitions of one fingerprint partitioning keep the
 * smallest; anything else is refused ({@link #mergeError}, the core's SampleMergeError, with its remedy).
 */
final class SampleMerge {
    private SampleMerge() {}

    static String dtype(boolean f) {
        return f ? "'float64'" : "'int64'";
    }

    /** The core's _check_compatible for a merge. */
    static void checkMerge(SampleState a, SampleState o) {
        if (a.seed != o.seed) {
            throw SampleState.incompatible("seed", Long.toUnsignedString(a.seed), Long.toUnsignedString(o.seed),
                    "merge");
        }
        if (a.isFloat != o.isFloat) {
            throw SampleState.incompatible("dtype", dtype(a.isFloat), dtype(o.isFloat), "merge");
        }
        if (a.nbytes != o.nbytes) {
            throw SampleState.incompatible("nbytes", Integer.toString(a.nbytes), Integer.toString(o.nbytes), "merge");
        }
        int da = a.nKeys() > 0 ? a.keyDomain : 0;
        int db = o.nKeys() > 0 ? o.keyDomain : 0;
        if (da != 0 && db != 0 && da != db) {
            throw SampleState.incompatible("key_domain", SampleState.domainName(da), SampleState.domainName(db),
                    "merge");
        }
        a.checkRankHash(o, "merge");
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
    private static boolean exactTotals(SampleState s) {
        return s.map != null || (s.finishedOnly() && s.fin.nKeys == 0);
    }

    private static SampleTotals totalsMap(SampleState s) {
        if (s.map != null) {
            return s.map;
        }
        SampleTotals t = new SampleTotals(s.isFloat);
        for (int i = 0; i < s.fin.fps.length; i++) {
            t.add(s.fin.fps[i], s.fin.totals[i]);
        }
        return t;
    }

    /** The union's key claim: P and the partitions covered. */
    private static final class Claim {
        final int parts;
        final BitSet covered;

        Claim(int parts, BitSet covered) {
            this.parts = parts;
            this.covered = covered;
        }
    }

    /** Merges o into a (see the class comment); returns a. */
    static SampleState merge(SampleState a, SampleState o) {
        checkMerge(a, o);
        long t2;
        long n2;
        if (a.isFloat) {
            t2 = Double.doubleToRawLongBits(SampleState.finite(a.totalWeight() + o.totalWeight()));
            n2 = Double.doubleToRawLongBits(SampleState.finite(a.nullWeight() + o.nullWeight()));
        } else {
            try {
                t2 = Math.addExact(a.total, o.total);
                n2 = Math.addExact(a.nullW, o.nullW);
            } catch (ArithmeticException e) {
                throw new CounterOverflowError("merge would overflow the int64 total weight; the sample is unchanged");
            }
        }
        int kd = a.nKeys() > 0 ? a.keyDomain : o.keyDomain;
        boolean hash = a.nKeys() > 0 ? a.legacy : o.legacy; // an empty sample takes the other's rank hash
        boolean flag = a.signFlag && o.signFlag;
        if (a.sel != null && o.sel != null) {
            a.sel.absorb(o.sel); // two streams of disjoint keys (the rewritten aggregate's partial buffers)
        } else {
            boolean both = exactTotals(a) && exactTotals(o);
            if (!both && (a.nKeys() == 0 || o.nKeys() == 0) && !(a.parts == o.parts && a.parts > 1)) {
                // a side without keys (and not a sibling piece, whose claim counts) adds its weights only
                SampleState keyed = a.nKeys() == 0 ? o : a;
                SampleState.Fin f = keyed.sample();
                a.parts = keyed.parts;
                a.covered = (BitSet) keyed.covered.clone();
                a.map = null;
                a.sel = null;
                return settle(a, f, t2, n2, kd, flag, hash);
            }
            Claim c = claims(a, o, !both);
            if (both) {
                SampleTotals mine = totalsMap(a);
                SampleTotals theirs = totalsMap(o);
                if (mine == o.map) {
                    theirs = theirs.copy();
                }
                mine.addAll(theirs);
                a.map = mine;
                a.sel = null;
            } else {
                SampleState.Fin fa = a.sample();
                SampleState.Fin fb = o.sample();
                SampleSelect s = new SampleSelect(SampleState.maxEntries(a.nbytes, a.isFloat), a.isFloat);
                for (SampleState.Fin f : new SampleState.Fin[] {fa, fb}) {
                    s.nKeys += f.nKeys; // (disjoint partitions: disjoint fingerprints)
                    for (int i = 0; i < f.fps.length; i++) {
                        s.offer(f.fps[i], f.totals[i]);
                    }
                    s.addTau(f.tau, f.scale);
                }
                a.map = null;
                a.sel = null;
                a.parts = c.parts;
                a.covered = c.covered;
                return settle(a, s.finish(a.nbytes, a.whole()), t2, n2, kd, flag, hash);
            }
            a.parts = c.parts;
            a.covered = c.covered;
        }
        return settle(a, null, t2, n2, kd, flag, hash);
    }

    /** The merged sample's finished selection (null while it keeps totals), weights and header fields; a. */
    private static SampleState settle(SampleState a, SampleState.Fin fin, long total, long nullW, int keyDomain,
            boolean signFlag, boolean legacy) {
        a.fin = fin;
        a.total = total;
        a.nullW = nullW;
        a.keyDomain = keyDomain;
        a.signFlag = signFlag;
        a.legacy = legacy;
        return a;
    }

    /** _union_claims: the union's (P, covered); with needDisjoint the claims must be disjoint pieces. */
    private static Claim claims(SampleState a, SampleState o, boolean needDisjoint) {
        boolean same = a.parts == o.parts && a.parts > 1;
        if (needDisjoint) {
            if (!same) {
                throw mergeError("their keys may overlap (they are not pieces of one key-hash partitioning)");
            }
            BitSet both = (BitSet) a.covered.clone();
            both.and(o.covered);
            if (!both.isEmpty()) {
                throw mergeError("both cover partitions " + pyList(both) + " of " + a.parts);
            }
        }
        if (!same) {
            return new Claim(1, SampleState.initialCover());
        }
        BitSet c = (BitSet) a.covered.clone();
        c.or(o.covered);
        if (c.cardinality() == a.parts) {
            return new Claim(1, SampleState.initialCover());
        }
        return new Claim(a.parts, c);
    }

    static String pyList(BitSet b) {
        StringBuilder sb = new StringBuilder("[");
        for (int i = b.nextSetBit(0); i >= 0; i = b.nextSetBit(i + 1)) {
            sb.append(sb.length() > 1 ? ", " : "").append(i);
        }
        return sb.append(']').toString();
    }
}
