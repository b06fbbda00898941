package io.skimsketch.spark.sample;

import java.util.Arrays;

/**
 * The bytes of skim_sample_agg's bucketed build: a task's run of one bucket ({@link SampleRuns}, the partial
 * buffer: fingerprint gaps and zigzag totals as varints), and a finished bucket's piece (its exact key count and
 * its C + 1 smallest (rank, fp) entries), which the outer aggregate unions into a {@link SampleState} of exact
 * totals of disjoint fingerprints: the core's sample, since the union's C + 1 smallest are among the pieces'.
 */
public final class SamplePieces {
    /** The key-domain byte's flag: a row of a non-null key had a negative weight (the sample's sign flag). */
    private static final int NEGATIVE = 0x40;

    private SamplePieces() {}

    // -- the bucket's piece: its exact key count and its C + 1 smallest (rank, fp) entries -------------
    /**
     * The finished bucket as a piece of the sample: total and null weights, key domain, the bucket's exact key
     * count K_b (fingerprints with a non-zero total) and its min(K_b, C + 1) entries of smallest (rank, fp),
     * C = maxEntries: the union's C + 1 smallest are among the buckets' (buckets hold disjoint fingerprints).
     */
    public static byte[] pieceBytes(SampleRuns r, int nbytes) {
        r.finish();
        int maxEntries = SampleState.maxEntries(nbytes, false);
        SampleSelect s = new SampleSelect(maxEntries, false);
        for (int i = 0; i < r.m; i++) {
            s.offer(r.rk[i], r.rv[i]);
        }
        Bytes b = new Bytes(40 + 18 * s.size);
        b.fixed(r.total).fixed(r.nullW);
        b.buf[b.pos++] = (byte) (r.keyDomain | (r.negative ? NEGATIVE : 0));
        b.varint(r.m).varint(s.size);
        for (int i = 0; i < s.size; i++) {
            b.varint(s.keys[i]).varint(SampleCodec.zigzag(s.totals[i]));
        }
        return Arrays.copyOf(b.buf, b.pos);
    }

    /** Adds a bucket's piece ({@link #pieceBytes}) to a sample of exact totals of disjoint fingerprints. */
    public static void offerPiece(byte[] piece, SampleState st) {
        Bytes b = new Bytes(piece);
        long t = b.fixed();
        long nw = b.fixed();
        int kd = piece[b.pos++];
        if ((kd & NEGATIVE) != 0) {
            st.negativeWeight();
        }
        kd &= ~NEGATIVE;
        long k = b.varint();
        int e = (int) b.varint();
        st.total = SampleRuns.sum(st.total, t);
        st.nullW = SampleRuns.sum(st.nullW, nw);
        if (kd != 0) {
            st.keyDomain = kd;
        }
        st.sel.nKeys += k;
        for (int i = 0; i < e; i++) {
            long fp = b.varint();
            long z = b.varint();
            long tot = (z >>> 1) ^ -(z & 1);
            st.sel.offer(fp, tot);
        }
        st.fin = null;
    }

    // -- bytes: the partial buffer (the run) -----------------------------------------------------------
    /** Header (total, null weight, key domain, m) and the run: fingerprint gaps and zigzag totals, varints. */
    public static byte[] runBytes(SampleRuns r) {
        r.finish();
        Bytes b = new Bytes(32 + 12 * r.m);
        b.fixed(r.total).fixed(r.nullW);
        b.buf[b.pos++] = (byte) (r.keyDomain | (r.negative ? NEGATIVE : 0));
        b.varint(r.m);
        long prev = 0;
        for (int i = 0; i < r.m; i++) {
            b.varint(r.rk[i] - prev);
            prev = r.rk[i];
            b.varint(SampleCodec.zigzag(r.rv[i]));
        }
        return Arrays.copyOf(b.buf, b.pos);
    }

    public static SampleRuns fromRunBytes(byte[] bytes, boolean weighted) {
        SampleRuns r = new SampleRuns(weighted);
        Bytes b = new Bytes(bytes);
        r.total = b.fixed();
        r.nullW = b.fixed();
        int kd = bytes[b.pos++];
        r.negative = (kd & NEGATIVE) != 0;
        r.keyDomain = kd & ~NEGATIVE;
        int m = (int) b.varint();
        long[] k = new long[m];
        long[] v = new long[m];
        long prev = 0;
        for (int i = 0; i < m; i++) {
            prev += b.varint();
            k[i] = prev;
            long z = b.varint();
            v[i] = (z >>> 1) ^ -(z & 1);
        }
        r.setRun(k, v);
        return r;
    }

    /** A growable byte buffer with little-endian longs and unsigned LEB128 varints. */
    private static final class Bytes {
        byte[] buf;
        int pos;

        Bytes(int cap) {
            buf = new byte[Math.max(cap, 32)];
        }

        Bytes(byte[] b) {
            buf = b;
        }

        private void room(int k) {
            if (pos + k > buf.length) {
                buf = Arrays.copyOf(buf, Math.max(buf.length * 2, pos + k));
            }
        }

        Bytes fixed(long x) {
            room(8);
            for (int i = 0; i < 8; i++) {
                buf[pos++] = (byte) (x >>> (8 * i));
            }
            return this;
        }

        long fixed() {
            long x = 0;
            for (int i = 0; i < 8; i++) {
                x |= (buf[pos++] & 0xFFL) << (8 * i);
            }
            return x;
        }

        Bytes varint(long z) {
            room(10);
            while ((z & ~0x7FL) != 0) {
                buf[pos++] = (byte) ((z & 0x7F) | 0x80);
                z >>>= 7;
            }
            buf[pos++] = (byte) z;
            return this;
        }

        long varint() {
            long z = 0;
            for (int s = 0;; s += 7) {
                int c = buf[pos++] & 0xFF;
                z |= (long) (c & 0x7F) << s;
                if ((c & 0x80) == 0) {
                    return z;
                }
            }
        }
    }
}
