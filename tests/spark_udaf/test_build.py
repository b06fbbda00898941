"""sketch_column / sketch_partials / sketch_by on a real local Spark session."""

import numpy as np
import pandas as pd
import pytest

import skimsketch as ss
import spark_udaf

pytestmark = pytest.mark.spark

N = 6000


def _keys_frame(seed=11):
    """Zipf-ish int keys with nulls, signed integer weights, a day column."""
    rng = np.random.default_rng(seed)
    k = (rng.zipf(1.3, N) % 500).astype("int64")
    pdf = pd.DataFrame({
        "k": pd.array(k, dtype="Int64"),
        "w": rng.integers(-3, 6, N).astype("int64"),
        "day": rng.integers(0, 4, N).astype("int64"),
        "s": [f"user-{x}" for x in k],
    })
    pdf.loc[::37, "k"] = None
    pdf.loc[::41, "s"] = None
    return pdf


@pytest.fixture(scope="module")
def frame(spark):
    pdf = _keys_frame()
    return pdf, spark.createDataFrame(pdf).cache()


SHAPES = [
    lambda: ss.HashSketch(width=128, depth=5, seed=3),
    lambda: ss.SkimmedSketch(width=64, depth=5, seed=4, domain=500),
    lambda: ss.AGMSSketch(width=16, depth=3, seed=5),
]


# every kind and every partitioning once in the default run; the other pairs with -m slow (tests/conftest.py)
FAST_PARAMS = {"test_byte_identical_to_in_memory_any_partitioning": {"1-hash", "3-skimmed", "8-agms"}}


@pytest.mark.parametrize("make", SHAPES, ids=["hash", "skimmed", "agms"])
@pytest.mark.parametrize("partitions", [1, 3, 8])
def test_byte_identical_to_in_memory_any_partitioning(frame, make, partitions):
    pdf, df = frame
    expected = make().update(pdf["k"], weights=pdf["w"].to_numpy()).to_bytes()
    got = spark_udaf.sketch_column(df.repartition(partitions), "k", make(), weight="w")
    assert got.to_bytes() == expected


def test_tree_merge_is_byte_identical(frame):
    pdf, df = frame
    expected = ss.HashSketch(width=128, depth=5, seed=3).update(pdf["k"]).to_bytes()
    got = spark_udaf.sketch_column(df.repartition(7), "k", ss.HashSketch(width=128, depth=5, seed=3), merge="tree")
    assert got.to_bytes() == expected


def test_small_chunks_and_string_keys(frame):
    pdf, df = frame
    expected = ss.HashSketch(width=64, depth=3, seed=9).update(pdf["s"].tolist())
    got = spark_udaf.sketch_column(df.repartition(3), "s", ss.HashSketch(width=64, depth=3, seed=9), chunk_rows=100)
    assert got.to_bytes() == expected.to_bytes()
    assert got.null_weight == pdf["s"].isna().sum() > 0


def test_nulls_are_skipped_and_counted(spark):
    df = spark.createDataFrame([(1, 2), (None, 5), (1, None), (None, None), (3, 1)], "k bigint, w bigint")
    got = spark_udaf.sketch_column(df, "k", ss.HashSketch(width=32, depth=3, seed=1), weight="w")
    # rows with a null weight are skipped (as SUM skips them); null keys go to null_weight
    expected = ss.HashSketch(width=32, depth=3, seed=1).update([1, None, 3], weights=[2, 5, 1])
    assert got.to_bytes() == expected.to_bytes()
    assert (got.total_weight, got.null_weight) == (3, 5)


def test_returns_a_new_sketch_and_never_changes_the_template(frame):
    pdf, df = frame
    template = ss.HashSketch(width=128, depth=5, seed=3)
    a = spark_udaf.sketch_column(df, "k", template)
    b = spark_udaf.sketch_column(df, "k", template)
    assert a is not template and b is not a and template.is_empty
    expected = ss.HashSketch(width=128, depth=5, seed=3).update(pdf["k"])
    assert a.to_bytes() == b.to_bytes() == expected.to_bytes()
    # a sketch holding data is refused (its data would be lost or joined with itself), naming the remedy
    start = ss.HashSketch(width=128, depth=5, seed=3).update([1, 2, 3])
    with pytest.raises(ValueError, match=r"sketch holds data \(total weight 3.*sketch.empty_like\(\)"):
        spark_udaf.sketch_column(df, "k", start)
    assert start.total_weight == 3
    merged = start.merge(spark_udaf.sketch_column(df, "k", start.empty_like()))
    assert merged.to_bytes() == ss.HashSketch(width=128, depth=5, seed=3).update([1, 2, 3]).update(pdf["k"]).to_bytes()


def test_empty_dataframe_leaves_sketch_empty(spark):
    df = spark.createDataFrame([], "k bigint")
    got = spark_udaf.sketch_column(df, "k", ss.HashSketch(width=32, depth=3, seed=1))
    assert got.is_empty
    assert spark_udaf.sketch_partials(df, "k", ss.HashSketch(width=32, depth=3, seed=1)).count() == 0


def test_float_weights_need_float_counters(spark):
    df = spark.createDataFrame([(1, 0.5), (2, 1.25), (1, 2.0)], "k int, x double")
    got = spark_udaf.sketch_column(df.repartition(2), "k", ss.HashSketch(width=32, depth=3, seed=1, dtype="float64"),
                                   weight="x")
    expected = ss.HashSketch(width=32, depth=3, seed=1, dtype="float64").update([1, 2, 1], weights=[0.5, 1.25, 2.0])
    np.testing.assert_allclose(got.counters, expected.counters)
    assert got.total_weight == pytest.approx(3.75)


def test_partials_plan_has_no_shuffle(frame):
    _, df = frame
    parts = spark_udaf.sketch_partials(df.repartition(4), "k", ss.HashSketch(width=32, depth=3, seed=1))
    # only the test's own repartition exchanges rows; building adds no exchange
    plan = parts._jdf.queryExecution().executedPlan().toString()
    assert plan.count("Exchange") <= 1
    no_repart = spark_udaf.sketch_partials(df, "k", ss.HashSketch(width=32, depth=3, seed=1))
    assert "Exchange" not in no_repart._jdf.queryExecution().executedPlan().toString()
    assert 1 <= parts.count() <= 4


def test_sketch_by_day_matches_per_group_in_memory(frame):
    pdf, df = frame
    rows = spark_udaf.sketch_by(df.repartition(3), "k", ss.HashSketch(width=64, depth=3, seed=2), by="day",
                                weight="w").collect()
    assert sorted(r.day for r in rows) == sorted(pdf["day"].unique().tolist())
    for r in rows:
        sub = pdf[pdf["day"] == r.day]
        expected = ss.HashSketch(width=64, depth=3, seed=2).update(sub["k"], weights=sub["w"].to_numpy())
        assert r.sketch == expected.to_bytes(), r.day


def test_bad_inputs_name_the_problem(spark, frame):
    _, df = frame
    sk = ss.HashSketch(width=32, depth=3, seed=1)
    with pytest.raises(ValueError, match="column 'nope' not found"):
        spark_udaf.sketch_column(df, "nope", sk)
    dates = spark.sql("SELECT DATE'2024-01-01' AS x")
    with pytest.raises(ss.KeyTypeError, match="key column 'x' has type date"):
        spark_udaf.sketch_column(dates, "x", sk)
    dbl = spark.createDataFrame([(1.5,)], "x double")  # float keys: integral values only (checked per value)
    with pytest.raises(ss.KeyTypeError, match="float key 1.5 is not integral"):
        spark_udaf.sketch_column(dbl, "x", sk)
    with pytest.raises(ss.KeyTypeError, match="weight column 's' has type string"):
        spark_udaf.sketch_column(df, "k", sk, weight="s")
    with pytest.raises(TypeError, match="must be a skimsketch sketch"):
        spark_udaf.sketch_column(df, "k", object())
    with pytest.raises(ValueError, match="merge must be"):
        spark_udaf.sketch_column(df, "k", sk, merge="fast")


def test_domain_violation_surfaces_from_executors(spark):
    df = spark.createDataFrame([(1,), (900,)], "k bigint")
    with pytest.raises(Exception, match="outside the declared domain"):
        spark_udaf.sketch_column(df, "k", ss.SkimmedSketch(width=32, depth=3, seed=1, domain=500))


def test_sketch_pair_one_job_equals_two_sketch_columns(spark, frame):
    pdf, df = frame
    other = spark.createDataFrame([(1, 2), (None, 1), (7, -3), (1, 4)], "k int, v int")
    tmpl = ss.HashSketch(width=64, depth=5, seed=12)
    a, b = spark_udaf.sketch_pair(df.repartition(3), "k", other, "k", tmpl, lweight="w")
    assert a.to_bytes() == tmpl.empty_like().update(pdf["k"], weights=pdf["w"].to_numpy()).to_bytes()
    assert b.to_bytes() == tmpl.empty_like().update([1, None, 7, 1]).to_bytes()  # unweighted side
    assert tmpl.is_empty
    # string keys on one side, binary on the other: hashed alike
    bins = spark.createDataFrame([(bytearray(b"user-1"),), (None,)], "s binary")
    a, b = spark_udaf.sketch_pair(df, "s", bins, "s", tmpl)
    assert a.to_bytes() == tmpl.empty_like().update(pdf["s"].tolist()).to_bytes()
    assert b.to_bytes() == tmpl.empty_like().update([b"user-1", None]).to_bytes()
    with pytest.raises(ValueError, match="incompatible types bigint and binary"):
        spark_udaf.sketch_pair(df, "k", bins, "s", tmpl)


def test_sketch_by_string_groups(frame):
    pdf, df = frame
    rows = spark_udaf.sketch_by(df.repartition(2), "k", ss.HashSketch(width=32, depth=3, seed=2), by="s").collect()
    assert len(rows) == pdf["s"].nunique(dropna=False)
    for r in rows[:20]:
        sub = pdf[pdf["s"].isna()] if r.s is None else pdf[pdf["s"] == r.s]
        assert r.sketch == ss.HashSketch(width=32, depth=3, seed=2).update(sub["k"]).to_bytes(), r.s


def test_sketch_parquet_matches_sketch_column_and_in_memory(spark, frame, tmp_path):
    pdf, df = frame
    path = str(tmp_path / "t")
    # 3 files, several row groups each (tiny parquet.block.size)
    df.repartition(3).write.option("parquet.block.size", 4096).parquet(path)
    tmpl = ss.HashSketch(width=64, depth=5, seed=4)
    expected = tmpl.empty_like().update(pdf["k"], weights=pdf["w"].to_numpy()).to_bytes()
    for tasks in (1, 2, 8):  # whole files per task, and row groups split across tasks
        got = spark_udaf.sketch_parquet(spark, path, "k", tmpl.empty_like(), weight="w", tasks=tasks)
        assert got.to_bytes() == expected, tasks
    got = spark_udaf.sketch_parquet(spark, [path], "s", tmpl.empty_like(), chunk_rows=500)
    assert got.to_bytes() == tmpl.empty_like().update(pdf["s"].tolist()).to_bytes()
    assert got == spark_udaf.sketch_column(spark.read.parquet(path), "s", tmpl.empty_like())


def test_sketch_parquet_falls_back_for_partition_columns(spark, tmp_path):
    path = str(tmp_path / "p")
    spark.createDataFrame([(1, 10), (2, 20)], "k bigint, day bigint").write.partitionBy("day").parquet(path)
    got = spark_udaf.sketch_parquet(spark, path, "day", ss.HashSketch(width=8, depth=3, seed=1))
    assert got.to_bytes() == ss.HashSketch(width=8, depth=3, seed=1).update([10, 20]).to_bytes()
    got = spark_udaf.sketch_parquet(spark, path, "k", ss.HashSketch(width=8, depth=3, seed=1))
    assert got.to_bytes() == ss.HashSketch(width=8, depth=3, seed=1).update([1, 2]).to_bytes()


def test_sketch_column_takes_the_parquet_fast_path_only_for_plain_scans(spark, tmp_path):
    """A bare Parquet scan is read with pyarrow on the executors; anything else
    (filter, derived column, repartition, non-file source) goes through mapInArrow;
    both give the in-memory sketch byte for byte."""
    import pandas as pd
    from pyspark.sql import functions as F

    from spark_udaf.build import plain_parquet_scan, sketch_column

    rng = np.random.default_rng(5)
    pdf = pd.DataFrame({"k": rng.integers(0, 1000, 5000), "w": rng.integers(1, 5, 5000),
                        "s": [f"x{i % 50}" for i in range(5000)]})
    spark.createDataFrame(pdf).repartition(3).write.parquet(str(tmp_path / "t"))
    df = spark.read.parquet(str(tmp_path / "t"))
    assert len(plain_parquet_scan(df)) == 3 and plain_parquet_scan(df.select("k", "w"))
    for not_plain in (df.filter("k > 3"), df.withColumn("k2", F.col("k") + 1), df.repartition(4), spark.range(10)):
        assert plain_parquet_scan(not_plain) is None
    template = ss.HashSketch(256, 5, seed=3)
    expected = template.empty_like().update(pdf.k.values, weights=pdf.w.values).to_bytes()
    fast = sketch_column(df, "k", template.empty_like(), "w")
    slow = sketch_column(df, "k", template.empty_like(), "w", parquet_fast_path=False)
    assert fast.to_bytes() == slow.to_bytes() == expected
    strings = sketch_column(df.select("s"), "s", template.empty_like())
    assert strings.to_bytes() == template.empty_like().update(list(pdf.s)).to_bytes()
    filtered = sketch_column(df.filter("k >= 500"), "k", template.empty_like())
    assert filtered.to_bytes() == template.empty_like().update(pdf.k.values[pdf.k.values >= 500]).to_bytes()


def test_decimal_weights_follow_the_core_rule(spark):
    """DECIMAL weights: exact, or nearest float64 into float sketches; refused on the driver for int sketches."""
    from decimal import Decimal

    df = spark.sql("SELECT * FROM VALUES (1, CAST(4.38 AS DECIMAL(10,2))), (2, CAST(1.99 AS DECIMAL(10,2))), "
                   "(2, CAST(NULL AS DECIMAL(10,2))) AS t(k, w)")
    got = spark_udaf.sketch_column(df, "k", ss.HashSketch(64, 3, seed=1, dtype="float64"), weight="w")
    want = ss.HashSketch(64, 3, seed=1, dtype="float64").update([1, 2, 2], weights=[Decimal("4.38"), Decimal("1.99"), None])
    assert got.to_bytes() == want.to_bytes() and got.total_weight == 4.38 + 1.99
    with pytest.raises(ss.KeyTypeError, match="DECIMAL|decimal\\(10,2\\).*dtype='float64'"):
        spark_udaf.sketch_column(df, "k", ss.HashSketch(64, 3, seed=1), weight="w")
    ints = df.selectExpr("k", "CAST(w * 100 AS DECIMAL(12,0)) AS w")
    got = spark_udaf.sketch_column(ints, "k", ss.HashSketch(64, 3, seed=1), weight="w")
    assert got.to_bytes() == ss.HashSketch(64, 3, seed=1).update([1, 2], weights=[438, 199]).to_bytes()


# exact mode (docs/format.md): for_bytes templates start exact; ~500 distinct keys fit 16 KB, not 4 KB
EXACT_TEMPLATES = [
    lambda: ss.SkimmedSketch.for_bytes(16384, seed=4),
    lambda: ss.SkimmedSketch.for_bytes(4096, seed=4, domain=500),
]


@pytest.mark.parametrize("make", EXACT_TEMPLATES, ids=["stays-exact", "converts"])
@pytest.mark.parametrize("partitions,merge", [(1, "driver"), (3, "driver"), (8, "tree")])
def test_exact_mode_partials_insert_only_are_byte_identical(frame, make, partitions, merge):
    pdf, df = frame
    w = pdf["w"].abs().to_numpy()
    expected = make().update(pdf["k"], weights=w)
    assert expected.exact_mode == (make().exact_capacity >= 500)
    got = spark_udaf.sketch_column(df.selectExpr("*", "abs(w) AS a").repartition(partitions), "k", make(), weight="a",
                                   merge=merge)
    assert got.exact_mode == expected.exact_mode and got.to_bytes() == expected.to_bytes()


@pytest.mark.parametrize("make", EXACT_TEMPLATES, ids=["stays-exact", "converts"])
def test_exact_mode_partials_with_deletes_hold_the_same_data(frame, make):
    pdf, df = frame
    expected = make().update(pdf["k"], weights=pdf["w"].to_numpy())
    got = spark_udaf.sketch_column(df.repartition(5), "k", make(), weight="w")
    assert np.array_equal(got.counters, expected.counters) and got.total_weight == expected.total_weight
    if got.exact_mode == expected.exact_mode:
        assert got.to_bytes() == expected.to_bytes()


def test_columns_resolve_as_spark_resolves_them(frame):
    """Names case-insensitively (Spark's default), Column objects and expressions, for keys and weights;
    an unknown plain name is our error naming it, an unknown nested reference Spark's own."""
    from pyspark.errors import AnalysisException
    from pyspark.sql import functions as F

    pdf, df = frame
    t = ss.HashSketch(width=128, depth=5, seed=3)
    by_name = spark_udaf.sketch_column(df, "k", t, weight="w")
    assert spark_udaf.sketch_column(df, "K", t, weight="W") == by_name
    assert spark_udaf.sketch_column(df, F.col("k"), t, weight=F.col("w")) == by_name
    doubled = spark_udaf.sketch_column(df, F.col("k") + 0, t, weight=F.col("w") * 2, path="python")
    assert np.array_equal(doubled.counters, 2 * by_name.counters)
    parts = spark_udaf.sketch_by(df, F.col("k"), t, "day", weight="w", path="python").collect()
    assert ss.from_bytes(parts[0]["sketch"]).total_weight == int(pdf.loc[pdf.day == parts[0]["day"]].loc[
        pdf.k.notna(), "w"].sum())
    with pytest.raises(ValueError, match="column 'nope' not found"):
        spark_udaf.sketch_column(df, "nope", t)
    with pytest.raises(AnalysisException, match="nope"):
        spark_udaf.sketch_column(df, "nope.x", t)
