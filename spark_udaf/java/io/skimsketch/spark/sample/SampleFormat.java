package io.skimsketch.spark.sample;

import io.skimsketch.spark.CorruptSketchError;
import io.skimsketch.spark.common.Keys;
import io.skimsketch.spark.common.Kinds;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.BitSet;
import java.util.zip.CRC32;

/**
 * Format kind 5, the join sample (docs/format.md, "Kind 5: the join sample"; skimsketch/format/header.py
 * encode_sample / decode_sample and JoinSample._from_parts): the 64-byte header (its width field is
 * the byte budget B), the SMPL extension of layout 2 (counts, tau, K, the partition bitmap of a partial
 * piece, the Rice parameter, the fingerprint section and the totals section of {@link SampleCodec}, both
 * in ascending fingerprint order) and the CRC-32. decode also reads layout 1 ({@link SampleLayout1}: keys
 * and fixed-width totals, width = the capacity m) into legacy fingerprints h >>> 12: budget 100 + 12 m
 * (100 + 16 m with float totals), the same ranks and tau; such a sample writes back as layout 2 with the
 * extension's flag bit 1 (legacy; with bit 0 for a layout-1 partial piece, whose partitions came from the old hash
 * word and are not checked against its fingerprints). decode refuses everything the core refuses,
 * with CorruptSketchError.
 */
public final class SampleFormat {
    public static final int HEADER = 64;
    static final int EXT_HEAD = 32;
    /** Header 64 + CRC 4 + extension head 32 + Rice parameter 1 + fingerprint-section length 4. */
    static final int OVERHEAD = 105;
    static final int LAYOUT = 2;
    /** Layout 2 with the scale exponent (i16, not 0) in the reserved bytes ({@link SampleScale}). */
    static final int LAYOUT_SCALED = 3;
    private static final int MAGIC = 0x4B534B53; // "SKSK" little-endian
    private static final int SMPL = 0x4C504D53; // "SMPL"
    /** Extension flags (layout 2): a partition piece; a legacy sample (fingerprints h >>> 12). */
    public static final int PARTIAL = 1;
    public static final int LEGACY = 2;
    /** Header flag bit 4, the sign flag: no weight of a non-null key was negative. */
    static final int SIGN = 16;

    private SampleFormat() {}

    /** True when the bytes are a join sample (magic and kind 5; the rest is checked by decode). */
    public static boolean isSample(byte[] b) {
        return b != null && b.length > 6 && b[0] == 'S' && b[1] == 'K' && b[2] == 'S' && b[3] == 'K' && b[6] == 5;
    }

    /** The core's class name of the kind in sketch bytes (for the incompatibility message). */
    static String typeName(byte[] b) {
        if (isSample(b)) {
            return "JoinSample";
        }
        int kind = b != null && b.length > 6 ? b[6] : 0;
        return kind == 4 ? "PairSketch" : Kinds.sketchName(kind);
    }

    static boolean fitsInt(long[] t) {
        for (long x : t) {
            if (x != (int) x) {
                return false;
            }
        }
        return true;
    }

    /** The permutation sorting fps ascending. */
    private static int[] byFp(long[] fps) {
        Integer[] idx = new Integer[fps.length];
        for (int i = 0; i < idx.length; i++) {
            idx[i] = i;
        }
        java.util.Arrays.sort(idx, (x, y) -> Long.compare(fps[x], fps[y]));
        int[] out = new int[idx.length];
        for (int i = 0; i < out.length; i++) {
            out[i] = idx[i];
        }
        return out;
    }

    static byte[] encode(SampleState s) {
        SampleState.Fin f = s.sample();
        int n = f.fps.length;
        int[] perm = byFp(f.fps);
        long[] fps = new long[n];
        long[] ts = new long[n];
        for (int i = 0; i < n; i++) {
            fps[i] = f.fps[perm[i]];
            ts[i] = f.totals[perm[i]];
        }
        int r = SampleCodec.riceParameter(fps, n);
        byte[] section = SampleCodec.riceEncode(fps, n, r);
        int tbytes = 0;
        for (int i = 0; i < n; i++) {
            tbytes += s.isFloat ? 8 : SampleCodec.varintSize(ts[i]);
        }
        boolean partial = s.parts > 1;
        int nb = partial ? (s.parts + 7) / 8 : 0;
        int ext = EXT_HEAD + nb + 5 + section.length + tbytes;
        ByteBuffer b = ByteBuffer.allocate(HEADER + ext + 4).order(ByteOrder.LITTLE_ENDIAN);
        boolean empty = f.nKeys == 0 && s.nullW == 0 && (!s.isFloat || s.nullWeight() == 0.0);
        b.putInt(MAGIC).putShort((short) 4).put((byte) 5).put((byte) ((empty ? 1 : 0) | (s.isFloat ? 4 : 0)
                | (s.signFlag ? SIGN : 0)));
        b.putInt(s.nbytes).putInt(1).putLong(s.seed).putLong(0L);
        b.put((byte) (s.isFloat ? 2 : 1)).put((byte) (f.nKeys > 0 ? s.keyDomain : 0)).putShort((short) 0)
                .putDouble(0.0);
        b.putLong(s.total).putLong(s.nullW).putInt(ext);
        b.putInt(SMPL).put((byte) (f.scale != 0 ? LAYOUT_SCALED : LAYOUT))
                .put((byte) ((partial ? PARTIAL : 0) | (s.legacy ? LEGACY : 0))).putShort((short) f.scale).putInt(n)
                .putInt(s.parts);
        b.putDouble(f.tau).putLong(f.nKeys);
        if (partial) {
            byte[] bits = new byte[nb];
            for (int i = s.covered.nextSetBit(0); i >= 0; i = s.covered.nextSetBit(i + 1)) {
                bits[i >> 3] |= (byte) (1 << (i & 7));
            }
            b.put(bits);
        }
        b.put((byte) r).putInt(section.length).put(section);
        if (s.isFloat) {
            for (long t : ts) {
                b.putLong(t);
            }
        } else {
            byte[] out = b.array();
            int pos = b.position();
            for (long t : ts) {
                pos = SampleCodec.putVarint(out, pos, t);
            }
            b.position(pos);
        }
        CRC32 crc = new CRC32();
        crc.update(b.array(), 0, HEADER + ext);
        b.putInt((int) crc.getValue());
        return b.array();
    }

    private static boolean negativeZero(double x) {
        return x == 0.0 && Double.doubleToRawLongBits(x) != 0L;
    }

    static CorruptSketchError bad(String msg) {
        return new CorruptSketchError(msg);
    }

    /** A finished sample from its bytes (every check of the core's from_bytes for kind 5, both layouts). */
    public static SampleState decode(byte[] blob) {
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
                    + "domain, kind parameter or exact-mode flag" : "unknown format version " + version
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
        if (width < 1 || width > SampleState.MAX_BUDGET || depth < 1 || depth > 255) {
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
        if ((flags & SIGN) != 0 && !isFloat && total < 0) { // (float sums may round: not checked)
            throw bad("the sign flag says every weight was >= 0, but the total weight is negative");
        }
        if (negativeZero(param) || isFloat && (negativeZero(Double.longBitsToDouble(total))
                || negativeZero(Double.longBitsToDouble(nullW)))) {
            throw bad("a join sample writes 0.0, never -0.0, in its kind parameter and weights");
        }
        if (depth != 1 || domain != 0 || param != 0.0 || (flags & 8) != 0) {
            throw bad("a join sample is format version 4 with depth 1, and no domain, kind parameter or exact-mode "
                    + "flag");
        }
        // the extension head (decode_sample)
        if (e < EXT_HEAD) {
            throw bad("sample extension truncated: " + e + " bytes, need at least " + EXT_HEAD);
        }
        int x = HEADER;
        int lv = blob[x + 4] & 0xFF;
        int xflags = blob[x + 5] & 0xFF;
        if (lv == LAYOUT_SCALED && b.getShort(x + 6) == 0) {
            throw bad("a layout-3 join sample has a scale exponent of 0 (layout 2 writes that sample)");
        }
        if (b.getInt(x) != SMPL) {
            throw bad("bad sample extension magic");
        }
        if (lv < 1 || lv > LAYOUT_SCALED) {
            throw bad("unknown sample extension version " + lv);
        }
        if ((b.getShort(x + 6) != 0) != (lv == LAYOUT_SCALED)
                || !(xflags == 0 || xflags == PARTIAL || (lv >= 2 && (xflags & ~PARTIAL) == LEGACY))) {
            throw bad("reserved sample extension bytes are set");
        }
        long n = b.getInt(x + 8) & 0xFFFFFFFFL;
        long parts = b.getInt(x + 12) & 0xFFFFFFFFL;
        double tau = b.getDouble(x + 16);
        long nKeys = b.getLong(x + 24);
        boolean partial = (xflags & PARTIAL) != 0;
        if (partial != (parts > 1) || parts < 1 || parts > SampleRank.MAX_PARTITIONS) {
            throw bad("sample partition count " + parts + " disagrees with its partial flag " + xflags + " (1 for a "
                    + "whole sample, 2.." + SampleRank.MAX_PARTITIONS + " for a partial one)");
        }
        Head h = new Head();
        h.seed = seed;
        h.isFloat = isFloat;
        h.total = total;
        h.nullW = nullW;
        h.kd = kd;
        h.empty = (flags & 1) != 0;
        h.tau = tau;
        h.nKeys = nKeys;
        h.n = n;
        h.parts = (int) parts;
        h.legacy = lv == 1 || (xflags & LEGACY) != 0;
        h.sign = (flags & SIGN) != 0;
        h.scale = lv == LAYOUT_SCALED ? b.getShort(x + 6) : 0;
        return lv == 1 ? SampleLayout1.decode(blob, b, h, ctype, width, e) : decodeV2(blob, b, h, ctype, width, e);
    }

    /** The header and extension-head fields both layouts check. */
    static final class Head {
        long seed;
        boolean isFloat;
        long total;
        long nullW;
        int kd;
        boolean empty;
        double tau;
        long nKeys;
        long n;
        int parts;
        boolean legacy;
        boolean sign;
        int scale;
    }

    /** The rules both layouts share: tau against the counts, totals, the empty flag, the key domain. */
    static void checkState(Head h, long[] totals) {
        if (Double.isNaN(h.tau) || !(h.tau > 0)) {
            throw bad("sample threshold tau " + Keys.pyRepr(h.tau) + " is not positive");
        }
        if (Long.compareUnsigned(h.n, h.nKeys) > 0 || Double.isInfinite(h.tau) != (h.n == h.nKeys)) {
            throw bad("sample with " + h.n + " entries of " + Long.toUnsignedString(h.nKeys) + " keys and tau "
                    + Keys.pyRepr(h.tau) + " (format.py, kind 5: at most every key, and tau infinite exactly when all "
                    + "are kept)");
        }
        for (long t : totals) {
            double d = Double.longBitsToDouble(t);
            if (h.isFloat ? !(Double.isFinite(d) && d != 0.0) : t == 0) {
                throw bad("sample entry with a zero or non-finite total");
            }
        }
        boolean nullZero = h.isFloat ? Double.longBitsToDouble(h.nullW) == 0.0 : h.nullW == 0;
        if (h.empty != (h.nKeys == 0 && nullZero)) {
            throw bad("the empty flag disagrees with the sample's state");
        }
        if ((h.kd == 0) != (h.nKeys == 0)) {
            throw bad("the key domain disagrees with the sample's keys");
        }
        if (Double.isInfinite(h.tau) && !h.isFloat) {
            java.math.BigInteger sum = java.math.BigInteger.ZERO;
            for (long t : totals) {
                sum = sum.add(java.math.BigInteger.valueOf(t));
            }
            if (!sum.equals(java.math.BigInteger.valueOf(h.total))) {
                throw bad("a sample that kept every key has totals that do not sum to the total weight");
            }
        }
        if (h.sign) {
            for (long t : totals) {
                if (h.isFloat ? Double.longBitsToDouble(t) < 0 : t < 0) {
                    throw bad("the sign flag says no weight was negative, but a sample total is negative");
                }
            }
        }
    }

    static BitSet cover(byte[] blob, int at, int nb, int parts) {
        BitSet covered = BitSet.valueOf(java.util.Arrays.copyOfRange(blob, at, at + nb));
        if (covered.length() > parts) {
            throw bad("sample partition bitmap has bits set beyond its partition count");
        }
        int c = covered.cardinality();
        if (c == 0 || c >= parts) {
            throw bad("a partial sample covers " + c + " of its " + parts + " partitions (at least one, not all)");
        }
        return covered;
    }

    static SampleState state(Head h, int budget, long[] fps, long[] totals, BitSet covered) {
        SampleState s = SampleState.finished(budget, h.seed, h.isFloat, new SampleState.Fin(fps, totals, h.tau,
                h.nKeys, h.isFloat, h.scale));
        s.total = h.total;
        s.nullW = h.nullW;
        s.keyDomain = h.kd;
        s.parts = h.parts;
        s.covered = covered;
        s.legacy = h.legacy;
        s.signFlag = h.sign;
        return s;
    }

    /** Layout 2: budget, Rice-coded fingerprints, varint or float64 totals. */
    private static SampleState decodeV2(byte[] blob, ByteBuffer b, Head h, int ctype, long budget, long e) {
        if (h.scale != 0 && !h.isFloat) {
            throw bad("a layout-3 join sample (a scale exponent) has float totals");
        }
        if (ctype == 3) {
            throw bad("a layout-2 join sample has int64 (type 1) or float64 (type 2) totals");
        }
        if (budget < SampleState.MIN_BUDGET) {
            throw bad("sample budget " + budget + " bytes outside [" + SampleState.MIN_BUDGET + ", "
                    + SampleState.MAX_BUDGET + "]");
        }
        boolean partial = h.parts > 1;
        int nb = partial ? (h.parts + 7) / 8 : 0;
        int x = HEADER;
        if (partial && h.n > SampleState.maxEntries(budget, h.isFloat)) {
            throw bad("a partial sample of budget " + budget + " holds " + h.n + " entries, more than "
                    + SampleState.maxEntries(budget, h.isFloat));
        }
        if (!partial && blob.length > budget) {
            throw bad("a whole sample of " + blob.length + " bytes exceeds its budget of " + budget + " bytes");
        }
        if (e < EXT_HEAD + nb + 5) {
            throw bad(e < EXT_HEAD + nb ? "sample extension truncated inside its partition bitmap"
                    : "sample extension truncated before its fingerprint section");
        }
        BitSet covered = new BitSet();
        covered.set(0);
        if (partial) {
            covered = cover(blob, x + EXT_HEAD, nb, h.parts);
        }
        int r = blob[x + EXT_HEAD + nb] & 0xFF;
        if (r > SampleCodec.MAX_RICE) {
            throw bad("sample Rice parameter " + r + " above " + SampleCodec.MAX_RICE);
        }
        if (h.n == 0 && (r != 0 || (b.getInt(x + EXT_HEAD + nb + 1) != 0))) {
            throw bad("sample with no entries has a fingerprint section or a Rice parameter");
        }
        long len = b.getInt(x + EXT_HEAD + nb + 1) & 0xFFFFFFFFL;
        long rest = e - EXT_HEAD - nb - 5;
        if (len > rest) {
            throw bad("sample fingerprint section of " + len + " bytes overruns the extension");
        }
        long n = h.n;
        if (n > 8 * len) {
            throw bad("sample of " + n + " entries in a " + len + "-byte fingerprint section");
        }
        int at = x + EXT_HEAD + nb + 5;
        long tbytes = rest - len; // every size check before the allocations it guards: n is bounded by the bytes
        if (h.isFloat && tbytes != 8 * n) {
            throw bad("sample totals section of " + tbytes + " bytes, " + n + " float totals need " + 8 * n);
        }
        if (!h.isFloat && (tbytes < n || tbytes > 10 * n)) {
            throw bad("sample totals section of " + tbytes + " bytes does not hold exactly " + n
                    + " varints (1 to 10 bytes each)");
        }
        long[] fps = SampleCodec.riceDecode(blob, at, (int) len, (int) n, r);
        if (SampleCodec.riceParameter(fps, (int) n) != r) {
            throw bad("sample Rice parameter " + r + " is not the best one for its fingerprints");
        }
        int tlen = (int) (rest - len);
        long[] totals;
        if (h.isFloat) {
            if (tlen != 8 * n) {
                throw bad("sample totals section of " + tlen + " bytes, " + n + " float totals need " + 8 * n);
            }
            totals = new long[(int) n];
            for (int i = 0; i < n; i++) {
                totals[i] = b.getLong(at + (int) len + 8 * i);
            }
        } else {
            totals = SampleCodec.varintDecode(blob, at + (int) len, tlen, (int) n);
        }
        checkState(h, totals);
        if (h.scale != 0) {
            SampleScale.checkStored(totals, h.tau, h.scale);
        }
        double[] ranks = new double[(int) n];
        for (int i = 0; i < n; i++) {
            double w = Math.abs(h.isFloat ? Double.longBitsToDouble(totals[i]) : (double) totals[i]);
            ranks[i] = SampleRank.rank(fps[i], h.scale == 0 ? w : Math.scalb(w, h.scale));
            if (ranks[i] > h.tau) {
                throw bad("a sample entry ranks above tau: altered bytes or another seed");
            }
            if (partial && !h.legacy && !covered.get(SampleRank.partition(fps[i], h.parts))) {
                throw bad("a partial sample holds a fingerprint of a partition it does not cover");
            }
        }
        return state(h, (int) budget, fps, totals, covered).inRankOrder(ranks);
    }
}
