package io.skimsketch.spark.sample;

import io.skimsketch.spark.CorruptSketchError;
import io.skimsketch.spark.IncompatibleSketchError;
import io.skimsketch.spark.common.Hashing;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;

/**
 * The join sample's own checks, run by the jar's self-test (io.skimsketch.spark.selftest.SampleSelfTest,
 * after the golden vectors): the layout-2 codec ({@link SampleCodecChecks}: hand-computed cases, round trips,
 * every refusal), the
 * fingerprints (mix64, 3M string keys without equal fingerprints), legacy samples, altered bytes, the
 * bounded buffers and exact merges of partition pieces; and the golden samples rebuilt from their rows.
 * In this package: they check its package-private parts.
 */
public final class SampleChecks {
    private SampleChecks() {}

    static void check(boolean ok, String what) {
        if (!ok) {
            throw new AssertionError("self-test failed: " + what);
        }
    }

    /** The layout byte of a join sample's bytes (1 or 2). */
    public static int layout(byte[] b) {
        return b[SampleFormat.HEADER + 4];
    }

    /** The checks, in order; an AssertionError names the first that fails. */
    public static void run() {
        SampleCodecChecks.codec();
        fingerprints();
        legacy();
        bounded();
        pieces();
    }

    /**
     * Altered bytes (one byte set to a random value, or one bit flipped, the CRC recomputed, so that the
     * field checks run): refused with CorruptSketchError, or read into a sample whose layout-2 bytes read
     * back the same (and are the altered bytes themselves when those were layout 2); never another exception.
     */
    public static void fuzz(Map<String, byte[]> blobs) {
        java.util.Random rnd = new java.util.Random(7);
        for (Map.Entry<String, byte[]> e : blobs.entrySet()) {
            for (int t = 0; t < 600; t++) {
                byte[] b = e.getValue().clone();
                int at = rnd.nextInt(b.length - 4);
                if (t % 2 == 0) {
                    b[at] = (byte) rnd.nextInt(256);
                } else {
                    b[at] ^= (byte) (1 << rnd.nextInt(8));
                }
                java.util.zip.CRC32 crc = new java.util.zip.CRC32();
                crc.update(b, 0, b.length - 4);
                java.nio.ByteBuffer.wrap(b, b.length - 4, 4).order(java.nio.ByteOrder.LITTLE_ENDIAN)
                        .putInt((int) crc.getValue());
                try {
                    byte[] out = SampleFormat.decode(b).toBytes();
                    check(java.util.Arrays.equals(SampleFormat.decode(out).toBytes(), out)
                            && (layout(b) == 1 || java.util.Arrays.equals(out, b)), "altered sample " + e.getKey()
                            + " read back differently (byte " + at + " = " + (b[at] & 0xFF) + ")");
                } catch (CorruptSketchError ok) {
                    // refused: what the core does with it
                } catch (RuntimeException other) {
                    throw new AssertionError("self-test failed: altered sample " + e.getKey() + " raised " + other);
                }
            }
        }
    }

    /**
     * The rewritten aggregate's buffers (exact totals of disjoint keys, merged by keeping the smallest) hold
     * at most C + 1 entries whatever the keys (no task holds every key), and write the building sample's
     * bytes, which keep the longest (rank, fp) prefix that fits the budget.
     */
    private static void bounded() {
        int budget = SampleState.budget("self-test", 1024);
        int c = SampleState.maxEntries(budget, false);
        check(c == 816 && SampleState.maxEntries(budget, true) == 113 && SampleState.maxEntries(148, false) == 38,
                "C(B) = floor(8 (B - 105) / 9), or / 65 for float totals");
        SampleState whole = SampleState.building(budget, 9, false);
        SampleState[] parts = {SampleState.totals(budget, 9, false), SampleState.totals(budget, 9, false)};
        java.util.Random rnd = new java.util.Random(3);
        for (long k = 0; k < 200_000; k++) {
            long t = 1 + (long) Math.floor(1.0 / (1e-6 + rnd.nextDouble())) % 5000; // heavy-tailed totals
            whole.add(k, 1, t);
            parts[(int) (k % 2)].offerTotal(k, 1, t);
        }
        check(parts[0].sel.size == c + 1 && parts[1].sel.size == c + 1, "totals buffers hold C + 1 entries");
        byte[] bytes = whole.toBytes();
        check(java.util.Arrays.equals(parts[0].merge(parts[1]).toBytes(), bytes),
                "merged totals buffers write the building sample's bytes");
        collisions(parts[1].sel);
        longestPrefix(whole, bytes);
        SampleState fl = SampleState.building(600, 5, true);
        for (long k = 0; k < 3000; k++) {
            fl.add(k % 700, 1, 0.25 + (k % 13));
        }
        longestPrefix(fl, fl.toBytes());
    }

    /**
     * Two keys of one fingerprint (about K^2 / 2^53 likely) met by a bounded buffer that holds it: one entry
     * with the summed total, K counted once; a zero sum leaves the table. Checked on a full buffer with one
     * held fingerprint offered again (as a second key of it would be).
     */
    private static void collisions(SampleSelect s) {
        Integer[] idx = s.order();
        long fp = s.keys[idx[idx.length / 2]];
        long t = s.totals[idx[idx.length / 2]];
        long k = s.nKeys;
        int size = s.size;
        s.nKeys++;
        s.offer(fp, 1_000_000);
        Integer[] after = s.order();
        check(s.nKeys == k && s.size == size && s.keys[after[0]] == fp && s.totals[after[0]] == t + 1_000_000,
                "a held fingerprint offered again: one entry, the summed total, ranked by it");
        s.nKeys++;
        s.offer(fp, -(t + 1_000_000));
        Integer[] gone = s.order();
        boolean held = false;
        for (int i = 0; i < s.size; i++) {
            held |= s.keys[i] == fp;
        }
        check(s.nKeys == k - 1 && s.size == size - 1 && !held && s.keys[gone[0]] == s.keys[after[1]],
                "a fingerprint whose summed total is zero leaves the buffer and the key count");
        for (int i = 0; i < s.size; i++) { // the heap order still holds
            int p = (i - 1) >> 1;
            check(i == 0 || SampleScale.compare(s.ranks[p], s.shifts[p], s.keys[p], s.ranks[i], s.shifts[i], s.keys[i])
                    > 0, "heap order");
        }
    }

    /** A whole sample fits its budget, and one more entry of its (rank, fp) order would not. */
    private static void longestPrefix(SampleState s, byte[] bytes) {
        SampleState.Fin f = s.sample();
        check(bytes.length <= s.nbytes && f.fps.length < f.nKeys, "a whole sample within its budget");
        SampleSelect all = new SampleSelect(1 << 20, s.isFloat);
        s.map.forEach((fp, t) -> {
            all.nKeys++;
            all.offer(fp, t);
        });
        Integer[] idx = all.order();
        int n = f.fps.length + 1;
        long[] fps = new long[n];
        long[] ts = new long[n];
        for (int i = 0; i < n; i++) {
            fps[i] = all.keys[idx[i]];
            ts[i] = all.totals[idx[i]];
            check(i == n - 1 || (fps[i] == f.fps[i] && ts[i] == f.totals[i]), "a whole sample is a (rank, fp) prefix");
        }
        SampleState more = SampleState.finished(s.nbytes, s.seed, s.isFloat, new SampleState.Fin(fps, ts,
                Math.scalb(all.ranks[idx[n]], all.shifts[idx[n]]), f.nKeys, s.isFloat));
        more.total = s.total;
        more.keyDomain = s.keyDomain;
        check(more.toBytes().length > s.nbytes, "one more entry than a whole sample's would exceed the budget");
    }

    /**
     * Pieces for the fingerprint partitions of a table (partial samples of min(K, C) entries), finished
     * and merged in any order, write the one-machine sample byte for byte.
     */
    private static void pieces() {
        for (boolean isFloat : new boolean[] {false, true}) {
            int budget = 700;
            int p = 3;
            SampleState one = SampleState.building(budget, 11, isFloat);
            SampleState[] piece = new SampleState[p];
            for (int i = 0; i < p; i++) {
                piece[i] = SampleState.building(budget, 11, isFloat);
                piece[i].parts = p;
                piece[i].covered = new java.util.BitSet();
                piece[i].covered.set(i);
            }
            SampleRank r = SampleRank.of(11);
            java.util.Random rnd = new java.util.Random(5);
            for (int row = 0; row < 20_000; row++) {
                long k = rnd.nextBoolean() ? rnd.nextInt(4000) : (long) Math.floor(1.0 / (1e-3 + rnd.nextDouble()));
                SampleState to = piece[SampleRank.partition(r.fp(k), p)];
                if (isFloat) {
                    one.add(k, 1, 0.5 + (row % 5));
                    to.add(k, 1, 0.5 + (row % 5));
                } else {
                    one.add(k, 1, 1L);
                    to.add(k, 1, 1L);
                }
            }
            byte[][] fin = new byte[p][];
            for (int i = 0; i < p; i++) {
                fin[i] = piece[i].toBytes();
                SampleState back = SampleFormat.decode(fin[i]);
                check(back.sample().fps.length == Math.min(back.sample().nKeys, SampleState.maxEntries(budget, isFloat))
                        && java.util.Arrays.equals(back.toBytes(), fin[i]), "a partial piece keeps min(K, C) entries");
            }
            byte[] want = one.toBytes();
            byte[] got = SampleFormat.decode(fin[2]).merge(SampleFormat.decode(fin[0]))
                    .merge(SampleFormat.decode(fin[1])).toBytes();
            check(java.util.Arrays.equals(got, want) && SampleFormat.decode(want).sample().fps.length
                    < SampleFormat.decode(fin[0]).sample().fps.length, "merged partition pieces write the one-machine "
                    + "sample");
            Map<String, byte[]> fz = new HashMap<>();
            fz.put("piece" + (isFloat ? "-float" : ""), fin[1]);
            fz.put("whole" + (isFloat ? "-float" : ""), want);
            fuzz(fz);
        }
    }

    static void refused(Runnable r, String what) {
        try {
            r.run();
        } catch (CorruptSketchError e) {
            return;
        }
        throw new AssertionError("self-test failed: " + what + " was not refused");
    }

    /**
     * fp = (h ^ mix(k)) >>> 12: mix is splitmix64's finalizer (values computed by hand in Python, modulo
     * 2^64), the legacy fingerprint h >>> 12 differs from it by mix(k) >>> 12, and 3M string keys (the
     * canonical keys of "key-0" .. "key-2999999") have 3M distinct fingerprints, where h >>> 12 alone
     * (32 bits of entropy through the family's fold) gives about K^2 / 2^33 = 1048 equal pairs.
     */
    private static void fingerprints() {
        check(Hashing.mix(0) == 0 && Hashing.mix(1) == 0x5692161d100b05e5L && Hashing.mix(-1) == 0xb4d055fcf2cbbd7bL
                && Hashing.mix(Long.MAX_VALUE) == 0x5a682afe7965debdL, "mix64 of 0, 1, -1, 2^63 - 1");
        SampleRank r = SampleRank.of(0);
        for (long k : new long[] {0, 1, -1, 12345, Long.MIN_VALUE}) {
            check((r.fp(k) ^ r.fp(k, true)) == Hashing.mix(k) >>> 12 && r.fp(k, false) == r.fp(k)
                    && r.fp(k) < SampleRank.FP_LIMIT, "fp(k) = (h ^ mix(k)) >>> 12, legacy h >>> 12, key " + k);
        }
        int n = 3_000_000;
        long[] fps = new long[n];
        long[] old = new long[n];
        for (int i = 0; i < n; i++) {
            long k = Hashing.fingerprint64(("key-" + i).getBytes(StandardCharsets.UTF_8));
            fps[i] = r.fp(k);
            old[i] = r.fp(k, true);
        }
        int same = equalPairs(fps);
        int sameOld = equalPairs(old);
        check(same == 0 && sameOld > 500, "3M string keys: " + same + " equal fingerprints (h >>> 12 alone: "
                + sameOld + ")");
    }

    /** Adjacent equal values once sorted. */
    private static int equalPairs(long[] v) {
        java.util.Arrays.sort(v);
        int c = 0;
        for (int i = 1; i < v.length; i++) {
            c += v[i] == v[i - 1] ? 1 : 0;
        }
        return c;
    }

    private static void incompatible(Runnable r, String want, String what) {
        try {
            r.run();
        } catch (IncompatibleSketchError e) {
            check(e.getMessage().equals(want), what + ": " + e.getMessage());
            return;
        }
        throw new AssertionError("self-test failed: " + what + " was not refused");
    }

    /**
     * Legacy samples (fingerprints h >>> 12, extension flag bit 1): bytes -> state -> bytes, frequency by
     * the legacy fingerprint, legacy with legacy joins and merges; a legacy partial flag (3) is refused;
     * a legacy sample with a layout-2 one is refused in join, merge and union.
     */
    private static void legacy() {
        SampleState old = SampleState.building(400, 7, false);
        old.legacy = true;
        SampleState now = SampleState.building(400, 7, false);
        for (long k = 0; k < 300; k++) {
            old.add(k, 1, 1 + k % 7);
            now.add(k, 1, 1 + k % 7);
        }
        byte[] ob = old.toBytes();
        byte[] nb = now.toBytes();
        SampleState back = SampleFormat.decode(ob);
        check(ob[SampleFormat.HEADER + 5] == SampleFormat.LEGACY && nb[SampleFormat.HEADER + 5] == 0 && back.legacy
                && !SampleFormat.decode(nb).legacy && java.util.Arrays.equals(back.toBytes(), ob)
                && !java.util.Arrays.equals(ob, nb), "a legacy sample: flag bit 1, bytes -> state -> bytes");
        SampleState.Fin f = back.sample();
        SampleRank r = SampleRank.of(7);
        long kept = -1;
        for (long k = 0; k < 300 && kept < 0; k++) {
            kept = f.fps[0] == r.fp(k, true) ? k : -1;
        }
        check(kept >= 0 && SampleEstimator.frequency(back, kept, 1, 0.95).value == 1 + kept % 7,
                "a legacy sample's frequency looks up h >>> 12");
        double self = SampleEstimator.selfJoin(back, 0.95).value;
        SampleState small = SampleState.building(400, 7, false);
        small.legacy = true;
        for (long k = 0; k < 5; k++) {
            small.add(k, 1, 2L);
        }
        byte[] sb = small.toBytes();
        SampleState nulls = SampleState.building(400, 7, false);
        nulls.legacy = true;
        nulls.add(null, 1, 3L);
        SampleState twice = SampleFormat.decode(sb).merge(SampleFormat.decode(nulls.toBytes()));
        check(SampleEstimator.join(back, SampleFormat.decode(ob), 0.95).value == self && twice.legacy
                && twice.sample().complete() && twice.totalWeight() == 10.0 && twice.nullWeight() == 3.0
                && SampleEstimator.frequency(twice, 3, 1, 0.95).value == 2.0, "legacy joins and merges legacy");
        try {
            SampleFormat.decode(sb).merge(SampleFormat.decode(sb));
            throw new AssertionError("self-test failed: two finished samples that kept every key merged");
        } catch (IncompatibleSketchError e) {
            check(e.getMessage().startsWith("cannot merge finished join samples: their keys may overlap"),
                    "finished samples holding keys never merge, complete or not: " + e.getMessage());
        }
        byte[] both = ob.clone();
        both[SampleFormat.HEADER + 5] = 3;
        java.util.zip.CRC32 crc = new java.util.zip.CRC32();
        crc.update(both, 0, both.length - 4);
        java.nio.ByteBuffer.wrap(both, both.length - 4, 4).order(java.nio.ByteOrder.LITTLE_ENDIAN)
                .putInt((int) crc.getValue());
        refused(() -> SampleFormat.decode(both), "extension flags 3 (a legacy piece)");
        for (boolean legacyFirst : new boolean[] {true, false}) {
            byte[] a = legacyFirst ? ob : nb;
            byte[] b = legacyFirst ? nb : ob;
            String pair = legacyFirst ? "('layout 1' != 'layout 2')" : "('layout 2' != 'layout 1')";
            incompatible(() -> SampleEstimator.join(a, b, 0.95, "skim_join_size"),
                    "cannot join sketches: rank hash differs " + pair, "join of legacy and layout-2 samples");
            incompatible(() -> SampleFormat.decode(a).merge(SampleFormat.decode(b)),
                    "cannot merge sketches: rank hash differs " + pair, "merge of legacy and layout-2 samples");
            incompatible(() -> SampleEstimator.union(a, b), "cannot merge sketches: rank hash differs " + pair,
                    "union of legacy and layout-2 samples");
        }
    }

    /**
     * Layout-2 samples written before the sign flag ({@code old}: golden-sample-preflag.tsv, the frozen
     * tests/core/sample/golden/preflag_*.bin) read and write back byte for byte, know their signs only when they kept
     * every key, and are the current golden samples ({@code now}) with the flag cleared.
     */
    public static void preflag(Map<String, byte[]> old, Map<String, byte[]> now) {
        check(old.size() >= 12 && now.keySet().containsAll(old.keySet()), "the pre-flag samples and their successors");
        for (Map.Entry<String, byte[]> e : old.entrySet()) {
            byte[] b = e.getValue();
            SampleState s = SampleFormat.decode(b);
            SampleState.Fin f = s.sample();
            boolean signs = f.complete();
            for (int i = 0; i < f.fps.length; i++) {
                signs &= f.total(i) >= 0;
            }
            check((b[7] & SampleFormat.SIGN) == 0 && java.util.Arrays.equals(s.toBytes(), b)
                    && s.nonnegative() == signs, "pre-flag sample " + e.getKey() + ": bytes -> state -> bytes, signs");
            SampleState cleared = SampleFormat.decode(now.get(e.getKey()));
            cleared.signFlag = false;
            check(java.util.Arrays.equals(cleared.toBytes(), b), "pre-flag sample " + e.getKey()
                    + " is the current one without the sign flag");
        }
    }

    /** Some layout-2 golden samples rebuilt from their rows (tests/core/sample_golden.py's builders). */
    public static boolean rebuiltCompact(Map<String, byte[]> blobs) {
        SampleState complete = SampleState.building(512, 41, false);
        for (long k : new long[] {3, 1, 4, 1, 5, 9, 2, 6}) {
            complete.add(k, 1, 1L);
        }
        complete.add(null, 1, 1L);
        SampleState wide = SampleState.building(400, 43, false);
        for (long k = 0; k < 40; k++) {
            wide.add(k, 1, k * (1L << 33) + 1);
        }
        SampleState extreme = SampleState.building(300, 43, false);
        long[] w = {-1, 1, -64, 64, -65, 63, 1L << 31, -(1L << 31), 127, 128, 300, -300, 1L << 56, -(1L << 56), 5,
            1L << 49, -(1L << 35)};
        for (int k = 0; k < 15 + w.length; k++) {
            extreme.add((long) k, 1, k < 15 ? (k % 2 == 0 ? 1 : -1) * ((1L << 62) + k) : w[k - 15]);
        }
        SampleState empty = SampleState.building(256, 42, false);
        return scaledRebuilt(blobs) && java.util.Arrays.equals(complete.toBytes(), blobs.get("complete"))
                && java.util.Arrays.equals(wide.toBytes(), blobs.get("wide"))
                && java.util.Arrays.equals(extreme.toBytes(), blobs.get("extreme_totals"))
                && java.util.Arrays.equals(empty.toBytes(), blobs.get("empty"));
    }

    /** A float total (k % 37 + 1) 2^shift, negative for every fifth key (sample_golden._scaled). */
    private static double scaledTotal(long k, int shift) {
        return Math.scalb((double) (k % 37 + 1), shift) * (k % 5 == 0 ? -1.0 : 1.0);
    }

    /**
     * The golden float samples beyond 2^-511 .. 2^511 (layout 3: a scale exponent) rebuilt on the JVM, and the
     * merge of finished pieces at three scale exponents (sample_golden._span_merged), byte for byte.
     */
    private static boolean scaledRebuilt(Map<String, byte[]> blobs) {
        if (!blobs.containsKey("float_tiny")) {
            return true;
        }
        SampleState tiny = SampleState.building(600, 44, true);
        SampleState huge = SampleState.building(600, 44, true);
        for (long k = 0; k < 500; k++) {
            tiny.add(k, 1, scaledTotal(k, -540));
            huge.add(k, 1, scaledTotal(k, 600));
        }
        SampleState[] piece = new SampleState[3];
        for (int i = 0; i < 3; i++) {
            piece[i] = SampleState.building(600, 44, true);
            piece[i].parts = 3;
            piece[i].covered = new java.util.BitSet();
            piece[i].covered.set(i);
        }
        SampleRank r = SampleRank.of(44);
        int[] shift = {-900, -600, -750};
        for (long k = 0; k < 3000; k++) {
            int p = SampleRank.partition(r.fp(k), 3);
            piece[p].add(k, 1, Math.scalb((double) (k % 37 + 1), shift[p]));
        }
        byte[] merged = SampleFormat.decode(piece[0].toBytes()).merge(SampleFormat.decode(piece[2].toBytes()))
                .merge(SampleFormat.decode(piece[1].toBytes())).toBytes();
        return layout(tiny.toBytes()) == SampleFormat.LAYOUT_SCALED
                && java.util.Arrays.equals(tiny.toBytes(), blobs.get("float_tiny"))
                && java.util.Arrays.equals(huge.toBytes(), blobs.get("float_huge"))
                && java.util.Arrays.equals(merged, blobs.get("float_span_merged"));
    }

    /** Some golden samples rebuilt from their rows (tests/core/sample_golden.py's builders) at the converted budget. */
    public static boolean rebuilt(Map<String, byte[]> converted) {
        SampleState complete = SampleState.building(100 + 12 * 34, 41, false);
        complete.legacy = true; // converted from layout 1: fingerprints h >>> 12
        for (long k : new long[] {3, 1, 4, 1, 5, 9, 2, 6}) {
            complete.add(k, 1, 1L);
        }
        complete.add(null, 1, 1L);
        complete.signFlag = false; // layout 1 has no sign flag: the converted sample's signs are unknown
        SampleState empty = SampleState.building(100 + 12 * 13, 42, false);
        empty.legacy = true;
        empty.signFlag = false;
        return java.util.Arrays.equals(complete.toBytes(), converted.get("complete"))
                && java.util.Arrays.equals(empty.toBytes(), converted.get("empty"));
    }
}
