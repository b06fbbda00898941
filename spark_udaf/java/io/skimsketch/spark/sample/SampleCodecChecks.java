package io.skimsketch.spark.sample;

/**
 * The layout-2 codes' checks of the self-test ({@link SampleChecks#run}): hand-computed cases, round trips, and
 * every refusal of the decoders.
 */
final class SampleCodecChecks {
    private SampleCodecChecks() {}

    /** The brute-force Rice parameter: the smallest r of fewest bits. */
    private static int bruteRice(long[] fps, int n) {
        int best = 0;
        for (int r = 1; r <= SampleCodec.MAX_RICE; r++) {
            if (SampleCodec.riceBits(fps, n, r) < SampleCodec.riceBits(fps, n, best)) {
                best = r;
            }
        }
        return best;
    }

    /** The layout-2 codes: hand-computed cases, round trips, and every refusal of the decoders. */
    static void codec() {
        // fps {0, 1, 5}: gaps 0, 0, 3; bits r=0: 6, r=1: 7 -> r = 0, "0" "0" "1110", padded: 0x38
        long[] small = {0, 1, 5};
        SampleChecks.check(SampleCodec.riceParameter(small, 3) == 0 && SampleCodec.riceBits(small, 3, 0) == 6
                && java.util.Arrays.equals(SampleCodec.riceEncode(small, 3, 0), new byte[] {0x38}),
                "Rice code of fingerprints {0, 1, 5}");
        SampleChecks.check(java.util.Arrays.equals(SampleCodec.riceDecode(new byte[] {0x38}, 0, 1, 3, 0), small),
                "Rice decode of 0x38");
        // fps {2^52 - 1}: r = 51 (53 bits: "1" "0" then 51 ones), 7 bytes
        long[] top = {SampleRank.FP_LIMIT - 1};
        byte[] topBytes = SampleCodec.riceEncode(top, 1, 51);
        SampleChecks.check(SampleCodec.riceParameter(top, 1) == 51 && topBytes.length == 7 && (topBytes[0] & 0xFF) == 0xBF
                && (topBytes[6] & 0xFF) == 0xF8 && SampleCodec.riceDecode(topBytes, 0, 7, 1, 51)[0] == top[0],
                "Rice code of the largest fingerprint");
        // fps {3, 4}: gaps 3, 0: r=0: 3+2 = 5 bits, r=1: 1+0+4 = 5 bits, r=2: 0+0+6 -> r = 0 (the tie's smallest)
        SampleChecks.check(SampleCodec.riceParameter(new long[] {3, 4}, 2) == 0, "a Rice tie takes the smallest r");
        SampleChecks.check(SampleCodec.riceParameter(new long[0], 0) == 0 && SampleCodec.riceEncode(new long[0], 0, 0).length == 0,
                "no fingerprints: r = 0, no bytes");
        // refusals: padding bits, extra bytes, overruns, a fingerprint from 2^52 on
        SampleChecks.refused(() -> SampleCodec.riceDecode(new byte[] {0x39}, 0, 1, 3, 0), "non-zero padding bits");
        SampleChecks.refused(() -> SampleCodec.riceDecode(new byte[] {0x38, 0}, 0, 2, 3, 0), "an extra fingerprint-section byte");
        SampleChecks.refused(() -> SampleCodec.riceDecode(new byte[] {(byte) 0xFF}, 0, 1, 1, 0), "a gap overrunning the section");
        SampleChecks.check(SampleCodec.riceDecode(new byte[] {0x38}, 0, 1, 5, 0)[4] == 7, "0x38 holds 5 gaps (0, 0, 3, 0, 0)");
        SampleChecks.refused(() -> SampleCodec.riceDecode(new byte[] {0x38}, 0, 1, 6, 0), "more gaps than the section holds");
        SampleChecks.refused(() -> SampleCodec.riceDecode(new byte[] {(byte) 0xBF, -1, -1, -1, -1, -1, -1, -1}, 0, 8, 2, 51),
                "a fingerprint beyond 2^52 - 1");
        SampleChecks.refused(() -> SampleCodec.riceDecode(new byte[] {(byte) 0xDF, -1, -1, -1, -1, -1, (byte) 0xF8}, 0, 7, 1, 51),
                "a fingerprint of 2^52");
        // zigzag varints
        SampleChecks.check(SampleCodec.zigzag(-1) == 1 && SampleCodec.zigzag(1) == 2 && SampleCodec.zigzag(Long.MIN_VALUE) == -1L,
                "zigzag");
        byte[] v = new byte[20];
        SampleChecks.check(SampleCodec.putVarint(v, 0, 300) == 2 && (v[0] & 0xFF) == 0xD8 && v[1] == 0x04
                && SampleCodec.varintSize(300) == 2 && SampleCodec.varintSize(-64) == 1
                && SampleCodec.varintSize(64) == 2, "varint of 300 = d8 04");
        SampleChecks.check(SampleCodec.putVarint(v, 0, Long.MIN_VALUE) == 10 && v[9] == 1 && SampleCodec.varintSize(Long.MAX_VALUE) == 10
                && SampleCodec.varintDecode(v, 0, 10, 1)[0] == Long.MIN_VALUE, "varint of -2^63 (10 bytes)");
        SampleChecks.refused(() -> SampleCodec.varintDecode(new byte[] {(byte) 0x82, 0}, 0, 2, 1), "an overlong varint");
        SampleChecks.refused(() -> SampleCodec.varintDecode(new byte[] {-1, -1, -1, -1, -1, -1, -1, -1, -1, 2}, 0, 10, 1),
                "a varint whose 10th byte is 2");
        SampleChecks.refused(() -> SampleCodec.varintDecode(new byte[] {-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, 1}, 0, 11, 1),
                "an 11-byte varint");
        SampleChecks.refused(() -> SampleCodec.varintDecode(new byte[] {2, 2}, 0, 2, 1), "an extra totals byte");
        SampleChecks.refused(() -> SampleCodec.varintDecode(new byte[] {(byte) 0x82}, 0, 1, 1), "a varint overrunning the section");
        // random round trips, and the Rice parameter against brute force
        java.util.Random rnd = new java.util.Random(17);
        for (int t = 0; t < 300; t++) {
            int n = rnd.nextInt(t < 100 ? 8 : 400);
            int spread = Math.min(52, 34 - Integer.numberOfLeadingZeros(n) + rnd.nextInt(52)); // room for n values
            java.util.TreeSet<Long> set = new java.util.TreeSet<>();
            while (set.size() < n) {
                set.add(spread == 52 ? rnd.nextLong() >>> 12 : (rnd.nextLong() >>> 12) & ((1L << spread) - 1));
            }
            long[] fps = set.stream().mapToLong(Long::longValue).toArray();
            int r = SampleCodec.riceParameter(fps, n);
            SampleChecks.check(r == bruteRice(fps, n), "the Rice parameter of fewest bits (" + n + " fingerprints)");
            byte[] sec = SampleCodec.riceEncode(fps, n, r);
            SampleChecks.check(java.util.Arrays.equals(SampleCodec.riceDecode(sec, 0, sec.length, n, r), fps), "Rice round trip");
            long[] ts = new long[n];
            int size = 0;
            for (int i = 0; i < n; i++) {
                ts[i] = rnd.nextInt(4) == 0 ? rnd.nextLong() : rnd.nextInt(1000) - 500;
                size += SampleCodec.varintSize(ts[i]);
            }
            byte[] out = new byte[size];
            int pos = 0;
            for (long x : ts) {
                pos = SampleCodec.putVarint(out, pos, x);
            }
            SampleChecks.check(pos == size && java.util.Arrays.equals(SampleCodec.varintDecode(out, 0, size, n), ts),
                    "varint round trip");
        }
        // a sample over hand-picked rows: the header's budget, layout 2, the sections in fingerprint order
        SampleState s = SampleState.building(148, 3, false);
        s.add(10L, 1, 5L);
        s.add(20L, 1, -2L);
        byte[] b = s.toBytes();
        java.nio.ByteBuffer bb = java.nio.ByteBuffer.wrap(b).order(java.nio.ByteOrder.LITTLE_ENDIAN);
        long[] fps = {SampleRank.of(3).fp(10), SampleRank.of(3).fp(20)};
        long[] sorted = fps.clone();
        java.util.Arrays.sort(sorted);
        byte[] sec = SampleCodec.riceEncode(sorted, 2, SampleCodec.riceParameter(sorted, 2));
        SampleChecks.check(bb.getInt(8) == 148 && b[32] == 1 && SampleChecks.layout(b) == 2 && bb.getInt(72) == 2
                && Double.isInfinite(bb.getDouble(80)) && bb.getLong(88) == 2 && b[96] == SampleCodec.riceParameter(sorted, 2)
                && bb.getInt(97) == sec.length && b.length == SampleFormat.OVERHEAD + sec.length + 2
                && java.util.Arrays.equals(java.util.Arrays.copyOfRange(b, 101, 101 + sec.length), sec)
                && b[101 + sec.length] == (sorted[0] == fps[0] ? 10 : 3) && b[102 + sec.length] == (sorted[0] == fps[0] ? 3 : 10),
                "the layout-2 bytes of a two-key sample");
    }
}
