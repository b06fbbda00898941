"""Default column names of the skim_* SQL functions (issue 27): the function's SQL name and its arguments as
written, never a Java method or a sketch's whole hex string (docs/spark.md, "Column names").

Natively (the jar's NamedCall) a binary constant longer than 8 bytes is shown as its first 8 bytes and its
length, ``X'534B534B04000318...'(116 bytes)``, in the name and in EXPLAIN. The Python fallbacks (a session
without the jar) get the same names for column arguments; Spark names their calls itself, so a binary constant
there is printed whole (``0x...``), the one documented difference.
"""

from collections import Counter

import pytest
from pyspark.sql import functions as F

import skimsketch as ss
import spark_udaf
from spark_udaf import functions as SF
from spark_udaf import native
from spark_udaf.sql import python_functions

pytestmark = pytest.mark.spark

#: Group g's keys: few enough for the default sketch's exact mode, so its estimates are the exact sizes.
KEYS = {g: [(i * 7) % (5 + 3 * g) for i in range(40 * (g + 1))] for g in range(3)}
#: A sketch as a SQL constant: the default sketch (the shape skim_sketch_agg(k) builds) of keys 1..3.
LITERAL = ss.SkimmedSketch.for_bytes(16384).update([1, 2, 3, 3]).to_bytes()
SHOWN = f"X'{LITERAL[:8].hex().upper()}...'({len(LITERAL)} bytes)"  # the abbreviation rule, spelled out

#: (select expression over `cn a CROSS JOIN cn b`, its default column name) -- the same natively and in Python.
SCALARS = [
    ("skim_join_size(a.s, b.s)", "skim_join_size(s, s)"),
    ("skim_join_size(a.s, b.s, 0.9)", "skim_join_size(s, s, 0.9)"),
    ("skim_join_size_bounds(a.s, b.s, confidence => 0.9)", "skim_join_size_bounds(s, s, confidence => 0.9)"),
    ("skim_self_join_size(a.s)", "skim_self_join_size(s)"),
    ("skim_self_join_size_bounds(a.s)", "skim_self_join_size_bounds(s)"),
    ("skim_frequency(a.s, 3)", "skim_frequency(s, 3)"),
    ("skim_frequency(a.s, 'x')", "skim_frequency(s, x)"),
    ("skim_frequency(a.s, 3.0D)", "skim_frequency(s, 3.0)"),
    ("skim_frequency(a => a.s, key => b.g)", "skim_frequency(a => s, key => g)"),
    ("skim_sketch_info(a.s)", "skim_sketch_info(s)"),
    ("skim_sketch_info(a.s).kind", "skim_sketch_info(s).kind"),
    ("skim_union(a.s, b.s)", "skim_union(s, s)"),
    ("skim_join_size(a.s, b.s) * 2", "(skim_join_size(s, s) * 2)"),
    ("skim_join_size(skim_union(a.s, b.s), a.s)", "skim_join_size(skim_union(s, s), s)"),
]
#: Aggregates over `cn_rows` (g, k): the same natively and in Python.
AGGREGATES = [
    ("skim_sketch_agg(k)", "skim_sketch_agg(k)"),
    ("skim_sketch_agg(k, nbytes => 4096)", "skim_sketch_agg(k, nbytes => 4096)"),
    ("skim_sketch_agg(key => k, weight => g, seed => 7)", "skim_sketch_agg(key => k, weight => g, seed => 7)"),
    ("skim_hash_sketch_agg(k, 64, 3)", "skim_hash_sketch_agg(k, 64, 3)"),
    ("skim_hash_sketch_agg(k + 1, width => 64, depth => 3)", "skim_hash_sketch_agg((k + 1), width => 64, depth => 3)"),
    ("skim_union_agg(s)", "skim_union_agg(s)"),
]
#: (expression, native name, Python name): Spark names a Python call by its arguments' plain text (``cast(k as
#: int)``, a binary constant whole as ``0x...``), a native one by their SQL, as its own functions.
DIFFERENCES = [
    ("skim_sketch_agg(CAST(k AS INT), nbytes => 4096) FROM cn_rows", "skim_sketch_agg(CAST(k AS INT), nbytes => 4096)",
     "skim_sketch_agg(cast(k as int), nbytes => 4096)"),
    ("skim_frequency(s, CAST(3 AS BIGINT)) FROM cn", "skim_frequency(s, CAST(3 AS BIGINT))",
     "skim_frequency(s, cast(3 as bigint))"),
    ("skim_sketch_info(X'0102')", "skim_sketch_info(X'0102')", "skim_sketch_info(0x0102)"),  # up to 8 bytes: whole
    (f"skim_sketch_info(X'{LITERAL.hex()}')", f"skim_sketch_info({SHOWN})",
     f"skim_sketch_info(0x{LITERAL.hex().upper()})"),
]
#: Functions the Python fallbacks replace (registered under these names where the JVM has no jar).
FALLBACKS = ("skim_sketch_agg", "skim_hash_sketch_agg", "skim_union_agg", "skim_union", "skim_join_size",
             "skim_join_size_bounds", "skim_self_join_size", "skim_self_join_size_bounds", "skim_frequency",
             "skim_sketch_info")


@pytest.fixture(scope="module")
def tables(spark):
    rows = [(g, k) for g, keys in KEYS.items() for k in keys]
    spark.createDataFrame(rows, "g bigint, k bigint").createOrReplaceTempView("cn_rows")
    spark_udaf.register(spark)
    spark.sql("SELECT g, skim_sketch_agg(k) AS s FROM cn_rows GROUP BY g").cache().createOrReplaceTempView("cn")
    spark.table("cn").count()  # built once, with whichever builder is registered now
    return spark


@pytest.fixture(params=["native", "python"])
def session(request, tables):
    """The session with the jar's functions, or with the Python fallbacks under the same names (what a session
    without the jar registers); the default registration is restored afterwards."""
    spark = tables
    if request.param == "native":
        if not native.loaded(spark):
            pytest.skip("the session's JVM has no native jar")
        native.register(spark)
    else:
        fns = python_functions()
        native.drop_injected(spark, FALLBACKS)
        for name in FALLBACKS:
            spark.udf.register(name, fns[name])
    yield spark, request.param
    spark_udaf.register(spark)


def _name(spark, sql: str) -> str:
    (name,) = spark.sql(sql).columns
    return name


@pytest.mark.parametrize("expr,name", SCALARS)
def test_scalar_functions_are_named_after_the_function(session, expr, name):
    spark, _ = session
    assert _name(spark, f"SELECT {expr} FROM cn a CROSS JOIN cn b") == name


@pytest.mark.parametrize("expr,name", AGGREGATES)
def test_aggregates_are_named_after_the_function(session, expr, name):
    spark, _ = session
    assert _name(spark, f"SELECT {expr} FROM {'cn' if 'union' in expr else 'cn_rows'}") == name


def test_one_aggregate_however_written(session):
    """Natively one buffer for one sketch written two ways (its canonical form ignores the spelling)."""
    spark, where = session
    if where != "native":
        pytest.skip("the jar's aggregates")
    df = spark.sql("SELECT skim_sketch_agg(k), skim_sketch_agg(key => k), skim_sketch_agg(k, nbytes => 4096) "
                   "FROM cn_rows")
    assert df.columns == ["skim_sketch_agg(k)", "skim_sketch_agg(key => k)", "skim_sketch_agg(k, nbytes => 4096)"]
    plan = df._jdf.queryExecution().executedPlan().toString()
    assert plan.count("partial_skim_sketch_agg(") == 2, plan
    r = df.collect()[0]
    assert bytes(r[0]) == bytes(r[1]) == ss.SkimmedSketch.for_bytes(16384).update(
        [k for g in KEYS for k in KEYS[g]]).to_bytes()


@pytest.mark.parametrize("expr,native_name,python_name", DIFFERENCES)
def test_names_that_differ_by_how_spark_prints_python_calls(session, expr, native_name, python_name):
    spark, where = session
    assert _name(spark, f"SELECT {expr}") == (native_name if where == "native" else python_name)


def test_native_only_functions_are_named_after_the_function(session):
    spark, where = session
    if where != "native":
        pytest.skip("the jar's functions")
    assert _name(spark, "SELECT skim_sample_agg(k) FROM cn_rows") == "skim_sample_agg(k)"
    # Spark names these two: its aggregator wrapper (skim_union_agg), the sample's key and weight (docs/spark.md)
    assert _name(spark, "SELECT skim_sample_agg(k, g, nbytes => 4096) FROM cn_rows") == \
        "skim_sample_agg(k, g, nbytes => 4096)"  # non-default parameters are in the name (issue 33 item 8)
    assert _name(spark, "SELECT skim_union_agg(sketch => s) FROM cn") == "skim_union_agg(s)"
    template = ss.SkimmedSketch.for_bytes(4096).to_bytes()
    shown = f"X'{template[:8].hex().upper()}...'({len(template)} bytes)"
    assert _name(spark, f"SELECT skim_sketch_like_agg(k, X'{template.hex()}') FROM cn_rows") == \
        f"skim_sketch_like_agg(k, {shown})"


def test_a_literal_sketch_is_abbreviated_natively_and_printed_whole_in_python(session):
    spark, where = session
    hexed = LITERAL.hex()
    shown = SHOWN if where == "native" else "0x" + hexed.upper()  # Python: Spark's own rendering
    assert _name(spark, f"SELECT skim_join_size(X'{hexed}', a.s) FROM cn a") == f"skim_join_size({shown}, s)"
    assert _name(spark, f"SELECT skim_sketch_info(X'{hexed}')") == f"skim_sketch_info({shown})"
    assert _name(spark, f"SELECT skim_self_join_size_bounds(X'{hexed}', confidence => 0.5)") == \
        f"skim_self_join_size_bounds({shown}, confidence => 0.5)"
    # both constants: the call is folded to its value, under the name it had
    r = spark.sql(f"SELECT skim_join_size(X'{hexed}', X'{hexed}')")
    assert r.columns == [f"skim_join_size({shown}, {shown})"]
    assert r.collect()[0][0] == 1 + 1 + 2 * 2


def test_explain_shows_the_native_call_without_the_hex(session):
    spark, where = session
    if where != "native":
        pytest.skip("the jar's functions (Spark prints a Python call's constants itself)")
    hexed = LITERAL.hex().upper()
    for mode in ("", "FORMATTED "):
        plan = spark.sql(f"EXPLAIN {mode}SELECT skim_join_size(X'{hexed}', a.s) FROM cn a").collect()[0][0]
        assert hexed[:40] not in plan and "static_invoke" not in plan and "EstimateFunctions" not in plan, plan
        assert f"skim_join_size({SHOWN}, s#" in plan and f"AS skim_join_size({SHOWN}, s)#" in plan, plan


def _exact_join(x, y):
    cx, cy = Counter(x), Counter(y)
    return float(sum(n * cy[k] for k, n in cx.items()))


def test_named_calls_work_nested_in_where_order_by_and_group_by(session):
    spark, where = session
    hexed = LITERAL.hex()
    rows = spark.sql(f"""SELECT a.g, skim_join_size(a.s, b.s) * 2, skim_frequency(a.s, 3) FROM cn a JOIN cn b
                         ON b.g = (a.g + 1) % 3
                         WHERE skim_self_join_size(a.s) > {_exact_join(KEYS[0], KEYS[0])}
                         ORDER BY skim_join_size(X'{hexed}', a.s) DESC, a.g""").collect()
    lit = [1, 2, 3, 3]
    want = sorted(((g, 2 * _exact_join(KEYS[g], KEYS[(g + 1) % 3]), float(KEYS[g].count(3))) for g in KEYS
                   if _exact_join(KEYS[g], KEYS[g]) > _exact_join(KEYS[0], KEYS[0])),
                  key=lambda r: (-_exact_join(lit, KEYS[r[0]]), r[0]))
    assert [tuple(r) for r in rows] == want and len(want) == 2
    assert rows[0].asDict().keys() == {"g", "(skim_join_size(s, s) * 2)", "skim_frequency(s, 3)"}
    kinds = spark.sql("SELECT skim_sketch_info(s).kind, count(*) FROM cn GROUP BY skim_sketch_info(s).kind")
    assert kinds.columns == ["skim_sketch_info(s).kind", "count(1)"]
    assert [tuple(r) for r in kinds.collect()] == [("SkimmedSketch", 3)]
    # the same call written two ways is one expression natively (NamedCall's canonical form ignores the spelling);
    # Spark compares Python calls as written
    other = "skim_frequency(a => s, key => 3)" if where == "native" else "skim_frequency(s, 3)"
    freq = spark.sql(f"SELECT skim_frequency(s, 3), count(*) FROM cn GROUP BY {other} ORDER BY 1")
    assert [tuple(r) for r in freq.collect()] == sorted(Counter(float(k.count(3)) for k in KEYS.values()).items())


@pytest.mark.parametrize("factory", ["CODEGEN_ONLY", "NO_CODEGEN"])
def test_named_calls_evaluate_as_the_calls_they_wrap(session, factory):
    """Generated code and interpreted evaluation, a call repeated (common subexpressions), a NaN key (NULL)."""
    spark, where = session
    if where != "native":
        pytest.skip("NamedCall is the jar's")
    spark.conf.set("spark.sql.codegen.factoryMode", factory)
    spark.conf.set("spark.sql.codegen.wholeStage", str(factory == "CODEGEN_ONLY").lower())
    try:
        rows = spark.sql("""SELECT g, skim_self_join_size(s), skim_self_join_size(s) + 1, skim_frequency(s, 3.0D),
                                   skim_frequency(s, CAST('NaN' AS DOUBLE)), skim_sketch_info(s).total_weight
                            FROM cn ORDER BY g""").collect()
    finally:
        spark.conf.unset("spark.sql.codegen.factoryMode")
        spark.conf.unset("spark.sql.codegen.wholeStage")
    want = [(g, _exact_join(k, k), _exact_join(k, k) + 1, float(k.count(3)), None, float(len(k)))
            for g, k in sorted(KEYS.items())]
    assert [tuple(r) for r in rows] == want


def test_column_helpers_get_the_same_names(session):
    spark, where = session
    a, b = spark.table("cn").alias("a"), spark.table("cn").alias("b")
    j = a.crossJoin(b)
    shown = SHOWN if where == "native" else "0x" + LITERAL.hex().upper()
    cases = [
        (SF.skim_join_size("a.s", "b.s"), "skim_join_size(s, s)"),
        (SF.skim_join_size_bounds("a.s", "b.s", 0.9), "skim_join_size_bounds(s, s, confidence => 0.9)"),
        (SF.skim_self_join_size("a.s"), "skim_self_join_size(s)"),
        (SF.skim_self_join_size_bounds("a.s", confidence=0.8), "skim_self_join_size_bounds(s, confidence => 0.8)"),
        (SF.skim_frequency("a.s", 3), "skim_frequency(s, 3)"),
        (SF.skim_sketch_info("a.s"), "skim_sketch_info(s)"),
        (SF.skim_union("a.s", "b.s"), "skim_union(s, s)"),
        (SF.skim_join_size(F.lit(LITERAL), "a.s"), f"skim_join_size({shown}, s)"),
        (SF.skim_join_size("a.s", "b.s") * 2, "(skim_join_size(s, s) * 2)"),
    ]
    assert j.select(*(c for c, _ in cases)).columns == [n for _, n in cases]
    assert spark.table("cn_rows").select(SF.skim_sketch_agg("k")).columns == ["skim_sketch_agg(k)"]
    # nested in a filter and a sort, as a Column
    got = [r.g for r in a.where(SF.skim_self_join_size("a.s") > 0).orderBy(SF.skim_self_join_size("a.s").desc())
           .select("g").collect()]
    assert got == sorted(KEYS, key=lambda g: -_exact_join(KEYS[g], KEYS[g]))
