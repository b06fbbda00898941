"""spark_udaf.functions (Column helpers) on a classic session, and _common.resolve_column (names as Spark resolves
them). The same helpers on a Spark Connect session: tests/spark_udaf/test_native_connect.py."""

import math

import pytest
from pyspark.errors import AnalysisException
from pyspark.sql import functions as F

import skimsketch as ss
from spark_udaf import functions as SF
from spark_udaf._common import resolve_column

pytestmark = pytest.mark.spark


@pytest.fixture(scope="module")
def events(spark):
    rows = [(i % 3, (i * 37) % 101, f"u{i % 17}", i % 5) for i in range(2000)]
    return spark.createDataFrame(rows, "day int, k bigint, name string, w int"), rows


def test_helpers_build_the_core_sketches_from_names_and_columns(native_sql, events):
    df, rows = events
    got = df.groupBy("day").agg(
        SF.skim_sketch_agg("k").alias("d"),
        SF.skim_sketch_agg(F.col("k"), "w", nbytes=4096, seed=3).alias("dw"),
        SF.skim_hash_sketch_agg(df.name, 64, 5, seed=1).alias("h"),
        F.count("*").alias("n"),
    ).orderBy("day").collect()
    for r in got:
        sel = [x for x in rows if x[0] == r.day]
        assert bytes(r.d) == ss.SkimmedSketch.for_bytes(16384).update([x[1] for x in sel]).to_bytes()
        want = ss.SkimmedSketch.for_bytes(4096, seed=3).update([x[1] for x in sel], weights=[x[3] for x in sel])
        assert bytes(r.dw) == want.to_bytes()
        assert bytes(r.h) == ss.HashSketch(64, 5, 1).update([x[2] for x in sel]).to_bytes()
        assert r.n == len(sel)


def test_helpers_estimate_natively(native_sql, events):
    df, rows = events
    sk = df.agg(SF.skim_hash_sketch_agg("k", 64, 5, seed=1).alias("a"),
                SF.skim_hash_sketch_agg("w", 64, 5, seed=1).alias("b"))
    r = sk.select(SF.skim_union("a", "a").alias("u"), SF.skim_join_size_bounds("a", "b", confidence=0.9).alias("e"),
                  SF.skim_join_size("a", "b").alias("j"), SF.skim_self_join_size("a").alias("sj"),
                  SF.skim_self_join_size_bounds("a").alias("sjb"), SF.skim_frequency("a", 37).alias("f"),
                  SF.skim_sketch_info("a").alias("info")).collect()[0]
    # through the bytes, as SQL reads them (the sign flag included: counts are >= 0, joins clipped at 0)
    a = ss.from_bytes(ss.HashSketch(64, 5, 1).update([x[1] for x in rows]).to_bytes())
    b = ss.from_bytes(ss.HashSketch(64, 5, 1).update([x[3] for x in rows]).to_bytes())
    assert bytes(r.u) == a.copy().merge(a).to_bytes()
    e = a.join_size(b, confidence=0.9)
    assert [r.e.value, r.e.low, r.e.high, r.e.confidence, r.e.method] == [e.value, e.low, e.high, 0.9, "hash"]
    assert math.isclose(r.j, a.join_size(b).value) and math.isclose(r.sj, a.self_join_size().value)
    assert math.isclose(r.sjb.high, a.self_join_size().high) and math.isclose(r.f, a.frequency(37).value)
    assert r.info.kind == "HashSketch" and r.info.total_weight == 2000
    merged = df.groupBy("day").agg(SF.skim_hash_sketch_agg("k", 64, 5, seed=1).alias("s")).agg(
        SF.skim_union_agg("s").alias("m")).collect()[0].m
    assert bytes(merged) == a.to_bytes()


def test_helpers_check_their_arguments():
    with pytest.raises(TypeError, match="column name"):
        SF.skim_sketch_agg(3)
    with pytest.raises(TypeError, match="nbytes must be a number"):
        SF.skim_sketch_agg("k", nbytes="big")


def test_resolve_column_as_spark_does(spark, events):
    df, _ = events
    assert resolve_column(df, "k") == (df, "k")
    same, name = resolve_column(df, "K")  # spark.sql.caseSensitive is false by default
    assert same is df and name == "k"
    nested = df.select(F.struct("k", "w").alias("s"), "day")
    out, name = resolve_column(nested, "s.k")
    rows = out.collect()
    assert name.startswith("__skim_") and len(rows) == 2000 and all(r[name] == r.s.k for r in rows)
    out, name = resolve_column(df, F.col("k") % 10)
    assert {r[name] for r in out.collect()} == set(range(10))
    with pytest.raises(AnalysisException):
        resolve_column(df, "nope")[0].collect()
    with pytest.raises(TypeError, match="column name"):
        resolve_column(df, 3)
    spark.conf.set("spark.sql.caseSensitive", "true")
    try:
        with pytest.raises(AnalysisException):
            resolve_column(df, "K")  # Spark's own error for an unknown name
    finally:
        spark.conf.set("spark.sql.caseSensitive", "false")


def test_helpers_answer_alike_with_the_python_functions(native_sql, events):
    """The helpers pass optional parameters by name: the Python fallbacks (a session without the jar) read
    them as the native functions do, weight included."""
    import spark_udaf
    from spark_udaf import native
    from spark_udaf.sql import python_functions

    df, _ = events
    names = ("skim_sketch_agg", "skim_hash_sketch_agg", "skim_union_agg", "skim_join_size_bounds", "skim_frequency")

    def run():
        s = df.groupBy("day").agg(SF.skim_sketch_agg("k", "w", nbytes=4096, seed=3).alias("dw"),
                                  SF.skim_sketch_agg("k", seed=2).alias("d"),
                                  SF.skim_hash_sketch_agg("k", 64, 5, seed=1, weight=F.col("w")).alias("h"))
        m = s.agg(SF.skim_union_agg("h").alias("h"), SF.skim_union_agg("dw").alias("dw"))
        r = m.select("h", "dw", SF.skim_join_size_bounds("h", "h", confidence=0.8).alias("e"),
                     SF.skim_frequency("dw", 37, confidence=0.7).alias("f")).collect()[0]
        return bytes(r.h), bytes(r.dw), tuple(r.e), r.f, sorted(bytes(x.d) for x in s.collect())

    nat = run()
    fns = python_functions()
    native.drop_injected(native_sql, names)
    for n in names:
        native_sql.udf.register(n, fns[n])
    try:
        assert "ArrowAggregatePython" in df.agg(SF.skim_sketch_agg("k", "w")).\
            _jdf.queryExecution().executedPlan().toString()
        py = run()
    finally:
        spark_udaf.register(native_sql)
        native.register(native_sql)
    assert py == nat
    assert nat[2][3] == 0.8 and ss.from_bytes(nat[1]).seed == 3
