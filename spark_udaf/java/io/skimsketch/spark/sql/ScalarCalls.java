package io.skimsketch.spark.sql;

import static io.skimsketch.spark.SkimFunctions.DEFAULT_CONFIDENCE;
import static io.skimsketch.spark.sql.Args.KEY_TYPES;
import static io.skimsketch.spark.sql.Args.castTo;
import static io.skimsketch.spark.sql.Args.error;
import static io.skimsketch.spark.sql.Args.requireBinary;
import static io.skimsketch.spark.sql.Args.seq;

import io.skimsketch.spark.common.Keys;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.If;
import org.apache.spark.sql.catalyst.expressions.IsNaN;
import org.apache.spark.sql.catalyst.expressions.Literal;
import org.apache.spark.sql.catalyst.expressions.objects.StaticInvoke;
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
import scala.Option;
import scala.collection.immutable.Seq;

/**
 * The scalar skim_* calls and skim_union_agg (StaticInvoke of EstimateFunctions or SampleUnionAgg under
 * their SQL names, {@link NamedCall}): skim_union, skim_sketch_info and the estimate functions.
 */
public final class ScalarCalls {
    private ScalarCalls() {}

    public static Expression unionAgg(Seq<Expression> argSeq) {
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

    public static Expression union(Seq<Expression> argSeq) {
        Args a = new Args("skim_union", argSeq, Set.of("a", "b"));
        if (a.positional.size() > 2) {
            throw error("skim_union: expected two arguments (a, b), got " + a.positional.size());
        }
        return NamedCall.of("skim_union", argSeq, invoke(SampleUnionAgg.class, DataTypes.BinaryType, "union",
                sketches("skim_union", a, 2)));
    }

    public static Expression info(Seq<Expression> argSeq) {
        Args a = new Args("skim_sketch_info", argSeq, Set.of("a"));
        if (a.positional.size() > 1) {
            throw error("skim_sketch_info: expected one argument (a), got " + a.positional.size());
        }
        return NamedCall.of("skim_sketch_info", argSeq, invoke(EstimateFunctions.class,
                EstimateFunctions.infoType(), "info", sketches("skim_sketch_info", a, 1)));
    }

    /** The estimate functions: sketches, then the key (skim_frequency), then an optional confidence. */
    public static Expression estimate(String fn, Seq<Expression> argSeq, int count, boolean withKey,
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
            Args.requireBinaryCollation(fn, kt);
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
