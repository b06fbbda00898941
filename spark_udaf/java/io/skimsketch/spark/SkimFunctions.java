package io.skimsketch.spark;

import io.skimsketch.spark.sql.SampleSql;
import io.skimsketch.spark.sql.ScalarCalls;
import io.skimsketch.spark.sql.SketchBuilders;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.spark.sql.catalyst.FunctionIdentifier;
import org.apache.spark.sql.catalyst.analysis.FunctionRegistry;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.ExpressionInfo;
import scala.Function1;
import scala.Option;
import scala.Tuple3;
import scala.collection.immutable.Seq;

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
                args -> SketchBuilders.build("skim_sketch_agg", args, false, null)));
        out.add(entry(SampleSql.NAME, "agg_funcs", SampleSql.USAGE, SampleSql.ARGS, SampleSql.EXAMPLES, SampleSql::build));
        out.add(entry("skim_hash_sketch_agg", "agg_funcs",
                "skim_hash_sketch_agg(key [, weight], width, depth [, seed]) - a hash (Fast-AGMS) sketch of key, "
                + "HashSketch(width, depth, seed) (width >= " + MIN_WIDTH + "), as BINARY",
                "key, weight: as skim_sketch_agg; width, depth, seed: integer constants, positional or named",
                new String[] {"SELECT skim_hash_sketch_agg(user_id, 2048, 5) FROM events",
                    "SELECT skim_hash_sketch_agg(user_id, width => 2048, depth => 5, seed => 1) FROM events"},
                args -> SketchBuilders.build("skim_hash_sketch_agg", args, true, null)));
        out.add(entry("skim_sketch_like_agg", "agg_funcs",
                "skim_sketch_like_agg(key [, weight], template) - a sketch of key with the kind, shape, seed and "
                + "counter type of the constant sketch bytes template, as BINARY",
                "template: constant sketch bytes (hash or skimmed)",
                new String[] {"SELECT skim_sketch_like_agg(user_id, X'...') FROM events"}, SketchBuilders::like));
        out.add(entry("skim_union_agg", "agg_funcs",
                "skim_union_agg(sketch) - the merge of the sketches (NULLs skipped; NULL when there is none)",
                "sketch: BINARY sketch bytes of one kind, shape and seed",
                new String[] {"SELECT skim_union_agg(sk) FROM daily WHERE day BETWEEN '2026-11-01' AND '2026-11-07'"},
                ScalarCalls::unionAgg));
        out.add(entry("skim_union", "misc_funcs", "skim_union(a, b) - the merge of two sketches (NULL if either is "
                + "NULL)", "a, b: BINARY sketch bytes", new String[] {"SELECT skim_union(a.sk, b.sk) FROM a, b"},
                ScalarCalls::union));
        String est = "a, b: BINARY sketches of one kind, shape and seed; confidence: a constant in (0, 1), "
                + "0.95 by default";
        out.add(entry("skim_join_size", "misc_funcs", "skim_join_size(a, b [, confidence]) - the estimated size of "
                + "the equi-join of the sketched columns (SUM of weights with weighted sketches), as DOUBLE", est,
                new String[] {"SELECT skim_join_size(o.sk, v.sk) FROM o CROSS JOIN v"},
                args -> ScalarCalls.estimate("skim_join_size", args, 2, false, false)));
        out.add(entry("skim_join_size_bounds", "misc_funcs", "skim_join_size_bounds(a, b [, confidence]) - the "
                + "join-size estimate with its interval, STRUCT<value, low, high, confidence, method>", est,
                new String[] {"SELECT skim_join_size_bounds(o.sk, v.sk, confidence => 0.99).low FROM o CROSS JOIN v"},
                args -> ScalarCalls.estimate("skim_join_size_bounds", args, 2, false, true)));
        String one = "a: BINARY sketch bytes; confidence: a constant in (0, 1), 0.95 by default";
        out.add(entry("skim_self_join_size", "misc_funcs", "skim_self_join_size(a [, confidence]) - the estimated "
                + "self-join size (sum of squared frequencies), as DOUBLE", one,
                new String[] {"SELECT skim_self_join_size(sk) FROM daily"},
                args -> ScalarCalls.estimate("skim_self_join_size", args, 1, false, false)));
        out.add(entry("skim_self_join_size_bounds", "misc_funcs", "skim_self_join_size_bounds(a [, confidence]) - "
                + "the self-join size with its interval, STRUCT<value, low, high, confidence, method>", one,
                new String[] {"SELECT skim_self_join_size_bounds(sk) FROM daily"},
                args -> ScalarCalls.estimate("skim_self_join_size_bounds", args, 1, false, true)));
        out.add(entry("skim_frequency", "misc_funcs", "skim_frequency(a, key [, confidence]) - the estimated "
                + "frequency (summed weight) of key in the sketch, as DOUBLE", "a: BINARY sketch bytes; key: a key "
                + "of the sketch's type (integer or string/binary)",
                new String[] {"SELECT skim_frequency(sk, 42) FROM daily"},
                args -> ScalarCalls.estimate("skim_frequency", args, 1, true, false)));
        out.add(entry("skim_sketch_info", "misc_funcs", "skim_sketch_info(a) - the sketch's description, "
                + "STRUCT<kind, width, depth, seed, total_weight, null_weight, nbytes>", "a: BINARY sketch bytes",
                new String[] {"SELECT skim_sketch_info(sk).total_weight FROM daily"}, ScalarCalls::info));
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
}
