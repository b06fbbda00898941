package io.skimsketch.spark.sketch;

import io.skimsketch.spark.CorruptSketchError;
import io.skimsketch.spark.CounterOverflowError;
import io.skimsketch.spark.common.Hashing;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;
import java.util.zip.CRC32;

/**
 * The core's binary format (docs/format.md) of a {@link SketchState}: written in version 4 byte for
 * byte as the core writes it (the header, the HIER / KRNG / VIRT extension, the counters at their
 * narrowest width, or exact mode's EXCT entries, then the CRC32), and read in versions 2 to 4 with the
 * checks of the core's decoder (CorruptSketchError naming what is wrong).
 */
final class SketchFormat {
    private static final int HEADER = 64;
    private static final int HIER_HEADER = 12;

    private SketchFormat() {}

    // -- writing -----------------------------------------------------------------------
    /** The bytes of s (its key cache flushed by the caller). */
    static byte[] write(SketchState s) {
        Spec spec = s.spec;
        if (s.exactMode()) {
            return writeExact(s);
        }
        if (spec.isFloat) {
            s.floats.checkFinite();
        }
        boolean zero = s.allZero();
        int kd = zero && s.totalZero() ? 0 : s.keyDomain;
        int cw = spec.isFloat ? 8 : s.ints.width();
        int ctype = spec.isFloat ? 2 : (cw == 4 ? 3 : 1);
        int n = spec.width * spec.depth;
        int hn = spec.hierLg > 0 ? Hashing.LEVELS * spec.hierDepth * (1 << spec.hierLg) : 0;
        int ext = spec.hierLg > 0 ? HIER_HEADER + cw * hn : spec.range ? Spec.KEY_RANGE_BYTES
                : spec.virtualLg > 0 ? Spec.VIRTUAL_BYTES : 0;
        ByteBuffer b = ByteBuffer.allocate(HEADER + ext + cw * n + 4).order(ByteOrder.LITTLE_ENDIAN);
        putHeader(b, s, zero && s.weightsZero(), 0, ctype, kd, ext);
        if (spec.hierLg > 0) {
            b.put((byte) 'H').put((byte) 'I').put((byte) 'E').put((byte) 'R');
            b.put((byte) 1).put((byte) Hashing.LEVELS).put((byte) Hashing.TOP_BITS).put((byte) Hashing.FANOUT_BITS);
            b.put((byte) spec.hierLg).put((byte) spec.hierDepth).put((byte) 0).put((byte) 0);
            putCounters(b, s, true, cw);
        } else if (spec.range) {
            boolean has = s.range.has && kd == SketchState.KEY_INT;
            b.put((byte) 'K').put((byte) 'R').put((byte) 'N').put((byte) 'G');
            b.put((byte) 1).put((byte) (has ? 1 : 0)).put((byte) 0).put((byte) 0);
            b.putLong(has ? s.range.lo : 0).putLong(has ? s.range.hi : 0);
        } else if (spec.virtualLg > 0) {
            b.put((byte) 'V').put((byte) 'I').put((byte) 'R').put((byte) 'T');
            b.put((byte) 1).put((byte) spec.virtualLg).put((byte) 0).put((byte) 0);
        }
        putCounters(b, s, false, cw);
        return withCrc(b);
    }

    private static void putCounters(ByteBuffer b, SketchState s, boolean hier, int cw) {
        if (s.spec.isFloat) {
            FloatCounters.put(b, hier ? s.floats.hier : s.floats.main);
        } else {
            IntCounters.put(b, hier ? s.ints.hier : s.ints.main, cw);
        }
    }

    private static byte[] withCrc(ByteBuffer b) {
        CRC32 crc = new CRC32();
        crc.update(b.array(), 0, b.position());
        b.putInt((int) crc.getValue());
        return b.array();
    }

    /** The 64-byte header of format version 4 ({@code extraFlags}: 8 in exact mode; 16, the sign flag, added here). */
    private static void putHeader(ByteBuffer b, SketchState s, boolean empty, int extraFlags, int ctype, int kd,
                                  int ext) {
        Spec spec = s.spec;
        b.put((byte) 'S').put((byte) 'K').put((byte) 'S').put((byte) 'K');
        b.putShort((short) spec.version());
        b.put((byte) spec.kind);
        int flags = (empty ? 1 : 0) | (spec.domain != 0 ? 2 : 0) | (spec.isFloat ? 4 : 0) | extraFlags
                | (s.nonneg ? 16 : 0);
        b.put((byte) flags);
        b.putInt(spec.width).putInt(spec.depth).putLong(spec.seed).putLong(spec.domain);
        b.put((byte) ctype).put((byte) kd).put((byte) 0).put((byte) 0);
        b.putDouble(spec.param);
        if (spec.isFloat) {
            b.putDouble(s.floats.total).putDouble(s.floats.nullWeight);
        } else {
            b.putLong(s.ints.total).putLong(s.ints.nullWeight);
        }
        b.putInt(ext);
    }

    /** Exact mode: flag bit 3, the EXCT extension with the entries (ascending keys), no counters. */
    private static byte[] writeExact(SketchState s) {
        Spec spec = s.spec;
        int n = s.entryCount();
        long[] keys = new long[n];
        int i = 0;
        for (Long k : s.exactEntries().keySet()) {
            keys[i++] = k;
        }
        Arrays.sort(keys);
        int cw = 8;
        if (s.entries != null) {
            cw = s.entries.width();
        } else {
            boolean ok = Double.isFinite(s.floats.total) && Double.isFinite(s.floats.nullWeight);
            for (double v : s.fentries.map.values()) {
                ok &= Double.isFinite(v);
            }
            if (!ok) {
                throw new CounterOverflowError("the float64 weights would overflow to infinity or NaN");
            }
        }
        int ctype = spec.isFloat ? 2 : (cw == 4 ? 3 : 1);
        int ext = 12 + n * (8 + cw);
        ByteBuffer b = ByteBuffer.allocate(HEADER + ext + 4).order(ByteOrder.LITTLE_ENDIAN);
        putHeader(b, s, n == 0 && s.weightsZero(), 8, ctype, n > 0 ? s.keyDomain : 0, ext);
        b.put((byte) 'E').put((byte) 'X').put((byte) 'C').put((byte) 'T');
        b.put((byte) 1).put((byte) spec.hierLg).put((byte) spec.hierDepth).put((byte) spec.virtualLg);
        b.putInt(n);
        for (long k : keys) {
            b.putLong(k);
        }
        for (long k : keys) {
            if (spec.isFloat) {
                b.putDouble(s.fentries.map.get(k));
            } else if (cw == 4) {
                b.putInt((int) (long) s.entries.map.get(k));
            } else {
                b.putLong(s.entries.map.get(k));
            }
        }
        return withCrc(b);
    }

    // -- reading -----------------------------------------------------------------------
    static CorruptSketchError corrupt(String msg) {
        return new CorruptSketchError(msg);
    }

    private static void checkCrc(byte[] blob, ByteBuffer b) {
        CRC32 crc = new CRC32();
        crc.update(blob, 0, blob.length - 4);
        if ((int) crc.getValue() != b.getInt(blob.length - 4)) {
            throw corrupt("checksum mismatch: the bytes were altered or truncated");
        }
    }

    /** Parses format-version-2 to -4 bytes of an AGMS, hash or skimmed sketch. */
    static SketchState read(byte[] blob) {
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
        if (kind != SketchState.KIND_AGMS && kind != SketchState.KIND_HASH && kind != SketchState.KIND_SKIMMED) {
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
        if (version == 3 && (kind != SketchState.KIND_SKIMMED || domain != 0)) {
            throw corrupt("format version 3 is only written for skimmed sketches in the virtual layout");
        }
        if ((flags & 16) != 0 && ctype != 2 && b.getLong(44) < 0) {
            throw corrupt("the sign flag says every weight was >= 0, but the total weight is negative");
        }
        if ((flags & 8) != 0) {
            SketchState s = readExact(blob, b, kind, (int) width, (int) depth, seed, domain, param, ctype == 2,
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
        checkCrc(blob, b);
        int lg = 0;
        int hd = 0;
        int vlg = 0;
        boolean range = false;
        boolean virt = ext >= 4 && blob[64] == 'V' && blob[65] == 'I' && blob[66] == 'R' && blob[67] == 'T';
        if (version == 3 || (kind == SketchState.KIND_SKIMMED && domain == 0 && virt)) {
            if (version < 3 || !virt || ext != Spec.VIRTUAL_BYTES || blob[68] != 1 || blob[70] != 0
                    || blob[71] != 0) {
                throw corrupt("bad virtual-layout extension (format version " + version + ")");
            }
            vlg = blob[69];
            if (vlg < Spec.MIN_VIRTUAL_LG || vlg > Spec.MAX_VIRTUAL_LG) {
                throw corrupt("virtual domain lg " + vlg + " out of range [" + Spec.MIN_VIRTUAL_LG + ", "
                        + Spec.MAX_VIRTUAL_LG + "]");
            }
        } else if (kind == SketchState.KIND_SKIMMED && domain == 0 && ext >= 4 && blob[64] == 'K' && blob[65] == 'R'
                && blob[66] == 'N' && blob[67] == 'G') {
            range = true;
            if (ext != Spec.KEY_RANGE_BYTES || blob[68] != 1 || (blob[69] != 0 && blob[69] != 1) || blob[70] != 0
                    || blob[71] != 0) {
                throw corrupt("bad key range extension");
            }
        } else if (kind == SketchState.KIND_SKIMMED && domain == 0) {
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
            s.range.has = true;
            s.range.lo = b.getLong(72);
            s.range.hi = b.getLong(80);
            if (s.range.lo > s.range.hi || kd != SketchState.KEY_INT) {
                throw corrupt("bad key range extension");
            }
        }
        readWeights(s, b);
        b.position(HEADER + (lg > 0 ? HIER_HEADER : range ? Spec.KEY_RANGE_BYTES : vlg > 0 ? Spec.VIRTUAL_BYTES : 0));
        if (spec.isFloat) {
            if (lg > 0) {
                FloatCounters.read(b, s.floats.hier);
            }
            FloatCounters.read(b, s.floats.main);
        } else {
            if (lg > 0) {
                IntCounters.read(b, s.ints.hier, cw);
            }
            IntCounters.read(b, s.ints.main, cw);
        }
        return s;
    }

    /** The header's total and null weight. */
    private static void readWeights(SketchState s, ByteBuffer b) {
        if (s.spec.isFloat) {
            s.floats.total = b.getDouble(44);
            s.floats.nullWeight = b.getDouble(52);
        } else {
            s.ints.total = b.getLong(44);
            s.ints.nullWeight = b.getLong(52);
        }
    }

    private static SketchState readExact(byte[] blob, ByteBuffer b, int kind, int width, int depth, long seed,
                                         long domain, double param, boolean isFloat, int cw, int kd, int ext,
                                         int version) {
        if (blob.length != HEADER + (ext & 0xFFFFFFFFL) + 4 || ext < 12) {
            throw corrupt("size mismatch in exact mode");
        }
        checkCrc(blob, b);
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
        boolean unbounded = kind == SketchState.KIND_SKIMMED && domain == 0;
        Spec spec = new Spec(kind, width, depth, seed, domain, param, unbounded ? lg : 0, unbounded ? hd : 0, isFloat,
                unbounded && lg == 0 && vlg == 0, true, vlg);
        if (n > spec.capacity()) {
            throw corrupt("exact-mode entries exceed the capacity");
        }
        SketchState s = new SketchState(spec);
        s.keyDomain = kd;
        readWeights(s, b);
        int ko = HEADER + 12;
        int wo = ko + 8 * (int) n;
        for (int i = 0; i < n; i++) {
            long key = b.getLong(ko + 8 * i);
            if (isFloat) {
                s.fentries.map.put(key, b.getDouble(wo + 8 * i));
            } else {
                s.entries.map.put(key, cw == 4 ? (long) b.getInt(wo + 4 * i) : b.getLong(wo + 8 * i));
            }
        }
        return s;
    }
}
