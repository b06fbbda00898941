package io.skimsketch.spark.sql;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.spark.sql.catalyst.expressions.Alias;
import org.apache.spark.sql.catalyst.expressions.And;
import org.apache.spark.sql.catalyst.expressions.Attribute;
import org.apache.spark.sql.catalyst.expressions.Cast;
import org.apache.spark.sql.catalyst.expressions.Coalesce;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.GreaterThan;
import org.apache.spark.sql.catalyst.expressions.If;
import org.apache.spark.sql.catalyst.expressions.IsNull;
import org.apache.spark.sql.catalyst.expressions.Literal;
import org.apache.spark.sql.catalyst.expressions.NamedExpression;
import org.apache.spark.sql.catalyst.expressions.NamedExpression$;
import org.apache.spark.sql.catalyst.expressions.EvalMode$;
import org.apache.spark.sql.catalyst.expressions.NumericEvalContext$;
import org.apache.spark.sql.catalyst.expressions.aggregate.AggregateExpression;
import org.apache.spark.sql.catalyst.expressions.aggregate.AggregateFunction;
import org.apache.spark.sql.catalyst.expressions.aggregate.Complete$;
import org.apache.spark.sql.catalyst.expressions.aggregate.Count;
import org.apache.spark.sql.catalyst.expressions.aggregate.Max;
import org.apache.spark.sql.catalyst.expressions.aggregate.Min;
import org.apache.spark.sql.catalyst.expressions.aggregate.Sum;
import org.apache.spark.sql.catalyst.expressions.objects.StaticInvoke;
import org.apache.spark.sql.catalyst.plans.logical.Aggregate;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.catalyst.rules.Rule;
import org.apache.spark.sql.types.AbstractDataType;
import org.apache.spark.sql.types.BinaryType;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.DecimalType;
import scala.Option;
import scala.PartialFunction$;
import scala.runtime.AbstractFunction1;

/**
 * The scale rule of skim_sample_agg (an optimizer rule: SkimExtensions injects it, native.register adds
 * it to the session's extra optimizations). An ungrouped Aggregate of integer-total samples over one key (one
 * seed) takes the bucketed build ({@link SampleFastPlan}: per-task sorted runs of fingerprint totals, no generic
 * hash aggregate). Otherwise (float weights, GROUP BY, different seeds, or the bucketed build switched off: the
 * sample aggregate's plan string says which) an Aggregate whose aggregate functions are all
 * skim_sample_agg over one key becomes
 * <pre>
 *   Aggregate(G, [..., skim_sample_agg over totals(k, t), ...],
 *     Aggregate(G + [k], [G, k, SUM(w) AS t | COUNT(1) AS t], child))
 * </pre>
 * so Spark's shuffle groups the rows by (G, k) (string and binary keys by their canonical key, the
 * fingerprint64 the sample keeps: a bigint) and the sample aggregate sees each key once with its
 * exact total: its partial buffers keep only the m + 1 smallest (rank, key) entries, whatever the number
 * of distinct keys. The SUM is exact or an error, never a wrapped value: int64 for integer weights
 * (ANSI overflow check, whatever spark.sql.ansi.enabled says), float64 for floats (NaN weights skipped,
 * infinities the core's error), DECIMAL(p, 0) weights checked to fit int64 per row. NULL weights are
 * skipped by SUM (a key with only NULL weights has a NULL total: not in the table); NULL keys form one
 * group whose total is the null weight. COUNT, SUM, MIN and MAX beside the samples are computed per
 * (group, key) in the inner aggregate and combined in the outer one (a SUM of the counts, a SUM cast
 * back to its type, a MIN of the minima). Aggregates it cannot rewrite (other aggregate functions,
 * DISTINCT or FILTER, several keys, non-deterministic expressions) keep the raw form, exact but
 * holding every key's total in memory; so does a streaming aggregate (Spark runs one streaming
 * aggregation per query, and a stream is what the sketches are for).
 */
public final class SampleRule extends Rule<LogicalPlan> {
    private static final long serialVersionUID = 1L;

    @Override
    public LogicalPlan apply(LogicalPlan plan) {
        return plan.transformUp(PartialFunction$.MODULE$.fromFunction(new AbstractFunction1<LogicalPlan, LogicalPlan>() {
            @Override
            public LogicalPlan apply(LogicalPlan p) {
                return p instanceof Aggregate ? rewrite((Aggregate) p) : p;
            }
        }));
    }

    private static List<AggregateExpression> aggregates(Aggregate agg) {
        List<AggregateExpression> out = new ArrayList<>();
        for (NamedExpression ne : SampleSql.list(agg.aggregateExpressions())) {
            ((Expression) ne).foreach(new AbstractFunction1<Expression, scala.runtime.BoxedUnit>() {
                @Override
                public scala.runtime.BoxedUnit apply(Expression e) {
                    if (e instanceof AggregateExpression) {
                        out.add((AggregateExpression) e);
                    }
                    return scala.runtime.BoxedUnit.UNIT;
                }
            });
        }
        return out;
    }

    static Alias alias(Expression e, String name) {
        return new Alias(e, name, NamedExpression$.MODULE$.newExprId(), SampleSql.seq(List.of()), Option.empty(),
                SampleSql.seq(List.of()));
    }

    static AggregateExpression complete(AggregateFunction f, AggregateExpression like) {
        return new AggregateExpression(f, Complete$.MODULE$, false, Option.empty(),
                like == null ? NamedExpression$.MODULE$.newExprId() : like.resultId());
    }

    private static Expression invoke(String method, DataType type, Expression arg) {
        return new StaticInvoke(SampleWeights.class, type, method, SampleSql.seq(List.of(arg)),
                SampleSql.seq(List.<AbstractDataType>of(arg.dataType())), true, true, true, Option.empty());
    }

    /** The sample's weight as its totals add it (bigint or double, NaN as NULL), or null (a count). */
    private static Expression weight(SampleAggregate sa) {
        Expression w = sa.weight();
        if (w == null) {
            return null;
        }
        if (sa.isFloatTotals()) {
            return invoke("doubleWeight", DataTypes.DoubleType, w);
        }
        return w.dataType() instanceof DecimalType ? invoke("decimalWeight", DataTypes.LongType, w) : w;
    }

    /** The per-key total of the sample's weight: COUNT(1), or an exact SUM. */
    private static AggregateFunction total(SampleAggregate sa) {
        Expression w = weight(sa);
        if (w == null) {
            return new Count(SampleSql.seq(List.of(Literal.create(1L, DataTypes.LongType))));
        }
        // integer totals: a TRY sum (NULL on overflow), checked by checked() against the count of weights, so an
        // overflow is the core's CounterOverflowError with its remedy, not Spark's ANSI hint (which cannot help)
        return new Sum(w, NumericEvalContext$.MODULE$.apply(sa.isFloatTotals() ? EvalMode$.MODULE$.ANSI()
                : EvalMode$.MODULE$.TRY(), false));
    }

    /** The inner aggregate's total column: the SUM, checked (integer weights) to have overflowed nowhere. */
    private static Expression checked(SampleAggregate sa, AggregateFunction total) {
        Expression sum = complete(total, null);
        if (sa.weight() == null || sa.isFloatTotals()) {
            return sum;
        }
        Expression count = complete(new Count(SampleSql.seq(List.of(((Sum) total).child()))), null);
        Expression overflow = new StaticInvoke(SampleWeights.class, DataTypes.LongType, "totalOverflow",
                SampleSql.seq(List.of()), SampleSql.seq(List.of()), false, true, false, Option.empty());
        return new If(new And(new IsNull(sum), new GreaterThan(count, Literal.create(0L, DataTypes.LongType))),
                overflow, sum);
    }

    /** Aggregates that combine exactly from their per-(group, key) parts: COUNT, SUM, MIN, MAX. */
    private static boolean decomposable(AggregateFunction f) {
        return f instanceof Count || f instanceof Sum || f instanceof Min || f instanceof Max;
    }

    /** The outer aggregate of a decomposable one over its per-(group, key) parts, with its original type. */
    static Expression combined(AggregateExpression ae, Attribute part) {
        AggregateFunction f = ae.aggregateFunction();
        if (f instanceof Min) {
            return complete(new Min(part), ae);
        }
        if (f instanceof Max) {
            return complete(new Max(part), ae);
        }
        Expression sum = complete(new Sum(part, NumericEvalContext$.MODULE$.apply(EvalMode$.MODULE$.ANSI(), false)),
                ae);
        if (f instanceof Count) { // a count over no rows is 0, a sum over none NULL
            return new Coalesce(SampleSql.seq(List.of(sum, Literal.create(0L, DataTypes.LongType))));
        }
        return sum.dataType().equals(ae.dataType()) ? sum : new Cast(sum, ae.dataType(), Option.empty());
    }

    static LogicalPlan rewrite(Aggregate agg) {
        if (agg.isStreaming()) {
            return agg; // one streaming aggregation per query: the raw form keeps exact totals in the state
        }
        List<AggregateExpression> aes = aggregates(agg);
        if (aes.isEmpty()) {
            return agg;
        }
        Expression key = null;
        List<SampleAggregate> samples = new ArrayList<>();
        for (AggregateExpression ae : aes) {
            if (ae.isDistinct() || ae.filter().isDefined()) {
                return agg;
            }
            if (!(ae.aggregateFunction() instanceof SampleAggregate)) {
                if (!decomposable(ae.aggregateFunction())) {
                    return agg;
                }
                continue;
            }
            SampleAggregate sa = (SampleAggregate) ae.aggregateFunction();
            if (sa.isTotals()) {
                return agg;
            }
            samples.add(sa);
            if (key == null) {
                key = sa.key();
            } else if (!key.semanticEquals(sa.key())) {
                return agg;
            }
        }
        if (key == null || !key.deterministic()) {
            return agg;
        }
        String why = SampleFastPlan.whyNot(agg, samples);
        if (why == null) {
            return SampleFastPlan.rewrite(agg, aes, key);
        }
        List<Expression> groups = SampleSql.list(agg.groupingExpressions());
        List<Expression> innerGroup = new ArrayList<>();
        List<NamedExpression> innerOut = new ArrayList<>();
        List<Expression> outerGroup = new ArrayList<>();
        Map<Expression, Attribute> replaced = new LinkedHashMap<>();
        for (int i = 0; i < groups.size(); i++) {
            Expression g = groups.get(i);
            if (!g.deterministic()) {
                return agg;
            }
            innerGroup.add(g);
            NamedExpression ne = g instanceof Attribute ? (Attribute) g : alias(g, "_skim_g" + i);
            innerOut.add(ne);
            outerGroup.add(ne.toAttribute());
            if (!(g instanceof Attribute)) {
                replaced.put(g, ne.toAttribute());
            }
        }
        if (key.dataType() instanceof BinaryType) { // group by the canonical key: a fixed-width bigint shuffle
            key = invoke("fingerprint", DataTypes.LongType, key);
        }
        innerGroup.add(key);
        Alias k = alias(key, "_skim_key");
        innerOut.add(k);
        Map<AggregateExpression, Expression> swap = new LinkedHashMap<>();
        for (AggregateExpression ae : aes) {
            if (swap.containsKey(ae)) {
                continue;
            }
            if (!(ae.aggregateFunction() instanceof SampleAggregate)) { // COUNT/SUM/MIN/MAX beside the samples
                Alias part = alias(complete(ae.aggregateFunction(), null), "_skim_part" + swap.size());
                innerOut.add(part);
                swap.put(ae, combined(ae, part.toAttribute()));
                continue;
            }
            SampleAggregate sa = (SampleAggregate) ae.aggregateFunction();
            Alias t = alias(checked(sa, total(sa)), "_skim_total" + swap.size());
            innerOut.add(t);
            Expression w = weight(sa); // the per-key minimum weight: a negative one clears the sign flag
            Alias low = w == null ? null : alias(complete(new Min(w), null), "_skim_min" + swap.size());
            if (low != null) {
                innerOut.add(low);
            }
            swap.put(ae, complete(sa.overTotals(k.toAttribute(), t.toAttribute(), low == null ? null
                    : low.toAttribute(), why), ae));
        }
        Aggregate inner = new Aggregate(SampleSql.seq(innerGroup), SampleSql.seq(innerOut), agg.child(),
                Option.empty());
        List<NamedExpression> outerOut = new ArrayList<>();
        for (NamedExpression ne : SampleSql.list(agg.aggregateExpressions())) {
            outerOut.add((NamedExpression) swapped((Expression) ne, swap, replaced));
        }
        return new Aggregate(SampleSql.seq(outerGroup), SampleSql.seq(outerOut), inner, agg.hint());
    }

    /** e with the swapped aggregates replaced, and the grouping expressions replaced by their attributes. */
    static Expression swapped(Expression e, Map<AggregateExpression, Expression> swap,
                              Map<Expression, Attribute> replaced) {
        return e.transformDown(PartialFunction$.MODULE$.fromFunction(new AbstractFunction1<Expression, Expression>() {
            @Override
            public Expression apply(Expression x) {
                if (x instanceof AggregateExpression && swap.containsKey(x)) {
                    return swap.get(x);
                }
                for (Map.Entry<Expression, Attribute> r : replaced.entrySet()) {
                    if (r.getKey().semanticEquals(x)) {
                        return r.getValue();
                    }
                }
                return x;
            }
        }));
    }
}
