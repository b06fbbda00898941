package io.skimsketch.spark.sql;

import io.skimsketch.spark.common.Keys;
import io.skimsketch.spark.sql.NamedCall;
import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.spark.sql.AnalysisException;
import org.apache.spark.sql.catalyst.expressions.Cast;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.NamedArgumentExpression;
import org.apache.spark.sql.types.BinaryType;
import org.apache.spark.sql.types.ByteType;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.DecimalType;
import org.apache.spark.sql.types.DoubleType;
import org.apache.spark.sql.types.FloatType;
import org.apache.spark.sql.types.IntegerType;
import org.apache.spark.sql.types.LongType;
import org.apache.spark.sql.types.NullType;
import org.apache.spark.sql.types.ShortType;
import org.apache.spark.sql.types.StringType;
import scala.Option;
import scala.collection.immutable.Seq;
import scala.jdk.javaapi.CollectionConverters;

/**
 * The SQL functions' arguments as written: positional, then named ones ({@code name => value}), checked
 * against the allowed names; and the checks every builder shares (constant parameters, key and weight
 * types, casts), whose errors are AnalysisExceptions naming the function ({@link #error}).
 */
final class Args {
    final String fn;
    final List<Expression> positional = new ArrayList<>();
    final Map<String, Expression> named = new LinkedHashMap<>();
    /** The arguments as written (a column's default name shows them, NamedCall.shown). */
    final Seq<Expression> written;

    Args(String fn, Seq<Expression> argSeq, Set<String> allowed) {
        this.fn = fn;
        this.written = argSeq;
        for (Expression e : CollectionConverters.asJava(argSeq)) {
            if (e instanceof NamedArgumentExpression) {
                NamedArgumentExpression n = (NamedArgumentExpression) e;
                String name = n.key().toLowerCase(java.util.Locale.ROOT);
                if (!allowed.contains(name)) {
                    throw error(fn + ": unknown parameter " + n.key() + " (parameters: "
                            + String.join(", ", allowed) + ")");
                }
                if (named.put(name, n.value()) != null) {
                    throw error(fn + ": parameter " + name + " is given twice");
                }
            } else {
                if (!named.isEmpty()) {
                    throw error(fn + ": a positional argument follows a named one");
                }
                positional.add(e);
            }
        }
    }

    /** Names the positional constants (in order) and adds the named ones; a name given twice is an error. */
    Map<String, Expression> constants(List<Expression> values, String... names) {
        Map<String, Expression> out = new HashMap<>();
        for (int i = 0; i < values.size(); i++) {
            out.put(names[i], values.get(i));
        }
        for (Map.Entry<String, Expression> x : named.entrySet()) {
            if (out.containsKey(x.getKey())) {
                throw error(fn + ": parameter " + x.getKey() + " is given by position and by name");
            }
            out.put(x.getKey(), x.getValue());
        }
        return out;
    }

    static final String KEY_TYPES = "tinyint, smallint, int, bigint, float, double (integral values), "
            + "string, binary";
    private static final String WEIGHT_TYPES = "tinyint, smallint, int, bigint, float, double, decimal(p,s)";

    /**
     * Whether weights of type wt are fractional: FLOAT, DOUBLE and DECIMAL(p, s > 0) take float64 counters
     * (the core's Arrow rule); TINYINT to BIGINT, NULL and DECIMAL(p, 0) are integral. Any other type is an
     * error that names the supported ones.
     */
    static boolean fractionalWeight(String fn, DataType wt) {
        if (wt instanceof FloatType || wt instanceof DoubleType
                || (wt instanceof DecimalType && ((DecimalType) wt).scale() > 0)) {
            return true;
        }
        if (wt instanceof DecimalType || wt instanceof ByteType || wt instanceof ShortType
                || wt instanceof IntegerType || wt instanceof LongType || wt instanceof NullType) {
            return false;
        }
        throw error(fn + ": weight has type " + wt.simpleString() + "; supported weight types are "
                + WEIGHT_TYPES + " (cast it, e.g. CAST(weight AS DOUBLE))");
    }

    /** The type integral weights are cast to: DECIMAL(p, 0) as it is (exact int64 or an error, Keys.decimalWeight),
     * the others BIGINT. */
    static DataType integralWeightType(DataType wt) {
        return wt instanceof DecimalType ? wt : DataTypes.LongType;
    }

    /**
     * Throws an AnalysisException (DATATYPE_MISMATCH.TYPE_CHECK_FAILURE_WITH_HINT) whose message is
     * {@code msg}, which starts with the function's name and a colon; never returns (the exception is
     * checked in Java, so it is thrown undeclared).
     */
    @SuppressWarnings("unchecked")
    static RuntimeException error(String msg) {
        int colon = msg.indexOf(':');
        String fn = colon > 0 ? msg.substring(0, colon) : "skim";
        scala.collection.immutable.Map<String, String> params = (scala.collection.immutable.Map<String, String>)
                (Object) scala.collection.immutable.Map$.MODULE$.empty()
                        .updated("sqlExpr", "\"" + fn + "\"")
                        .updated("msg", colon > 0 ? msg.substring(colon + 2) : msg)
                        .updated("hint", "");
        throw Args.<RuntimeException>undeclared(
                new AnalysisException("DATATYPE_MISMATCH.TYPE_CHECK_FAILURE_WITH_HINT", params));
    }

    @SuppressWarnings("unchecked")
    private static <E extends Throwable> E undeclared(Throwable t) throws E {
        throw (E) t;
    }

    static <T> Seq<T> seq(List<T> xs) {
        return CollectionConverters.asScala(xs).toSeq();
    }


    static long constant(String fn, String name, Expression e) {
        if (!e.foldable()) {
            throw error(fn + ": parameter " + name + " must be a constant, got " + e.sql());
        }
        Object v = e.eval(null);
        long x;
        if (v instanceof Integer || v instanceof Long || v instanceof Short || v instanceof Byte) {
            x = ((Number) v).longValue();
        } else if (name.equals("seed") && v instanceof org.apache.spark.sql.types.Decimal) {
            BigDecimal d = ((org.apache.spark.sql.types.Decimal) v).toJavaBigDecimal();
            if (d.scale() > 0 && d.stripTrailingZeros().scale() > 0 || d.signum() < 0
                    || d.toBigInteger().bitLength() > 64) {
                throw error(fn + ": seed must be an integer in [0, 2**64), got " + d.toPlainString());
            }
            return d.toBigInteger().longValue(); // the u64 seed's bits
        } else {
            throw error(fn + ": parameter " + name + " must be an integer constant, got " + e.sql());
        }
        if (name.equals("seed") && x < 0) {
            throw error(fn + ": seed must be >= 0, got " + x);
        }
        return x;
    }


    /** e as type t (itself when it already has that type). */
    static Expression castTo(Expression e, DataType t) {
        return e.dataType().equals(t) ? e : new Cast(e, t, Option.empty());
    }


    static void requireBinary(String fn, String name, Expression e) {
        if (!(e.dataType() instanceof BinaryType || e.dataType() instanceof NullType)) {
            throw error(fn + ": " + name + " has type " + e.dataType().simpleString()
                    + "; it must be BINARY sketch bytes (from skim_sketch_agg, skim_hash_sketch_agg, skim_union_agg)");
        }
    }


    /**
     * Refuses a STRING key in a collation other than UTF8_BINARY (UTF8_LCASE, UNICODE, UNICODE_CI, ..., the
     * RTRIM ones): keys it calls equal may differ in bytes, and the summaries hash a key's bytes, so 'Alice'
     * and 'alice' would count as two keys where Spark's join under that collation matches them. The message
     * is the core's (spark_udaf._common.collation_error).
     */
    static void requireBinaryCollation(String fn, DataType kt) {
        if (kt instanceof StringType && !((StringType) kt).isUTF8BinaryCollation()) {
            String c = ((StringType) kt).collationName();
            throw error(fn + ": key has type " + kt.simpleString() + ": keys equal under collation " + c
                    + " ('Alice' and 'alice' under UTF8_LCASE) may differ in bytes, and the summaries hash a key's "
                    + "bytes, so they would count as different keys; normalise the keys first, e.g. "
                    + "lower(key) COLLATE UTF8_BINARY for a case-insensitive collation (or key COLLATE UTF8_BINARY "
                    + "to count each spelling as its own key)");
        }
    }

    /** The type a builder reads a key column as: BINARY for strings and binary (hashed through fingerprint64),
     * BIGINT for integers, and FLOAT/DOUBLE as they are (integral values below 2^24/2^53, checked per row by
     * Keys.floatKey/doubleKey); another type is refused naming the supported ones. */
    static DataType keyAs(String fn, DataType kt) {
        requireBinaryCollation(fn, kt);
        if (kt instanceof StringType || kt instanceof BinaryType) {
            return DataTypes.BinaryType;
        }
        if (kt instanceof ByteType || kt instanceof ShortType || kt instanceof IntegerType || kt instanceof LongType
                || kt instanceof NullType) {
            return DataTypes.LongType;
        }
        if (kt instanceof FloatType || kt instanceof DoubleType) {
            return kt;
        }
        throw error(fn + ": key has type " + kt.simpleString() + "; supported key types are " + KEY_TYPES
                + " (cast it, e.g. CAST(key AS BIGINT) or CAST(key AS STRING))");
    }
}
