package io.skimsketch.spark.sketch;

import io.skimsketch.spark.IncompatibleSketchError;
import io.skimsketch.spark.common.Kinds;
import java.io.Serializable;

/** Kind, shape, seed and counter type of a sketch: the parameters two sketches must share to merge. */
public final class Spec implements Serializable {
    private static final long serialVersionUID = 1L;
    static final int LEVELS = 6;
    static final int FRAME_BYTES = 68;
    static final int HIER_HEADER_BYTES = 12;
    static final int DEFAULT_DEPTH = 5;
    static final int DEFAULT_HIER_DEPTH = 4;
    static final double HIER_BYTES_SHARE = 0.4;
    static final int KEY_RANGE_BYTES = 24;
    public static final long MAX_SCAN_DOMAIN = 1L << 22;
    static final int VIRTUAL_BYTES = 8;
    static final int DEFAULT_VIRTUAL_LG = 20; // skimsketch.virtual.DEFAULT_VIRTUAL_LG
    static final int MIN_VIRTUAL_LG = 10;
    static final int MAX_VIRTUAL_LG = 22;

    public final int kind;
    public final int width;
    public final int depth;
    public final long seed;
    public final long domain; // 0: none (unbounded keys)
    public final double param; // skimmed: skim factor; hash: 0
    public final int hierLg; // 0: no hierarchy
    public final int hierDepth;
    public final boolean isFloat;
    public final boolean range; // unbounded keys found by scanning the inserted integer key range (KRNG extension)
    public final boolean exact; // starts in exact mode (exact key -> weight entries while they fit the capacity)
    public final int virtualLg; // search="virtual": keys as signed ids in [0, 2^virtualLg) (skimsketch/sketch/skim/virtual.py); 0: not

    Spec(int kind, int width, int depth, long seed, long domain, double param, int hierLg, int hierDepth,
         boolean isFloat) {
        this(kind, width, depth, seed, domain, param, hierLg, hierDepth, isFloat, false);
    }

    Spec(int kind, int width, int depth, long seed, long domain, double param, int hierLg, int hierDepth,
         boolean isFloat, boolean range) {
        this(kind, width, depth, seed, domain, param, hierLg, hierDepth, isFloat, range, false);
    }

    Spec(int kind, int width, int depth, long seed, long domain, double param, int hierLg, int hierDepth,
         boolean isFloat, boolean range, boolean exact) {
        this(kind, width, depth, seed, domain, param, hierLg, hierDepth, isFloat, range, exact, 0);
    }

    Spec(int kind, int width, int depth, long seed, long domain, double param, int hierLg, int hierDepth,
         boolean isFloat, boolean range, boolean exact, int virtualLg) {
        this.virtualLg = virtualLg;
        this.kind = kind;
        this.width = width;
        this.depth = depth;
        this.seed = seed;
        this.domain = domain;
        this.param = param;
        this.hierLg = hierLg;
        this.hierDepth = hierDepth;
        this.isFloat = isFloat;
        this.range = range;
        this.exact = exact;
    }

    /** Entries an exact-mode sketch of this shape holds at most (docs/format.md, "Capacity"). */
    public long capacity() {
        long h = hierLg > 0 ? (long) LEVELS * hierDepth << hierLg : 0;
        long state = (isFloat ? 8L : 4L) * ((long) depth * width + h);
        return Math.max(0, (state - 12) / 16);
    }

    /** Counters of the state: the main tables and the prefix hierarchy (long: a shape may not fit an array). */
    public long counters() {
        return (long) width * depth + (hierLg > 0 ? (long) LEVELS * hierDepth << hierLg : 0);
    }

    /** The same spec with float (or integer) counters. */
    public Spec withFloat(boolean f) {
        return new Spec(kind, width, depth, seed, domain, param, hierLg, hierDepth, f, range, exact, virtualLg);
    }

    /** The same spec starting in exact mode, or in counter mode. */
    public Spec withExact(boolean e) {
        return new Spec(kind, width, depth, seed, domain, param, hierLg, hierDepth, isFloat, range, e, virtualLg);
    }

    /** "range", "prefix", "virtual" (unbounded skimmed sketches) or null. */
    String search() {
        return range ? "range" : hierLg > 0 ? "prefix" : virtualLg > 0 ? "virtual" : null;
    }

    /** The format version of this sketch's bytes: 4 (the sign flag), every layout. */
    int version() {
        return 4;
    }

    private static void checkShape(String fn, long width, long depth) {
        if (width < 1 || width > (1 << 24)) {
            throw new IllegalArgumentException(fn + ": width must be in [1, 16777216], got " + width);
        }
        if (depth < 1 || depth > 255) {
            throw new IllegalArgumentException(fn + ": depth must be in [1, 255], got " + depth);
        }
    }

    /** HashSketch(width, depth, seed). */
    public static Spec hash(String fn, long width, long depth, long seed, boolean isFloat) {
        checkShape(fn, width, depth);
        return new Spec(SketchState.KIND_HASH, (int) width, (int) depth, seed, 0, 0.0, 0, 0, isFloat);
    }

    /**
     * SkimmedSketch(width, depth, seed): unbounded keys in the virtual layout (2^20 ids), as the core's
     * explicit constructor since it measured best (docs/defaults.md, "Construction paths"); counter mode.
     */
    public static Spec skimmed(String fn, long width, long depth, long seed, boolean isFloat) {
        checkShape(fn, width, depth);
        return new Spec(SketchState.KIND_SKIMMED, (int) width, (int) depth, seed, 0, 1.0, 0, 0, isFloat, false, false,
                DEFAULT_VIRTUAL_LG);
    }

    /** The core's COUNTER_BYTES: budgets count 4-byte counters whatever the counter type (skimsketch.sizing). */
    static final int COUNTER_BYTES = 4;
    static final int MAX_WIDTH = 1 << 24;

    /** The largest budget behind a frame-byte frame whose shape exists at the default depth (sizing.budget_range). */
    static long maxBudget(int frame) {
        return frame + (long) COUNTER_BYTES * DEFAULT_DEPTH * (MAX_WIDTH + 1) - 1;
    }

    /** Bytes left for counters once the serialised frame is paid (the core's framed_budget, same message). */
    private static long room(String fn, long nbytes, int frame) {
        long hi = maxBudget(frame);
        if (nbytes < frame + COUNTER_BYTES || nbytes > hi) {
            throw new IllegalArgumentException(fn + ": nbytes must be an int in [" + (frame + COUNTER_BYTES) + ", "
                    + hi + "] (the " + frame + "-byte serialised frame and one counter, up to " + MAX_WIDTH
                    + " counters a table at depth " + DEFAULT_DEPTH + "), got " + nbytes + ": give a "
                    + (nbytes > hi ? "smaller" : "larger") + " budget");
        }
        return nbytes - frame;
    }

    /**
     * SkimmedSketch.for_bytes(nbytes, seed): the library's default sketch (unbounded keys of every type,
     * skimmed as signed ids of the virtual domain of 2^20 ids; starts in exact mode). Float counters
     * (isFloat, a SUM sketch) keep the count sketch's shape, as the core's (skimsketch.sizing).
     */
    public static Spec forBytes(String fn, long nbytes, long seed, boolean isFloat) {
        int cb = COUNTER_BYTES; // whatever the counter type: a SUM sketch has the count shape
        long counters = room(fn, nbytes, FRAME_BYTES + VIRTUAL_BYTES) / cb;
        long d = Math.max(1, Math.min(DEFAULT_DEPTH, counters));
        long w = counters / d;
        checkShape(fn, w, d);
        return new Spec(SketchState.KIND_SKIMMED, (int) w, (int) d, seed, 0, 1.0, 0, 0, isFloat, false, true,
                DEFAULT_VIRTUAL_LG);
    }

    /** SkimmedSketch.for_bytes(nbytes, seed, search="range"): integer keys found by scanning their range. */
    public static Spec forBytesRange(String fn, long nbytes, long seed, boolean isFloat) {
        int cb = COUNTER_BYTES; // whatever the counter type: a SUM sketch has the count shape
        long counters = room(fn, nbytes, FRAME_BYTES + KEY_RANGE_BYTES) / cb;
        long d = Math.max(1, Math.min(DEFAULT_DEPTH, counters));
        long w = counters / d;
        checkShape(fn, w, d);
        return new Spec(SketchState.KIND_SKIMMED, (int) w, (int) d, seed, 0, 1.0, 0, 0, isFloat, true, true);
    }

    /** SkimmedSketch.for_bytes(nbytes, seed, search="prefix"): unbounded keys with a prefix hierarchy. */
    public static Spec forBytesPrefix(String fn, long nbytes, long seed, boolean isFloat) {
        int cb = COUNTER_BYTES; // whatever the counter type: a SUM sketch has the count shape
        long room = room(fn, nbytes, FRAME_BYTES + HIER_HEADER_BYTES);
        int hd = DEFAULT_HIER_DEPTH;
        long perWidth = (long) cb * LEVELS * hd;
        long share = (long) Math.max(1.0, HIER_BYTES_SHARE * room / perWidth);
        int lg = Math.max(4, floorLog2(share));
        if (lg > 24) {
            throw new IllegalArgumentException(fn + ": nbytes=" + nbytes + " is too large");
        }
        long hierBytes = perWidth << lg;
        if (room - hierBytes < (long) cb * DEFAULT_DEPTH) {
            throw new IllegalArgumentException(fn + ": nbytes=" + nbytes + " is too small for an unbounded skimmed "
                    + "sketch: its hierarchy alone takes " + hierBytes + " bytes: give a larger budget");
        }
        long counters = (room - hierBytes) / cb;
        long d = Math.max(1, Math.min(DEFAULT_DEPTH, counters));
        long w = counters / d;
        checkShape(fn, w, d);
        return new Spec(SketchState.KIND_SKIMMED, (int) w, (int) d, seed, 0, 1.0, lg, hd, isFloat);
    }

    @Override
    public boolean equals(Object o) {
        if (!(o instanceof Spec)) {
            return false;
        }
        Spec x = (Spec) o;
        return kind == x.kind && width == x.width && depth == x.depth && seed == x.seed && domain == x.domain
                && Double.compare(param, x.param) == 0 && hierLg == x.hierLg && hierDepth == x.hierDepth
                && isFloat == x.isFloat && range == x.range && exact == x.exact && virtualLg == x.virtualLg;
    }

    @Override
    public int hashCode() {
        return java.util.Objects.hash(kind, width, depth, seed, domain, param, hierLg, hierDepth, isFloat, range, exact,
                virtualLg);
    }

    @Override
    public String toString() {
        String s = kindName(kind) + "(width=" + width + ", depth=" + depth + ", seed=" + Long.toUnsignedString(seed);
        if (domain != 0) {
            s += ", domain=" + domain;
        }
        if (range) {
            s += ", search='range'";
        }
        if (virtualLg > 0) {
            s += ", search='virtual', virtual_lg=" + virtualLg;
        }
        if (hierLg > 0) {
            s += ", hier_width=" + (1 << hierLg) + ", hier_depth=" + hierDepth;
        }
        return s + (isFloat ? ", dtype='float64'" : "") + (exact ? ", exact=True)" : ")");
    }

    private static int floorLog2(long x) {
        return 63 - Long.numberOfLeadingZeros(x);
    }

    public static String kindName(int kind) {
        return Kinds.sketchName(kind);
    }

    private static void differs(String field, Object mine, Object theirs, String op) {
        throw new IncompatibleSketchError("cannot " + op + " sketches: " + field + " differs (" + mine + " != "
                + theirs + ")");
    }

    /** Raises an error naming the first field that differs (the core's check_compatible order). */
    public void checkCompatible(Spec o, String op) {
        checkCompatible(o, op, true);
    }

    /** As checkCompatible(o, op); the counter types may differ when !sameDtype (a join of count and SUM sketches). */
    public void checkCompatible(Spec o, String op, boolean sameDtype) {
        if (kind != o.kind) {
            differs("kind", "'" + kindName(kind) + "'", "'" + kindName(o.kind) + "'", op);
        }
        if (width != o.width) {
            differs("width", width, o.width, op);
        }
        if (depth != o.depth) {
            differs("depth", depth, o.depth, op);
        }
        if (seed != o.seed) {
            differs("seed", Long.toUnsignedString(seed), Long.toUnsignedString(o.seed), op);
        }
        if (sameDtype && isFloat != o.isFloat) {
            differs("dtype", isFloat ? "'float64'" : "'int64'", o.isFloat ? "'float64'" : "'int64'", op);
        }
        if (domain != o.domain) {
            differs("domain", domain == 0 ? "None" : Long.toString(domain), o.domain == 0 ? "None"
                    : Long.toString(o.domain), op);
        }
        if (range != o.range || (virtualLg > 0) != (o.virtualLg > 0)) {
            differs("search", "'" + search() + "'", "'" + o.search() + "'", op);
        }
        if (hierLg != o.hierLg) {
            differs("hier_width", 1 << hierLg, 1 << o.hierLg, op);
        }
        if (hierDepth != o.hierDepth) {
            differs("hier_depth", hierDepth, o.hierDepth, op);
        }
        if (virtualLg != o.virtualLg) {
            differs("virtual_lg", virtualLg, o.virtualLg, op);
        }
    }
}
