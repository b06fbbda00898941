package io.skimsketch.spark.sql;

import io.skimsketch.spark.sample.SampleRuns;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.spark.sql.catalyst.expressions.Alias;
import org.apache.spark.sql.catalyst.expressions.Attribute;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.Literal;
import org.apache.spark.sql.catalyst.expressions.NamedExpression;
import org.apache.spark.sql.catalyst.expressions.aggregate.AggregateExpression;
import org.apache.spark.sql.catalyst.expressions.objects.StaticInvoke;
import org.apache.spark.sql.catalyst.plans.logical.Aggregate;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.catalyst.plans.logical.Project;
import org.apache.spark.sql.internal.SQLConf;
import org.apache.spark.sql.types.AbstractDataType;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.DecimalType;
import scala.Option;

/**
 * skim_sample_agg's bucketed build (the fast path of {@link SampleRule}, integer totals, no GROUP BY): instead
 * of Spark's GROUP BY of the key (a generic hash aggregate over every key, a shuffle of every (key, count) row),
 * <pre>
 *   Aggregate([], [..., skim_sample_agg over pieces(p), ...],
 *     Aggregate([bucket(fp)], [..., skim_sample_agg_bucket(fp, w) AS p, ...],
 *       Project([child..., fp(key) AS fp, w], child)))
 * </pre>
 * Each scan task sums its rows per bucket of 52-bit key fingerprints in sorted runs ({@link SampleRuns}: a radix
 * sort, no hash table), the shuffle carries one compact run per (task, bucket), each bucket merges its runs
 * into the exact totals of its fingerprints, and the pieces (the bucket's exact key count, its C + 1 smallest
 * (rank, fp) entries) union into the core's sample: the same bytes, the same exact key count K. Every
 * fingerprint's total is still computed (K needs every key), only faster. COUNT/SUM/MIN/MAX beside the samples
 * are computed per bucket and combined as SampleRule does. It does not apply (SampleRule's GROUP BY of the key is
 * kept, and its explain string says why) to float weights (Spark's exact per-key SUM, as before), grouped
 * aggregates (many groups' runs would not spill, Spark's grouping does), samples of different seeds in one
 * aggregate, or when spark.skimsketch.sample.bucketedBuild is false.
 */
final class SampleFastPlan {
    static final String CONF = "spark.skimsketch.sample.bucketedBuild";
    /** At most this many buckets: a scan task holds one run per bucket (ObjectHashAggregate's 128-group limit). */
    static final int MAX_BUCKETS = 64;

    private SampleFastPlan() {}

    /** Why the bucketed build does not apply to these samples of an aggregate (null: it applies). */
    static String whyNot(Aggregate agg, List<SampleAggregate> samples) {
        if (!Boolean.parseBoolean(SQLConf.get().getConfString(CONF, "true"))) {
            return CONF + " is false";
        }
        if (!agg.groupingExpressions().isEmpty()) {
            return "a grouped aggregate (the bucketed build's per-group runs would not spill; Spark's grouping does)";
        }
        Long seed = null;
        for (SampleAggregate sa : samples) {
            if (sa.isFloatTotals()) {
                return "float weights (their per-key sums are Spark's exact SUM)";
            }
            long s = sa.seed();
            if (seed != null && s != seed) {
                return "samples of different seeds in one aggregate";
            }
            seed = s;
        }
        return null;
    }

    /** The number of fingerprint buckets: the session's shuffle partitions, at most {@link #MAX_BUCKETS}. */
    static int buckets() {
        return Math.max(1, Math.min(MAX_BUCKETS, SQLConf.get().numShufflePartitions()));
    }

    private static Expression invoke(Class<?> cls, String method, DataType type, Expression... args) {
        List<Expression> a = List.of(args);
        List<AbstractDataType> types = new ArrayList<>();
        for (Expression e : a) {
            types.add(e.dataType());
        }
        return new StaticInvoke(cls, type, method, SampleSql.seq(a), SampleSql.seq(types), true, true, true,
                Option.empty());
    }

    /**
     * The bucketed plan of an ungrouped aggregate whose aggregates are skim_sample_agg (one key, one seed) and
     * COUNT/SUM/MIN/MAX (aes, checked by SampleRule; whyNot(agg) is null).
     */
    static LogicalPlan rewrite(Aggregate agg, List<AggregateExpression> aes, Expression key) {
        SampleAggregate first = null;
        for (AggregateExpression ae : aes) {
            if (ae.aggregateFunction() instanceof SampleAggregate) {
                first = (SampleAggregate) ae.aggregateFunction();
                break;
            }
        }
        int nb = buckets();
        LogicalPlan child = agg.child();
        List<NamedExpression> projected = new ArrayList<>(SampleSql.list(child.output()));
        Alias fp = SampleRule.alias(invoke(SampleFastKeys.class, "fp", DataTypes.LongType, key,
                Literal.create(first.seed(), DataTypes.LongType)), "_skim_fp");
        projected.add(fp);
        Alias bucket = SampleRule.alias(invoke(SampleFastKeys.class, "bucket", DataTypes.IntegerType,
                fp.toAttribute(), Literal.create(nb, DataTypes.IntegerType)), "_skim_bucket");
        List<NamedExpression> innerOut = new ArrayList<>();
        innerOut.add(bucket);
        Map<AggregateExpression, Expression> swap = new LinkedHashMap<>();
        for (AggregateExpression ae : aes) {
            if (swap.containsKey(ae)) {
                continue;
            }
            if (!(ae.aggregateFunction() instanceof SampleAggregate)) {
                Alias part = SampleRule.alias(SampleRule.complete(ae.aggregateFunction(), null),
                        "_skim_part" + swap.size());
                innerOut.add(part);
                swap.put(ae, SampleRule.combined(ae, part.toAttribute()));
                continue;
            }
            SampleAggregate sa = (SampleAggregate) ae.aggregateFunction();
            List<Expression> runsArgs = new ArrayList<>();
            runsArgs.add(fp.toAttribute());
            Expression w = sa.weight();
            if (w != null) {
                if (w.dataType() instanceof DecimalType) {
                    w = invoke(SampleWeights.class, "decimalWeight", DataTypes.LongType, w);
                }
                Alias wa = SampleRule.alias(w, "_skim_w" + swap.size());
                projected.add(wa);
                runsArgs.add(wa.toAttribute());
            }
            Alias piece = SampleRule.alias(SampleRule.complete(new SampleRunsAggregate(sa.name(), sa.capacity(),
                    sa.seed(), sa.bytesKeys(), SampleSql.seq(runsArgs), 0, 0), null), "_skim_piece" + swap.size());
            innerOut.add(piece);
            swap.put(ae, SampleRule.complete(new SamplePiecesAggregate(sa.name(), sa.capacity(), sa.seed(),
                    sa.bytesKeys(), "bucketed build: " + nb + " fingerprint buckets of sorted runs",
                    SampleSql.seq(List.of(piece.toAttribute())), 0, 0), ae));
        }
        Project project = new Project(SampleSql.seq(projected), child);
        Aggregate inner = new Aggregate(SampleSql.seq(List.<Expression>of(bucket.child())), SampleSql.seq(innerOut),
                project, Option.empty());
        List<NamedExpression> outerOut = new ArrayList<>();
        for (NamedExpression ne : SampleSql.list(agg.aggregateExpressions())) {
            outerOut.add((NamedExpression) SampleRule.swapped((Expression) ne, swap, new LinkedHashMap<>()));
        }
        return new Aggregate(SampleSql.seq(List.<Expression>of()), SampleSql.seq(outerOut), inner, agg.hint());
    }
}
