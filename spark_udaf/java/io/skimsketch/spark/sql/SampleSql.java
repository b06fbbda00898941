package io.skimsketch.spark.sql;

import io.skimsketch.spark.SkimFunctions;
import io.skimsketch.spark.sample.SampleState;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.catalyst.rules.Rule;
import org.apache.spark.sql.execution.aggregate.ScalaAggregator$;
import org.apache.spark.sql.expressions.UserDefinedAggregator;
import org.apache.spark.sql.types.BinaryType;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import scala.Option;
import scala.collection.immutable.Seq;
import scala.jdk.javaapi.CollectionConverters;

/**
 * The SQL side of the join sample: the skim_sample_agg builder (argument checks at analysis time, as
 * skim_sketch_agg's), and skim_union_agg / skim_union over sketches or samples.
 */
public final class SampleSql {
    public static final String NAME = "skim_sample_agg";
    /** The plan's note on a skim_sample_agg that SampleRule did not rewrite. */
    static final String RAW_PATH = "raw rows: every key's exact total in the buffer";
    public static final String USAGE = "skim_sample_agg(key [, weight] [, nbytes [, seed]]) - the coordinated join "
            + "sample of key, JoinSample.for_bytes(nbytes, seed) (nbytes 16384 and seed 0 by default), as BINARY: the "
            + "most accurate join summary per byte for tables at rest. Spark's shuffle groups the rows by key "
            + "(session extension or native.register), so no task holds every key";
    public static final String ARGS = "key: the join key (integer types, float/double holding integers, string, binary); "
            + "weight: an optional numeric column (SUM samples); nbytes, seed: integer constants, positional or named";
    public static final String[] EXAMPLES = {"SELECT skim_sample_agg(user_id) FROM events",
        "SELECT day, skim_sample_agg(user_id, amount, nbytes => 65536, seed => 7) FROM events GROUP BY day"};

    private SampleSql() {}

    static <T> Seq<T> seq(List<T> xs) {
        return CollectionConverters.asScala(xs).toSeq();
    }

    static <T> List<T> list(Seq<T> xs) {
        return new ArrayList<>(CollectionConverters.asJava(xs));
    }

    /** skim_sample_agg(key [, weight] [, nbytes [, seed]]) over raw rows. */
    public static Expression build(Seq<Expression> argSeq) {
        String fn = NAME;
        Args a = new Args(fn, argSeq, Set.of("key", "weight", "nbytes", "seed"));
        List<Expression> args = a.positional;
        Expression key = a.named.remove("key");
        if (key == null) {
            if (args.isEmpty()) {
                throw Args.error(fn + ": needs a key column: " + fn + "(key [, weight] [, nbytes [, seed]])");
            }
            key = args.remove(0);
        }
        Expression weight = a.named.remove("weight");
        if (weight == null && !args.isEmpty() && !args.get(0).foldable()) {
            weight = args.remove(0);
        }
        if (args.size() > 2) {
            throw Args.error(fn + ": expected (key [, weight] [, nbytes [, seed]]), got " + args.size()
                    + " constant parameters");
        }
        DataType keyAs = Args.keyAs(fn, key.dataType());  // FLOAT keys stay float32: Keys.floatKey's limit
        boolean bytesKeys = keyAs instanceof BinaryType;
        boolean isFloat = false;
        DataType weightAs = DataTypes.LongType;
        if (weight != null) {
            isFloat = Args.fractionalWeight(fn, weight.dataType());
            weightAs = isFloat ? DataTypes.DoubleType : Args.integralWeightType(weight.dataType());
        }
        Map<String, Expression> c = a.constants(args, "nbytes", "seed");
        long nbytes = c.containsKey("nbytes") ? Args.constant(fn, "nbytes", c.get("nbytes"))
                : SkimFunctions.DEFAULT_NBYTES;
        long seed = c.containsKey("seed") ? Args.constant(fn, "seed", c.get("seed"))
                : SkimFunctions.DEFAULT_SEED;
        int budget;
        try {
            budget = SampleState.budget(fn, nbytes);
        } catch (IllegalArgumentException e) {
            Expression given = c.get("nbytes");
            String how = given instanceof org.apache.spark.sql.catalyst.expressions.Literal ? ""
                    : " (the value of " + given.sql() + ")";
            if (weight == null && !args.isEmpty() && args.get(0) == given) {
                how += ": the constant right after the key is nbytes; a constant weight is passed by name, "
                        + "e.g. " + fn + "(key, weight => " + given.sql() + ")";
            }
            throw Args.error(e.getMessage() + how);
        }
        List<Expression> children = new ArrayList<>();
        children.add(Args.castTo(key, keyAs));
        if (weight != null) {
            children.add(Args.castTo(weight, weightAs));
        }
        return new SampleAggregate(fn, budget, seed, isFloat, bytesKeys, false, RAW_PATH, seq(children), 0, 0);
    }

    /** Adds SampleRule to a running session's extra optimizations (once). */
    public static void addRule(org.apache.spark.sql.classic.SparkSession spark) {
        org.apache.spark.sql.ExperimentalMethods x = spark.experimental();
        List<Rule<LogicalPlan>> rules = list(x.extraOptimizations());
        for (Rule<LogicalPlan> r : rules) {
            if (r instanceof SampleRule) {
                return;
            }
        }
        rules.add(new SampleRule());
        x.extraOptimizations_$eq(seq(rules));
    }

    /** skim_union_agg over sketches or samples (one kind per group). */
    static Expression unionAgg(Expression sketch) {
        UserDefinedAggregator<byte[], SampleUnionAgg.Buffer, byte[]> uda = new UserDefinedAggregator<>(
                new SampleUnionAgg(), org.apache.spark.sql.Encoders.BINARY(), Option.apply("skim_union_agg"), true,
                true);
        return ScalaAggregator$.MODULE$.apply(uda, seq(List.of(sketch)));
    }
}
