package io.skimsketch.spark;

import org.apache.spark.sql.SparkSessionExtensions;
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
        return BoxedUnit.UNIT;
    }
}
