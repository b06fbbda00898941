"""Never silently wrong, fourth pass (issue 33), the Spark half: each case natively (the jar's functions) and,
where one exists, through the Python path or the Python SQL functions."""

from __future__ import annotations

import pytest

import skimsketch as ss
import spark_udaf
from spark_udaf import build
from spark_udaf import functions as SF
from spark_udaf import native

pytestmark = pytest.mark.spark

BIG_SEEDS = [2**63, 2**63 + 5, 2**64 - 1]


@pytest.fixture(scope="module")
def jar(spark):
    if not native.loaded(spark):
        pytest.skip("the session's JVM has no native jar")
    return spark


@pytest.fixture(scope="module")
def small(spark):
    from pyspark.sql import functions as F

    return spark.range(40).withColumn("k", F.col("id") % 13)


def _core(n: int, seed: int) -> bytes:
    return ss.JoinSample.for_bytes(n, seed=seed).update([i % 13 for i in range(40)]).to_bytes()


# -- item 2: seeds of 2**63 and more on every sample path -------------------------------------------------
@pytest.mark.parametrize("seed", BIG_SEEDS)
def test_a_sample_seed_past_int64_works_on_every_path(jar, small, seed):
    want = _core(4096, seed)
    template = ss.JoinSample.for_bytes(4096, seed=seed)
    for path in ("native", "python"):
        assert build.sketch_column(small, "k", template, path=path).to_bytes() == want, path
    assert bytes(small.agg(SF.skim_sample_agg("k", nbytes=4096, seed=seed)).collect()[0][0]) == want
    by = build.sketch_by(small.withColumn("g", small.id * 0), "k", template, "g").collect()
    assert [bytes(r["sketch"]) for r in by] == [want]
    est = spark_udaf.estimate_join_size(small, "k", small, "k", nbytes=4096, seed=seed)
    assert est.value == ss.from_bytes(want).join_size(ss.from_bytes(want)).value


# -- item 8: labels ---------------------------------------------------------------------------------------------
def test_estimate_join_size_says_a_sample_answered(small):
    est = spark_udaf.estimate_join_size(small, "k", small, "k")
    assert est.method == "sample" and est.detail["answered_by"] == "sample" and est.detail["summary"] == "sample"
    sk = spark_udaf.estimate_join_size(small, "k", small, "k", summary="sketch")
    assert sk.detail["answered_by"] == "sketch"
    many = small.sparkSession.range(20000).selectExpr("id % 5000 AS k")
    exact = spark_udaf.estimate_join_size(many, "k", many, "k", ss.JoinSample.for_bytes(148), tolerance=0.0)
    assert exact.detail["answered_by"] == "exact" and exact.value == 20000 * 4
