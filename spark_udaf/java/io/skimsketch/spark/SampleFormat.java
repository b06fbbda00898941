package io.skimsketch.spark;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.BitSet;
import java.util.HashSet;
import java.util.Set;
import java.util.zip.CRC32;

/**
 * Format kind 5, the join sample (docs/format.md, "Kind 5: the join sample"; skimsketch/format.py
 * encode_sample / decode_sample and JoinSample._from_parts): the 64-byte header, the SMPL extension
 * (counts, tau, the partition bitmap of a partial piece, keys in (rank, key) order, totals) and the
 * CRC-32. decode refuses everything the core refuses, with CorruptSketchError.
 */
final class SampleFormat {
    static final int HEADER = 64;
    static final int EXT_HEAD = 32;
    private static final int MAGIC = 0x4B534B53; // "SKSK" little-endian
    private static final int SMPL = 0x4C504D53; // "SMPL"

    private SampleFormat() {}

    /** True when the bytes are a join sample (magic and kind 5; the rest is checked by decode). */
    static boolean isSample(byte[] b) {
        return b != null && b.length > 6 && b[0] == 'S' && b[1] == 'K' && b[2] == 'S' && b[3] == 'K' && b[6] == 5;
    }

    /** The core's class name of the kind in sketch bytes (for the incompatibility message). */
    static String typeName(byte[] b) {
        if (isSample(b)) {
            return "JoinSample";
        }
        int kind = b != null && b.length > 6 ? b[6] : 0;
        return kind == 4 ? "PairSketch" : Spec.kindName(kind);
    }

    private static boolean fitsInt(long[] t) {
        for (long x : t) {
            if (x != (int) x) {
                return false;
            }
        }
        return true;
    }

    static byte[] encode(SampleState s) {
        SampleState.Fin f = s.sample();
        int n = f.keys.length;
        int cw = s.isFloat || f.wide ? 8 : 4;
        int ctype = s.isFloat ? 2 : cw == 8 ? 1 : 3;
        boolean partial = s.parts > 1;
        int nb = partial ? (s.parts + 7) / 8 : 0;
        int ext = EXT_HEAD + nb + (8 + cw) * n;
        ByteBuffer b = ByteBuffer.allocate(HEADER + ext + 4).order(ByteOrder.LITTLE_ENDIAN);
        boolean empty = f.nKeys == 0 && s.nullW == 0 && (!s.isFloat || s.nullWeight() == 0.0);
        b.putInt(MAGIC).putShort((short) 4).put((byte) 5).put((byte) ((empty ? 1 : 0) | (s.isFloat ? 4 : 0)));
        b.putInt(s.m).putInt(1).putLong(s.seed).putLong(0L);
        b.put((byte) ctype).put((byte) (f.nKeys > 0 ? s.keyDomain : 0)).putShort((short) 0).putDouble(0.0);
        b.putLong(s.total).putLong(s.nullW).putInt(ext);
        b.putInt(SMPL).put((byte) 1).put((byte) (partial ? 1 : 0)).putShort((short) 0).putInt(n).putInt(s.parts);
        b.putDouble(f.tau).putLong(f.nKeys);
        if (partial) {
            byte[] bits = new byte[nb];
            for (int i = s.covered.nextSetBit(0); i >= 0; i = s.covered.nextSetBit(i + 1)) {
                bits[i >> 3] |= (byte) (1 << (i & 7));
            }
            b.put(bits);
        }
        for (long k : f.keys) {
            b.putLong(k);
        }
        for (long t : f.totals) {
            if (cw == 4) {
                b.putInt((int) t);
            } else {
                b.putLong(t);
            }
        }
        CRC32 crc = new CRC32();
        crc.update(b.array(), 0, HEADER + ext);
        b.putInt((int) crc.getValue());
        return b.array();
    }

    private static boolean negativeZero(double x) {
        return x == 0.0 && Double.doubleToRawLongBits(x) != 0L;
    }

    private static CorruptSketchError bad(String msg) {
        return new CorruptSketchError(msg);
    }

    /** A finished sample from its bytes (every check of the core's from_bytes for kind 5). */
    static SampleState decode(byte[] blob) {
        if (blob.length < HEADER + 4) {
            throw bad("truncated: " + blob.length + " bytes is shorter than the " + (HEADER + 4) + "-byte minimum");
        }
        ByteBuffer b = ByteBuffer.wrap(blob).order(ByteOrder.LITTLE_ENDIAN);
        if (b.getInt(0) != MAGIC) {
            throw bad("bad magic: not a skimsketch sketch");
        }
        if (blob[6] != SampleState.KIND) {
            throw bad("unknown sketch kind " + (blob[6] & 0xFF) + " where a join sample (kind 5) was expected");
        }
        int version = b.getShort(4) & 0xFFFF;
        if (version != 4) {
            throw bad(version >= 1 && version <= 4 ? "a join sample is format version 4 with depth 1, and no "
                    + "domain, kind parameter, exact-mode or sign flag" : "unknown format version " + version
                    + " (this library reads versions (1, 2, 3, 4))");
        }
        int flags = blob[7] & 0xFF;
        int ctype = blob[32] & 0xFF;
        int kd = blob[33] & 0xFF;
        if (ctype != 1 && ctype != 2 && ctype != 3) {
            throw bad("unknown counter type " + ctype + " in format version 4");
        }
        if ((flags & ~0x1F) != 0 || b.getShort(34) != 0) {
            throw bad("reserved header bits are set");
        }
        if (kd > 2) {
            throw bad("unknown key domain " + kd);
        }
        boolean isFloat = (flags & 4) != 0;
        if (isFloat != (ctype == 2)) {
            throw bad("float-counter flag disagrees with the counter type");
        }
        long width = b.getInt(8) & 0xFFFFFFFFL;
        long depth = b.getInt(12) & 0xFFFFFFFFL;
        long seed = b.getLong(16);
        long domain = b.getLong(24);
        if ((flags & 2) != 0 ? domain == 0 : domain != 0) {
            throw bad("domain flag disagrees with the domain field");
        }
        if (width < 1 || width > SampleState.MAX_CAPACITY || depth < 1 || depth > 255) {
            throw bad("shape " + depth + "x" + width + " out of range");
        }
        double param = b.getDouble(36);
        if (!Double.isFinite(param)) {
            throw bad("kind parameter is not finite");
        }
        long e = b.getInt(60) & 0xFFFFFFFFL;
        long expected = HEADER + e + 4;
        if (blob.length != expected) {
            throw bad("size mismatch: " + blob.length + " bytes, header implies " + expected);
        }
        CRC32 crc = new CRC32();
        crc.update(blob, 0, blob.length - 4);
        if ((int) crc.getValue() != b.getInt(blob.length - 4)) {
            throw bad("checksum mismatch: the bytes were altered or truncated");
        }
        long total = b.getLong(44);
        long nullW = b.getLong(52);
        if (isFloat && !(Double.isFinite(Double.longBitsToDouble(total))
                && Double.isFinite(Double.longBitsToDouble(nullW)))) {
            throw bad("total or null weight is not finite");
        }
        if (negativeZero(param) || isFloat && (negativeZero(Double.longBitsToDouble(total))
                || negativeZero(Double.longBitsToDouble(nullW)))) {
            throw bad("a join sample writes 0.0, never -0.0, in its kind parameter and weights");
        }
        if (depth != 1 || domain != 0 || param != 0.0 || (flags & (8 | 16)) != 0) {
            throw bad("a join sample is format version 4 with depth 1, and no domain, kind parameter, exact-mode or "
                    + "sign flag");
        }
        int cw = ctype == 3 ? 4 : 8;
        int m = (int) width;
        // the extension (decode_sample)
        if (e < EXT_HEAD) {
            throw bad("sample extension truncated: " + e + " bytes, need at least " + EXT_HEAD);
        }
        int x = HEADER;
        int magic = b.getInt(x);
        int lv = blob[x + 4] & 0xFF;
        int xflags = blob[x + 5] & 0xFF;
        if (magic != SMPL) {
            throw bad("bad sample extension magic");
        }
        if (lv != 1) {
            throw bad("unknown sample extension version " + lv);
        }
        if (b.getShort(x + 6) != 0 || xflags > 1) {
            throw bad("reserved sample extension bytes are set");
        }
        long n = b.getInt(x + 8) & 0xFFFFFFFFL;
        long parts = b.getInt(x + 12) & 0xFFFFFFFFL;
        double tau = b.getDouble(x + 16);
        long nKeys = b.getLong(x + 24);
        boolean partial = xflags == 1;
        if (partial != (parts > 1) || parts < 1 || parts > SampleRank.MAX_PARTITIONS) {
            throw bad("sample partition count " + parts + " disagrees with its partial flag " + xflags + " (1 for a "
                    + "whole sample, 2.." + SampleRank.MAX_PARTITIONS + " for a partial one)");
        }
        int nb = partial ? (int) ((parts + 7) / 8) : 0;
        long size = EXT_HEAD + nb + (8L + cw) * n;
        if (e != size) {
            throw bad("sample extension size mismatch: " + e + " bytes, " + n + " entries imply " + size);
        }
        BitSet covered = new BitSet();
        covered.set(0);
        if (partial) {
            covered = BitSet.valueOf(java.util.Arrays.copyOfRange(blob, x + EXT_HEAD, x + EXT_HEAD + nb));
            if (covered.length() > parts) {
                throw bad("sample partition bitmap has bits set beyond its partition count");
            }
            int c = covered.cardinality();
            if (c == 0 || c >= parts) {
                throw bad("a partial sample covers " + c + " of its " + parts + " partitions (at least one, not all)");
            }
        }
        if (Double.isNaN(tau) || !(tau > 0)) {
            throw bad("sample threshold tau " + Keys.pyRepr(tau) + " is not positive");
        }
        boolean wide = !isFloat && cw == 8;
        long want = Long.compareUnsigned(nKeys, Long.MAX_VALUE) > 0 ? -1
                : Math.min(nKeys, wide && !partial ? (3L * m) / 4 : m);
        if (n != want || Double.isInfinite(tau) != (n == nKeys)) {
            throw bad("sample of capacity " + m + " with " + n + " entries of " + Long.toUnsignedString(nKeys)
                    + " keys and tau " + Keys.pyRepr(tau) + " (format.py, kind 5: the entries kept, and tau infinite "
                    + "exactly when all are)");
        }
        int off = x + EXT_HEAD + nb;
        long[] keys = new long[(int) n];
        long[] totals = new long[(int) n];
        for (int i = 0; i < n; i++) {
            keys[i] = b.getLong(off + 8 * i);
            totals[i] = cw == 4 ? b.getInt(off + 8 * (int) n + 4 * i) : b.getLong(off + 8 * (int) n + 8 * i);
        }
        if (wide && (partial || Double.isInfinite(tau)) && fitsInt(totals)) {
            throw bad("non-canonical total width: int64 totals that all fit in int32");
        }
        for (long t : totals) {
            double d = Double.longBitsToDouble(t);
            if (isFloat ? !(Double.isFinite(d) && d != 0.0) : t == 0) {
                throw bad("sample entry with a zero or non-finite total");
            }
        }
        boolean nullZero = isFloat ? Double.longBitsToDouble(nullW) == 0.0 : nullW == 0;
        if (((flags & 1) != 0) != (nKeys == 0 && nullZero)) {
            throw bad("the empty flag disagrees with the sample's state");
        }
        if ((kd == 0) != (nKeys == 0)) {
            throw bad("the key domain disagrees with the sample's keys");
        }
        if (Double.isInfinite(tau) && !isFloat) {
            java.math.BigInteger sum = java.math.BigInteger.ZERO;
            for (long t : totals) {
                sum = sum.add(java.math.BigInteger.valueOf(t));
            }
            if (!sum.equals(java.math.BigInteger.valueOf(total))) {
                throw bad("a sample that kept every key has totals that do not sum to the total weight");
            }
        }
        // the class's checks (JoinSample._from_parts)
        if (m < SampleState.MIN_CAPACITY) {
            throw bad("sample capacity " + m + " outside [" + SampleState.MIN_CAPACITY + ", " + SampleState.MAX_CAPACITY
                    + "]");
        }
        SampleRank r = SampleRank.of(seed);
        double prev = 0;
        Set<Long> seen = new HashSet<>();
        for (int i = 0; i < n; i++) {
            double rk = r.rank(keys[i], isFloat ? Double.longBitsToDouble(totals[i]) : (double) totals[i]);
            if ((i > 0 && SampleRank.compare(prev, keys[i - 1], rk, keys[i]) >= 0) || rk > tau) {
                throw bad("sample entries are not in (rank, key) order below tau: altered bytes or another seed");
            }
            prev = rk;
            if (!seen.add(keys[i])) {
                throw bad("sample holds a key twice");
            }
            if (partial && !covered.get(r.partition(keys[i], (int) parts))) {
                throw bad("a partial sample holds a key of a partition it does not cover");
            }
        }
        SampleState s = SampleState.finished(m, seed, isFloat, new SampleState.Fin(keys, totals, tau, nKeys, isFloat,
                cw == 8));
        s.total = total;
        s.nullW = nullW;
        s.keyDomain = kd;
        s.parts = (int) parts;
        s.covered = covered;
        return s;
    }
}
