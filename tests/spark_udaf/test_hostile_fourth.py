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


# -- item 1: collated string keys are refused, naming the remedy (native SQL and the Python API) --------------
COLLATIONS = ["UTF8_LCASE", "UNICODE_CI", "UNICODE", "UTF8_LCASE_RTRIM", "UTF8_BINARY_RTRIM"]
NAMES = "select * from values ('Alice'), ('alice'), ('ALICE'), ('bob'), ('Bob') as t(k)"


@pytest.mark.parametrize("collation", COLLATIONS)
def test_a_collated_key_is_refused_in_sql_with_the_remedy(jar, collation):
    from pyspark.errors import AnalysisException

    for call in (f"skim_sample_agg(k COLLATE {collation})", f"skim_sketch_agg(k COLLATE {collation}, 4096)",
                 f"skim_hash_sketch_agg(k COLLATE {collation}, width => 64, depth => 3)",
                 f"skim_sample_agg(key => k COLLATE {collation}, nbytes => 4096)"):
        with pytest.raises(AnalysisException, match=f"collation {collation}.*lower\\(key\\) COLLATE UTF8_BINARY"):
            jar.sql(f"select {call} from ({NAMES})").collect()
    with pytest.raises(AnalysisException, match=f"collation {collation}"):
        jar.sql(f"select skim_frequency(s, 'alice' COLLATE {collation}) from (select skim_sketch_agg(k) s from "
                f"({NAMES}))").collect()


@pytest.mark.parametrize("collation", COLLATIONS)
def test_a_collated_key_is_refused_by_the_python_api_with_the_same_remedy(jar, collation):
    df = jar.sql(f"select k COLLATE {collation} AS k from ({NAMES})")
    for template in (ss.JoinSample.for_bytes(4096), ss.SkimmedSketch.for_bytes(4096)):
        for path in ("native", "python"):
            with pytest.raises(ss.KeyTypeError, match=f"collation {collation}.*lower\\(key\\) COLLATE UTF8_BINARY"):
                build.sketch_column(df, "k", template, path=path)


def test_the_remedy_gives_spark_s_join_count(jar):
    q = f"select lower(k) COLLATE UTF8_BINARY AS k from ({NAMES})"
    want = jar.sql(f"select count(*) from (select k COLLATE UTF8_LCASE k from ({NAMES})) a join "
                   f"(select k COLLATE UTF8_LCASE k from ({NAMES})) b using (k)").collect()[0][0]
    got = jar.sql(f"select skim_join_size(s, s) from (select skim_sample_agg(k) s from ({q}))").collect()[0][0]
    assert want == got == 13
    assert jar.sql(f"select k COLLATE UTF8_BINARY AS k from ({NAMES})").agg(SF.skim_sample_agg("k")).count() == 1


# -- item 5: a crafted blob is refused by the JVM before it allocates ------------------------------------------
def test_the_jvm_refuses_a_crafted_blob_by_its_totals_section(jar):
    from tests.core.sample.test_sample_fourth import _crafted

    blob = _crafted(16_000_000, 2_000_000, b"\x02" * 10)
    df = jar.createDataFrame([(bytearray(blob),)], "s binary")
    with pytest.raises(Exception, match="totals section of 10 bytes does not hold exactly 16000000 varints"):
        df.select(SF.skim_self_join_size("s")).collect()


# -- item 8: an unaliased sample's name carries its parameters --------------------------------------------------
def test_unaliased_samples_of_other_parameters_get_other_names(jar, small, tmp_path):
    cols = small.agg(SF.skim_sample_agg("k"), SF.skim_sample_agg("k", nbytes=4096),
                     SF.skim_sample_agg("k", seed=7), SF.skim_sample_agg("k", nbytes=8192, seed=2**64 - 1)).columns
    assert cols == ["skim_sample_agg(k)", "skim_sample_agg(k, nbytes => 4096)", "skim_sample_agg(k, seed => 7)",
                    "skim_sample_agg(k, nbytes => 8192, seed => 18446744073709551615)"]
    small.agg(SF.skim_sample_agg("k", nbytes=4096), SF.skim_sample_agg("k", nbytes=8192)).write.parquet(
        str(tmp_path / "two"))


# -- item 9: messages that say what helps -----------------------------------------------------------------------
def test_an_int64_total_overflow_names_the_float_remedy_not_ansi(jar):
    q = "select skim_sample_agg(k, w) from (select 1 k, 9223372036854775807L w union all select 1, 5)"
    for ansi in ("true", "false"):
        jar.conf.set("spark.sql.ansi.enabled", ansi)
        try:
            with pytest.raises(Exception, match="CounterOverflowError.*CAST\\(weight AS DOUBLE\\)") as e:
                jar.sql(q).collect()
            assert "ansi.enabled" not in str(e.value)
        finally:
            jar.conf.unset("spark.sql.ansi.enabled")
    fine = jar.sql("select skim_sample_agg(k, w) s from (select 1 k, 9223372036854775800L w union all select 1, 5) "
                   "union all select skim_sample_agg(k, w) from (select 2 k, cast(null as bigint) w)").collect()
    assert ss.from_bytes(bytes(fine[0][0])).sample_items()[1].tolist() == [9223372036854775805]
    assert ss.from_bytes(bytes(fine[1][0])).n_keys == 0


def test_a_constant_right_after_the_key_says_it_was_read_as_nbytes(jar):
    from pyspark.errors import AnalysisException

    with pytest.raises(AnalysisException, match="got 1: the constant right after the key is nbytes; .*weight => 1"):
        jar.sql("select skim_sample_agg(id, 1) from range(3)").collect()
    with pytest.raises(AnalysisException, match=r"got 2 \(the value of \(1 \+ 1\)\)"):
        jar.sql("select skim_sample_agg(id, nbytes => 1 + 1) from range(3)").collect()
