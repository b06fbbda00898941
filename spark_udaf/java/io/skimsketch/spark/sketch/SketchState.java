package io.skimsketch.spark.sketch;

import io.skimsketch.spark.CounterOverflowError;
import io.skimsketch.spark.KeyDomainError;
import io.skimsketch.spark.common.Hashing;
import io.skimsketch.spark.common.Keys;
import java.io.Externalizable;
import java.io.IOException;
import java.io.ObjectInput;
import java.io.ObjectOutput;
import java.util.Map;

/**
 * A hash sketch (kind 2) or skimmed sketch (kind 3, bounded or unbounded) being built: what an
 * update, a merge and the estimators see. Its parts each do one job: the counters
 * ({@link IntCounters}, or {@link FloatCounters} for a SUM sketch: one of the two, never both),
 * exact mode's entries ({@link IntEntries}, {@link FloatEntries}) while they fit the capacity, the
 * key range ({@link KeyRange}, search="range"), the cells of a key ({@link CellHasher}) and the key
 * cache ({@link KeyCache}); the bytes are the core's format version 4 ({@link SketchFormat}).
 * Integer weights into float counters (an unweighted side of a SUM join) are added as float64, as
 * the core's astype(float64).
 */
public final class SketchState implements Externalizable {
    private static final long serialVersionUID = 1L;
    public static final int KIND_AGMS = 1;
    public static final int KIND_HASH = 2;
    public static final int KIND_SKIMMED = 3;
    public static final int KEY_INT = 1;
    public static final int KEY_BYTES = 2;

    Spec spec; // null: a union buffer that has not seen a sketch yet
    IntCounters ints; // integer counters; null with float counters
    FloatCounters floats; // float counters; null with integer counters
    IntEntries entries; // exact mode, integer weights; null in counter mode
    FloatEntries fentries; // exact mode, float weights
    int keyDomain;
    boolean nonneg = true; // the sign flag: every weight added to a non-null key was >= 0 (Sketch.nonnegative)
    final KeyRange range = new KeyRange(); // search="range": the integer keys inserted with a non-zero weight
    private transient CellHasher hasher;
    private transient KeyCache cache; // integer counters without a hierarchy; null until used
    private transient KeyCache.Sink sink;

    public SketchState() {}

    public SketchState(Spec spec) {
        this.spec = spec;
        allocate(spec.exact);
    }

    void allocate(boolean exact) {
        if (exact) {
            if (spec.isFloat) {
                fentries = new FloatEntries();
            } else {
                entries = new IntEntries();
            }
        }
        int n = spec.width * spec.depth;
        int hn = spec.hierLg > 0 ? Hashing.LEVELS * spec.hierDepth * (1 << spec.hierLg) : 0;
        if (spec.isFloat) {
            floats = new FloatCounters(n, hn);
        } else {
            ints = new IntCounters(n, hn);
        }
    }

    boolean exact() {
        return entries != null || fentries != null;
    }

    int entryCount() {
        return entries != null ? entries.size() : fentries != null ? fentries.size() : 0;
    }

    public boolean isSet() {
        return spec != null;
    }

    public Spec spec() {
        return spec;
    }

    private CellHasher hasher() {
        if (hasher == null) {
            hasher = new CellHasher(spec);
        }
        return hasher;
    }

    static CounterOverflowError overflow() {
        return new CounterOverflowError("the update would overflow the "
                + "int64 counters: use DOUBLE weights for very large sums");
    }

    // -- the key checks of every row ------------------------------------------------------
    private void checkKey(long key) {
        if (spec.domain != 0 && (key < 0 || key >= spec.domain)) {
            throw new KeyDomainError("key " + key
                    + " is outside the declared domain [0, " + spec.domain + ")");
        }
    }

    private void noteDomain(int kd) {
        if (keyDomain == 0) {
            keyDomain = kd;
        } else if (keyDomain != kd) {
            throw new IllegalArgumentException("a sketch holds one key domain (integers, or strings/bytes)");
        }
    }

    void observe(long key, int kd) {
        if (spec.range && kd == KEY_INT) {
            range.observe(key);
        }
    }

    /** Checks the key, records its domain and (for a non-zero weight) the key range: once per row. */
    private void admit(long key, int kd, boolean nonzero) {
        checkKey(key);
        noteDomain(kd);
        if (nonzero) {
            observe(key, kd);
        }
    }

    // -- counters ----------------------------------------------------------------------
    void addCounters(long key, int kd, long w) {
        admit(key, kd, w != 0);
        CellHasher h = hasher();
        h.cells(key);
        try {
            ints.add(h.mainCells, h.hierCells, w);
        } catch (ArithmeticException e) {
            throw overflow();
        }
    }

    void addCounters(long key, int kd, double w) {
        admit(key, kd, w != 0);
        CellHasher h = hasher();
        h.cells(key);
        floats.add(h.mainCells, h.hierCells, w);
    }

    /** Leaves exact mode for good: the entries become counters (and the key range), as one update. */
    void convert() {
        IntEntries e = entries;
        FloatEntries fe = fentries;
        entries = null;
        fentries = null;
        if (e != null) {
            for (Map.Entry<Long, Long> x : e.map.entrySet()) {
                addCounters(x.getKey(), keyDomain, x.getValue());
            }
        } else if (fe != null) {
            for (Map.Entry<Long, Double> x : fe.map.entrySet()) {
                addCounters(x.getKey(), keyDomain, x.getValue());
            }
        }
    }

    // -- updates -----------------------------------------------------------------------
    /** Adds weight w for canonical key `key` of key domain kd (as a float64 weight to float counters). */
    public void add(long key, int kd, long w) {
        if (spec.isFloat) { // an unweighted row (or an integer weight) in a SUM sketch: the core's astype(float64)
            add(key, kd, (double) w);
            return;
        }
        if (w < 0) {
            nonneg = false; // a delete: frequencies may be negative
        }
        if (entries != null) {
            checkKey(key);
            noteDomain(kd);
            try {
                entries.add(key, w);
                ints.addTotal(w);
            } catch (ArithmeticException e) {
                throw overflow();
            }
            if (entries.size() > spec.capacity()) {
                convert();
            }
            return;
        }
        if (spec.virtualLg > 0 && w == Long.MIN_VALUE) {
            throw new CounterOverflowError("a weight of -2**63 cannot take a sign in int64; the sketch is unchanged");
        }
        if (spec.hierLg == 0 && w != Long.MIN_VALUE) {
            addMain(key, kd, w);
            return;
        }
        admit(key, kd, w != 0);
        CellHasher h = hasher();
        h.cells(key);
        try {
            ints.add(h.mainCells, h.hierCells, w);
            ints.addTotal(w);
        } catch (ArithmeticException e) {
            throw overflow();
        }
    }

    /** The per-row path of integer counters without a hierarchy: through the key cache while it helps. */
    private void addMain(long key, int kd, long w) {
        admit(key, kd, w != 0);
        try {
            ints.addTotal(w);
            if (cache == null) {
                cache = new KeyCache();
            }
            if (cache.off()) {
                hasher().hashAdd(ints.main, key, w);
            } else {
                cache.add(key, w, sink());
            }
        } catch (ArithmeticException e) {
            throw overflow();
        }
    }

    private KeyCache.Sink sink() {
        if (sink == null) {
            CellHasher h = hasher();
            sink = (k, w) -> h.hashAdd(ints.main, k, w);
        }
        return sink;
    }

    /** Hashes every cached sum into the counters (before the counters are read). */
    void flushCache() {
        if (cache == null) {
            return;
        }
        try {
            cache.flush(sink());
        } catch (ArithmeticException e) {
            throw overflow();
        }
    }

    /** Adds weight w (float counters) for canonical key `key` of key domain kd. */
    public void add(long key, int kd, double w) {
        if (w < 0) {
            nonneg = false;
        }
        if (fentries != null) {
            checkKey(key);
            noteDomain(kd);
            fentries.add(key, w);
            floats.total += w;
            if (fentries.size() > spec.capacity()) {
                convert();
            }
            return;
        }
        addCounters(key, kd, w);
        floats.total += w;
    }

    public void addNull(long w) {
        if (spec.isFloat) {
            addNull((double) w);
            return;
        }
        try {
            ints.addNull(w);
        } catch (ArithmeticException e) {
            throw overflow();
        }
    }

    public void addNull(double w) {
        floats.nullWeight += w;
    }

    // -- merges (SketchMerge) ----------------------------------------------------------
    /** Adds another sketch of the same kind, shape, seed and counter type (a union buffer adopts it). */
    public SketchState merge(SketchState o) {
        return SketchMerge.merge(this, o);
    }

    public static String domainName(int kd) {
        return kd == KEY_INT ? "int" : "str";
    }

    // -- what the estimators read (Estimator) --------------------------------------------
    public boolean exactMode() {
        return exact();
    }

    /** KEY_INT, KEY_BYTES, or 0 when no non-null key has been seen. */
    public int keyDomain() {
        return recordedDomain();
    }

    public double totalWeight() {
        return spec.isFloat ? floats.total : ints.total;
    }

    public double nullWeight() {
        return spec.isFloat ? floats.nullWeight : ints.nullWeight;
    }

    /**
     * Whether every frequency is known to be >= 0 (the core's Sketch.nonnegative): the sign flag of
     * format version 4; read from older bytes, what they tell (exact mode: no entry is negative;
     * counter mode: the sketch is empty).
     */
    public boolean nonnegative() {
        return nonneg;
    }

    /** search="range": {smallest, largest} integer key inserted, as the bytes record it; null when none. */
    public long[] keyRange() {
        flushCache();
        return range.has && recordedDomain() == KEY_INT ? new long[] {range.lo, range.hi} : null;
    }

    /** search="prefix", counter mode: the hierarchy counters as float64 [level][table][bucket]. */
    public double[][][] hierRows() {
        return CounterViews.hierRows(this);
    }

    /** The exact-mode entries (key -> Long or Double weight); null in counter mode. */
    public Map<Long, ? extends Number> exactEntries() {
        return entries != null ? entries.map : fentries != null ? fentries.map : null;
    }

    /** The core's nbytes: the state's memory (counters at their narrowest width, hierarchy, key range). */
    public long stateBytes() {
        flushCache();
        if (exact()) {
            return entryCount() * (8L + (entries != null ? entries.width() : 8));
        }
        long cw = spec.isFloat ? 8 : ints.width();
        long n = (long) spec.width * spec.depth + (spec.isFloat ? floats.hier.length : ints.hier.length);
        return cw * n + (spec.range ? 16 : 0);
    }

    /**
     * The counters as float64 rows [depth][width]: an exact-mode hash or skimmed sketch's entries are
     * converted first (as the core's counter view of it), without changing this state.
     */
    public double[][] counterRows() {
        return CounterViews.counterRows(this);
    }

    /** Whether every counter (or, in exact mode, entry) is zero; the cache flushed. */
    boolean allZero() {
        flushCache();
        if (exact()) {
            return entryCount() == 0;
        }
        return spec.isFloat ? floats.allZero() : ints.allZero();
    }

    boolean weightsZero() {
        return spec.isFloat ? floats.weightsZero() : ints.weightsZero();
    }

    boolean totalZero() {
        return spec.isFloat ? floats.total == 0 : ints.total == 0;
    }

    /** Counter-mode float counters: the largest |counter| or |weight|; 0 otherwise (nothing to rescale). */
    public double floatMagnitude() {
        return spec.isFloat && !exact() ? floats.magnitude() : 0.0;
    }

    /** This counter-mode float sketch with its counters and weights times 2^e: a copy (the core's Sketch._rescaled). */
    public SketchState scaled(int e) {
        if (!spec.isFloat || exact()) {
            throw new IllegalStateException("only counter-mode float counters scale by a power of two");
        }
        SketchState out = new SketchState();
        out.spec = spec;
        out.floats = floats.scaled(e);
        out.keyDomain = keyDomain;
        out.nonneg = nonneg;
        out.range.set(range);
        return out;
    }

    /** The key domain the bytes record: none once every counter and the total weight are zero. */
    int recordedDomain() {
        if (exact()) {
            return entryCount() > 0 ? keyDomain : 0;
        }
        return totalZero() && allZero() ? 0 : keyDomain;
    }

    /** The core's is_empty: no entry, every counter zero, total and null weight zero. */
    public boolean isEmpty() {
        return weightsZero() && allZero();
    }

    /** "total weight T, null weight N" as Python prints the weights (ints, or floats' reprs). */
    public String weightsRepr() {
        return "total weight " + (spec.isFloat ? Keys.pyRepr(floats.total) : Long.toString(ints.total))
                + ", null weight " + (spec.isFloat ? Keys.pyRepr(floats.nullWeight) : Long.toString(ints.nullWeight));
    }

    // -- bytes -------------------------------------------------------------------------
    /** The core's format-version-4 bytes of this sketch. */
    public byte[] toBytes() {
        flushCache();
        return SketchFormat.write(this);
    }

    /** Parses format-version-2 to -4 bytes of an AGMS, hash or skimmed sketch (the checks of the core's decoder). */
    public static SketchState fromBytes(byte[] blob) {
        return SketchFormat.read(blob);
    }

    // -- shuffle form: the core bytes ------------------------------------------------------
    @Override
    public void writeExternal(ObjectOutput out) throws IOException {
        if (spec == null) {
            out.writeInt(-1);
            return;
        }
        byte[] bytes = toBytes();
        out.writeInt(bytes.length);
        out.write(bytes);
    }

    @Override
    public void readExternal(ObjectInput in) throws IOException {
        int n = in.readInt();
        if (n < 0) {
            return;
        }
        byte[] bytes = new byte[n];
        in.readFully(bytes);
        SketchState s = fromBytes(bytes);
        spec = s.spec;
        ints = s.ints;
        floats = s.floats;
        keyDomain = s.keyDomain;
        nonneg = s.nonneg;
        range.set(s.range);
        entries = s.entries;
        fentries = s.fentries;
    }
}
