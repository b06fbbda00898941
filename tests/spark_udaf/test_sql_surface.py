"""The SQL surface after spark_udaf.register(spark): DESCRIBE FUNCTION text for every function, and the
Python fallbacks taking the native argument lists (same SQL text, same answer, same errors)."""

import pytest

import skimsketch as ss
import spark_udaf
from spark_udaf import native
from spark_udaf.sql import USAGE, python_functions
from spark_udaf.sql.docs import document as _document

pytestmark = pytest.mark.spark

BUILDERS = ("skim_sketch_agg", "skim_hash_sketch_agg", "skim_union_agg")


def _describe(spark, name):
    return [r.function_desc for r in spark.sql(f"DESCRIBE FUNCTION EXTENDED {name}").collect()]


def _assert_documented(spark, name):
    rows = _describe(spark, name)
    usage = next(r for r in rows if r.startswith("Usage: "))
    assert usage.startswith(f"Usage: {name}("), rows
    assert ". Example: SELECT " in usage, rows
    extended = next(r for r in rows if r.startswith("Extended Usage:"))
    assert "\n    Arguments:\n      * " in extended and "\n    Examples:\n      > SELECT " in extended, rows


@pytest.fixture
def jar(spark):
    if not native.loaded(spark):
        pytest.skip("the session's JVM has no native jar")
    yield spark
    spark_udaf.register(spark)


@pytest.mark.parametrize("estimates", ["python", "native"])
def test_describe_function_after_register_shows_usage_and_example(jar, estimates):
    names = spark_udaf.register(jar, estimates=estimates)
    assert set(spark_udaf.FUNCTIONS + spark_udaf.ALIASES) <= set(names)
    for name in names:
        _assert_documented(jar, name)
    rows = _describe(jar, "skim_join_size")
    cls = "io.skimsketch.spark.SkimFunctions" if estimates == "native" else "spark_udaf.sql.skim_join_size"
    assert rows[1] == f"Class: {cls}"
    assert rows[2] == ("Usage: skim_join_size(a, b [, confidence]) - the estimated size of the equi-join of the "
                       "sketched columns (SUM of weights with weighted sketches), as DOUBLE. Example: SELECT "
                       "skim_join_size(o.sk, v.sk) FROM o CROSS JOIN v")
    # a second registration (the earlier one's temporary functions replaced) keeps the text
    spark_udaf.register(jar, estimates="native" if estimates == "python" else "python")
    for name in names:
        _assert_documented(jar, name)


def test_describe_function_after_native_register_alone(jar):
    """spark_udaf.native.register (the jar's functions as temporary ones, no Python) keeps their text."""
    names = native.register(jar)
    assert "skim_join_size" in names and "skim_sketch_agg" in names
    for name in names:
        _assert_documented(jar, name)
    assert _describe(jar, "skim_join_size")[1] == "Class: io.skimsketch.spark.SkimFunctions"


def test_describe_function_of_python_builders(jar):
    """Where the JVM has no jar, the builders are Python aggregates: they show the same kind of text."""
    fns = python_functions()
    native.drop_injected(jar, BUILDERS)
    for name in BUILDERS:
        jar.udf.register(name, fns[name])
    assert sorted(_document(jar, list(BUILDERS))) == sorted(BUILDERS)
    for name in BUILDERS:
        _assert_documented(jar, name)
        assert _describe(jar, name)[1] == f"Class: spark_udaf.sql.{name}"
    assert "weight => col" in _describe(jar, "skim_sketch_agg")[2]


def test_describe_text_for_sessions_without_a_jvm_handle():
    text = spark_udaf.describe("skim_frequency")
    assert text.splitlines()[:2] == [
        "Function: skim_frequency",
        "Usage: skim_frequency(a, key [, confidence]) - the estimated frequency (summed weight) of key in the sketch, "
        "as DOUBLE. Example: SELECT skim_frequency(sk, 42) FROM daily"]
    assert "\n    Examples:\n      > SELECT skim_frequency(sk, 42) FROM daily;\n" in text
    assert set(USAGE) == set(spark_udaf.FUNCTIONS + spark_udaf.ALIASES)
    with pytest.raises(ValueError, match="unknown skim function 'skim_nope'"):
        spark_udaf.describe("skim_nope")


# -- the same SQL text, native and Python ----------------------------------------------------------

@pytest.fixture(scope="module")
def sketches(spark):
    """A view of sketch pairs: hash sketches, exact-mode skimmed sketches (the default, few keys), AGMS."""
    if not native.loaded(spark):
        pytest.skip("the session's JVM has no native jar")
    spark_udaf.register(spark)
    spark.sql("""SELECT id % 3 AS g, id % 101 AS k, CAST(id % 101 AS STRING) AS sk, id % 7 AS w
                 FROM range(0, 3000, 1, 3)""").createOrReplaceTempView("surf_rows")
    spark.sql("""SELECT g, skim_hash_sketch_agg(k, 64, 5, 3) AS h, skim_sketch_agg(k) AS d,
                        skim_sketch_agg(sk, weight => w) AS s FROM surf_rows GROUP BY g""") \
        .createOrReplaceTempView("surf_one")
    agms = [ss.AGMSSketch(width=32, depth=5, seed=3).update([g, g + 1, 5] * (g + 2)).to_bytes() for g in range(3)]
    spark.createDataFrame([(g, agms[g], agms[(g + 1) % 3]) for g in range(3)], "g bigint, x binary, y binary") \
        .createOrReplaceTempView("surf_agms")
    spark.sql("""SELECT a.g, a.h AS ha, b.h AS hb, a.d AS da, b.d AS db, a.s AS sa, b.s AS sb, x, y
                 FROM surf_one a JOIN surf_one b ON b.g = (a.g + 1) % 3 JOIN surf_agms c ON c.g = a.g""") \
        .createOrReplaceTempView("surf_pairs")
    return spark


ESTIMATE_QUERIES = [
    "skim_join_size(ha, hb)", "skim_join_size(ha, hb, 0.5)", "skim_join_size(b => hb, a => ha)",
    "skim_join_size_bounds(ha, hb)", "skim_join_size_bounds(ha, hb, confidence => 0.99)",
    "skim_join_size(da, db)", "skim_join_size_bounds(sa, sb, 0.8)", "skim_join_size_bounds(x, y, 0.9)",
    "skim_self_join_size(ha)", "skim_self_join_size_bounds(ha, confidence => 0.7)",
    "skim_self_join_size_bounds(da)", "skim_self_join_size_bounds(x)",
    "skim_frequency(ha, 5)", "skim_frequency(ha, key => 5, confidence => 0.9)", "skim_frequency(da, 7, 0.6)",
    "skim_frequency(sa, '7')", "skim_frequency(x, CAST(5 AS TINYINT))", "skim_frequency(da, CAST(NULL AS BIGINT))",
    "skim_sketch_info(ha)", "skim_sketch_info(a => sa)", "skim_union(ha, hb)", "skim_union(b => da, a => db)",
]


def _answers(spark, exprs):
    cols = ", ".join(f"{e} AS c{i}" for i, e in enumerate(exprs))
    return [tuple(r) for r in spark.sql(f"SELECT g, {cols} FROM surf_pairs ORDER BY g").collect()]


def test_estimates_same_sql_same_answer_native_and_python(sketches):
    spark = sketches
    spark_udaf.register(spark, estimates="python")  # Python estimates
    assert _describe(spark, "skim_join_size")[1] == "Class: spark_udaf.sql.skim_join_size"
    py = _answers(spark, ESTIMATE_QUERIES)
    spark_udaf.register(spark, estimates="native")
    try:
        assert _describe(spark, "skim_join_size")[1] == "Class: io.skimsketch.spark.SkimFunctions"
        nat = _answers(spark, ESTIMATE_QUERIES)
    finally:
        spark_udaf.register(spark)
    assert len(py) == 3
    for i, q in enumerate(ESTIMATE_QUERIES, start=1):
        assert [r[i] for r in py] == [r[i] for r in nat], q
    first = py[0]
    assert first[ESTIMATE_QUERIES.index("skim_frequency(da, CAST(NULL AS BIGINT))") + 1] is None
    assert first[ESTIMATE_QUERIES.index("skim_join_size_bounds(ha, hb, confidence => 0.99)") + 1].confidence == 0.99
    assert first[ESTIMATE_QUERIES.index("skim_join_size_bounds(x, y, 0.9)") + 1].method == "agms"
    assert first[ESTIMATE_QUERIES.index("skim_join_size(da, db)") + 1] == float(
        sum(1 for i in range(3000) for j in range(3000) if i % 3 == 0 and j % 3 == 1 and i % 101 == j % 101))


# every message natively in the default run, and a third of them through the Python functions (a Python UDF's
# error costs a Python worker round trip); all of them through Python with -m slow (tests/conftest.py)
_PY_DEFAULT = ("skim_union(", "confidence must", "b has type int", "key_domain differs", "nbytes must be at least",
               "seed must be", "weight has type string")
SLOW_PARAMS = {name: (lambda i: i.endswith("-python") and not any(s in i for s in _PY_DEFAULT))
               for name in ("test_estimates_same_bad_input_same_error", "test_builders_same_bad_input_same_error")}


ESTIMATE_ERRORS = [
    ("skim_join_size(ha, hb, 1.5)", r"skim_join_size\W.*confidence must be in \(0, 1\), got 1\.5"),
    ("skim_join_size(ha, hb, bogus => 1)", r"skim_join_size\W.*unknown parameter bogus \(parameters: "),
    ("skim_self_join_size(ha, 0.5, 0.6)", r"skim_self_join_size\W.*expected at most 2 arguments, got 3"),
    ("skim_join_size(ha, 3)", r"skim_join_size\W.*b has type int; it must be BINARY sketch bytes"),
    ("skim_frequency(ha)", r"skim_frequency\W.*parameter key is missing: skim_frequency\(a, key \[, confidence\]\)"),
    ("skim_frequency(ha, true)", r"skim_frequency\W.*key has type boolean; supported key types are tinyint"),
    ("skim_frequency(ha, 'x')", r"cannot query frequency\('x'\): key_domain differs \('int' != 'str'\)"),
    ("skim_join_size(ha, x)", r"cannot join \(skim_join_size\) sketches"),
    ("skim_sketch_info(ha, hb)", r"skim_sketch_info\W.*expected one argument \(a\), got 2"),
    ("skim_union(ha, hb, ha)", r"skim_union\W.*expected two arguments \(a, b\), got 3"),
]


@pytest.mark.parametrize("estimates", ["python", "native"])
@pytest.mark.parametrize("expr, message", ESTIMATE_ERRORS)
def test_estimates_same_bad_input_same_error(sketches, estimates, expr, message):
    spark = sketches
    spark_udaf.register(spark, estimates=estimates)
    try:
        with pytest.raises(Exception, match=message):
            spark.sql(f"SELECT {expr} FROM surf_pairs").collect()
    finally:
        if estimates == "native":
            spark_udaf.register(spark)


# -- the builders (Python where the JVM has no jar) -------------------------------------------------

BUILD_QUERIES = [
    "skim_sketch_agg(k)", "skim_sketch_agg(k, 4096, 0)", "skim_sketch_agg(k, 4096, 3)",
    "skim_sketch_agg(k, nbytes => 4096, seed => 3)", "skim_sketch_agg(k, seed => 3)",
    "skim_sketch_agg(sk, weight => w)", "skim_sketch_agg(k, weight => w, nbytes => 2048)",
    "skim_sketch_agg(k, CAST(w AS DOUBLE))", "skim_sketch_agg(k, CAST(w AS DECIMAL(10, 2)), 2048)",
    "skim_sketch_agg(k, 64, 5, 1)", "skim_sketch_agg(k, w, 64, 5, 1)",
    "skim_sketch_agg(k, width => 64, depth => 5, seed => 2)", "skim_sketch_agg(k, w, width => 64, depth => 5)",
    "skim_hash_sketch_agg(k, 64, 5)", "skim_hash_sketch_agg(k, 64, 5, 7)", "skim_hash_sketch_agg(k, w, 64, 5, 7)",
    "skim_hash_sketch_agg(sk, CAST(w AS DOUBLE), 64, 5)", "skim_hash_sketch_agg(k, width => 64, depth => 5)",
    "skim_hash_sketch_agg(key => k, weight => w, seed => 9, width => 32, depth => 3)",
]


@pytest.fixture
def python_builders(sketches):
    """The session with the family's Python builders (what a session without the jar registers)."""
    spark = sketches
    fns = python_functions()
    native.drop_injected(spark, BUILDERS)
    for name in BUILDERS:
        spark.udf.register(name, fns[name])
    yield spark
    spark_udaf.register(spark)


def _built(spark, exprs):
    cols = ", ".join(f"{e} AS c{i}" for i, e in enumerate(exprs))
    return [tuple(bytes(x) if isinstance(x, (bytes, bytearray)) else x for x in r)
            for r in spark.sql(f"SELECT g, {cols} FROM surf_rows GROUP BY g ORDER BY g").collect()]


def test_builders_same_sql_same_bytes_native_and_python(sketches):
    spark = sketches
    nat = _built(spark, BUILD_QUERIES)
    merged_nat = spark.sql("SELECT skim_union_agg(h) AS u FROM surf_one").collect()[0].u
    fns = python_functions()
    native.drop_injected(spark, BUILDERS)
    for name in BUILDERS:
        spark.udf.register(name, fns[name])
    try:
        assert "ArrowAggregatePython" in spark.sql("SELECT skim_sketch_agg(k) FROM surf_rows") \
            ._jdf.queryExecution().executedPlan().toString()
        py = _built(spark, BUILD_QUERIES)
        merged_py = spark.sql("SELECT skim_union_agg(sketch => h) AS u FROM surf_one").collect()[0].u
    finally:
        spark_udaf.register(spark)
    for i, q in enumerate(BUILD_QUERIES, start=1):
        assert [r[i] for r in py] == [r[i] for r in nat], q
    assert bytes(merged_py) == bytes(merged_nat)
    one = ss.from_bytes(py[0][BUILD_QUERIES.index("skim_sketch_agg(k, nbytes => 4096, seed => 3)") + 1])
    assert (type(one).__name__, one.seed) == ("SkimmedSketch", 3)
    keys = [i % 101 for i in range(0, 3000, 3)]
    assert py[0][BUILD_QUERIES.index("skim_hash_sketch_agg(k, 64, 5, 7)") + 1] == \
        ss.HashSketch(64, 5, seed=7).update(keys).to_bytes()


BUILD_ERRORS = [
    ("skim_sketch_agg(k, 100)", r"skim_sketch_agg\W.*nbytes must be at least 1024 \(smaller sketches' errors swamp "
                                r"their estimates\), got 100"),
    ("skim_hash_sketch_agg(k, 8, 5)", r"skim_hash_sketch_agg\W.*width must be at least 16"),
    ("skim_hash_sketch_agg(k, 64)", r"skim_hash_sketch_agg\W.*parameter depth is missing: skim_hash_sketch_agg\(key "
                                    r"\[, weight\], width, depth \[, seed\]\)"),
    ("skim_sketch_agg(k, bogus => 1)", r"skim_sketch_agg\W.*unknown parameter bogus \(parameters: "),
    ("skim_sketch_agg(k, 2048, 1, nbytes => 4096)", r"skim_sketch_agg\W.*parameter nbytes is given by position and "
                                                    r"by name"),
    ("skim_sketch_agg(k, -1, 5, 1)", r"skim_sketch_agg\W.*width must be at least 16"),
    ("skim_sketch_agg(k, 2048, -3)", r"skim_sketch_agg\W.*seed must be >= 0, got -3"),
    ("skim_sketch_agg(k, nbytes => 4096, width => 64, depth => 5)", r"skim_sketch_agg\W.*give nbytes or \(width, "
                                                                     r"depth\), not both"),
    ("skim_sketch_agg(CAST(k AS BOOLEAN))", r"skim_sketch_agg\W.*key has type boolean; supported key types are"),
    ("skim_sketch_agg(k, weight => sk)", r"skim_sketch_agg\W.*weight has type string; supported weight types are"),
    ("skim_union_agg(k)", r"skim_union_agg\W.*sketch has type bigint; it must be BINARY sketch bytes"),
]


@pytest.mark.parametrize("path", ["python", "native"])
@pytest.mark.parametrize("expr, message", BUILD_ERRORS)
def test_builders_same_bad_input_same_error(sketches, request, path, expr, message):
    spark = request.getfixturevalue("python_builders") if path == "python" else sketches
    with pytest.raises(Exception, match=message):
        spark.sql(f"SELECT {expr} FROM surf_rows").collect()


def test_python_builder_positional_integer_weight_is_refused_with_the_remedy(python_builders):
    """The one documented difference: a Python aggregate sees values, not expressions, so an integer after key
    that could be the weight or nbytes is refused, whatever its values (the native builder reads a column as
    the weight, a constant as nbytes)."""
    remedy = r"the Python functions cannot tell a column from a constant: give a weight column by name, " \
             r"skim_sketch_agg\(key, weight => column, ...\)"
    with pytest.raises(Exception, match=r"skim_sketch_agg: parameter nbytes must be constant within a group, got "
                                        r"\d+ and \d+ \(" + remedy):
        python_builders.sql("SELECT skim_sketch_agg(k, w) FROM surf_rows").collect()
    with pytest.raises(Exception, match=r"skim_sketch_agg: the bigint 4000 after the key could be the weight \(a "
                                        r"column\) or nbytes \(a constant\); " + remedy + r", docs/spark.md, or the "
                                        r"constant by name, skim_sketch_agg\(key, nbytes => 4000, \.\.\.\)"):
        python_builders.sql("SELECT skim_sketch_agg(k, w * 1000) FROM surf_rows WHERE w = 4").collect()
    with pytest.raises(Exception, match=r"skim_sketch_agg: the int 4096 after the key could be the weight"):
        python_builders.sql("SELECT skim_sketch_agg(k, 4096) FROM surf_rows").collect()


def test_python_builder_reads_a_positional_weight_by_type_and_count():
    """The rule of docs/spark.md: a float/decimal column, four arguments after key, or a parameter also
    given by name make the first argument after key the weight; a call whose weight reading is invalid reads
    it as the first constant; a call valid both ways is refused."""
    import pyarrow as pa

    from spark_udaf.sql.args import sketch_agg_spec as _sketch_agg_spec

    k, wi, wd = pa.array([1, 2]), pa.array([3, 4]), pa.array([1.5, 2.0])

    def c(v):
        return pa.array([v, v])

    def spec(hash_kind, *args, **kwargs):
        _, w, sk = _sketch_agg_spec("f", hash_kind, args, kwargs)
        return w, sk.to_bytes()

    assert spec(False, k, wd) == (wd, ss.SkimmedSketch.for_bytes(16384, dtype="float64").to_bytes())
    with pytest.raises(ValueError, match=r"f: the bigint 4096 after the key could be the weight \(a column\) or "
                                         r"nbytes \(a constant\)"):
        spec(False, k, c(4096))
    with pytest.raises(ValueError, match=r"f: the bigint 2048 after the key could be the weight \(a column\) or "
                                         r"width \(a constant\)"):
        spec(True, k, c(2048), c(64), c(5))
    assert spec(False, k, c(4096), c(0)) == (None, ss.SkimmedSketch.for_bytes(4096).to_bytes())
    assert spec(False, k, c(4096), c(3)) == (None, ss.SkimmedSketch.for_bytes(4096, seed=3).to_bytes())
    assert spec(False, k, c(64), c(5), c(1)) == (None, ss.SkimmedSketch(64, 5, 1).to_bytes())
    assert spec(False, k, wi, c(64), c(5), c(1)) == (wi, ss.SkimmedSketch(64, 5, 1).to_bytes())
    assert spec(False, k, wi, nbytes=c(2048)) == (wi, ss.SkimmedSketch.for_bytes(2048).to_bytes())
    assert spec(True, k, c(64), c(5)) == (None, ss.HashSketch(64, 5, 0).to_bytes())
    assert spec(True, k, c(64), c(5), c(7)) == (None, ss.HashSketch(64, 5, 7).to_bytes())
    assert spec(True, k, wi, c(64), c(5), c(7)) == (wi, ss.HashSketch(64, 5, 7).to_bytes())
    assert spec(True, k, wi, width=c(64), depth=c(5)) == (wi, ss.HashSketch(64, 5, 0).to_bytes())
    assert spec(True, k, wd, c(64), c(5)) == (wd, ss.HashSketch(64, 5, 0, dtype="float64").to_bytes())
    with pytest.raises(ValueError, match=r"f: parameter width must be constant within a group, got 3 and 4 \(the "
                                         r"Python functions cannot tell a column from a constant: give a weight "
                                         r"column by name, f\(key, weight => column, ...\)"):
        spec(True, k, wi, c(64), c(5))
