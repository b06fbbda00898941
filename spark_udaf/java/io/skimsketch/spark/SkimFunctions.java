package io.skimsketch.spark;

import java.util.ArrayList;
import java.util.List;
import org.apache.spark.sql.AnalysisException;
import org.apache.spark.sql.catalyst.FunctionIdentifier;
import org.apache.spark.sql.catalyst.analysis.FunctionRegistry;
import org.apache.spark.sql.catalyst.expressions.Cast;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.ExpressionInfo;
import org.apache.spark.sql.catalyst.expressions.objects.StaticInvoke;
import org.apache.spark.sql.execution.aggregate.ScalaAggregator$;
import org.apache.spark.sql.expressions.UserDefinedAggregator;
import org.apache.spark.sql.types.AbstractDataType;
import org.apache.spark.sql.types.BinaryType;
import org.apache.spark.sql.types.ByteType;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
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
 * The skim_* SQL functions: builders from argument expressions (constant parameters are read at
 * analysis time, so a global aggregate over zero rows still knows its sketch's shape).
 *
 * <pre>
 * skim_sketch_agg(key [, weight] [, nbytes [, seed] | width, depth, seed])  default: 16384 bytes, seed 0
 * skim_hash_sketch_agg(key [, weight], width, depth [, seed])
 * skim_union_agg(sketch)
 * skim_union(a, b)
 * </pre>
 */
public final class SkimFunctions {
    public static final long DEFAULT_NBYTES = 16384;
    public static final long DEFAULT_SEED = 0;
    private static final String KEY_TYPES = "tinyint, smallint, int, bigint, string, binary";
    private static final String WEIGHT_TYPES = "tinyint, smallint, int, bigint, float, double";

    private SkimFunctions() {}

    /** (name, info, builder) of every function. */
    public static List<Tuple3<FunctionIdentifier, ExpressionInfo, Function1<Seq<Expression>, Expression>>> all() {
        List<Tuple3<FunctionIdentifier, ExpressionInfo, Function1<Seq<Expression>, Expression>>> out =
                new ArrayList<>();
        out.add(entry("skim_sketch_agg", "skim_sketch_agg(key [, weight] [, nbytes [, seed] | width, depth, seed]) - "
                + "the library's default skimmed sketch of key (SkimmedSketch.for_bytes), as BINARY",
                args -> build("skim_sketch_agg", args, false)));
        out.add(entry("skim_hash_sketch_agg", "skim_hash_sketch_agg(key [, weight], width, depth [, seed]) - "
                + "a hash sketch of key, as BINARY", args -> build("skim_hash_sketch_agg", args, true)));
        out.add(entry("skim_sketch_like_agg", "skim_sketch_like_agg(key [, weight], template) - a sketch of key "
                + "with the kind, shape, seed and counter type of the constant sketch bytes template, as BINARY",
                SkimFunctions::like));
        out.add(entry("skim_union_agg", "skim_union_agg(sketch) - the merge of the sketches (NULLs skipped)",
                SkimFunctions::unionAgg));
        out.add(entry("skim_union", "skim_union(a, b) - the merge of two sketches", SkimFunctions::union));
        return out;
    }

    private static Tuple3<FunctionIdentifier, ExpressionInfo, Function1<Seq<Expression>, Expression>> entry(
            String name, String usage, Function1<Seq<Expression>, Expression> builder) {
        ExpressionInfo info = new ExpressionInfo(SkimFunctions.class.getName(), null, name, usage, "", "", "",
                "agg_funcs", "", "", "");
        return new Tuple3<>(new FunctionIdentifier(name), info, builder);
    }

    /** Registers the functions in a running session (what the extension does at session start). */
    public static String[] register(org.apache.spark.sql.classic.SparkSession spark) {
        FunctionRegistry registry = spark.sessionState().functionRegistry();
        List<String> names = new ArrayList<>();
        for (Tuple3<FunctionIdentifier, ExpressionInfo, Function1<Seq<Expression>, Expression>> f : all()) {
            registry.createOrReplaceTempFunction(f._1().funcName(), f._3(), "java_udf");
            names.add(f._1().funcName());
        }
        return names.toArray(new String[0]);
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

    private static long constant(String fn, String name, Expression e) {
        if (!e.foldable()) {
            throw error(fn + ": parameter " + name + " must be a constant, got " + e.sql());
        }
        Object v = e.eval(null);
        if (!(v instanceof Integer || v instanceof Long || v instanceof Short || v instanceof Byte)) {
            throw error(fn + ": parameter " + name + " must be an integer constant, got " + e.sql());
        }
        long x = ((Number) v).longValue();
        if (name.equals("seed") && x < 0) {
            throw error(fn + ": seed must be >= 0, got " + x);
        }
        return x;
    }

    private static Expression like(Seq<Expression> argSeq) {
        String fn = "skim_sketch_like_agg";
        List<Expression> args = new ArrayList<>(CollectionConverters.asJava(argSeq));
        Expression t = args.isEmpty() ? null : args.remove(args.size() - 1);
        if (t == null || !t.foldable() || !(t.dataType() instanceof BinaryType) || args.isEmpty() || args.size() > 2) {
            throw error(fn + ": expected (key [, weight], template) with template constant sketch bytes");
        }
        Object v = t.eval(null);
        if (v == null) {
            throw error(fn + ": template must not be NULL");
        }
        Spec spec;
        try {
            spec = SketchState.fromBytes((byte[]) v).spec();
        } catch (IllegalArgumentException e) {
            throw error(fn + ": template: " + e.getMessage());
        }
        return build(fn, seq(args), false, spec);
    }

    private static Expression build(String fn, Seq<Expression> argSeq, boolean hash) {
        return build(fn, argSeq, hash, null);
    }

    private static Expression build(String fn, Seq<Expression> argSeq, boolean hash, Spec template) {
        List<Expression> args = new ArrayList<>(CollectionConverters.asJava(argSeq));
        if (args.isEmpty()) {
            throw error(fn + ": needs a key column: " + fn + "(key [, weight], ...)");
        }
        Expression key = args.remove(0);
        Expression weight = null;
        if (!args.isEmpty() && !args.get(0).foldable()) {
            weight = args.remove(0);
        }
        DataType kt = key.dataType();
        boolean bytesKeys;
        if (kt instanceof StringType || kt instanceof BinaryType) {
            bytesKeys = true;
        } else if (kt instanceof ByteType || kt instanceof ShortType || kt instanceof IntegerType
                || kt instanceof LongType || kt instanceof NullType) {
            bytesKeys = false;
        } else {
            throw error(fn + ": key has type " + kt.simpleString() + "; supported key types are " + KEY_TYPES
                    + " (cast it, e.g. CAST(key AS BIGINT) or CAST(key AS STRING))");
        }
        boolean isFloat = false;
        if (weight != null) {
            DataType wt = weight.dataType();
            if (wt instanceof FloatType || wt instanceof DoubleType) {
                isFloat = true;
            } else if (!(wt instanceof ByteType || wt instanceof ShortType || wt instanceof IntegerType
                    || wt instanceof LongType || wt instanceof NullType)) {
                throw error(fn + ": weight has type " + wt.simpleString() + "; supported weight types are "
                        + WEIGHT_TYPES + " (cast it, e.g. CAST(weight AS DOUBLE))");
            }
        }
        Spec spec;
        int n = args.size();
        if (template != null) {
            if (n != 0) {
                throw error(fn + ": expected (key [, weight], template), got " + n + " more constant parameters");
            }
            if (isFloat && !template.isFloat) {
                throw error(fn + ": float weights need a template with float counters (dtype='float64')");
            }
            isFloat = template.isFloat;
            spec = template;
        } else if (hash) {
            if (n != 2 && n != 3) {
                throw error(fn + ": expected (key [, weight], width, depth [, seed]), got " + n
                        + " constant parameters");
            }
            long seed = n == 3 ? constant(fn, "seed", args.get(2)) : DEFAULT_SEED;
            spec = specOf(fn, () -> Spec.hash(fn, constant(fn, "width", args.get(0)),
                    constant(fn, "depth", args.get(1)), seed, false), isFloat, true);
        } else if (n <= 2) {
            long nbytes = n >= 1 ? constant(fn, "nbytes", args.get(0)) : DEFAULT_NBYTES;
            long seed = n == 2 ? constant(fn, "seed", args.get(1)) : DEFAULT_SEED;
            boolean f = isFloat;
            spec = specOf(fn, () -> Spec.forBytes(fn, nbytes, seed, f), isFloat, false);
        } else if (n == 3) {
            long seed = constant(fn, "seed", args.get(2));
            spec = specOf(fn, () -> Spec.skimmed(fn, constant(fn, "width", args.get(0)),
                    constant(fn, "depth", args.get(1)), seed, false), isFloat, true);
        } else {
            throw error(fn + ": expected (key [, weight] [, nbytes [, seed] | width, depth, seed]), got " + n
                    + " constant parameters");
        }
        List<Expression> children = new ArrayList<>();
        children.add(castTo(key, bytesKeys ? DataTypes.BinaryType : DataTypes.LongType));
        if (weight != null) {
            children.add(castTo(weight, isFloat ? DataTypes.DoubleType : DataTypes.LongType));
        }
        return new BuildAggregate(fn, spec, bytesKeys, seq(children), 0, 0);
    }

    /** e as type t (itself when it already has that type). */
    private static Expression castTo(Expression e, DataType t) {
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

    private static Expression aggregate(String fn, UnionAgg agg, List<Expression> children) {
        UserDefinedAggregator<byte[], SketchState, byte[]> uda = new UserDefinedAggregator<>(
                agg, org.apache.spark.sql.Encoders.BINARY(), Option.apply(fn), true, true);
        return ScalaAggregator$.MODULE$.apply(uda, seq(children));
    }

    private static void requireBinary(String fn, String name, Expression e) {
        if (!(e.dataType() instanceof BinaryType)) {
            throw error(fn + ": " + name + " has type " + e.dataType().simpleString()
                    + "; it must be BINARY sketch bytes (from skim_sketch_agg, skim_hash_sketch_agg, skim_union_agg)");
        }
    }

    private static Expression unionAgg(Seq<Expression> argSeq) {
        List<Expression> args = CollectionConverters.asJava(argSeq);
        if (args.size() != 1) {
            throw error("skim_union_agg: expected one argument (sketch), got " + args.size());
        }
        requireBinary("skim_union_agg", "sketch", args.get(0));
        UnionAgg agg = new UnionAgg();
        return aggregate("skim_union_agg", agg, List.of(args.get(0)));
    }

    private static Expression union(Seq<Expression> argSeq) {
        List<Expression> args = CollectionConverters.asJava(argSeq);
        if (args.size() != 2) {
            throw error("skim_union: expected two arguments (a, b), got " + args.size());
        }
        requireBinary("skim_union", "a", args.get(0));
        requireBinary("skim_union", "b", args.get(1));
        List<AbstractDataType> types = List.of(DataTypes.BinaryType, DataTypes.BinaryType);
        return new StaticInvoke(UnionAgg.class, DataTypes.BinaryType, "union", seq(args), seq(types), true, true,
                true, Option.empty());
    }
}
