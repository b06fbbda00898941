"""The skim_* Spark SQL functions end to end, including a stored-sketch Parquet table."""

import numpy as np
import pandas as pd
import pytest

import skimsketch as ss
import spark_udaf

pytestmark = pytest.mark.spark

W, D, S = 128, 5, 7


def _hash(**kw):
    return ss.HashSketch(width=kw.get("width", W), depth=D, seed=kw.get("seed", S), dtype=kw.get("dtype", "int64"))


@pytest.fixture(scope="module")
def sql(spark):
    spark_udaf.register(spark)
    rng = np.random.default_rng(21)
    n = 5000
    orders = pd.DataFrame({
        "cust": pd.array(rng.zipf(1.4, n) % 400, dtype="Int64"),
        "amount": rng.integers(1, 50, n).astype("int64"),
        "price": rng.random(n).round(3),
        "day": rng.integers(1, 6, n).astype("int64"),
        "name": [f"c{x}" for x in rng.integers(0, 50, n)],
    })
    orders.loc[::29, "cust"] = None
    visits = pd.DataFrame({
        "cust": pd.array((rng.zipf(1.2, n) + 2) % 400, dtype="Int64"),
        "day": rng.integers(1, 6, n).astype("int64"),
    })
    spark.createDataFrame(orders).repartition(3).createOrReplaceTempView("orders")
    spark.createDataFrame(visits).repartition(2).createOrReplaceTempView("visits")
    return spark, orders, visits


def one(spark, q):
    rows = spark.sql(q).collect()
    assert len(rows) == 1, rows
    return rows[0]


def test_registered_names(sql):
    spark, _, _ = sql
    names = {f.name for f in spark.catalog.listFunctions()}
    assert set(spark_udaf.FUNCTIONS) - {"skim_sketch_partials"} <= names


def test_skim_sketch_bytes_equal_in_memory(sql):
    spark, orders, _ = sql
    r = one(spark, f"SELECT skim_sketch(cust, {W}, {D}, {S}) AS s FROM orders")
    assert r.s == _hash().update(orders["cust"]).to_bytes()
    r = one(spark, f"SELECT skim_sketch(name, {W}, {D}, {S}) AS s FROM orders")
    assert r.s == _hash().update(orders["name"].tolist()).to_bytes()


def test_weighted_and_skimmed_builders(sql):
    spark, orders, _ = sql
    r = one(spark, f"SELECT skim_sketch_weighted(cust, amount, {W}, {D}, {S}) AS s FROM orders")
    assert r.s == _hash().update(orders["cust"], weights=orders["amount"].to_numpy()).to_bytes()
    r = one(spark, f"SELECT skim_sketch_weighted(cust, price, {W}, {D}, {S}) AS s FROM orders")
    expected = _hash(dtype="float64").update(orders["cust"], weights=orders["price"].to_numpy())
    got = ss.from_bytes(r.s)
    assert got.dtype == "float64"
    np.testing.assert_allclose(got.counters, expected.counters, rtol=1e-12, atol=1e-9)
    r = one(spark, f"SELECT skim_skimmed_sketch(cust, 64, {D}, {S}, 400) AS s FROM orders")
    assert r.s == ss.SkimmedSketch(width=64, depth=D, seed=S, domain=400).update(orders["cust"]).to_bytes()
    # domain NULL: the unbounded-key skimmed sketch (here over the keys as strings)
    r = one(spark, f"SELECT skim_skimmed_sketch(CAST(cust AS STRING), 64, {D}, {S}, CAST(NULL AS BIGINT)) AS s "
                   "FROM orders")
    as_str = [None if pd.isna(c) else str(int(c)) for c in orders["cust"]]
    expected = ss.SkimmedSketch(width=64, depth=D, seed=S).update(as_str)
    assert r.s == expected.to_bytes() and ss.from_bytes(r.s).domain is None


def test_grouped_build_and_merge(sql):
    spark, orders, _ = sql
    rows = spark.sql(f"SELECT day, skim_sketch(cust, {W}, {D}, {S}) AS s FROM orders GROUP BY day").collect()
    for r in rows:
        assert r.s == _hash().update(orders.loc[orders["day"] == r.day, "cust"]).to_bytes(), r.day
    merged = one(spark, f"""SELECT skim_merge(s) AS m FROM
        (SELECT day, skim_sketch(cust, {W}, {D}, {S}) AS s FROM orders GROUP BY day)""")
    assert merged.m == _hash().update(orders["cust"]).to_bytes()


def test_partials_table_function_is_map_side_and_merges_exactly(sql):
    spark, orders, _ = sql
    q = f"SELECT * FROM skim_sketch_partials(TABLE(SELECT cust AS key FROM orders), {W}, {D}, {S})"
    parts = spark.sql(q)
    assert 1 <= parts.count() <= 3  # one partial per non-empty input partition
    plain = spark.sql(f"SELECT * FROM skim_sketch_partials(TABLE(SELECT id AS key FROM range(0, 1000, 1, 2)), {W}, {D}, {S})")
    assert "Exchange" not in plain._jdf.queryExecution().executedPlan().toString()  # rows are not shuffled
    assert plain.count() == 2
    r = one(spark, f"SELECT skim_merge(sketch) AS m FROM ({q})")
    assert r.m == _hash().update(orders["cust"]).to_bytes()
    # grouped partials with weights: one merged sketch per day
    rows = spark.sql(f"""SELECT grp, skim_merge(sketch) AS m FROM skim_sketch_partials(
        TABLE(SELECT cust AS key, amount AS weight, day AS grp FROM orders), {W}, {D}, {S}) GROUP BY grp""").collect()
    assert sorted(r.grp for r in rows) == ["1", "2", "3", "4", "5"]
    for r in rows:
        sub = orders[orders["day"] == int(r.grp)]
        assert r.m == _hash().update(sub["cust"], weights=sub["amount"].to_numpy()).to_bytes()
    # with a domain the partials are skimmed sketches
    r = one(spark, f"""SELECT skim_merge(sketch) AS m FROM skim_sketch_partials(
        TABLE(SELECT cust AS key FROM orders), 64, {D}, {S}, 400)""")
    assert r.m == ss.SkimmedSketch(width=64, depth=D, seed=S, domain=400).update(orders["cust"]).to_bytes()


def test_stored_daily_sketches_in_parquet_estimate_any_date_range(sql, tmp_path):
    spark, orders, visits = sql
    path = str(tmp_path / "daily_sketches")
    template = _hash()
    o = spark_udaf.sketch_by(spark.table("orders"), "cust", template, by="day")
    v = spark_udaf.sketch_by(spark.table("visits"), "cust", template, by="day")
    from pyspark.sql import functions as F

    o.withColumn("tbl", F.lit("orders")).unionByName(v.withColumn("tbl", F.lit("visits"))) \
        .write.mode("overwrite").parquet(path)
    spark.read.parquet(path).createOrReplaceTempView("daily")
    for lo, hi in [(1, 5), (2, 3), (4, 4)]:
        r = one(spark, f"""
            SELECT skim_join_size(a.s, b.s) AS j, skim_join_size_bounds(a.s, b.s) AS e
            FROM (SELECT skim_merge(sketch) AS s FROM daily WHERE tbl = 'orders' AND day BETWEEN {lo} AND {hi}) a
            CROSS JOIN (SELECT skim_merge(sketch) AS s FROM daily WHERE tbl = 'visits' AND day BETWEEN {lo} AND {hi}) b
        """)
        fo = orders[orders["day"].between(lo, hi)]["cust"]
        gv = visits[visits["day"].between(lo, hi)]["cust"]
        expected = _hash().update(fo).join_size(_hash().update(gv))
        assert r.j == expected.value
        assert (r.e.value, r.e.low, r.e.high, r.e.confidence, r.e.method) == (
            expected.value, expected.low, expected.high, expected.confidence, expected.method)


def test_scalar_functions_match_the_core(sql):
    spark, orders, _ = sql
    r = one(spark, f"""SELECT skim_self_join_size(s) AS sj, skim_self_join_size_bounds(s) AS sjb,
                              skim_frequency(s, 1) AS f1, skim_frequency(s, CAST(NULL AS BIGINT)) AS fnull,
                              skim_sketch_info(s) AS info
                       FROM (SELECT skim_sketch(cust, {W}, {D}, {S}) AS s FROM orders)""")
    sk = _hash().update(orders["cust"])
    assert r.sj == sk.self_join_size().value and r.sjb.high == sk.self_join_size().high
    assert r.f1 == sk.frequency(1).value
    assert r.fnull is None
    assert (r.info.kind, r.info.width, r.info.depth, r.info.seed) == ("HashSketch", W, D, S)
    assert (r.info.total_weight, r.info.null_weight) == (sk.total_weight, sk.null_weight)
    assert r.info.null_weight == orders["cust"].isna().sum()


def test_nulls_in_sketch_columns(sql):
    spark, _, _ = sql
    r = one(spark, f"""SELECT skim_join_size(CAST(NULL AS BINARY), s) AS j, skim_self_join_size(CAST(NULL AS BINARY)) AS sj
                       FROM (SELECT skim_sketch(cust, {W}, {D}, {S}) AS s FROM orders)""")
    assert r.j is None and r.sj is None
    r = one(spark, f"""SELECT skim_merge(s) AS m FROM (
        SELECT skim_sketch(cust, {W}, {D}, {S}) AS s FROM orders
        UNION ALL SELECT CAST(NULL AS BINARY))""")
    assert r.m == one(spark, f"SELECT skim_sketch(cust, {W}, {D}, {S}) AS s FROM orders").s
    r = one(spark, "SELECT skim_merge(CAST(NULL AS BINARY)) AS m")
    assert r.m is None


def test_incompatible_sketches_raise_naming_the_field(sql):
    spark, _, _ = sql
    q = f"""SELECT skim_join_size(a.s, b.s) AS j
            FROM (SELECT skim_sketch(cust, {W}, {D}, {S}) AS s FROM orders) a
            CROSS JOIN (SELECT skim_sketch(cust, 64, {D}, {S}) AS s FROM visits) b"""
    with pytest.raises(Exception, match=r"width differs \(128 != 64\)"):
        spark.sql(q).collect()
    q = f"""SELECT skim_merge(s) FROM (SELECT skim_sketch(cust, {W}, {D}, 1) AS s FROM orders
            UNION ALL SELECT skim_sketch(cust, {W}, {D}, 2) AS s FROM visits)"""
    with pytest.raises(Exception, match=r"seed differs \(1 != 2\)"):
        spark.sql(q).collect()


def test_bad_parameters_and_corrupt_bytes(sql):
    spark, _, _ = sql
    with pytest.raises(Exception, match="parameter seed must be constant"):
        spark.sql(f"SELECT skim_sketch(cust, {W}, {D}, day) FROM orders").collect()
    with pytest.raises(Exception, match="skim_sketch: bad sketch parameters"):
        spark.sql(f"SELECT skim_sketch(cust, 0, {D}, {S}) FROM orders").collect()
    with pytest.raises(Exception, match=r"skim_self_join_size\(a\): truncated"):
        spark.sql("SELECT skim_self_join_size(X'0102030405')").collect()
    with pytest.raises(Exception, match="needs a column named key"):
        spark.sql(f"SELECT * FROM skim_sketch_partials(TABLE(SELECT cust FROM orders), {W}, {D}, {S})").collect()


def test_sql_only_pipeline_daily_table_and_date_range(sql, tmp_path):
    spark, orders, visits = sql
    path = str(tmp_path / "daily_sql").replace("'", "")
    spark.sql("DROP TABLE IF EXISTS skim_daily_sql")
    spark.sql(f"""
        CREATE TABLE skim_daily_sql USING parquet LOCATION '{path}' AS
        SELECT 'orders' AS tbl, CAST(grp AS INT) AS day, skim_merge(sketch) AS sketch
        FROM skim_sketch_partials(TABLE(SELECT cust AS key, day AS grp FROM orders), {W}, {D}, {S}) GROUP BY grp
        UNION ALL
        SELECT 'visits', CAST(grp AS INT), skim_merge(sketch)
        FROM skim_sketch_partials(TABLE(SELECT cust AS key, day AS grp FROM visits), {W}, {D}, {S}) GROUP BY grp""")
    try:
        assert spark.table("skim_daily_sql").count() == 10
        r = one(spark, """
            SELECT skim_join_size(a.s, b.s) AS j
            FROM (SELECT skim_merge(sketch) AS s FROM skim_daily_sql WHERE tbl = 'orders' AND day BETWEEN 2 AND 4) a
            CROSS JOIN (SELECT skim_merge(sketch) AS s FROM skim_daily_sql WHERE tbl = 'visits' AND day BETWEEN 2 AND 4) b""")
        fo = orders[orders["day"].between(2, 4)]["cust"]
        gv = visits[visits["day"].between(2, 4)]["cust"]
        assert r.j == _hash().update(fo).join_size(_hash().update(gv)).value
    finally:
        spark.sql("DROP TABLE IF EXISTS skim_daily_sql")


def test_domain_parameter_all_null_means_unbounded_and_mixed_is_rejected():
    import pyarrow as pa

    from spark_udaf.sql.args import constant as _constant

    assert _constant(pa.array([None, None], pa.int64()), "domain", "f", nullable=True) is None
    assert _constant(pa.array([7, 7]), "domain", "f", nullable=True) == 7
    with pytest.raises(ValueError, match="domain must not be NULL in some rows only"):
        _constant(pa.array([5, None]), "domain", "f", nullable=True)
    with pytest.raises(ValueError, match="width must not be NULL"):
        _constant(pa.array([None], pa.int64()), "width", "f")


def test_decimal_weights_are_not_truncated_in_sql_builders():
    """DECIMAL(p, 0) weights build exact int64 sketches, other scales float64 ones (docs/inputs.md)."""
    from decimal import Decimal

    import pyarrow as pa

    from spark_udaf.sql import build_from_batches

    def build(weights):
        batch = (pa.array([1, 2]), weights, pa.array([64, 64]), pa.array([3, 3]), pa.array([1, 1]))
        return ss.from_bytes(build_from_batches("skim_sketch_weighted", "hash", iter([batch]), True, 3))

    money = build(pa.array([Decimal("4.38"), Decimal("1.99")], pa.decimal128(10, 2)))
    assert money.float_counters and money.total_weight == 4.38 + 1.99
    counts = build(pa.array([Decimal(4), Decimal(1)], pa.decimal128(10, 0)))
    assert not counts.float_counters
    assert counts.to_bytes() == ss.HashSketch(64, 3, seed=1).update([1, 2], weights=[4, 1]).to_bytes()


def test_sql_builders_take_double_keys_by_the_core_rule():
    import pyarrow as pa

    from spark_udaf.sql import build_from_batches

    params = (pa.array([64, 64]), pa.array([3, 3]), pa.array([1, 1]))
    got = build_from_batches("skim_sketch", "hash", iter([(pa.array([1.0, float("nan")]), *params)]), False, 3)
    assert got == ss.HashSketch(64, 3, seed=1).update([1, None]).to_bytes()
    with pytest.raises(ss.KeyTypeError, match="float key 1.5 is not integral"):
        build_from_batches("skim_sketch", "hash", iter([(pa.array([1.0, 1.5]), *params)]), False, 3)
    with pytest.raises(ss.KeyTypeError, match="skim_sketch: key has type bool.*CAST"):
        build_from_batches("skim_sketch", "hash", iter([(pa.array([True, False]), *params)]), False, 3)


def test_python_implementations_of_the_new_names_answer_as_the_jar(spark):
    """What a session without the jar registers under the one family of names: the same bytes and numbers."""
    from pyspark.sql import functions as F

    from spark_udaf.sql import python_functions

    py = python_functions(0.95)
    df = spark.range(0, 2000, 1, 3).select((F.col("id") * 7 % 301).alias("k"), (F.col("id") % 2).alias("g"))
    keys = [i * 7 % 301 for i in range(2000)]
    r = df.agg(py["skim_sketch_agg"]("k").alias("d")).collect()[0]
    assert bytes(r.d) == ss.SkimmedSketch.for_bytes(16384).update(keys).to_bytes()
    h = df.agg(py["skim_hash_sketch_agg"]("k", F.lit(64), F.lit(5), F.lit(1)).alias("h")).collect()[0].h
    want = ss.HashSketch(64, 5, 1).update(keys)
    assert bytes(h) == want.to_bytes()
    parts = df.groupBy("g").agg(py["skim_hash_sketch_agg"]("k", F.lit(64), F.lit(5), F.lit(1)).alias("s"))
    u = parts.agg(py["skim_union_agg"]("s").alias("u")).collect()[0].u
    assert bytes(u) == want.to_bytes()
    two = spark.createDataFrame([(bytes(h), bytes(h))], "a binary, b binary")
    r = two.select(py["skim_union"]("a", "b").alias("m"), py["skim_join_size_bounds"]("a", "b").alias("e")).collect()[0]
    assert bytes(r.m) == want.copy().merge(want).to_bytes()
    e = want.join_size(want)
    assert [r.e.value, r.e.low, r.e.high, r.e.method] == [e.value, e.low, e.high, "hash"]
    with pytest.raises(Exception, match="width must be at least 16"):
        df.agg(py["skim_hash_sketch_agg"]("k", F.lit(8), F.lit(5), F.lit(1))).collect()
    with pytest.raises(Exception, match=r"cannot query frequency\('x'\): key_domain differs \('int' != 'str'\)"):
        two.select(py["skim_frequency"]("a", F.lit("x"))).collect()
