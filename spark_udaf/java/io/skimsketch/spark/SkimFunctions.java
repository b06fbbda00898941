package io.skimsketch.spark;

import io.skimsketch.spark.common.Keys;
import io.skimsketch.spark.sketch.SketchState;
import io.skimsketch.spark.sketch.Spec;
import io.skimsketch.spark.sql.BuildAggregate;
import io.skimsketch.spark.sql.EstimateFunctions;
import io.skimsketch.spark.sql.NamedCall;
import io.skimsketch.spark.sql.SampleSql;
import io.skimsketch.spark.sql.SampleUnionAgg;
import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.spark.sql.AnalysisException;
import org.apache.spark.sql.catalyst.FunctionIdentifier;
import org.apache.spark.sql.catalyst.analysis.FunctionRegistry;
import org.apache.spark.sql.catalyst.expressions.Cast;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.ExpressionInfo;
import org.apache.spark.sql.catalyst.expressions.If;
import org.apache.spark.sql.catalyst.expressions.IsNaN;
import org.apache.spark.sql.catalyst.expressions.Literal;
import org.apache.spark.sql.catalyst.expressions.NamedArgumentExpression;
import org.apache.spark.sql.catalyst.expressions.objects.StaticInvoke;
import org.apache.spark.sql.types.AbstractDataType;
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
import scala.Function1;
import scala.Option;
import scala.Tuple3;
import scala.collection.immutable.Seq;
import scala.jdk.javaapi.CollectionConverters;

/**
 * The skim_* SQL functions: builders from argument expressions. Constant parameters are read at
 * analysis time (so a global aggregate over zero rows still knows its sketch's shape) and may be
 * named ({@code nbytes => 16384}).
 *
 * <pre>
 * skim_sketch_agg(key [, weight] [, nbytes [, seed] | width, depth, seed])  default: 16384 bytes, seed 0
 * skim_hash_sketch_agg(key [, weight], width, depth [, seed])
 * skim_sketch_like_agg(key [, weight], template)
 * skim_union_agg(sketch), skim_union(a, b)
 * skim_join_size(a, b [, confidence]), skim_join_size_bounds(a, b [, confidence])
 * skim_self_join_size(a [, confidence]), skim_self_join_size_bounds(a [, confidence])
 * skim_frequency(a, key [, confidence]), skim_sketch_info(a)
 * </pre>
 */
public final class SkimFunctions {
    public static final long DEFAULT_NBYTES = 16384;
    public static final long DEFAULT_SEED = 0;
    public static final double DEFAULT_CONFIDENCE = 0.95;
    /** The smallest byte budget a SQL builder accepts: about 45 counters a table at depth 5. */
    public static final long MIN_NBYTES = 1024;
    /** The smallest width a SQL builder accepts (a narrower table's error is most of its answer). */
    public static final long MIN_WIDTH = 16;
    /** The most counters a SQL builder holds: 2^27 (1 GiB as int64 in memory; one BINARY value holds them). */
    public static final long MAX_COUNTERS = 1L << 27;
    private static final String KEY_TYPES = "tinyint, smallint, int, bigint, float, double (integral values), "
            + "string, binary";
    private static final String WEIGHT_TYPES = "tinyint, smallint, int, bigint, float, double, decimal(p,s)";

    /**
     * Whether weights of type wt are fractional: FLOAT, DOUBLE and DECIMAL(p, s > 0) take float64 counters
     * (the core's Arrow rule); TINYINT to BIGINT, NULL and DECIMAL(p, 0) are integral. Any other type is an
     * error that names the supported ones.
     */
    public static boolean fractionalWeight(String fn, DataType wt) {
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
    public static DataType integralWeightType(DataType wt) {
        return wt instanceof DecimalType ? wt : DataTypes.LongType;
    }
    private static final String SK = "SELECT day, skim_sketch_agg(user_id) AS sk, count(*) FROM events GROUP BY day";

    private SkimFunctions() {}

    private interface Builder {
        Expression build(Seq<Expression> args);
    }

    /** (name, info, builder) of every function. */
    public static List<Tuple3<FunctionIdentifier, ExpressionInfo, Function1<Seq<Expression>, Expression>>> all() {
        List<Tuple3<FunctionIdentifier, ExpressionInfo, Function1<Seq<Expression>, Expression>>> out =
                new ArrayList<>();
        out.add(entry("skim_sketch_agg", "agg_funcs",
                "skim_sketch_agg(key [, weight] [, nbytes [, seed]]) - the library's default sketch of key, "
                + "SkimmedSketch.for_bytes(nbytes, seed) (nbytes 16384 and seed 0 by default; nbytes >= "
                + MIN_NBYTES + "), as BINARY; skim_sketch_agg(key [, weight], width, depth, seed) - "
                + "SkimmedSketch(width, depth, seed)",
                "key: the join key (integer types, float/double holding integers, string, binary); weight: an "
                + "optional numeric column (SUM sketches); nbytes, seed, width, depth: integer constants, "
                + "positional or named",
                new String[] {SK, "SELECT skim_sketch_agg(user_id, nbytes => 32768, seed => 7) FROM events"},
                args -> build("skim_sketch_agg", args, false, null)));
        out.add(entry(SampleSql.NAME, "agg_funcs", SampleSql.USAGE, SampleSql.ARGS, SampleSql.EXAMPLES, SampleSql::build));
        out.add(entry("skim_hash_sketch_agg", "agg_funcs",
                "skim_hash_sketch_agg(key [, weight], width, depth [, seed]) - a hash (Fast-AGMS) sketch of key, "
                + "HashSketch(width, depth, seed) (width >= " + MIN_WIDTH + "), as BINARY",
                "key, weight: as skim_sketch_agg; width, depth, seed: integer constants, positional or named",
                new String[] {"SELECT skim_hash_sketch_agg(user_id, 2048, 5) FROM events",
                    "SELECT skim_hash_sketch_agg(user_id, width => 2048, depth => 5, seed => 1) FROM events"},
                args -> build("skim_hash_sketch_agg", args, true, null)));
        out.add(entry("skim_sketch_like_agg", "agg_funcs",
                "skim_sketch_like_agg(key [, weight], template) - a sketch of key with the kind, shape, seed and "
                + "counter type of the constant sketch bytes template, as BINARY",
                "template: constant sketch bytes (hash or skimmed)",
                new String[] {"SELECT skim_sketch_like_agg(user_id, X'...') FROM events"}, SkimFunctions::like));
        out.add(entry("skim_union_agg", "agg_funcs",
                "skim_union_agg(sketch) - the merge of the sketches (NULLs skipped; NULL when there is none)",
                "sketch: BINARY sketch bytes of one kind, shape and seed",
                new String[] {"SELECT skim_union_agg(sk) FROM daily WHERE day BETWEEN '2026-11-01' AND '2026-11-07'"},
                SkimFunctions::unionAgg));
        out.add(entry("skim_union", "misc_funcs", "skim_union(a, b) - the merge of two sketches (NULL if either is "
                + "NULL)", "a, b: BINARY sketch bytes", new String[] {"SELECT skim_union(a.sk, b.sk) FROM a, b"},
                SkimFunctions::union));
        String est = "a, b: BINARY sketches of one kind, shape and seed; confidence: a constant in (0, 1), "
                + "0.95 by default";
        out.add(entry("skim_join_size", "misc_funcs", "skim_join_size(a, b [, confidence]) - the estimated size of "
                + "the equi-join of the sketched columns (SUM of weights with weighted sketches), as DOUBLE", est,
                new String[] {"SELECT skim_join_size(o.sk, v.sk) FROM o CROSS JOIN v"},
                args -> estimate("skim_join_size", args, 2, false, false)));
        out.add(entry("skim_join_size_bounds", "misc_funcs", "skim_join_size_bounds(a, b [, confidence]) - the "
                + "join-size estimate with its interval, STRUCT<value, low, high, confidence, method>", est,
                new String[] {"SELECT skim_join_size_bounds(o.sk, v.sk, confidence => 0.99).low FROM o CROSS JOIN v"},
                args -> estimate("skim_join_size_bounds", args, 2, false, true)));
        String one = "a: BINARY sketch bytes; confidence: a constant in (0, 1), 0.95 by default";
        out.add(entry("skim_self_join_size", "misc_funcs", "skim_self_join_size(a [, confidence]) - the estimated "
                + "self-join size (sum of squared frequencies), as DOUBLE", one,
                new String[] {"SELECT skim_self_join_size(sk) FROM daily"},
                args -> estimate("skim_self_join_size", args, 1, false, false)));
        out.add(entry("skim_self_join_size_bounds", "misc_funcs", "skim_self_join_size_bounds(a [, confidence]) - "
                + "the self-join size with its interval, STRUCT<value, low, high, confidence, method>", one,
                new String[] {"SELECT skim_self_join_size_bounds(sk) FROM daily"},
                args -> estimate("skim_self_join_size_bounds", args, 1, false, true)));
        out.add(entry("skim_frequency", "misc_funcs", "skim_frequency(a, key [, confidence]) - the estimated "
                + "frequency (summed weight) of key in the sketch, as DOUBLE", "a: BINARY sketch bytes; key: a key "
                + "of the sketch's type (integer or string/binary)",
                new String[] {"SELECT skim_frequency(sk, 42) FROM daily"},
                args -> estimate("skim_frequency", args, 1, true, false)));
        out.add(entry("skim_sketch_info", "misc_funcs", "skim_sketch_info(a) - the sketch's description, "
                + "STRUCT<kind, width, depth, seed, total_weight, null_weight, nbytes>", "a: BINARY sketch bytes",
                new String[] {"SELECT skim_sketch_info(sk).total_weight FROM daily"}, SkimFunctions::info));
        return out;
    }

    private static Tuple3<FunctionIdentifier, ExpressionInfo, Function1<Seq<Expression>, Expression>> entry(
            String name, String group, String usage, String arguments, String[] examples, Builder builder) {
        StringBuilder ex = new StringBuilder("\n    Examples:\n");
        for (String e : examples) {
            ex.append("      > ").append(e).append(";\n");
        }
        ex.append("  ");
        String use = usage + ". Example: " + examples[0];
        ExpressionInfo info = new ExpressionInfo(SkimFunctions.class.getName(), null, name, use,
                "\n    Arguments:\n      * " + arguments + "\n  ", ex.toString(), "", group, "", "", "");
        Function1<Seq<Expression>, Expression> f = builder::build;
        return new Tuple3<>(new FunctionIdentifier(name), info, f);
    }

    /** Registers the functions in a running session (what the extension does at session start). */
    public static String[] register(org.apache.spark.sql.classic.SparkSession spark) {
        FunctionRegistry registry = spark.sessionState().functionRegistry();
        List<String> names = new ArrayList<>();
        SampleSql.addRule(spark); // skim_sample_agg's scale rule
        for (Tuple3<FunctionIdentifier, ExpressionInfo, Function1<Seq<Expression>, Expression>> f : all()) {
            registry.createOrReplaceTempFunction(f._1().funcName(), f._3(), "java_udf");
            names.add(f._1().funcName());
        }
        // createOrReplaceTempFunction records no usage: re-register each temporary entry (its qualified
        // identifier) with the function's own ExpressionInfo, so DESCRIBE FUNCTION shows usage and examples
        Map<String, ExpressionInfo> infos = new HashMap<>();
        for (Tuple3<FunctionIdentifier, ExpressionInfo, Function1<Seq<Expression>, Expression>> f : all()) {
            infos.put(f._1().funcName(), f._2());
        }
        scala.collection.Iterator<FunctionIdentifier> ids = registry.listFunction().iterator();
        List<FunctionIdentifier> temporary = new ArrayList<>();
        while (ids.hasNext()) {
            FunctionIdentifier id = ids.next();
            boolean builtin = id.database().isDefined() && id.database().get().equals("builtin");
            if (infos.containsKey(id.funcName()) && !builtin) {
                temporary.add(id);
            }
        }
        for (FunctionIdentifier id : temporary) {
            Option<Function1<Seq<Expression>, Expression>> builder = registry.lookupFunctionBuilder(id);
            if (builder.isDefined()) {
                registry.registerFunction(id, infos.get(id.funcName()), builder.get());
            }
        }
        return names.toArray(new String[0]);
    }

    /**
     * Removes the session-extension (system.builtin) versions of these functions, which Spark
     * resolves before temporary ones: a Python registration of the same names then takes effect.
     */
    public static void dropInjected(org.apache.spark.sql.classic.SparkSession spark, List<String> names) {
        FunctionRegistry registry = spark.sessionState().functionRegistry();
        for (String n : names) {
            registry.dropFunction(new FunctionIdentifier(n, Option.apply("builtin"), Option.apply("system")));
        }
    }

    /**
     * Throws an AnalysisException (DATATYPE_MISMATCH.TYPE_CHECK_FAILURE_WITH_HINT) whose message is
     * {@code msg}, which starts with the function's name and a colon; never returns (the exception is
     * checked in Java, so it is thrown undeclared).
     */
    @SuppressWarnings("unchecked")
    public static RuntimeException error(String msg) {
        int colon = msg.indexOf(':');
        String fn = colon > 0 ? msg.substring(0, colon) : "skim";
        scala.collection.immutable.Map<String, String> params = (scala.collection.immutable.Map<String, String>)
                (Object) scala.collection.immutable.Map$.MODULE$.empty()
                        .updated("sqlExpr", "\"" + fn + "\"")
                        .updated("msg", colon > 0 ? msg.substring(colon + 2) : msg)
                        .updated("hint", "");
        throw SkimFunctions.<RuntimeException>undeclared(
                new AnalysisException("DATATYPE_MISMATCH.TYPE_CHECK_FAILURE_WITH_HINT", params));
    }

    @SuppressWarnings("unchecked")
    private static <E extends Throwable> E undeclared(Throwable t) throws E {
        throw (E) t;
    }

    private static <T> Seq<T> seq(List<T> xs) {
        return CollectionConverters.asScala(xs).toSeq();
    }

    /** Positional arguments, then named ones ({@code name => value}), checked against the allowed names. */
    public static final class Args {
        final String fn;
        public final List<Expression> positional = new ArrayList<>();
        public final Map<String, Expression> named = new LinkedHashMap<>();
        /** The arguments as written (a column's default name shows them, NamedCall.shown). */
        final Seq<Expression> written;

        public Args(String fn, Seq<Expression> argSeq, Set<String> allowed) {
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
        public Map<String, Expression> constants(List<Expression> values, String... names) {
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
    }

    public static long constant(String fn, String name, Expression e) {
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

    private static Expression like(Seq<Expression> argSeq) {
        String fn = "skim_sketch_like_agg";
        Args a = new Args(fn, argSeq, Set.of("key", "weight", "template"));
        List<Expression> args = a.positional;
        Expression t = a.named.remove("template");
        if (t == null && args.size() >= 2) {
            t = args.remove(args.size() - 1);
        }
        if (t == null || !t.foldable() || !(t.dataType() instanceof BinaryType)) {
            throw error(fn + ": expected (key [, weight], template) with template constant sketch bytes");
        }
        Object v = t.eval(null);
        if (v == null) {
            throw error(fn + ": template must not be NULL");
        }
        Spec spec;
        SketchState tmpl;
        try {
            tmpl = SketchState.fromBytes((byte[]) v);
            spec = tmpl.spec();
        } catch (IllegalArgumentException e) {
            throw error(fn + ": template: " + e.getMessage());
        }
        if (!tmpl.isEmpty()) { // the Python builders' rule (spark_udaf.parquet.require_template), same message
            throw error(fn + ": template holds data (" + tmpl.weightsRepr() + "): builders take an empty template "
                    + "and return a new sketch, never filling the one given; pass template.empty_like() and merge "
                    + "the result into it (template.merge(result))");
        }
        if (spec.kind == SketchState.KIND_AGMS) {
            throw error(fn + ": template is an AGMSSketch, which the SQL builders do not build (hash or skimmed)");
        }
        return build(fn, a, false, spec);
    }

    private static Expression build(String fn, Seq<Expression> argSeq, boolean hash, Spec template) {
        Set<String> names = hash ? Set.of("key", "weight", "width", "depth", "seed")
                : Set.of("key", "weight", "nbytes", "seed", "width", "depth");
        return build(fn, new Args(fn, argSeq, names), hash, template);
    }

    private static Expression build(String fn, Args a, boolean hash, Spec template) {
        List<Expression> args = a.positional;
        Expression key = a.named.remove("key");
        if (key == null) {
            if (args.isEmpty()) {
                throw error(fn + ": needs a key column: " + fn + "(key [, weight], ...)");
            }
            key = args.remove(0);
        }
        Expression weight = a.named.remove("weight");
        if (weight == null && !args.isEmpty() && !args.get(0).foldable()) {
            weight = args.remove(0);
        }
        DataType keyAs = keyAs(fn, key.dataType());
        boolean bytesKeys = keyAs instanceof BinaryType;
        boolean isFloat = false;
        DataType weightAs = DataTypes.LongType;
        if (weight != null) {
            isFloat = fractionalWeight(fn, weight.dataType());
            if (!isFloat) {
                weightAs = integralWeightType(weight.dataType());
            }
        }
        Spec spec;
        int n = args.size();
        if (template != null) {
            if (n != 0 || !a.named.isEmpty()) {
                throw error(fn + ": expected (key [, weight], template), got more parameters");
            }
            if (isFloat && !template.isFloat) {
                String t = weight.dataType().simpleString();
                throw error(fn + ": " + (weight.dataType() instanceof DecimalType
                        ? "weights have type " + t + " (a fractional DECIMAL) but the sketch has integer counters: "
                        + "create it with dtype='float64', or cast the weights to an integer type"
                        : "float weights need a template with float counters (dtype='float64')"));
            }
            isFloat = template.isFloat;
            spec = template;
        } else if (hash) {
            if (n > 3) {
                throw error(fn + ": expected (key [, weight], width, depth [, seed]), got " + n
                        + " constant parameters");
            }
            Map<String, Expression> c = a.constants(args, "width", "depth", "seed");
            long width = required(fn, c, "width", "(key [, weight], width, depth [, seed])");
            long depth = required(fn, c, "depth", "(key [, weight], width, depth [, seed])");
            long seed = c.containsKey("seed") ? constant(fn, "seed", c.get("seed")) : DEFAULT_SEED;
            minWidth(fn, width);
            spec = specOf(fn, () -> Spec.hash(fn, width, depth, seed, false), isFloat, true);
        } else if (n == 3 || a.named.containsKey("width") || a.named.containsKey("depth")) {
            if (n != 3 && n != 0) {
                throw error(fn + ": expected (key [, weight] [, nbytes [, seed] | width, depth, seed]), got " + n
                        + " positional constants with named width/depth");
            }
            Map<String, Expression> c = a.constants(args, "width", "depth", "seed");
            if (c.containsKey("nbytes")) {
                throw error(fn + ": give nbytes or (width, depth), not both");
            }
            long width = required(fn, c, "width", "(key [, weight], width, depth, seed)");
            long depth = required(fn, c, "depth", "(key [, weight], width, depth, seed)");
            long seed = c.containsKey("seed") ? constant(fn, "seed", c.get("seed")) : DEFAULT_SEED;
            minWidth(fn, width);
            spec = specOf(fn, () -> Spec.skimmed(fn, width, depth, seed, false), isFloat, true);
        } else if (n <= 2) {
            Map<String, Expression> c = a.constants(args, "nbytes", "seed");
            long nbytes = c.containsKey("nbytes") ? constant(fn, "nbytes", c.get("nbytes")) : DEFAULT_NBYTES;
            long seed = c.containsKey("seed") ? constant(fn, "seed", c.get("seed")) : DEFAULT_SEED;
            if (nbytes < MIN_NBYTES) {
                throw error(fn + ": nbytes must be at least " + MIN_NBYTES + " (smaller sketches' errors swamp their "
                        + "estimates), got " + nbytes);
            }
            boolean f = isFloat;
            spec = specOf(fn, () -> Spec.forBytes(fn, nbytes, seed, f), isFloat, false);
        } else {
            throw error(fn + ": expected (key [, weight] [, nbytes [, seed] | width, depth, seed]), got " + n
                    + " constant parameters");
        }
        if (template == null && spec.counters() > MAX_COUNTERS) {
            throw error(fn + ": width * depth" + (spec.hierLg > 0 ? " (and the hierarchy)" : "") + " must be at most "
                    + MAX_COUNTERS + " counters in SQL (int64 in memory, in one BINARY value), got " + spec.width
                    + " * " + spec.depth + (spec.hierLg > 0 ? " + " + (spec.counters() - (long) spec.width * spec.depth)
                    : "") + " = " + spec.counters() + ": give a smaller width or depth");
        }
        List<Expression> children = new ArrayList<>();
        children.add(castTo(key, keyAs));
        if (weight != null) {
            children.add(castTo(weight, isFloat ? DataTypes.DoubleType : weightAs));
        }
        return new BuildAggregate(fn, NamedCall.shown(fn, a.written), spec, bytesKeys, seq(children), 0, 0);
    }

    private static long required(String fn, Map<String, Expression> c, String name, String signature) {
        if (!c.containsKey(name)) {
            throw error(fn + ": parameter " + name + " is missing: " + fn + signature);
        }
        return constant(fn, name, c.get(name));
    }

    private static void minWidth(String fn, long width) {
        if (width < MIN_WIDTH) {
            throw error(fn + ": width must be at least " + MIN_WIDTH + " (narrower tables' errors swamp their "
                    + "estimates), got " + width);
        }
    }

    /** e as type t (itself when it already has that type). */
    public static Expression castTo(Expression e, DataType t) {
        return e.dataType().equals(t) ? e : new Cast(e, t, Option.empty());
    }

    private interface SpecMaker {
        Spec make();
    }

    private static Spec specOf(String fn, SpecMaker maker, boolean isFloat, boolean retype) {
        Spec s;
        try {
            s = maker.make();
        } catch (IllegalArgumentException e) {
            throw error(e.getMessage());
        }
        if (retype && isFloat) {
            s = s.withFloat(true);
        }
        return s;
    }

    private static void requireBinary(String fn, String name, Expression e) {
        if (!(e.dataType() instanceof BinaryType || e.dataType() instanceof NullType)) {
            throw error(fn + ": " + name + " has type " + e.dataType().simpleString()
                    + "; it must be BINARY sketch bytes (from skim_sketch_agg, skim_hash_sketch_agg, skim_union_agg)");
        }
    }

    /** The type a builder reads a key column as: BINARY for strings and binary (hashed through fingerprint64),
     * BIGINT for integers, and FLOAT/DOUBLE as they are (integral values below 2^24/2^53, checked per row by
     * Keys.floatKey/doubleKey); another type is refused naming the supported ones. */
    public static DataType keyAs(String fn, DataType kt) {
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

    private static Expression unionAgg(Seq<Expression> argSeq) {
        Args a = new Args("skim_union_agg", argSeq, Set.of("sketch"));
        List<Expression> args = new ArrayList<>(a.positional);
        args.addAll(a.named.values());
        if (args.size() != 1) {
            throw error("skim_union_agg: expected one argument (sketch), got " + args.size());
        }
        requireBinary("skim_union_agg", "sketch", args.get(0));
        return SampleSql.unionAgg(castTo(args.get(0), DataTypes.BinaryType)); // sketches or join samples
    }

    private static Expression invoke(Class<?> cls, DataType type, String method, List<Expression> args) {
        List<AbstractDataType> types = new ArrayList<>();
        for (Expression e : args) {
            types.add(e.dataType());
        }
        return new StaticInvoke(cls, type, method, seq(args), seq(types), true, true, true, Option.empty());
    }

    private static List<Expression> sketches(String fn, Args a, int count) {
        String[] names = {"a", "b"};
        Map<String, Expression> c = a.constants(a.positional.subList(0, Math.min(count, a.positional.size())),
                names);
        List<Expression> out = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            Expression e = c.get(names[i]);
            if (e == null) {
                throw error(fn + ": parameter " + names[i] + " (sketch bytes) is missing");
            }
            requireBinary(fn, names[i], e);
            out.add(castTo(e, DataTypes.BinaryType));
        }
        return out;
    }

    private static Expression union(Seq<Expression> argSeq) {
        Args a = new Args("skim_union", argSeq, Set.of("a", "b"));
        if (a.positional.size() > 2) {
            throw error("skim_union: expected two arguments (a, b), got " + a.positional.size());
        }
        return NamedCall.of("skim_union", argSeq, invoke(SampleUnionAgg.class, DataTypes.BinaryType, "union",
                sketches("skim_union", a, 2)));
    }

    private static Expression info(Seq<Expression> argSeq) {
        Args a = new Args("skim_sketch_info", argSeq, Set.of("a"));
        if (a.positional.size() > 1) {
            throw error("skim_sketch_info: expected one argument (a), got " + a.positional.size());
        }
        return NamedCall.of("skim_sketch_info", argSeq, invoke(EstimateFunctions.class,
                EstimateFunctions.infoType(), "info", sketches("skim_sketch_info", a, 1)));
    }

    /** The estimate functions: sketches, then the key (skim_frequency), then an optional confidence. */
    private static Expression estimate(String fn, Seq<Expression> argSeq, int count, boolean withKey,
                                       boolean bounds) {
        Set<String> allowed = withKey ? Set.of("a", "key", "confidence")
                : count == 2 ? Set.of("a", "b", "confidence") : Set.of("a", "confidence");
        Args a = new Args(fn, argSeq, allowed);
        int fixed = count + (withKey ? 1 : 0);
        if (a.positional.size() > fixed + 1) {
            throw error(fn + ": expected at most " + (fixed + 1) + " arguments, got " + a.positional.size());
        }
        List<Expression> args = sketches(fn, a, count);
        Expression key = null;
        if (withKey) {
            key = a.positional.size() > count ? a.positional.get(count) : a.named.get("key");
            if (key == null) {
                throw error(fn + ": parameter key is missing: " + fn + "(a, key [, confidence])");
            }
        }
        Expression conf = a.positional.size() > fixed ? a.positional.get(fixed) : a.named.get("confidence");
        double c = DEFAULT_CONFIDENCE;
        if (conf != null) {
            Object v = conf.foldable() ? castTo(conf, DataTypes.DoubleType).eval(null) : null;
            if (!(v instanceof Double)) {
                throw error(fn + ": confidence must be a numeric constant, got " + conf.sql());
            }
            c = (Double) v;
            if (!(c > 0 && c < 1)) {
                throw error(fn + ": confidence must be in (0, 1), got " + Keys.pyRepr(c));
            }
        }
        Expression confidence = Literal.create(c, DataTypes.DoubleType);
        DataType result = bounds ? EstimateFunctions.estimateType() : DataTypes.DoubleType;
        if (!withKey) {
            args.add(confidence);
            String m = count == 2 ? (bounds ? "joinSizeBounds" : "joinSize")
                    : bounds ? "selfJoinSizeBounds" : "selfJoinSize";
            return NamedCall.of(fn, argSeq, invoke(EstimateFunctions.class, result, m, args));
        }
        DataType kt = key.dataType();
        String m;
        Expression k;
        if (kt instanceof ByteType || kt instanceof ShortType || kt instanceof IntegerType || kt instanceof LongType
                || kt instanceof NullType) {
            m = "frequencyLong";
            k = castTo(key, DataTypes.LongType);
        } else if (kt instanceof FloatType || kt instanceof DoubleType) {
            m = kt instanceof FloatType ? "frequencyFloat" : "frequencyDouble"; // each type's integer limit
            k = key;
        } else if (kt instanceof StringType) {
            m = "frequencyString";
            k = key;
        } else if (kt instanceof BinaryType) {
            m = "frequencyBinary";
            k = key;
        } else {
            throw error(fn + ": key has type " + kt.simpleString() + "; supported key types are " + KEY_TYPES);
        }
        args.add(k);
        args.add(confidence);
        Expression call = invoke(EstimateFunctions.class, DataTypes.DoubleType, m, args);
        if (m.equals("frequencyDouble") || m.equals("frequencyFloat")) { // a NaN key is NULL, as in the builders
            call = new If(new IsNaN(k), Literal.create(null, DataTypes.DoubleType), call);
        }
        return NamedCall.of(fn, argSeq, call);
    }
}
