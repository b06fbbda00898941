package io.skimsketch.spark;

import java.io.Externalizable;
import java.io.IOException;
import java.io.ObjectInput;
import java.io.ObjectOutput;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;
import java.util.zip.CRC32;

/**
 * A hash sketch (kind 2) or skimmed sketch (kind 3, bounded or unbounded with its prefix
 * hierarchy) being built: counters, weights, key domain and sign flag, written in the core's format
 * version 4 (docs/format.md) byte for byte. Integer counters are held as int64 and written at
 * the narrowest width holding every value; float counters are float64.
 */
public final class SketchState implements Externalizable {
    private static final long serialVersionUID = 1L;
    static final int KIND_AGMS = 1;
    static final int KIND_HASH = 2;
    static final int KIND_SKIMMED = 3;
    static final int KEY_INT = 1;
    static final int KEY_BYTES = 2;
    private static final int HEADER = 64;
    private static final int HIER_HEADER = 12;

    private Spec spec; // null: a union buffer that has not seen a sketch yet
    private long[] counters;
    private double[] fcounters;
    private long[] hier;
    private double[] fhier;
    private long total;
    private long nullWeight;
    private double ftotal;
    private double fnull;
    private int keyDomain;
    private boolean nonneg = true; // the sign flag: every weight added to a non-null key was >= 0 (Sketch.nonnegative)
    private boolean hasRange; // search="range": smallest and largest integer key inserted with a non-zero weight
    private long lo;
    private long hi;
    private HashMap<Long, Long> entries; // exact mode, integer weights (never zero); null in counter mode
    private HashMap<Long, Double> fentries; // exact mode, float weights
    private transient Hashing.Family family;
    private transient Hashing.Prefixes prefixes;
    private transient long[] words;
    private transient long salt; // search="virtual": the seed's salt T_0[0][2^22]
    private transient int[] mainCells;
    private transient int[] hierCells;
    // the key cache of addCached (integer counters without a hierarchy); empty until used
    private static final int CACHE_BITS = 12;
    private static final int PROBE_ROWS = 1 << 16;
    private transient long[] cacheKeys;
    private transient long[] cacheSums;
    private transient boolean[] cacheUsed;
    private transient int cacheRows;
    private transient int cacheHits;
    private transient boolean cacheOff;

    public SketchState() {}

    SketchState(Spec spec) {
        this.spec = spec;
        allocate();
    }

    private boolean exact() {
        return entries != null || fentries != null;
    }

    private int entryCount() {
        return entries != null ? entries.size() : fentries != null ? fentries.size() : 0;
    }

    private void allocate() {
        allocate(spec.exact);
    }

    private void allocate(boolean exact) {
        if (exact) {
            if (spec.isFloat) {
                fentries = new HashMap<>();
            } else {
                entries = new HashMap<>();
            }
        }
        int n = spec.width * spec.depth;
        int hn = spec.hierLg > 0 ? Hashing.LEVELS * spec.hierDepth * (1 << spec.hierLg) : 0;
        if (spec.isFloat) {
            fcounters = new double[n];
            fhier = new double[hn];
        } else {
            counters = new long[n];
            hier = new long[hn];
        }
    }

    boolean isSet() {
        return spec != null;
    }

    Spec spec() {
        return spec;
    }

    private void hashing() {
        if (family == null) {
            salt = spec.virtualLg > 0 ? Hashing.entry(Hashing.state(spec.seed, 1), 0, Hashing.HIER_WORD_BASE) : 0;
            family = Hashing.family(spec.seed, (spec.depth + 1) / 2);
            words = new long[family.nWords];
            mainCells = new int[spec.depth];
            if (spec.hierLg > 0) {
                prefixes = Hashing.prefixes(spec.seed, spec.hierDepth);
                hierCells = new int[Hashing.LEVELS * spec.hierDepth];
            }
        }
    }

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

    private void observe(long key, int kd) {
        if (spec.range && kd == KEY_INT) {
            if (!hasRange) {
                hasRange = true;
                lo = key;
                hi = key;
            } else {
                lo = Math.min(lo, key);
                hi = Math.max(hi, key);
            }
        }
    }

    /** Hashes the key into mainCells (and hierCells): 2 * counter index + (1 if the sign is -1). */
    private void cells(long key, int kd, boolean nonzero) {
        checkKey(key);
        noteDomain(kd);
        if (nonzero) {
            observe(key, kd);
        }
        hashing();
        int flip = 0;
        if (spec.virtualLg > 0) { // the signed virtual id: y = mix(key ^ salt), id = top lg bits, sign = bit 0
            long y = Hashing.mix(key ^ salt);
            flip = (int) (y & 1);
            key = y >>> (64 - spec.virtualLg);
        }
        family.words(key, words);
        for (int p = 0; p < spec.depth; p++) {
            int u = Hashing.rowHash(words, p);
            mainCells[p] = ((p * spec.width + Hashing.bucket(u, spec.width)) << 1) | ((u >>> 31) ^ flip);
        }
        if (prefixes != null) {
            prefixes.cells(key, spec.hierLg, hierCells);
        }
    }

    /**
     * Adds +w or -w (the cell's sign bit) to each cell's counter. Branch-free on the sign, which is a
     * coin flip per cell (a sign branch mispredicts half the time and doubled the cost of a row).
     */
    private static void addCells(long[] a, int[] cells, long w) {
        if (w == Long.MIN_VALUE) { // -w does not exist: subtract instead
            for (int c : cells) {
                a[c >>> 1] = (c & 1) == 0 ? Math.addExact(a[c >>> 1], w) : Math.subtractExact(a[c >>> 1], w);
            }
            return;
        }
        for (int c : cells) {
            long neg = -(long) (c & 1); // 0 or all ones
            int i = c >>> 1;
            a[i] = Math.addExact(a[i], (w ^ neg) - neg);
        }
    }

    private static void addCells(double[] a, int[] cells, double w) {
        for (int c : cells) {
            a[c >>> 1] += w * (1 - ((c & 1) << 1));
        }
    }

    /** Leaves exact mode for good: the entries become counters (and the key range), as one update. */
    private void convert() {
        HashMap<Long, Long> e = entries;
        HashMap<Long, Double> fe = fentries;
        entries = null;
        fentries = null;
        if (e != null) {
            for (Map.Entry<Long, Long> x : e.entrySet()) {
                addCounters(x.getKey(), keyDomain, x.getValue());
            }
        } else if (fe != null) {
            for (Map.Entry<Long, Double> x : fe.entrySet()) {
                addCounters(x.getKey(), keyDomain, x.getValue());
            }
        }
    }

    private void addCounters(long key, int kd, long w) {
        cells(key, kd, w != 0);
        try {
            addCells(counters, mainCells, w);
            if (prefixes != null) {
                addCells(hier, hierCells, w);
            }
        } catch (ArithmeticException e) {
            throw overflow();
        }
    }

    private void addCounters(long key, int kd, double w) {
        cells(key, kd, w != 0);
        addCells(fcounters, mainCells, w);
        if (prefixes != null) {
            addCells(fhier, hierCells, w);
        }
    }

    private void addEntry(long key, long w) {
        long v;
        try {
            v = Math.addExact(entries.getOrDefault(key, 0L), w);
        } catch (ArithmeticException e) {
            throw overflow();
        }
        if (v == 0) {
            entries.remove(key);
        } else {
            entries.put(key, v);
        }
    }

    private void addEntry(long key, double w) {
        double v = fentries.getOrDefault(key, 0.0) + w;
        if (v == 0) {
            fentries.remove(key);
        } else {
            fentries.put(key, v);
        }
    }

    /** Adds weight w for canonical key `key` of key domain kd (as a float64 weight to float counters). */
    void add(long key, int kd, long w) {
        if (spec.isFloat) { // an unweighted row (or an integer weight) in a SUM sketch: the core's astype(float64)
            add(key, kd, (double) w);
            return;
        }
        if (w < 0) {
            nonneg = false; // a delete: frequencies may be negative
        }
        if (exact()) {
            checkKey(key);
            noteDomain(kd);
            addEntry(key, w);
            try {
                total = Math.addExact(total, w);
            } catch (ArithmeticException e) {
                throw overflow();
            }
            if (entryCount() > spec.capacity()) {
                convert();
            }
            return;
        }
        if (spec.virtualLg > 0 && w == Long.MIN_VALUE) {
            throw new CounterOverflowError("a weight of -2**63 cannot take a sign in int64; the sketch is unchanged");
        }
        if (spec.hierLg == 0 && w != Long.MIN_VALUE) {
            if (cacheOff) {
                addMain(key, kd, w);
            } else {
                addCached(key, kd, w);
            }
            return;
        }
        cells(key, kd, w != 0);
        try {
            addCells(counters, mainCells, w);
            if (prefixes != null) {
                addCells(hier, hierCells, w);
            }
            total = Math.addExact(total, w);
        } catch (ArithmeticException e) {
            throw overflow();
        }
    }

    /** Checks the key, records its domain and (for a non-zero weight) the key range: once per row. */
    private void admit(long key, int kd, long w) {
        checkKey(key);
        noteDomain(kd);
        if (w != 0) {
            observe(key, kd);
        }
    }

    /**
     * Adds +w or -w (each table's sign) to the key's cells of the main counters: the same cells as
     * cells() and addCells(), computed and added in one loop (no cell array, no sign branch).
     * w must not be Long.MIN_VALUE (its negation does not exist).
     */
    private void hashAdd(long key, long w) {
        hashing();
        if (spec.virtualLg > 0) { // the signed virtual id (see cells)
            long y = Hashing.mix(key ^ salt);
            w = (y & 1) == 0 ? w : -w;
            key = y >>> (64 - spec.virtualLg);
        }
        family.words(key, words);
        long[] a = counters;
        int width = spec.width;
        for (int p = 0, base = 0; p < spec.depth; p++, base += width) {
            int u = Hashing.rowHash(words, p);
            long neg = u >> 31; // 0 or all ones: the sign bit of the row hash
            int i = base + Hashing.bucket(u, width);
            a[i] = Math.addExact(a[i], (w ^ neg) - neg);
        }
    }

    /** The per-row path of integer counters without a hierarchy, when the key cache is off. */
    private void addMain(long key, int kd, long w) {
        admit(key, kd, w);
        try {
            hashAdd(key, w);
            total = Math.addExact(total, w);
        } catch (ArithmeticException e) {
            throw overflow();
        }
    }

    /**
     * The per-row path with the key cache: a direct-mapped table of recent keys and their summed
     * weights, hashed into the counters only when a key is evicted or the state is read (the counters
     * are linear, so the result is the same). On skewed keys most rows only add to a cached sum; if
     * fewer than a quarter of the first PROBE_ROWS rows hit, the cache is flushed and turned off.
     */
    private void addCached(long key, int kd, long w) {
        admit(key, kd, w);
        if (cacheKeys == null) {
            cacheKeys = new long[1 << CACHE_BITS];
            cacheSums = new long[1 << CACHE_BITS];
            cacheUsed = new boolean[1 << CACHE_BITS];
        }
        int slot = (int) ((key * Hashing.G) >>> (64 - CACHE_BITS));
        try {
            total = Math.addExact(total, w);
            if (cacheUsed[slot] && cacheKeys[slot] == key) {
                cacheHits++;
                long sum = cacheSums[slot] + w;
                if (((cacheSums[slot] ^ sum) & (w ^ sum)) < 0) { // the key's own sum would overflow
                    flushSlot(slot);
                    sum = w;
                    cacheUsed[slot] = true;
                }
                cacheSums[slot] = sum;
            } else {
                if (cacheUsed[slot]) {
                    flushSlot(slot);
                }
                cacheKeys[slot] = key;
                cacheSums[slot] = w;
                cacheUsed[slot] = true;
            }
        } catch (ArithmeticException e) {
            throw overflow();
        }
        if (++cacheRows == PROBE_ROWS && cacheHits < PROBE_ROWS / 4) {
            flushCache();
            cacheOff = true;
        }
    }

    private void flushSlot(int slot) {
        long sum = cacheSums[slot];
        if (sum == Long.MIN_VALUE) { // added as two halves: -sum does not exist
            hashAdd(cacheKeys[slot], sum / 2);
            hashAdd(cacheKeys[slot], sum / 2);
        } else if (sum != 0) {
            hashAdd(cacheKeys[slot], sum);
        }
        cacheUsed[slot] = false;
    }

    /** Hashes every cached sum into the counters (before the counters are read). */
    private void flushCache() {
        if (cacheKeys == null) {
            return;
        }
        try {
            for (int slot = 0; slot < cacheUsed.length; slot++) {
                if (cacheUsed[slot]) {
                    flushSlot(slot);
                }
            }
        } catch (ArithmeticException e) {
            throw overflow();
        }
    }

    /** Adds weight w (float counters) for canonical key `key` of key domain kd. */
    void add(long key, int kd, double w) {
        if (w < 0) {
            nonneg = false;
        }
        if (exact()) {
            checkKey(key);
            noteDomain(kd);
            addEntry(key, w);
            ftotal += w;
            if (entryCount() > spec.capacity()) {
                convert();
            }
            return;
        }
        cells(key, kd, w != 0);
        addCells(fcounters, mainCells, w);
        if (prefixes != null) {
            addCells(fhier, hierCells, w);
        }
        ftotal += w;
    }

    void addNull(long w) {
        if (spec.isFloat) {
            addNull((double) w);
            return;
        }
        try {
            nullWeight = Math.addExact(nullWeight, w);
        } catch (ArithmeticException e) {
            throw overflow();
        }
    }

    void addNull(double w) {
        fnull += w;
    }

    private static CounterOverflowError overflow() {
        return new CounterOverflowError("the update would overflow the "
                + "int64 counters: use DOUBLE weights for very large sums");
    }

    /** Adds another sketch of the same kind, shape, seed and counter type (a union buffer adopts it). */
    SketchState merge(SketchState o) {
        if (o.spec == null) {
            return this;
        }
        o.flushCache();
        if (spec == null) {
            spec = o.spec;
            allocate(o.exact());
        }
        spec.checkCompatible(o.spec, "merge");
        nonneg &= o.nonneg;
        if (keyDomain != 0 && o.keyDomain != 0 && keyDomain != o.keyDomain) {
            throw new IncompatibleSketchError("cannot merge sketches: key_domain differs ('" + domainName(keyDomain)
                    + "' != '" + domainName(o.keyDomain) + "')");
        }
        if (keyDomain == 0) {
            keyDomain = o.keyDomain;
        }
        if (spec.kind == KIND_AGMS && exact() != o.exact()) {
            throw new UnsupportedOperationException("merging an exact-mode AGMS sketch with a counter-mode one is "
                    + "not done on the JVM: merge them with skimsketch (a.merge(b))");
        }
        if (o.exact()) {
            mergeEntries(o);
            return this;
        }
        if (exact()) {
            convert();
        }
        if (o.hasRange && o.recordedDomain() != 0) {
            observe(o.lo, KEY_INT);
            observe(o.hi, KEY_INT);
        }
        if (spec.isFloat) {
            for (int i = 0; i < fcounters.length; i++) {
                fcounters[i] += o.fcounters[i];
            }
            for (int i = 0; i < fhier.length; i++) {
                fhier[i] += o.fhier[i];
            }
            ftotal += o.ftotal;
            fnull += o.fnull;
        } else {
            try {
                for (int i = 0; i < counters.length; i++) {
                    counters[i] = Math.addExact(counters[i], o.counters[i]);
                }
                for (int i = 0; i < hier.length; i++) {
                    hier[i] = Math.addExact(hier[i], o.hier[i]);
                }
                total = Math.addExact(total, o.total);
                nullWeight = Math.addExact(nullWeight, o.nullWeight);
            } catch (ArithmeticException e) {
                throw overflow();
            }
        }
        return this;
    }

    /** Adds an exact-mode sketch: entry by entry (as updates when this one has counters), then its weights. */
    private void mergeEntries(SketchState o) {
        boolean mine = exact();
        if (o.entries != null) {
            for (Map.Entry<Long, Long> x : o.entries.entrySet()) {
                if (mine) {
                    addEntry(x.getKey(), x.getValue());
                } else {
                    addCounters(x.getKey(), o.keyDomain, x.getValue());
                }
            }
        } else {
            for (Map.Entry<Long, Double> x : o.fentries.entrySet()) {
                if (mine) {
                    addEntry(x.getKey(), x.getValue());
                } else {
                    addCounters(x.getKey(), o.keyDomain, x.getValue());
                }
            }
        }
        if (spec.isFloat) {
            ftotal += o.ftotal;
            fnull += o.fnull;
        } else {
            try {
                total = Math.addExact(total, o.total);
                nullWeight = Math.addExact(nullWeight, o.nullWeight);
            } catch (ArithmeticException e) {
                throw overflow();
            }
        }
        if (mine && entryCount() > spec.capacity()) {
            convert();
        }
    }

    static String domainName(int kd) {
        return kd == KEY_INT ? "int" : "str";
    }

    /** The core's is_empty: no entry, every counter zero, total and null weight zero. */
    boolean isEmpty() {
        flushCache();
        boolean weightsZero = spec.isFloat ? ftotal == 0 && fnull == 0 : total == 0 && nullWeight == 0;
        return weightsZero && allZero();
    }

    /** "total weight T, null weight N" as Python prints the weights (ints, or floats' reprs). */
    String weightsRepr() {
        return "total weight " + (spec.isFloat ? Keys.pyRepr(ftotal) : Long.toString(total)) + ", null weight "
                + (spec.isFloat ? Keys.pyRepr(fnull) : Long.toString(nullWeight));
    }

    // -- what the estimators read (Estimator) --------------------------------------------
    boolean exactMode() {
        return exact();
    }

    /** KEY_INT, KEY_BYTES, or 0 when no non-null key has been seen. */
    int keyDomain() {
        return recordedDomain();
    }

    double totalWeight() {
        return spec.isFloat ? ftotal : total;
    }

    double nullWeight() {
        return spec.isFloat ? fnull : nullWeight;
    }

    /**
     * Whether every frequency is known to be >= 0 (the core's Sketch.nonnegative): the sign flag of
     * format version 4; read from older bytes, what they tell (exact mode: no entry is negative;
     * counter mode: the sketch is empty).
     */
    boolean nonnegative() {
        return nonneg;
    }

    /** search="range": {smallest, largest} integer key inserted, as the bytes record it; null when none. */
    long[] keyRange() {
        flushCache();
        return hasRange && recordedDomain() == KEY_INT ? new long[] {lo, hi} : null;
    }

    /** search="prefix", counter mode: the hierarchy counters as float64 [level][table][bucket]. */
    double[][][] hierRows() {
        flushCache();
        int w = 1 << spec.hierLg;
        double[][][] out = new double[Hashing.LEVELS][spec.hierDepth][w];
        for (int l = 0; l < Hashing.LEVELS; l++) {
            for (int t = 0; t < spec.hierDepth; t++) {
                for (int b = 0; b < w; b++) {
                    int i = (l * spec.hierDepth + t) * w + b;
                    out[l][t][b] = spec.isFloat ? fhier[i] : (double) hier[i];
                }
            }
        }
        return out;
    }

    /** The exact-mode entries (key -> Long or Double weight); null in counter mode. */
    Map<Long, ? extends Number> exactEntries() {
        return entries != null ? entries : fentries;
    }

    /** The core's nbytes: the state's memory (counters at their narrowest width, hierarchy, key range). */
    long stateBytes() {
        flushCache();
        if (exact()) {
            long cw = 8;
            if (entries != null) {
                cw = 4;
                for (long v : entries.values()) {
                    cw = v == (int) v ? cw : 8;
                }
            }
            return entryCount() * (8 + cw);
        }
        long cw = spec.isFloat ? 8 : (fits32(counters) && fits32(hier) ? 4 : 8);
        long n = (long) spec.width * spec.depth + (spec.isFloat ? fhier.length : hier.length);
        return cw * n + (spec.range ? 16 : 0);
    }

    /**
     * The counters as float64 rows [depth][width]: an exact-mode hash or skimmed sketch's entries are
     * converted first (as the core's counter view of it), without changing this state.
     */
    double[][] counterRows() {
        flushCache();
        if (exact()) {
            if (spec.kind == KIND_AGMS) {
                throw new UnsupportedOperationException("an exact-mode AGMS sketch's counters are computed by Estimator");
            }
            SketchState c = new SketchState(spec.withExact(false));
            c.keyDomain = keyDomain;
            for (Map.Entry<Long, ? extends Number> x : exactEntries().entrySet()) {
                if (spec.isFloat) {
                    c.addCounters(x.getKey(), keyDomain, x.getValue().doubleValue());
                } else {
                    c.addCounters(x.getKey(), keyDomain, x.getValue().longValue());
                }
            }
            return c.counterRows();
        }
        double[][] rows = new double[spec.depth][spec.width];
        for (int p = 0; p < spec.depth; p++) {
            for (int q = 0; q < spec.width; q++) {
                int i = p * spec.width + q;
                rows[p][q] = spec.isFloat ? fcounters[i] : (double) counters[i];
            }
        }
        return rows;
    }

    // -- format version 2 --------------------------------------------------------------
    private boolean allZero() {
        if (exact()) {
            return entryCount() == 0;
        }
        return spec.isFloat
                ? Arrays.stream(fcounters).allMatch(v -> v == 0) && Arrays.stream(fhier).allMatch(v -> v == 0)
                : Arrays.stream(counters).allMatch(v -> v == 0) && Arrays.stream(hier).allMatch(v -> v == 0);
    }

    private static boolean fits32(long[] a) {
        for (long v : a) {
            if (v != (int) v) {
                return false;
            }
        }
        return true;
    }

    private void checkFinite() {
        boolean ok = Double.isFinite(ftotal) && Double.isFinite(fnull);
        for (double v : fcounters) {
            ok &= Double.isFinite(v);
        }
        for (double v : fhier) {
            ok &= Double.isFinite(v);
        }
        if (!ok) {
            throw new CounterOverflowError("the float64 counters would "
                    + "overflow to infinity or NaN");
        }
    }

    /** The key domain the bytes record: none once every counter and the total weight are zero. */
    private int recordedDomain() {
        if (exact()) {
            return entryCount() > 0 ? keyDomain : 0;
        }
        boolean totalZero = spec.isFloat ? ftotal == 0 : total == 0;
        return totalZero && allZero() ? 0 : keyDomain;
    }

    /** The core's format-version-2 bytes of this sketch. */
    public byte[] toBytes() {
        flushCache();
        if (exact()) {
            return exactBytes();
        }
        if (spec.isFloat) {
            checkFinite();
        }
        boolean zero = allZero();
        boolean weightsZero = spec.isFloat ? ftotal == 0 && fnull == 0 : total == 0 && nullWeight == 0;
        boolean totalZero = spec.isFloat ? ftotal == 0 : total == 0;
        int kd = zero && totalZero ? 0 : keyDomain;
        int cw = spec.isFloat ? 8 : (fits32(counters) && fits32(hier) ? 4 : 8);
        int ctype = spec.isFloat ? 2 : (cw == 4 ? 3 : 1);
        int n = spec.width * spec.depth;
        int hn = spec.hierLg > 0 ? Hashing.LEVELS * spec.hierDepth * (1 << spec.hierLg) : 0;
        int ext = spec.hierLg > 0 ? HIER_HEADER + cw * hn : spec.range ? Spec.KEY_RANGE_BYTES
                : spec.virtualLg > 0 ? Spec.VIRTUAL_BYTES : 0;
        ByteBuffer b = ByteBuffer.allocate(HEADER + ext + cw * n + 4).order(ByteOrder.LITTLE_ENDIAN);
        putHeader(b, zero && weightsZero, 0, ctype, kd, ext);
        if (spec.hierLg > 0) {
            b.put((byte) 'H').put((byte) 'I').put((byte) 'E').put((byte) 'R');
            b.put((byte) 1).put((byte) Hashing.LEVELS).put((byte) Hashing.TOP_BITS).put((byte) Hashing.FANOUT_BITS);
            b.put((byte) spec.hierLg).put((byte) spec.hierDepth).put((byte) 0).put((byte) 0);
            putCounters(b, hier, fhier, cw);
        } else if (spec.range) {
            boolean has = hasRange && kd == KEY_INT;
            b.put((byte) 'K').put((byte) 'R').put((byte) 'N').put((byte) 'G');
            b.put((byte) 1).put((byte) (has ? 1 : 0)).put((byte) 0).put((byte) 0);
            b.putLong(has ? lo : 0).putLong(has ? hi : 0);
        } else if (spec.virtualLg > 0) {
            b.put((byte) 'V').put((byte) 'I').put((byte) 'R').put((byte) 'T');
            b.put((byte) 1).put((byte) spec.virtualLg).put((byte) 0).put((byte) 0);
        }
        putCounters(b, counters, fcounters, cw);
        CRC32 crc = new CRC32();
        crc.update(b.array(), 0, b.position());
        b.putInt((int) crc.getValue());
        return b.array();
    }

    /** The 64-byte header of format version 4 ({@code extraFlags}: 8 in exact mode; 16, the sign flag, added here). */
    private void putHeader(ByteBuffer b, boolean empty, int extraFlags, int ctype, int kd, int ext) {
        b.put((byte) 'S').put((byte) 'K').put((byte) 'S').put((byte) 'K');
        b.putShort((short) spec.version());
        b.put((byte) spec.kind);
        int flags = (empty ? 1 : 0) | (spec.domain != 0 ? 2 : 0) | (spec.isFloat ? 4 : 0) | extraFlags
                | (nonneg ? 16 : 0);
        b.put((byte) flags);
        b.putInt(spec.width).putInt(spec.depth).putLong(spec.seed).putLong(spec.domain);
        b.put((byte) ctype).put((byte) kd).put((byte) 0).put((byte) 0);
        b.putDouble(spec.param);
        if (spec.isFloat) {
            b.putDouble(ftotal).putDouble(fnull);
        } else {
            b.putLong(total).putLong(nullWeight);
        }
        b.putInt(ext);
    }

    /** Exact mode: flag bit 3, the EXCT extension with the entries, no counters. */
    private byte[] exactBytes() {
        int n = entryCount();
        long[] keys = new long[n];
        int i = 0;
        for (Long k : entries != null ? entries.keySet() : fentries.keySet()) {
            keys[i++] = k;
        }
        Arrays.sort(keys);
        int cw = 8;
        if (entries != null) {
            long[] ws = new long[n];
            for (int j = 0; j < n; j++) {
                ws[j] = entries.get(keys[j]);
            }
            cw = fits32(ws) ? 4 : 8;
        } else {
            boolean ok = Double.isFinite(ftotal) && Double.isFinite(fnull);
            for (double v : fentries.values()) {
                ok &= Double.isFinite(v);
            }
            if (!ok) {
                throw new CounterOverflowError("the float64 weights would "
                        + "overflow to infinity or NaN");
            }
        }
        int ctype = spec.isFloat ? 2 : (cw == 4 ? 3 : 1);
        boolean weightsZero = spec.isFloat ? ftotal == 0 && fnull == 0 : total == 0 && nullWeight == 0;
        int ext = 12 + n * (8 + cw);
        ByteBuffer b = ByteBuffer.allocate(HEADER + ext + 4).order(ByteOrder.LITTLE_ENDIAN);
        putHeader(b, n == 0 && weightsZero, 8, ctype, n > 0 ? keyDomain : 0, ext);
        b.put((byte) 'E').put((byte) 'X').put((byte) 'C').put((byte) 'T');
        b.put((byte) 1).put((byte) spec.hierLg).put((byte) spec.hierDepth).put((byte) spec.virtualLg);
        b.putInt(n);
        for (long k : keys) {
            b.putLong(k);
        }
        for (long k : keys) {
            if (spec.isFloat) {
                b.putDouble(fentries.get(k));
            } else if (cw == 4) {
                b.putInt((int) (long) entries.get(k));
            } else {
                b.putLong(entries.get(k));
            }
        }
        CRC32 crc = new CRC32();
        crc.update(b.array(), 0, b.position());
        b.putInt((int) crc.getValue());
        return b.array();
    }

    private void putCounters(ByteBuffer b, long[] ints, double[] floats, int cw) {
        if (spec.isFloat) {
            for (double v : floats) {
                b.putDouble(v);
            }
        } else if (cw == 4) {
            for (long v : ints) {
                b.putInt((int) v);
            }
        } else {
            for (long v : ints) {
                b.putLong(v);
            }
        }
    }

    /** Parses format-version-2 to -4 bytes of an AGMS, hash or skimmed sketch (the checks of the core's decoder). */
    public static SketchState fromBytes(byte[] blob) {
        if (blob.length < HEADER + 4) {
            throw corrupt("truncated: " + blob.length + " bytes is shorter than the 68-byte minimum");
        }
        ByteBuffer b = ByteBuffer.wrap(blob).order(ByteOrder.LITTLE_ENDIAN);
        if (blob[0] != 'S' || blob[1] != 'K' || blob[2] != 'S' || blob[3] != 'K') {
            throw corrupt("bad magic: not a skimsketch sketch");
        }
        int version = b.getShort(4) & 0xFFFF;
        if (version < 2 || version > 4) {
            throw corrupt("format version " + version + " is not read by the SQL functions (they read versions 2 "
                    + "to 4; rewrite the sketch with skimsketch: ss.from_bytes(b).to_bytes())");
        }
        int kind = blob[6];
        if (kind != KIND_AGMS && kind != KIND_HASH && kind != KIND_SKIMMED) {
            throw corrupt("sketch kind " + kind + " is not supported by the SQL functions (AGMS 1, hash 2, "
                    + "skimmed 3)");
        }
        int flags = blob[7] & 0xFF;
        long width = b.getInt(8) & 0xFFFFFFFFL;
        long depth = b.getInt(12) & 0xFFFFFFFFL;
        long seed = b.getLong(16);
        long domain = b.getLong(24);
        int ctype = blob[32];
        int kd = blob[33];
        if ((flags & ~(version >= 4 ? 31 : 15)) != 0 || blob[34] != 0 || blob[35] != 0 || kd < 0 || kd > 2) {
            throw corrupt("reserved header bits are set");
        }
        if (ctype < 1 || ctype > 3 || ((flags & 4) != 0) != (ctype == 2) || ((flags & 2) != 0) != (domain != 0)) {
            throw corrupt("counter type or flags are inconsistent");
        }
        if (width < 1 || width > (1 << 24) || depth < 1 || depth > 255) {
            throw corrupt("shape " + depth + "x" + width + " out of range");
        }
        double param = b.getDouble(36);
        int ext = b.getInt(60);
        int cw = ctype == 3 ? 4 : 8;
        if (version == 3 && (kind != KIND_SKIMMED || domain != 0)) {
            throw corrupt("format version 3 is only written for skimmed sketches in the virtual layout");
        }
        if ((flags & 16) != 0 && ctype != 2 && b.getLong(44) < 0) {
            throw corrupt("the sign flag says every weight was >= 0, but the total weight is negative");
        }
        if ((flags & 8) != 0) {
            SketchState s = fromExactBytes(blob, b, kind, (int) width, (int) depth, seed, domain, param, ctype == 2,
                    cw, kd, ext, version);
            boolean signs = s.exactEntries().values().stream().allMatch(v -> v.doubleValue() >= 0);
            if ((flags & 16) != 0 && !signs) {
                throw corrupt("the sign flag says every weight was >= 0, but an exact-mode entry is negative");
            }
            s.nonneg = version >= 4 ? (flags & 16) != 0 : signs; // before version 4: what the entries tell
            return s;
        }
        long expected = HEADER + (ext & 0xFFFFFFFFL) + cw * width * depth + 4;
        if (blob.length != expected) {
            throw corrupt("size mismatch: " + blob.length + " bytes, header implies " + expected);
        }
        CRC32 crc = new CRC32();
        crc.update(blob, 0, blob.length - 4);
        if ((int) crc.getValue() != b.getInt(blob.length - 4)) {
            throw corrupt("checksum mismatch: the bytes were altered or truncated");
        }
        int lg = 0;
        int hd = 0;
        int vlg = 0;
        boolean range = false;
        boolean virt = ext >= 4 && blob[64] == 'V' && blob[65] == 'I' && blob[66] == 'R' && blob[67] == 'T';
        if (version == 3 || (kind == KIND_SKIMMED && domain == 0 && virt)) {
            if (version < 3 || !virt || ext != Spec.VIRTUAL_BYTES || blob[68] != 1 || blob[70] != 0
                    || blob[71] != 0) {
                throw corrupt("bad virtual-layout extension (format version " + version + ")");
            }
            vlg = blob[69];
            if (vlg < Spec.MIN_VIRTUAL_LG || vlg > Spec.MAX_VIRTUAL_LG) {
                throw corrupt("virtual domain lg " + vlg + " out of range [" + Spec.MIN_VIRTUAL_LG + ", "
                        + Spec.MAX_VIRTUAL_LG + "]");
            }
        } else if (kind == KIND_SKIMMED && domain == 0 && ext >= 4 && blob[64] == 'K' && blob[65] == 'R'
                && blob[66] == 'N' && blob[67] == 'G') {
            range = true;
            if (ext != Spec.KEY_RANGE_BYTES || blob[68] != 1 || (blob[69] != 0 && blob[69] != 1) || blob[70] != 0
                    || blob[71] != 0) {
                throw corrupt("bad key range extension");
            }
        } else if (kind == KIND_SKIMMED && domain == 0) {
            if (ext < HIER_HEADER || blob[64] != 'H' || blob[65] != 'I' || blob[66] != 'E' || blob[67] != 'R'
                    || blob[68] != 1 || blob[69] != Hashing.LEVELS || blob[70] != Hashing.TOP_BITS
                    || blob[71] != Hashing.FANOUT_BITS) {
                throw corrupt("bad hierarchy extension");
            }
            lg = blob[72];
            hd = blob[73];
            if (lg < 4 || lg > 24 || hd < 2 || hd > 32
                    || ext != HIER_HEADER + (long) cw * Hashing.LEVELS * hd * (1L << lg)) {
                throw corrupt("hierarchy extension geometry or size is wrong");
            }
        } else if (ext != 0) {
            throw corrupt("unexpected extension of " + ext + " bytes");
        }
        Spec spec = new Spec(kind, (int) width, (int) depth, seed, domain, param, lg, hd, ctype == 2, range, false,
                vlg);
        SketchState s = new SketchState(spec);
        s.keyDomain = kd;
        // the sign flag (version 4); before it, only an empty sketch is known to be non-negative
        s.nonneg = version >= 4 ? (flags & 16) != 0 : (flags & 1) != 0;
        if (range && blob[69] == 1) {
            s.hasRange = true;
            s.lo = b.getLong(72);
            s.hi = b.getLong(80);
            if (s.lo > s.hi || kd != KEY_INT) {
                throw corrupt("bad key range extension");
            }
        }
        if (spec.isFloat) {
            s.ftotal = b.getDouble(44);
            s.fnull = b.getDouble(52);
        } else {
            s.total = b.getLong(44);
            s.nullWeight = b.getLong(52);
        }
        b.position(HEADER + (lg > 0 ? HIER_HEADER : range ? Spec.KEY_RANGE_BYTES : vlg > 0 ? Spec.VIRTUAL_BYTES : 0));
        if (lg > 0) {
            s.readCounters(b, s.hier, s.fhier, cw);
        }
        s.readCounters(b, s.counters, s.fcounters, cw);
        return s;
    }

    private static SketchState fromExactBytes(byte[] blob, ByteBuffer b, int kind, int width, int depth, long seed,
                                              long domain, double param, boolean isFloat, int cw, int kd, int ext,
                                              int version) {
        if (blob.length != HEADER + (ext & 0xFFFFFFFFL) + 4 || ext < 12) {
            throw corrupt("size mismatch in exact mode");
        }
        CRC32 crc = new CRC32();
        crc.update(blob, 0, blob.length - 4);
        if ((int) crc.getValue() != b.getInt(blob.length - 4)) {
            throw corrupt("checksum mismatch: the bytes were altered or truncated");
        }
        if (blob[64] != 'E' || blob[65] != 'X' || blob[66] != 'C' || blob[67] != 'T' || blob[68] != 1) {
            throw corrupt("bad exact-mode extension");
        }
        int lg = blob[69];
        int hd = blob[70];
        int vlg = blob[71];
        if ((vlg != 0 && version < 3) || (vlg == 0 && version == 3)
                || (vlg != 0 && (vlg < Spec.MIN_VIRTUAL_LG || vlg > Spec.MAX_VIRTUAL_LG || lg != 0 || hd != 0))) {
            throw corrupt("format version " + version + " with an exact-mode virtual domain lg of " + vlg
                    + " (version 3 only, and version 2 never, for the virtual layout)");
        }
        long n = b.getInt(72) & 0xFFFFFFFFL;
        if (ext != 12 + n * (8 + cw)) {
            throw corrupt("exact-mode extension size does not match its entries");
        }
        boolean unbounded = kind == KIND_SKIMMED && domain == 0;
        Spec spec = new Spec(kind, width, depth, seed, domain, param, unbounded ? lg : 0, unbounded ? hd : 0, isFloat,
                unbounded && lg == 0 && vlg == 0, true, vlg);
        if (n > spec.capacity()) {
            throw corrupt("exact-mode entries exceed the capacity");
        }
        SketchState s = new SketchState(spec);
        s.keyDomain = kd;
        if (isFloat) {
            s.ftotal = b.getDouble(44);
            s.fnull = b.getDouble(52);
        } else {
            s.total = b.getLong(44);
            s.nullWeight = b.getLong(52);
        }
        int ko = HEADER + 12;
        int wo = ko + 8 * (int) n;
        for (int i = 0; i < n; i++) {
            long key = b.getLong(ko + 8 * i);
            if (isFloat) {
                s.fentries.put(key, b.getDouble(wo + 8 * i));
            } else {
                s.entries.put(key, cw == 4 ? (long) b.getInt(wo + 4 * i) : b.getLong(wo + 8 * i));
            }
        }
        return s;
    }

    private void readCounters(ByteBuffer b, long[] ints, double[] floats, int cw) {
        if (spec.isFloat) {
            for (int i = 0; i < floats.length; i++) {
                floats[i] = b.getDouble();
            }
        } else if (cw == 4) {
            for (int i = 0; i < ints.length; i++) {
                ints[i] = b.getInt();
            }
        } else {
            for (int i = 0; i < ints.length; i++) {
                ints[i] = b.getLong();
            }
        }
    }

    private static IllegalArgumentException corrupt(String msg) {
        return new CorruptSketchError("" + msg);
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
        counters = s.counters;
        fcounters = s.fcounters;
        hier = s.hier;
        fhier = s.fhier;
        total = s.total;
        nullWeight = s.nullWeight;
        ftotal = s.ftotal;
        fnull = s.fnull;
        keyDomain = s.keyDomain;
        nonneg = s.nonneg;
        hasRange = s.hasRange;
        lo = s.lo;
        hi = s.hi;
        entries = s.entries;
        fentries = s.fentries;
    }
}
