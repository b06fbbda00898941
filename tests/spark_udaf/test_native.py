"""The native (JVM) SQL aggregates: byte identity with the core, partial aggregation, NULLs, errors."""

import math

import numpy as np
import random

import pytest
from pyspark.sql import functions as F

import skimsketch as ss
import spark_udaf
from spark_udaf import native

pytestmark = pytest.mark.spark

N_ROWS = 2000


@pytest.fixture(scope="module")
def nspark(spark):
    if not native.available():
        pytest.skip("no JDK: the native jar cannot be built here (javac not found)")
    assert native.loaded(spark), "the test session was built without spark_udaf.native.configure"
    return spark


def _rows(seed=5):
    rnd = random.Random(seed)
    rows = []
    for i in range(N_ROWS):
        k = int(rnd.paretovariate(1.2)) % 500 - 20 if i % 97 else None  # some NULL keys, a few negative
        wi = rnd.randint(-3, 9) if i % 89 else None  # some NULL weights
        wd = rnd.randint(-8, 40) / 4 if i % 83 else None  # dyadic: float sums are exact in any order
        rows.append((k, k, None if k is None else f"k{k}é", None if k is None else f"b{k}".encode(), wi, wd))
    return rows


SCHEMA = "ki int, kb bigint, ks string, kx binary, wi int, wd double"
KEYS = ("ki", "kb", "ks", "kx")


def _core(rows, key, weight, make):
    j = {"ki": 0, "kb": 1, "ks": 2, "kx": 3, "wi": 4, "wd": 5}
    kept = [r for r in rows if weight is None or r[j[weight]] is not None]
    keys = [r[j[key]] for r in kept]
    sk = make("float64" if weight == "wd" else "int64")
    return sk.update(keys, weights=None if weight is None else [r[j[weight]] for r in kept]).to_bytes()


def test_java_self_test_checks_the_pinned_hash_vectors(jar_self_test):
    out = jar_self_test
    assert out.startswith("ok ") and int(out.split()[1]) >= 60


@pytest.mark.parametrize("partitions", [1, 7])
def test_sql_sketches_are_byte_identical_to_the_core(nspark, partitions):
    rows = _rows()
    df = nspark.createDataFrame(rows, SCHEMA).repartition(partitions)
    exprs, expected = [], []
    for key in KEYS:
        for weight in (None, "wi", "wd"):
            w = "" if weight is None else f"{weight}, "
            name = f"{key}_{weight}"
            exprs.append(f"skim_sketch_agg({key}, {w}4096, 11) AS d_{name}")
            expected.append(_core(rows, key, weight, lambda dt: ss.SkimmedSketch.for_bytes(4096, seed=11, dtype=dt)))
            exprs.append(f"skim_hash_sketch_agg({key}, {w}100, 5, 3) AS h_{name}")
            expected.append(_core(rows, key, weight, lambda dt: ss.HashSketch(100, 5, 3, dtype=dt)))
    exprs.append("skim_sketch_agg(kb) AS dflt")  # the library default: for_bytes(16384, seed=0)
    expected.append(_core(rows, "kb", None, lambda dt: ss.SkimmedSketch.for_bytes(16384)))
    for weight in (None, "wi", "wd"):  # a budget of 56 entries: the exact mode converts to counters
        exprs.append(f"skim_sketch_agg(kb, {'' if weight is None else weight + ', '}1024, 2) AS small_{weight}")
        expected.append(_core(rows, "kb", weight, lambda dt: ss.SkimmedSketch.for_bytes(1024, seed=2, dtype=dt)))
    exprs.append("skim_sketch_agg(ks, 64, 3, 9) AS shaped")
    expected.append(_core(rows, "ks", None, lambda dt: ss.SkimmedSketch(64, 3, 9)))
    # float counters keep the count shape (twice the entries): more keys to leave exact mode
    exprs.append("skim_sketch_agg(kb * 16 + coalesce(wi, 0), wd, 1024, 2) AS converted")
    kept = [r for r in rows if r[5] is not None]
    expected.append(ss.SkimmedSketch.for_bytes(1024, seed=2, dtype="float64").update(
        [None if r[1] is None else r[1] * 16 + (r[4] or 0) for r in kept], weights=[r[5] for r in kept]).to_bytes())
    got = df.selectExpr(*exprs).collect()[0]
    for name, blob, want in zip(got.asDict(), got, expected):
        assert bytes(blob) == want, name
    # both modes of the default sketch: exact entries (16 KB; 1 KB of int counters holds the 58 keys, of
    # float counters 116) and converted to counters (more distinct keys than 116)
    assert all(ss.from_bytes(b).exact_mode for b in expected[-6:-2])
    assert not ss.from_bytes(expected[-1]).exact_mode


def test_partial_aggregation_beside_builtins_and_group_by(nspark):
    rows = _rows(6)
    df = nspark.createDataFrame(rows, SCHEMA).repartition(3)
    df.createOrReplaceTempView("native_t")
    q = ("SELECT ki % 3 AS g, count(*) AS n, sum(wi) AS s, skim_sketch_agg(kb, wi) AS sk "
         "FROM native_t GROUP BY ki % 3")
    plan = "\n".join(r[0] for r in nspark.sql("EXPLAIN " + q).collect())
    assert "ObjectHashAggregate" in plan and "partial_skim_sketch_agg" in plan
    assert "Python" not in plan and "ArrowAggregate" not in plan
    for r in nspark.sql(q).collect():
        sel = [x for x in rows if (None if x[0] is None else int(math.fmod(x[0], 3))) == r.g]  # SQL %
        assert r.n == len(sel)
        assert bytes(r.sk) == _core(sel, "kb", "wi", lambda dt: ss.SkimmedSketch.for_bytes(16384))


def test_zero_rows_give_one_empty_sketch_of_the_given_shape(nspark):
    df = nspark.createDataFrame([], SCHEMA)
    r = df.selectExpr("skim_hash_sketch_agg(kb, 64, 3, 7) AS h", "skim_sketch_agg(ks, wd) AS d",
                      "count(*) AS n").collect()
    assert len(r) == 1 and r[0].n == 0
    assert bytes(r[0].h) == ss.HashSketch(64, 3, 7).to_bytes()
    assert bytes(r[0].d) == ss.SkimmedSketch.for_bytes(16384, dtype="float64").to_bytes()
    assert df.selectExpr("skim_union_agg(CAST(ks AS BINARY)) AS u").collect()[0].u is None


def test_nulls_count_as_null_weight_and_null_or_nan_weights_are_skipped(nspark):
    df = nspark.createDataFrame([(None, 2.0), (None, None), (1, float("nan")), (1, 1.5), (None, 0.5)],
                                "k bigint, w double")
    sk = ss.from_bytes(bytes(df.selectExpr("skim_hash_sketch_agg(k, w, 16, 3) AS s").collect()[0].s))
    assert sk.null_weight == 2.5 and sk.total_weight == 1.5
    nulls = ss.from_bytes(bytes(df.selectExpr("skim_sketch_agg(k) AS s").where("true").collect()[0].s))
    assert nulls.null_weight == 3 and nulls.total_weight == 2 and nulls.key_domain == "int"
    only = nspark.createDataFrame([(None,), (None,)], "k string").selectExpr("skim_sketch_agg(k) AS s")
    sk = ss.from_bytes(bytes(only.collect()[0].s))
    assert sk.null_weight == 2 and sk.key_domain is None and sk.total_weight == 0


def test_incompatible_merges_fail_naming_the_field(nspark):
    df = nspark.createDataFrame([(1, "a")], "k bigint, s string")
    with pytest.raises(Exception, match="width differs"):
        df.selectExpr("skim_union(skim_hash_sketch_agg(k, 16, 3), skim_hash_sketch_agg(k, 32, 3)) AS u") \
            .groupBy().agg({"u": "count"}).collect()
    with pytest.raises(Exception, match="key_domain differs"):
        df.selectExpr("skim_union(skim_hash_sketch_agg(k, 16, 3), skim_hash_sketch_agg(s, 16, 3))").collect()
    two = df.selectExpr("skim_hash_sketch_agg(k, 16, 3, 1) AS s").union(
        df.selectExpr("skim_hash_sketch_agg(k, 16, 3, 2) AS s"))
    with pytest.raises(Exception, match="seed differs"):
        two.selectExpr("skim_union_agg(s)").collect()


def test_unsupported_types_and_parameters_are_analysis_errors(nspark):
    from pyspark.errors import AnalysisException

    df = nspark.createDataFrame([(1.5, 1, "x")], "d double, k bigint, s string").withColumn("t", F.current_date())
    with pytest.raises(AnalysisException, match=r"key has type date.*CAST\(key AS BIGINT\)"):
        df.selectExpr("skim_sketch_agg(t)").collect()
    with pytest.raises(AnalysisException, match="weight has type string"):
        df.selectExpr("skim_sketch_agg(k, s)").collect()
    with pytest.raises(AnalysisException, match=r"nbytes must be at least 1024 .*got 10\b"):
        df.selectExpr("skim_sketch_agg(k, 10)").collect()
    with pytest.raises(AnalysisException, match=r"width must be at least 16 .*got 8\b"):
        df.selectExpr("skim_hash_sketch_agg(k, width => 8, depth => 3)").collect()
    with pytest.raises(AnalysisException, match="unknown parameter bytes"):
        df.selectExpr("skim_sketch_agg(k, bytes => 4096)").collect()
    with pytest.raises(AnalysisException, match="depth must be in"):
        df.selectExpr("skim_hash_sketch_agg(k, 16, 0)").collect()
    with pytest.raises(AnalysisException, match="seed must be >= 0"):
        df.selectExpr("skim_hash_sketch_agg(k, 16, 3, -1)").collect()


def test_the_core_s_inputs_double_keys_and_decimal_weights(nspark):
    """DOUBLE keys holding integers and DECIMAL weights, as the core takes them; its errors by name."""
    rows = [(float(i % 13), i % 5, f"{(i % 7) / 4:.2f}") for i in range(300)] + [(float("nan"), 2, "1.00")]
    df = nspark.createDataFrame(rows, "d double, w int, f string").selectExpr(
        "d", "CAST(w AS DECIMAL(12, 0)) AS w", "CAST(f AS DECIMAL(6, 2)) AS f")
    keys = [r[0] for r in rows]
    got = bytes(df.selectExpr("skim_sketch_agg(d, nbytes => 4096) AS s").collect()[0].s)
    assert got == ss.SkimmedSketch.for_bytes(4096).update(keys).to_bytes()
    got = bytes(df.selectExpr("skim_hash_sketch_agg(d, w, 64, 3, 1) AS s").collect()[0].s)
    assert got == ss.HashSketch(64, 3, 1).update(keys, weights=[r[1] for r in rows]).to_bytes()
    got = ss.from_bytes(bytes(df.selectExpr("skim_hash_sketch_agg(d, f, 64, 3, 1) AS s").collect()[0].s))
    want = ss.HashSketch(64, 3, 1, dtype="float64").update(keys, weights=[float(r[2]) for r in rows])
    assert got.float_counters and np.allclose(got.counters, want.counters)
    sk = spark_udaf.sketch_column(df, "d", ss.HashSketch(64, 3, 1), weight="w", path="native")  # builders too
    assert sk.to_bytes() == ss.HashSketch(64, 3, 1).update(keys, weights=[r[1] for r in rows]).to_bytes()
    with pytest.raises(ss.KeyTypeError, match=r"float key 0\.5 is not integral"):  # the core's error, re-raised
        spark_udaf.sketch_column(nspark.range(0, 3, 1, 1).selectExpr("id + 0.5D AS d"), "d", ss.HashSketch(64, 3, 1),
                                 path="native")
    with pytest.raises(Exception, match=r"io\.skimsketch\.spark\.KeyTypeError: float key [0-9]\.5 is not integral"):
        nspark.sql("SELECT skim_sketch_agg(CAST(id AS DOUBLE) + 0.5) FROM range(3)").collect()
    with pytest.raises(Exception, match=r"KeyTypeError: weights value 99999999999999999[0-9]{3} does not fit in int64"):
        nspark.sql("SELECT skim_hash_sketch_agg(id, CAST(id AS DECIMAL(20, 0)) + 99999999999999999990, 64, 3) "
                   "FROM range(30)").collect()


def test_daily_sketch_table_through_parquet_union_and_estimate(nspark, tmp_path):
    rows = _rows(8)
    df = nspark.createDataFrame([(i % 4, r[1], r[2]) for i, r in enumerate(rows)], "day int, k bigint, s string")
    df.createOrReplaceTempView("events")
    daily = nspark.sql("SELECT day, skim_sketch_agg(k) AS sk, skim_sketch_agg(s) AS ss FROM events GROUP BY day")
    daily.write.parquet(str(tmp_path / "daily"))
    nspark.read.parquet(str(tmp_path / "daily")).createOrReplaceTempView("daily")
    spark_udaf.register(nspark)
    r = nspark.sql("SELECT skim_union_agg(sk) AS a, skim_union_agg(ss) AS b FROM daily").collect()[0]
    keys = [x[1] for x in rows]
    assert bytes(r.a) == ss.SkimmedSketch.for_bytes(16384).update(keys).to_bytes()
    assert bytes(r.b) == ss.SkimmedSketch.for_bytes(16384).update([x[2] for x in rows]).to_bytes()
    est = nspark.sql("SELECT skim_join_size(skim_union_agg(sk), skim_union_agg(sk)) AS j FROM daily").collect()[0].j
    counts = {}
    for k in keys:
        if k is not None:
            counts[k] = counts.get(k, 0) + 1
    exact = sum(c * c for c in counts.values())
    a = ss.from_bytes(bytes(r.a))
    assert est == pytest.approx(a.join_size(a).value)
    assert math.isclose(est, exact, rel_tol=0.2)


def test_register_reports_the_native_functions(nspark):
    names = spark_udaf.register(nspark)
    assert set(native.FUNCTIONS) <= set(names)


@pytest.mark.parametrize("make", [lambda: ss.HashSketch(128, 5, 2), lambda: ss.SkimmedSketch(64, 5, 1, domain=600),
                                  lambda: ss.SkimmedSketch.for_bytes(8192, seed=4)])
def test_sketch_column_native_and_python_paths_agree(nspark, make, caplog):
    rows = [(r[0] if r[0] is None else abs(r[0]), r[4]) for r in _rows(9)]
    df = nspark.createDataFrame(rows, "k int, w int").repartition(3)
    with caplog.at_level("INFO", logger="spark_udaf"):
        fast = spark_udaf.sketch_column(df, "k", make(), "w", path="native")
    assert "native path" in caplog.text
    slow = spark_udaf.sketch_column(df, "k", make(), "w", path="python")
    assert fast.to_bytes() == slow.to_bytes()
    assert spark_udaf.sketch_column(df, "k", make(), "w").to_bytes() == slow.to_bytes()


def test_python_path_remains_for_what_the_jvm_does_not_build(nspark, caplog):
    df = nspark.createDataFrame([(1, 0.5), (2, 1.5), (1, 2.0)], "k bigint, w double")
    with pytest.raises(ValueError, match="path='native' is not possible here: AGMSSketch"):
        spark_udaf.sketch_column(df, "k", ss.AGMSSketch(16, 3), path="native")
    with caplog.at_level("INFO", logger="spark_udaf"):
        agms = spark_udaf.sketch_column(df, "k", ss.AGMSSketch(16, 3))
    assert "Python path (AGMSSketch" in caplog.text
    assert agms.to_bytes() == ss.AGMSSketch(16, 3).update([1, 2, 1]).to_bytes()
    with pytest.raises(ValueError, match="weight type double with int64 counters"):
        spark_udaf.sketch_column(df, "k", ss.HashSketch(16, 3), "w", path="native")
    with pytest.raises(ValueError, match="path must be one of"):
        spark_udaf.sketch_column(df, "k", ss.HashSketch(16, 3), path="jvm")


def test_sketch_by_and_estimate_join_size_use_the_native_path(nspark):
    rows = _rows(10)
    df = nspark.createDataFrame([(i % 3, r[1], r[5]) for i, r in enumerate(rows)], "day int, k bigint, w double")
    sk = ss.HashSketch(256, 5, 1, dtype="float64")
    fast = {r.day: bytes(r.sketch) for r in spark_udaf.sketch_by(df, "k", sk, "day", "w", path="native").collect()}
    slow = {r.day: bytes(r.sketch) for r in spark_udaf.sketch_by(df, "k", sk, "day", "w", path="python").collect()}
    assert fast == slow and len(fast) == 3
    hs = ss.HashSketch(2048, 7)  # the native jar reads format version 2 (not yet the default's virtual layout)
    e_native = spark_udaf.estimate_join_size(df, "k", df, "k", hs)
    e_python = spark_udaf.estimate_join_size(df, "k", df, "k", hs, path="python")
    assert e_native.detail["build_path"] == "native" and e_python.detail["build_path"] == "python"
    assert e_native.value == e_python.value


def test_auto_reads_a_plain_parquet_scan_with_the_fast_path(nspark, tmp_path, caplog):
    """On a plain Parquet scan "auto" takes the pyarrow fast path (measured fastest); the bytes equal
    the JVM's, and "native" still forces the JVM."""
    rows = [(r[0] if r[0] is None else abs(r[0]), r[4]) for r in _rows(11)]
    nspark.createDataFrame(rows, "k int, w int").write.parquet(str(tmp_path / "t"))
    df = nspark.read.parquet(str(tmp_path / "t"))
    with caplog.at_level("INFO", logger="spark_udaf"):
        auto = spark_udaf.sketch_column(df, "k", ss.HashSketch(128, 5, 2), "w")
    assert "Parquet fast path" in caplog.text and "native path" not in caplog.text
    caplog.clear()
    with caplog.at_level("INFO", logger="spark_udaf"):
        jvm = spark_udaf.sketch_column(df, "k", ss.HashSketch(128, 5, 2), "w", path="native")
    assert "native path" in caplog.text
    assert auto.to_bytes() == jvm.to_bytes()
    hs = ss.HashSketch(2048, 7)  # the native jar reads format version 2 (not yet the default's virtual layout)
    e = spark_udaf.estimate_join_size(df, "k", df, "k", hs)
    assert e.detail["build_path"] == "python"
    assert spark_udaf.estimate_join_size(df, "k", df, "k", hs, path="native").detail["build_path"] == "native"


def test_estimate_join_size_with_path_python_never_builds_on_the_jvm(nspark, caplog):
    df = nspark.createDataFrame([(1,), (2,), (2,)], "k bigint").repartition(2)
    with caplog.at_level("INFO", logger="spark_udaf"):
        est = spark_udaf.estimate_join_size(df, "k", df, "k", ss.HashSketch(64, 3, 1), path="python",
                                            single_job=False)
    assert "native path" not in caplog.text and est.detail["build_path"] == "python"
    one = ss.HashSketch(64, 3, 1).update([1, 2, 2])
    assert est.value == one.join_size(one.copy()).value


def test_long_partitions_through_the_key_cache_give_the_core_bytes(nspark):
    """More rows per partition than the JVM key cache's probe (65,536): repeated keys stay cached and
    are hashed once per eviction, distinct keys turn the cache off; both give the core's counters."""
    n = 200_000
    ids = np.arange(n, dtype=np.int64)
    cases = {"skewed": (ids * ids) % 97 + (ids % 5000) * (ids % 3 == 0),  # hits
             "distinct": (ids * 7919) % 1_000_003}  # misses: the cache turns itself off
    q = ("SELECT skim_hash_sketch_agg(k, 256, 5, 1) AS h, skim_hash_sketch_agg(k, w, 256, 5, 1) AS hw, "
         "skim_sketch_agg(k, 4096, 2) AS d FROM (SELECT {k} AS k, CAST(id % 7 - 3 AS INT) AS w FROM range(0, {n}, 1, 1))")
    for name, keys in cases.items():
        expr = "(id * id) % 97 + (id % 5000) * CAST(id % 3 = 0 AS BIGINT)" if name == "skewed" else "(id * 7919) % 1000003"
        got = nspark.sql(q.format(k=expr, n=n)).collect()[0]
        w = ids % 7 - 3
        assert bytes(got.h) == ss.HashSketch(256, 5, 1).update(keys).to_bytes(), name
        assert bytes(got.hw) == ss.HashSketch(256, 5, 1).update(keys, weights=w).to_bytes(), name
        assert bytes(got.d) == ss.SkimmedSketch.for_bytes(4096, seed=2).update(keys).to_bytes(), name


def test_describe_function_shows_usage_and_examples(nspark):
    for name in native.FUNCTIONS:
        text = "\n".join(r[0] for r in nspark.sql(f"DESCRIBE FUNCTION EXTENDED {name}").collect())
        if "Class: io.skimsketch.spark.SkimFunctions" not in text:
            continue  # a Python registration holds the name in this session (spark_udaf.register)
        assert f"Usage: {name}(" in text and "Example: SELECT" in text and "Examples:" in text, text
    text = "\n".join(r[0] for r in nspark.sql("DESCRIBE FUNCTION skim_sketch_agg").collect())
    assert "SkimmedSketch.for_bytes(nbytes, seed)" in text and "nbytes >= 1024" in text
