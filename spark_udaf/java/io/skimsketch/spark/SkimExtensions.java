package io.skimsketch.spark;

import io.skimsketch.spark.sql.SampleRule;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.SparkSessionExtensions;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.catalyst.rules.Rule;
import scala.runtime.AbstractFunction1;
import scala.runtime.BoxedUnit;

/**
 * spark.sql.extensions=io.skimsketch.spark.SkimExtensions : every session gets the skim_* aggregates
 * (SQL-only deployments: Thrift server, Spark Connect server).
 */
public final class SkimExtensions extends AbstractFunction1<SparkSessionExtensions, BoxedUnit> {
    @Override
    public BoxedUnit apply(SparkSessionExtensions ext) {
        SkimFunctions.all().forEach(ext::injectFunction);
        ext.injectOptimizerRule(new AbstractFunction1<SparkSession, Rule<LogicalPlan>>() {
            @Override
            public Rule<LogicalPlan> apply(SparkSession s) {
                return new SampleRule(); // skim_sample_agg over a GROUP BY of its key: bounded partials
            }
        });
        return BoxedUnit.UNIT;
    }
}
