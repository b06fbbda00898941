package io.skimsketch.spark.common;

import io.skimsketch.spark.KeyTypeError;
import java.math.BigDecimal;
import org.apache.spark.sql.types.Decimal;

/** The core's rules for key and weight values the SQL types do not settle (skimsketch/keys/). */
public final class Keys {
    /** 2**53: DOUBLE keys at or above it in magnitude cannot tell neighbouring integers apart. */
    static final double F64_EXACT_KEY = 9007199254740992.0;
    /** 2**24: FLOAT keys at or above it in magnitude cannot tell neighbouring integers apart. */
    static final double F32_EXACT_KEY = 16777216.0;
    private static final String FLOAT_KEY_REMEDY =
            "pass integer keys (e.g. the pandas 'Int64' dtype instead of float64 with NaN)";

    private Keys() {}

    /** A DOUBLE key as its integer (null for NaN, which is a null key); a KeyTypeError otherwise. */
    public static Long doubleKey(double f) {
        return integralKey(f, F64_EXACT_KEY, "float", "floats", 53);
    }

    /** A FLOAT key as its integer: integral and below 2**24 in magnitude (float_key_limit in keys.py). */
    public static Long floatKey(float f) {
        return integralKey(f, F32_EXACT_KEY, "float32", "float32 values", 24);
    }

    private static Long integralKey(double f, double limit, String name, String what, int exponent) {
        if (Double.isNaN(f)) {
            return null;
        }
        if (Math.abs(f) < limit && f == Math.floor(f)) {
            return (long) f;
        }
        if (Double.isFinite(f) && f == Math.floor(f)) {
            throw new KeyTypeError(name + " key " + pyRepr(f) + " is not below 2**" + exponent + " in magnitude, where "
                    + what + " cannot tell neighbouring integers apart: " + FLOAT_KEY_REMEDY);
        }
        throw new KeyTypeError("float key " + pyRepr(f)
                + " is not integral; only integer, str and bytes keys are supported");
    }

    /** An integral DECIMAL weight as an int64 (the core's message when it does not fit). */
    public static long decimalWeight(Decimal w) {
        BigDecimal d = w.toJavaBigDecimal();
        try {
            return d.longValueExact();
        } catch (ArithmeticException e) {
            throw new KeyTypeError("weights value " + d.toBigInteger() + " does not fit in int64");
        }
    }

    /** Python's repr of a str (printable ASCII and common escapes; for messages that match the core's). */
    public static String pyRepr(String x) {
        char q = x.indexOf('\'') >= 0 && x.indexOf('"') < 0 ? '"' : '\'';
        StringBuilder sb = new StringBuilder().append(q);
        x.codePoints().forEach(c -> sb.append(escape(c, q, false)));
        return sb.append(q).toString();
    }

    /** Python's repr of bytes. */
    public static String pyRepr(byte[] x) {
        boolean single = new String(x, java.nio.charset.StandardCharsets.ISO_8859_1).indexOf('\'') >= 0;
        char q = single && new String(x, java.nio.charset.StandardCharsets.ISO_8859_1).indexOf('"') < 0 ? '"' : '\'';
        StringBuilder sb = new StringBuilder("b").append(q);
        for (byte b : x) {
            sb.append(escape(b & 0xFF, q, true));
        }
        return sb.append(q).toString();
    }

    private static String escape(int c, char q, boolean bytes) {
        switch (c) {
            case '\\': return "\\\\";
            case '\n': return "\\n";
            case '\r': return "\\r";
            case '\t': return "\\t";
            default:
                if (c == q) {
                    return "\\" + q;
                }
                if (c >= 0x20 && c < 0x7F || (!bytes && c > 0xA0 && Character.isLetterOrDigit(c))) {
                    return new String(Character.toChars(c));
                }
                return c < 0x100 ? String.format("\\x%02x", c) : c < 0x10000 ? String.format("\\u%04x", c)
                        : String.format("\\U%08x", c);
        }
    }

    /** Python's repr of a float (for messages that match the core's). */
    public static String pyRepr(double f) {
        if (Double.isNaN(f)) {
            return "nan";
        }
        if (Double.isInfinite(f)) {
            return f > 0 ? "inf" : "-inf";
        }
        double a = Math.abs(f);
        if (a == 0 || (a >= 1e-4 && a < 1e16)) {
            String s = BigDecimal.valueOf(f).stripTrailingZeros().toPlainString();
            return s.contains(".") ? s : s + ".0";
        }
        String s = Double.toString(f); // d.dddE[-]x
        int e = s.indexOf('E');
        String mant = s.substring(0, e);
        if (mant.endsWith(".0")) {
            mant = mant.substring(0, mant.length() - 2);
        }
        int exp = Integer.parseInt(s.substring(e + 1));
        return mant + "e" + (exp < 0 ? "-" : "+") + (Math.abs(exp) < 10 ? "0" : "") + Math.abs(exp);
    }
}
