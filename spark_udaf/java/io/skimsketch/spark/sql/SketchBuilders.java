package io.skimsketch.spark.sql;

import static io.skimsketch.spark.SkimFunctions.DEFAULT_NBYTES;
import static io.skimsketch.spark.SkimFunctions.DEFAULT_SEED;
import static io.skimsketch.spark.SkimFunctions.MAX_COUNTERS;
import static io.skimsketch.spark.SkimFunctions.MIN_NBYTES;
import static io.skimsketch.spark.SkimFunctions.MIN_WIDTH;
import static io.skimsketch.spark.sql.Args.castTo;
import static io.skimsketch.spark.sql.Args.constant;
import static io.skimsketch.spark.sql.Args.error;
import static io.skimsketch.spark.sql.Args.fractionalWeight;
import static io.skimsketch.spark.sql.Args.integralWeightType;
import static io.skimsketch.spark.sql.Args.keyAs;
import static io.skimsketch.spark.sql.Args.seq;

import io.skimsketch.spark.sketch.SketchState;
import io.skimsketch.spark.sketch.Spec;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.types.BinaryType;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.DecimalType;
import org.apache.spark.sql.types.DoubleType;
import org.apache.spark.sql.types.LongType;
import scala.collection.immutable.Seq;

/**
 * The sketch builders of SQL (skim_sketch_agg, skim_hash_sketch_agg, skim_sketch_like_agg): their arguments
 * read and checked at analysis time, the sketch's Spec chosen, the key and weight cast, a {@link BuildAggregate}.
 */
public final class SketchBuilders {
    private SketchBuilders() {}

    public static Expression like(Seq<Expression> argSeq) {
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


    public static Expression build(String fn, Seq<Expression> argSeq, boolean hash, Spec template) {
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
}
