package io.skimsketch.spark;

import java.io.BufferedReader;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;

/**
 * The join sample's golden vectors (golden-sample-estimates.tsv, a copy of
 * tests/core/golden_sample/estimates.tsv, the core's answers) on the JVM: every blob reads and writes
 * back byte for byte, the rebuilt blobs equal the core's, and every estimate is the core's within 1e-9
 * relative (errors: the same class and message). Run from SelfTest.
 */
final class SampleSelfTest {
    private SampleSelfTest() {}

    static byte[] hex(String h) {
        byte[] out = new byte[h.length() / 2];
        for (int i = 0; i < out.length; i++) {
            out[i] = (byte) Integer.parseInt(h.substring(2 * i, 2 * i + 2), 16);
        }
        return out;
    }

    private static boolean close(double a, double b) {
        return a == b || Math.abs(a - b) <= 1e-9 * Math.max(Math.abs(a), Math.abs(b));
    }

    private static void check(boolean ok, String what) {
        if (!ok) {
            throw new AssertionError("self-test failed: " + what);
        }
    }

    /** Checks every vector; returns how many there were. */
    static int golden() throws Exception {
        InputStream in = SampleSelfTest.class.getResourceAsStream("golden-sample-estimates.tsv");
        check(in != null, "golden-sample-estimates.tsv is in the jar");
        Map<String, byte[]> blobs = new HashMap<>();
        int n = 0;
        try (BufferedReader r = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8))) {
            String line;
            while ((line = r.readLine()) != null) {
                if (line.isEmpty() || line.startsWith("#")) {
                    continue;
                }
                String[] f = line.split("\t", -1);
                if (f[0].equals("sample")) {
                    byte[] b = hex(f[2]);
                    check(java.util.Arrays.equals(SampleFormat.decode(b).toBytes(), b), "sample " + f[1]
                            + ": bytes -> state -> bytes");
                    blobs.put(f[1], b);
                    continue;
                }
                n++;
                String got;
                try {
                    got = answer(f[0], f[1], blobs.get(f[2]), blobs.get(f[3]), f[4]);
                } catch (IllegalArgumentException | ArithmeticException e) {
                    got = "!" + e.getClass().getSimpleName() + " " + e.getMessage();
                }
                String want = f[5];
                boolean ok;
                if (want.startsWith("!")) {
                    ok = want.equals(got);
                } else {
                    String[] w = want.split(" ");
                    String[] g = got.split(" ");
                    ok = w.length == g.length;
                    for (int i = 0; ok && i < w.length; i++) {
                        ok = w[i].equals(g[i]) || close(Double.parseDouble(w[i]), Double.parseDouble(g[i]));
                    }
                }
                check(ok, "golden sample vector " + String.join(" ", java.util.Arrays.copyOf(f, 5)) + ": expected "
                        + want + ", got " + got);
            }
        }
        check(rebuilt(blobs), "the core's golden samples rebuilt on the JVM");
        fuzz(blobs);
        bounded();
        return n;
    }

    private static String answer(String op, String conf, byte[] a, byte[] b, String key) {
        double c = conf.equals("-") ? 0.95 : Double.parseDouble(conf);
        Estimator.Est e;
        switch (op) {
            case "join":
                e = SampleEstimator.join(a, b, c, "skim_join_size");
                break;
            case "self":
                e = SampleEstimator.selfJoin(a, c, "skim_self_join_size");
                break;
            case "freq": {
                String kind = key.substring(0, key.indexOf(':'));
                String v = key.substring(key.indexOf(':') + 1);
                SampleState s = SampleFormat.decode(a);
                e = kind.equals("int") ? SampleEstimator.frequency(s, Long.parseLong(v), 1, c)
                        : SampleEstimator.frequency(s, Hashing.fingerprint64(hex(v)), 2, c);
                break;
            }
            default: {
                SampleState s = SampleFormat.decode(a);
                return "JoinSample " + s.m + " 1 " + Long.toUnsignedString(s.seed) + " " + Keys.pyRepr(s.totalWeight())
                        + " " + Keys.pyRepr(s.nullWeight()) + " " + a.length;
            }
        }
        return Keys.pyRepr(e.value) + " " + Keys.pyRepr(e.low) + " " + Keys.pyRepr(e.high) + " "
                + Keys.pyRepr(e.confidence) + " " + e.method;
    }

    /**
     * Altered bytes (one byte set to a random value, the CRC recomputed, so that the field checks run):
     * read back exactly, or refused with CorruptSketchError; never another exception.
     */
    private static void fuzz(Map<String, byte[]> blobs) {
        java.util.Random rnd = new java.util.Random(7);
        for (Map.Entry<String, byte[]> e : blobs.entrySet()) {
            for (int t = 0; t < 300; t++) {
                byte[] b = e.getValue().clone();
                int at = rnd.nextInt(b.length - 4);
                b[at] = (byte) rnd.nextInt(256);
                java.util.zip.CRC32 crc = new java.util.zip.CRC32();
                crc.update(b, 0, b.length - 4);
                java.nio.ByteBuffer.wrap(b, b.length - 4, 4).order(java.nio.ByteOrder.LITTLE_ENDIAN)
                        .putInt((int) crc.getValue());
                try {
                    check(java.util.Arrays.equals(SampleFormat.decode(b).toBytes(), b), "altered sample " + e.getKey()
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
     * at most m + 1 entries whatever the keys, and write the building sample's bytes.
     */
    private static void bounded() {
        int m = SampleState.capacity("self-test", 1024, false);
        SampleState whole = SampleState.building(m, 9, false);
        SampleState[] parts = {SampleState.totals(m, 9, false), SampleState.totals(m, 9, false)};
        java.util.Random rnd = new java.util.Random(3);
        for (long k = 0; k < 200_000; k++) {
            long t = 1 + (long) Math.floor(1.0 / (1e-6 + rnd.nextDouble())) % 5000; // heavy-tailed totals
            whole.add(k, 1, t);
            parts[(int) (k % 2)].offerTotal(k, 1, t);
        }
        check(parts[0].sel.size == m + 1 && parts[1].sel.size == m + 1, "totals buffers hold m + 1 entries");
        check(java.util.Arrays.equals(parts[0].merge(parts[1]).toBytes(), whole.toBytes()),
                "merged totals buffers write the building sample's bytes");
    }

    /** Some golden samples rebuilt from their rows (tests/core/sample_golden.py's builders). */
    private static boolean rebuilt(Map<String, byte[]> blobs) {
        SampleState complete = SampleState.building(SampleState.capacity("self-test", 512, false), 41, false);
        for (long k : new long[] {3, 1, 4, 1, 5, 9, 2, 6}) {
            complete.add(k, 1, 1L);
        }
        complete.add(null, 1, 1L);
        SampleState wide = SampleState.building(SampleState.capacity("self-test", 400, false), 43, false);
        for (long k = 0; k < 40; k++) {
            wide.add(k, 1, k * (1L << 33) + 1);
        }
        SampleState empty = SampleState.building(SampleState.capacity("self-test", 256, false), 42, false);
        return java.util.Arrays.equals(complete.toBytes(), blobs.get("complete"))
                && java.util.Arrays.equals(wide.toBytes(), blobs.get("wide"))
                && java.util.Arrays.equals(empty.toBytes(), blobs.get("empty"));
    }
}
