package io.skimsketch.spark.selftest;

import io.skimsketch.spark.common.Estimate;
import io.skimsketch.spark.common.Hashing;
import io.skimsketch.spark.common.Keys;
import io.skimsketch.spark.sketch.SketchState;
import io.skimsketch.spark.sketch.Spec;
import io.skimsketch.spark.sketch.estimate.Estimator;
import io.skimsketch.spark.sketch.estimate.PrefixSearch;
import io.skimsketch.spark.sketch.estimate.Skim;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;

/**
 * The hash family's pinned test vectors (the same as tests/core/test_hashing.py), checked on the JVM.
 * Run: java -cp skimsketch-spark.jar io.skimsketch.spark.selftest.SelfTest ; prints "ok N" or exits non-zero.
 */
public final class SelfTest {
    private static int checks;

    private SelfTest() {}

    private static void check(boolean ok, String what) {
        if (!ok) {
            throw new AssertionError("self-test failed: " + what);
        }
        checks++;
    }

    private static String sha256(byte[] b) throws Exception {
        StringBuilder sb = new StringBuilder();
        for (byte x : MessageDigest.getInstance("SHA-256").digest(b)) {
            sb.append(String.format("%02x", x & 0xFF));
        }
        return sb.toString();
    }

    public static void main(String[] args) throws Exception {
        long[] keys = {0, 1, 2, 12345, -1, (1L << 40) + 3, Long.MIN_VALUE, Long.MAX_VALUE};
        long[] words = {0xa68aaca1f4a68b15L, 0x876d1dbadbf16826L, 0x2074d43057a199f6L, 0x253335b21731cac3L,
            0xce663ac078e32f8cL, 0xdcc2c7ad5faa4f7L, 0xea9ace3a4bbc30b0L, 0x3996c753cfb7a593L};
        int[][] buckets = {{911, 718, 684, 181, 944, 671, 591, 622}, {301, 58, 253, 290, 612, 107, 832, 449},
            {64, 933, 641, 832, 851, 661, 591, 944}};
        int[][] signs = {{-1, -1, 1, 1, 1, -1, 1, -1}, {-1, -1, 1, 1, -1, 1, -1, 1}, {-1, 1, 1, 1, 1, 1, -1, 1}};
        Hashing.Family one = Hashing.family(7, 1);
        Hashing.Family two = Hashing.family(7, 2);
        long[] w1 = new long[1];
        long[] w2 = new long[2];
        for (int i = 0; i < keys.length; i++) {
            one.words(keys[i], w1);
            check(w1[0] == words[i], "word_0 of key " + keys[i]);
            two.words(keys[i], w2);
            for (int p = 0; p < 3; p++) {
                int u = Hashing.rowHash(w2, p);
                check(Hashing.bucket(u, 1000) == buckets[p][i], "bucket of key " + keys[i] + " in table " + p);
                check((u < 0 ? -1 : 1) == signs[p][i], "sign of key " + keys[i] + " in table " + p);
            }
        }
        check(Hashing.fingerprint64("skim".getBytes(StandardCharsets.UTF_8)) == 815987628662419427L,
                "fingerprint64(b'skim')");
        check(Hashing.fingerprint64("h\u00e9llo") == 5634419923683204234L, "fingerprint64('h\u00e9llo')");
        SketchState ints = new SketchState(Spec.hash("self-test", 64, 3, 7, false));
        for (long k : new long[] {1, 2, 3}) {
            ints.add(k, SketchState.KEY_INT, 1L);
        }
        check(sha256(ints.toBytes()).equals("f7b5dccd0794eac35eade59bebb7f0af964be9bd2a278fe77cb1853479d0d9d3"),
                "bytes of HashSketch(64, 3, 7).update([1, 2, 3])");
        SketchState strs = new SketchState(Spec.hash("self-test", 64, 3, 7, false));
        strs.add(Hashing.fingerprint64("a"), SketchState.KEY_BYTES, 1L);
        strs.add(Hashing.fingerprint64(new byte[] {'b'}), SketchState.KEY_BYTES, 1L);
        check(sha256(strs.toBytes()).equals("a72dced4272380362e23b01767c7d9d1f9bb5d991fa6b3c2fd94e9f4ba489c27"),
                "bytes of HashSketch(64, 3, 7).update(['a', b'b'])");
        check(java.util.Arrays.equals(SketchState.fromBytes(strs.toBytes()).toBytes(), strs.toBytes()),
                "bytes -> state -> bytes");
        Spec exact = Spec.forBytesRange("self-test", 16384, 0, false);
        check(exact.width == 814 && exact.depth == 5 && exact.range && exact.exact && exact.capacity() == 1016,
                "shape of SkimmedSketch.for_bytes(16384)");
        bothModes(exact, "df07036311fb5336947e86233a1de893391601371681f528a9a69d34494803ae",
                "b2f8c241af409e26c9e7abaa4e48f9a804790aac3eaf6b2dcbd5b6624ee8f2d2", "search='range'");
        range100(Spec.forBytesRange("self-test", 1024, 0, false),
                "1b123b8e76d82c455e03cd7d036b4bc35dedb9cb538f6a834bc4fd8326cce8ba", "search='range'");
        Spec dflt = Spec.forBytesPrefix("self-test", 16384, 0, false);
        check(dflt.width == 508 && dflt.depth == 5 && dflt.hierLg == 6 && dflt.hierDepth == 4,
                "shape of SkimmedSketch.for_bytes(16384, search='prefix', exact=False)");
        SketchState sk = new SketchState(dflt);
        for (long k : new long[] {1, 2, 3, -5, 1L << 40}) {
            sk.add(k, SketchState.KEY_INT, 1L);
        }
        check(sha256(sk.toBytes()).equals("78d201c90f232427288a7b0854924d06d7189cf96146bfdb75f3774bb20dee67"),
                "bytes of SkimmedSketch.for_bytes(16384, search='prefix', exact=False).update([1, 2, 3, -5, 2**40])");
        floatStrings(Spec.forBytesPrefix("self-test", 16384, 3, true),
                "667187dcf49697d428a17629429050d1101189f8b14f75ddb0aa08e7211eb66b", "search='prefix'");
        Spec virt = Spec.forBytes("self-test", 16384, 0, false);
        check(virt.width == 815 && virt.depth == 5 && virt.virtualLg == 20 && virt.exact && virt.capacity() == 1018,
                "shape of SkimmedSketch.for_bytes(16384) (the virtual layout)");
        bothModes(virt, "abda1656834bb71c8ece1d4473ae9500629d60aa252f4dc396b1fc451fab51ea",
                "d370b1af0a19a6696b0153b5373a34d66f51ab4b04178740d47a7f9ff377e289", "the virtual layout");
        range100(Spec.forBytes("self-test", 1024, 0, false),
                "684bdedbb075779d7fd200edc0cb64334dd30b13d50bd7ab9ae07a9f1f58cb53", "the virtual layout");
        floatStrings(Spec.forBytes("self-test", 16384, 3, true).withExact(false),
                "d759aba8b5846ea3e36406dbede9273e147e3c11bbe193402be1c9eeedcf145d", "the virtual layout");
        Spec fvirt = Spec.forBytes("self-test", 16384, 0, true);
        check(fvirt.width == virt.width && fvirt.depth == virt.depth && fvirt.capacity() == 2036,
                "shape of SkimmedSketch.for_bytes(16384, dtype='float64') (the count sketch's)");
        unitFloats(Spec.hash("self-test", 64, 3, 7, true),
                "43b7fd8156c221642607f0f59f3964d3aa4e26e62c692d0f6ea8869c3e99c8ab", "HashSketch(64, 3, 7, dtype='float64')");
        unitFloats(fvirt, "5ea81f98e5bcd5326116bd441758c42d8606adbfd4f601aaff6682334188387f",
                "SkimmedSketch.for_bytes(16384, dtype='float64')");
        unitFloats(fvirt.withExact(false), "2dbf1309af51e22c045f116708b317d8fc59d0a7317c9cdd6317cc80292368fd",
                "SkimmedSketch.for_bytes(16384, dtype='float64', exact=False)");
        int vectors = golden();
        int samples = SampleSelfTest.golden();
        System.out.println("ok " + checks + " (" + vectors + " golden estimate vectors) (" + samples
                + " golden sample vectors)");
    }

    /** The pinned bytes of range(100) into an exact-mode sketch too small to hold it (converted to counters). */
    private static void range100(Spec spec, String pin, String layout) throws Exception {
        SketchState st = new SketchState(spec);
        for (long k = 0; k < 100; k++) {
            st.add(k, SketchState.KEY_INT, 1L);
        }
        check(sha256(st.toBytes()).equals(pin), "bytes of SkimmedSketch.for_bytes(1024).update(range(100)) in "
                + layout + " (exact mode converted to counters)");
    }

    /** Unweighted rows into float counters (a SUM template used for a count side): [1, 2, 3, None]. */
    private static void unitFloats(Spec spec, String pin, String what) throws Exception {
        SketchState st = new SketchState(spec);
        for (long k = 1; k <= 3; k++) {
            st.add(k, SketchState.KEY_INT, 1L);
        }
        st.addNull(1L);
        check(sha256(st.toBytes()).equals(pin), "bytes of " + what + ".update([1, 2, 3, None])");
    }

    /** The pinned bytes of ['a', 'b', 'a'] with weights [0.5, 2.0, -1.25] (float counters, seed 3). */
    private static void floatStrings(Spec spec, String pin, String layout) throws Exception {
        SketchState st = new SketchState(spec);
        st.add(Hashing.fingerprint64("a"), SketchState.KEY_BYTES, 0.5);
        st.add(Hashing.fingerprint64("b"), SketchState.KEY_BYTES, 2.0);
        st.add(Hashing.fingerprint64("a"), SketchState.KEY_BYTES, -1.25);
        check(sha256(st.toBytes()).equals(pin), "bytes of SkimmedSketch.for_bytes(16384, seed=3, dtype='float64', "
                + "exact=False) in " + layout + " of strings");
    }

    /** The pinned bytes of spec (exact mode) and of its counter-mode twin after the same six updates. */
    private static void bothModes(Spec spec, String exactPin, String counterPin, String layout) throws Exception {
        long[] keys = {1, 2, 3, -5, 1L << 40, 7};
        for (int mode = 0; mode < 2; mode++) {
            SketchState st = new SketchState(spec.withExact(mode == 0));
            for (int i = 0; i < keys.length; i++) {
                st.add(keys[i], SketchState.KEY_INT, i < 5 ? 1L : 0L);
            }
            String what = "SkimmedSketch.for_bytes(16384" + (mode == 0 ? "" : ", exact=False") + ") in " + layout
                    + " .update([1, 2, 3, -5, 2**40, 7], weights=[1]*5 + [0])";
            check(sha256(st.toBytes()).equals(mode == 0 ? exactPin : counterPin), "bytes of " + what);
            check(java.util.Arrays.equals(SketchState.fromBytes(st.toBytes()).toBytes(), st.toBytes()),
                    "bytes -> state -> bytes of " + what);
        }
    }

    /** The bytes of a hex string. */
    static byte[] hex(String h) {
        byte[] out = new byte[h.length() / 2];
        for (int i = 0; i < out.length; i++) {
            out[i] = (byte) Integer.parseInt(h.substring(2 * i, 2 * i + 2), 16);
        }
        return out;
    }

    /** Equal, or both finite and within 1e-9 relative (an infinity is close only to itself). */
    static boolean close(double want, double got) {
        return want == got || Double.isFinite(want) && Double.isFinite(got)
                && Math.abs(want - got) <= 1e-9 * Math.max(Math.abs(want), Math.abs(got));
    }

    /** The vectors of golden-estimates.tsv (tests/spark_udaf/golden_estimates.py): the core's answers. */
    private static int golden() throws Exception {
        java.io.InputStream in = SelfTest.class.getResourceAsStream("golden-estimates.tsv");
        check(in != null, "golden-estimates.tsv is in the jar");
        java.util.Map<String, byte[]> blobs = new java.util.HashMap<>();
        int n = 0;
        try (java.io.BufferedReader r = new java.io.BufferedReader(new java.io.InputStreamReader(in,
                StandardCharsets.UTF_8))) {
            String line;
            while ((line = r.readLine()) != null) {
                if (line.isEmpty() || line.startsWith("#")) {
                    continue;
                }
                String[] f = line.split("\t", -1);
                if (f[0].equals("sketch")) {
                    blobs.put(f[1], hex(f[2]));
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
                if (f[0].equals("search")) {
                    ok = want.equals(got);
                } else if (f[0].equals("skim")) {
                    ok = sameSkim(want, got);
                } else if (want.startsWith("!") || f[0].equals("info")) {
                    ok = want.equals(got) || (f[0].equals("info") && sameInfo(want, got));
                } else {
                    String[] w = want.split(" ");
                    String[] g = got.split(" ");
                    ok = g.length == 5 && w[4].equals(g[4]);
                    for (int i = 0; ok && i < 4; i++) {
                        ok = close(Double.parseDouble(w[i]), Double.parseDouble(g[i]));
                    }
                }
                check(ok, "golden vector " + f[0] + " " + f[1] + " " + f[2] + " " + f[3] + " " + f[4] + ": expected "
                        + want + ", got " + got);
            }
        }
        return n;
    }

    /** The same dense keys and report decisions (exactly) with values within 1e-9 (golden op "skim"). */
    private static boolean sameSkim(String want, String got) {
        String[] w = want.split(" ");
        String[] g = got.split(" ");
        if (w.length != g.length) {
            return false;
        }
        for (int i = 0; i < w.length; i++) {
            if (w[i].equals("none") || g[i].equals("none")) {
                return w[i].equals(g[i]);
            }
            int cw = w[i].indexOf(':');
            int cg = g[i].indexOf(':');
            if (!w[i].substring(0, cw).equals(g[i].substring(0, cg))
                    || !close(Double.parseDouble(w[i].substring(cw + 1)), Double.parseDouble(g[i].substring(cg + 1)))) {
                return false;
            }
        }
        return true;
    }

    /** The skim of a counter-mode skimmed sketch as the golden "skim" line (golden_estimates.skim_line). */
    private static String skimLine(SketchState s) {
        Skim k = Skim.of(s, "skim");
        boolean[] doubt = k.doubtful();
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < k.keys.length; i++) {
            sb.append(i > 0 ? " " : "").append(doubt[i] ? "?" : "").append(k.keys[i]).append(':')
                    .append(Keys.pyRepr(k.values[i]));
        }
        return k.keys.length == 0 ? "none" : sb.toString();
    }

    private static boolean sameInfo(String want, String got) {
        String[] w = want.split(" ");
        String[] g = got.split(" ");
        if (w.length != g.length) {
            return false;
        }
        for (int i = 0; i < w.length; i++) {
            if (!(w[i].equals(g[i]) || (i == 4 || i == 5) && close(Double.parseDouble(w[i]),
                    Double.parseDouble(g[i])))) {
                return false;
            }
        }
        return true;
    }

    private static String answer(String op, String conf, byte[] a, byte[] b, String key) {
        double c = conf.equals("-") ? 0.95 : Double.parseDouble(conf);
        SketchState sa = SketchState.fromBytes(a);
        Estimate e;
        switch (op) {
            case "join":
                e = Estimator.join(sa, SketchState.fromBytes(b), c, "skim_join_size");
                break;
            case "self":
                e = Estimator.selfJoin(sa, c, "skim_self_join_size");
                break;
            case "skim":
                return skimLine(sa);
            case "search": {
                Spec s = sa.spec();
                double[][] counters = sa.counterRows();
                long[] keys = new PrefixSearch(s.seed, s.hierLg, s.hierDepth).search(sa.hierRows(),
                        Skim.searchFloor(sa, counters), Integer.parseInt(key.substring(4)));
                long h = 0;
                for (long k : keys) {
                    h = h * 31 + k;
                }
                return keys.length + " " + h;
            }
            case "freq": {
                String kind = key.substring(0, key.indexOf(':'));
                String v = key.substring(key.indexOf(':') + 1);
                String fn = "skim_frequency";
                if (kind.equals("int")) {
                    e = Estimator.frequency(sa, Long.parseLong(v), SketchState.KEY_INT, v, c, fn);
                } else if (kind.equals("float")) {
                    double d = Double.parseDouble(v);
                    e = Estimator.frequency(sa, Keys.doubleKey(d), SketchState.KEY_INT, Keys.pyRepr(d), c, fn);
                } else {
                    byte[] raw = hex(v);
                    String repr = kind.equals("str") ? Keys.pyRepr(new String(raw, StandardCharsets.UTF_8))
                            : Keys.pyRepr(raw);
                    e = Estimator.frequency(sa, Hashing.fingerprint64(raw), SketchState.KEY_BYTES, repr, c, fn);
                }
                break;
            }
            default: {
                Spec s = sa.spec();
                return Spec.kindName(s.kind) + " " + s.width + " " + s.depth + " " + Long.toUnsignedString(s.seed)
                        + " " + Keys.pyRepr(sa.totalWeight()) + " " + Keys.pyRepr(sa.nullWeight()) + " "
                        + sa.stateBytes();
            }
        }
        return Keys.pyRepr(e.value) + " " + Keys.pyRepr(e.low) + " " + Keys.pyRepr(e.high) + " "
                + Keys.pyRepr(e.confidence) + " " + e.method;
    }
}
