package io.skimsketch.spark.sample;

import io.skimsketch.spark.CorruptSketchError;

/**
 * The compact codes of the join sample's layout 2 (docs/format.md, "Kind 5: the join sample";
 * skimsketch/sample/codec.py): the fingerprint section (the n fingerprints sorted ascending, their gaps
 * d_0 = fp_0, d_i = fp_i - fp_{i-1} - 1 Rice-coded with the parameter r in 0..51 of fewest bits, ties
 * the smallest: d &gt;&gt; r one-bits, a zero-bit, then the low r bits, most significant first, packed
 * MSB-first and zero-padded to whole bytes) and the integer totals (zigzag LEB128 varints, canonical:
 * at most 10 bytes, no overlong form). Every decoder refuses malformed input with CorruptSketchError.
 */
final class SampleCodec {
    static final int MAX_RICE = 51;

    private SampleCodec() {}

    private static CorruptSketchError bad(String msg) {
        return new CorruptSketchError(msg);
    }

    private static long gap(long[] fps, int i) {
        return i == 0 ? fps[0] : fps[i] - fps[i - 1] - 1;
    }

    /**
     * The Rice parameter of fewest bits for the first n of the ascending fingerprints (ties: the smallest).
     * The bit count f(r) = sum (d_i &gt;&gt; r) + n (1 + r) is convex in r (f(r+1) - f(r) = n - sum
     * ceil((d_i &gt;&gt; r) / 2) does not decrease), so the answer is the smallest r whose step is not a
     * decrease: a binary search over 0..51.
     */
    static int riceParameter(long[] fps, int n) {
        int lo = 0;
        int hi = MAX_RICE;
        while (lo < hi) {
            int mid = (lo + hi) >>> 1;
            long halves = 0;
            for (int i = 0; i < n; i++) {
                halves += ((gap(fps, i) >>> mid) + 1) >>> 1;
            }
            if (n - halves >= 0) {
                hi = mid;
            } else {
                lo = mid + 1;
            }
        }
        return lo;
    }

    /** The bits of the first n gaps with parameter r. */
    static long riceBits(long[] fps, int n, int r) {
        long bits = (long) n * (1 + r);
        for (int i = 0; i < n; i++) {
            bits += gap(fps, i) >>> r;
        }
        return bits;
    }

    /** The fingerprint section's bytes L for the first n ascending fingerprints (at the best r). */
    static long sectionBytes(long[] fps, int n) {
        return (riceBits(fps, n, riceParameter(fps, n)) + 7) >>> 3;
    }

    /** A most-significant-bit-first writer. */
    private static final class Bits {
        final byte[] out;
        int pos;
        long acc;
        int held;

        Bits(int size) {
            out = new byte[size];
        }

        /** The low k (at most 32) bits of v, most significant first. */
        void put(long v, int k) {
            acc = (acc << k) | (v & ((1L << k) - 1));
            held += k;
            while (held >= 8) {
                out[pos++] = (byte) (acc >>> (held - 8));
                held -= 8;
            }
        }

        byte[] finish() {
            if (held > 0) {
                out[pos++] = (byte) (acc << (8 - held));
                held = 0;
            }
            return out;
        }
    }

    /** The fingerprint section of the first n ascending fingerprints with parameter r. */
    static byte[] riceEncode(long[] fps, int n, int r) {
        Bits w = new Bits((int) ((riceBits(fps, n, r) + 7) >>> 3));
        for (int i = 0; i < n; i++) {
            long d = gap(fps, i);
            long q = d >>> r;
            while (q >= 32) {
                w.put(0xFFFFFFFFL, 32);
                q -= 32;
            }
            w.put((1L << q) - 1, (int) q);
            w.put(0, 1);
            if (r > 32) {
                w.put(d >>> 32, r - 32);
                w.put(d, 32);
            } else {
                w.put(d, r);
            }
        }
        return w.finish();
    }

    /**
     * n ascending fingerprints from the len-byte section at off with parameter r; refuses a gap that
     * overruns the section, a fingerprint from 2^52 on, non-zero padding bits and extra bytes.
     */
    static long[] riceDecode(byte[] b, int off, int len, int n, int r) {
        long[] fps = new long[n];
        long end = 8L * len;
        long p = 0;
        long prev = -1;
        long qmax = SampleRank.FP_LIMIT >>> r;
        for (int i = 0; i < n; i++) {
            long q = 0;
            while (true) {
                if (p >= end) {
                    throw bad("sample fingerprint section ends inside a delta");
                }
                int bit = (b[off + (int) (p >>> 3)] >>> (7 - (int) (p & 7))) & 1;
                p++;
                if (bit == 0) {
                    break;
                }
                if (++q > qmax) {
                    throw bad("sample fingerprint at or above 2**52");
                }
            }
            if (p + r > end) {
                throw bad("sample fingerprint section ends inside a delta");
            }
            long low = 0;
            for (int j = 0; j < r; j++) {
                low = (low << 1) | ((b[off + (int) (p >>> 3)] >>> (7 - (int) (p & 7))) & 1);
                p++;
            }
            long fp = prev + 1 + ((q << r) | low);
            if (fp >= SampleRank.FP_LIMIT) {
                throw bad("sample fingerprint at or above 2**52");
            }
            fps[i] = fp;
            prev = fp;
        }
        boolean padded = (p + 7) >>> 3 == len;
        for (long z = p; padded && z < end; z++) {
            padded = ((b[off + (int) (z >>> 3)] >>> (7 - (int) (z & 7))) & 1) == 0;
        }
        if (!padded) {
            throw bad("sample fingerprint section is " + len + " bytes, its " + n + " deltas use " + p
                    + " bits (extra bytes or non-zero padding)");
        }
        return fps;
    }

    // -- zigzag LEB128 ------------------------------------------------------------------------------
    static long zigzag(long t) {
        return (t << 1) ^ (t >> 63);
    }

    /** Bytes of t's zigzag varint (1..10). */
    static int varintSize(long t) {
        long z = zigzag(t);
        return z == 0 ? 1 : (64 - Long.numberOfLeadingZeros(z) + 6) / 7;
    }

    /** Writes t's zigzag varint at pos; returns the position after it. */
    static int putVarint(byte[] b, int pos, long t) {
        long z = zigzag(t);
        while ((z & ~0x7FL) != 0) {
            b[pos++] = (byte) ((z & 0x7F) | 0x80);
            z >>>= 7;
        }
        b[pos++] = (byte) z;
        return pos;
    }

    /** n zigzag varints filling exactly the len-byte section at off (canonical, at most 10 bytes each). */
    static long[] varintDecode(byte[] b, int off, int len, int n) {
        if (n > len) {
            throw bad("sample totals section of " + len + " bytes does not hold exactly " + n + " varints");
        }
        long[] out = new long[n];
        int pos = off;
        int end = off + len;
        for (int i = 0; i < n; i++) {
            long z = 0;
            for (int j = 0;; j++) {
                if (j == 10) {
                    throw bad("sample total varint longer than 64 bits");
                }
                if (pos >= end) {
                    throw bad("sample totals section of " + len + " bytes does not hold exactly " + n + " varints");
                }
                int c = b[pos++] & 0xFF;
                if (j == 9 && c > 1) {
                    throw bad("sample total varint longer than 64 bits");
                }
                z |= (long) (c & 0x7F) << (7 * j);
                if ((c & 0x80) == 0) {
                    if (c == 0 && j > 0) {
                        throw bad("sample total varint is overlong (not canonical)");
                    }
                    break;
                }
            }
            out[i] = (z >>> 1) ^ -(z & 1);
        }
        if (pos != end) {
            throw bad("sample totals section of " + len + " bytes does not hold exactly " + n + " varints");
        }
        return out;
    }
}
