"""Hostile inputs on the native path (issue 27): SUM sketches, float templates, sizes, seeds, memory.

Every case goes through each interface that can express it -- the core, the CLI,
the Spark Python API (``sketch_column`` / ``estimate_join_size`` on both build
paths), the native SQL functions and the Python SQL functions (registered here
as ``py_*``) -- and fails if one returns a number another refuses, or two return
different numbers (or bytes). Weights are dyadic, so float sums are exact in any
order and the bytes must match exactly.
"""

import os
import subprocess
import sys
import textwrap
from decimal import Decimal

import pytest
from pyspark.sql import functions as F

import skimsketch as ss
import spark_udaf
from skimsketch import cli
from spark_udaf import functions as SF
from spark_udaf import native
from spark_udaf.estimate import default_sketch
from spark_udaf.build.parquet import require_template
from spark_udaf.sql import python_functions

pytestmark = pytest.mark.spark

PY = ("skim_sketch_agg", "skim_hash_sketch_agg", "skim_sketch_like_agg")
WEIGHTS = ("wi", "wd", "wdec", "wdec0")  # int, double, DECIMAL(10, 2) (float counters), DECIMAL(10, 0)


@pytest.fixture(scope="module")
def nspark(spark):
    if not native.loaded(spark):
        pytest.skip("the session's JVM has no native jar")
    native.register(spark)  # the jar's builders and estimates under the skim_* names
    fns = python_functions()
    for n in PY:
        if n in fns:
            spark.udf.register("py_" + n, fns[n])  # the Python SQL functions, beside the native ones
    yield spark
    for n in PY:
        spark.sql(f"DROP TEMPORARY FUNCTION IF EXISTS py_{n}")


def _rows():
    out = []
    for i in range(600):
        k = (i * 7919) % 97 if i % 41 else None  # a NULL key now and then
        out.append((k, i % 5 - 1, (i % 13 - 4) / 4, Decimal(i % 11) / 4, Decimal(i % 9 - 2)))
    return out


@pytest.fixture(scope="module")
def tables(nspark):
    a = nspark.createDataFrame(_rows(), "k bigint, wi int, wd double, wdec decimal(10,2), wdec0 decimal(10,0)")
    b = nspark.createDataFrame([((i * 31) % 113,) for i in range(800)] + [(None,)], "k bigint")
    a.createOrReplaceTempView("hn_a")
    b.createOrReplaceTempView("hn_b")
    return a, b


def _column(df, c):
    return [r[0] for r in df.select(c).collect()]


def _core(df, template, weight=None):
    """The core's sketch of df's key column k (and weight), as the Spark builders see the rows."""
    rows = df.select("k", weight).collect() if weight else df.select("k").collect()
    if weight:
        rows = [r for r in rows if r[1] is not None]
        w = [float(r[1]) if template.float_counters else int(r[1]) for r in rows]
        return template.empty_like().update([r[0] for r in rows], weights=w)
    return template.empty_like().update([r[0] for r in rows])


def _exact_sum(a, b, weight):
    fb = {}
    for k in _column(b, "k"):
        fb[k] = fb.get(k, 0) + 1
    return sum(float(w) * fb.get(k, 0) for k, w in a.select("k", weight).collect() if k is not None and w is not None)


def _float_weight(weight):
    return weight in ("wd", "wdec")


# -- 1. SUM over the join on the native path ------------------------------------------------------
SLOW = pytest.mark.slow


@pytest.mark.parametrize(("weight", "nbytes"), [  # 16384: exact mode; 1024: counters (more keys than it holds)
    ("wd", 16384), ("wi", 1024), ("wdec", 1024),
    *(pytest.param(w, n, marks=SLOW) for w, n in (("wi", 16384), ("wdec", 16384), ("wdec0", 16384), ("wd", 1024),
                                                  ("wdec0", 1024)))])
def test_sum_over_the_join_is_the_same_on_every_path(tables, weight, nbytes):
    a, b = tables
    native_, python_ = (spark_udaf.estimate_join_size(a, "k", b, "k", lweight=weight, nbytes=nbytes, path=p,
                                                      summary="sketch") for p in ("native", "python"))
    # the join sample (estimate_join_size's default summary) takes the same SUM on both paths
    samples = [spark_udaf.estimate_join_size(a, "k", b, "k", lweight=weight, nbytes=nbytes, path=p)
               for p in ("native", "python")]
    assert [(e.value, e.low, e.high, e.method) for e in samples][0] == \
        [(e.value, e.low, e.high, e.method) for e in samples][1]
    assert samples[0].method == "sample" and [e.detail["build_path"] for e in samples] == ["native", "python"]
    t = default_sketch(nbytes, dtype="float64" if _float_weight(weight) else "int64")
    core = _core(a, t, weight).join_size(_core(b, t))
    assert native_.detail["build_path"] == "native" and python_.detail["build_path"] == "python"
    got = [(e.value, e.low, e.high, e.method) for e in (native_, python_, core)]
    assert got[0] == got[1] == got[2]
    if nbytes == 16384:  # exact mode: the exact SUM
        assert got[0][:3] == (_exact_sum(a, b, weight),) * 3 and got[0][3] == "exact"


# -- float templates of every kind, with and without weights ----------------------------------------
FLOAT_TEMPLATES = {
    "hash": ss.HashSketch(64, 3, 7, dtype="float64"),
    "for_bytes": ss.SkimmedSketch.for_bytes(16384, dtype="float64"),
    "for_bytes counters": ss.SkimmedSketch.for_bytes(2048, seed=5, dtype="float64", exact=False),
    "range": ss.SkimmedSketch.for_bytes(4096, seed=2, dtype="float64", search="range"),
    "prefix": ss.SkimmedSketch.for_bytes(4096, seed=3, dtype="float64", search="prefix", exact=False),
    "shape": ss.SkimmedSketch(64, 5, 1, dtype="float64"),
}


@pytest.mark.parametrize(("name", "weight"), [
    *((n, None) for n in sorted(FLOAT_TEMPLATES)), ("hash", "wd"), ("for_bytes counters", "wi"),
    *(pytest.param(n, w, marks=SLOW) for n in sorted(FLOAT_TEMPLATES) for w in ("wi", "wd", "wdec")
      if (n, w) not in (("hash", "wd"), ("for_bytes counters", "wi")))])
def test_float_templates_build_the_core_bytes_on_both_paths_and_in_sql(nspark, tables, name, weight):
    a, _ = tables
    t = FLOAT_TEMPLATES[name]
    want = _core(a, t, weight).to_bytes()
    for path in ("native", "python"):
        assert spark_udaf.sketch_column(a, "k", t, weight, path=path).to_bytes() == want, path
    w = "" if weight is None else f"{weight}, "
    got = nspark.sql(f"SELECT skim_sketch_like_agg(k, {w}X'{t.to_bytes().hex()}') AS s FROM hn_a").collect()
    assert bytes(got[0].s) == want


# -- 2. SUM and COUNT sketches of the same arguments join, in every interface ----------------------
def _cli_sketch(tmp_path, df, weight, argv):
    src = tmp_path / "in.parquet"
    df.select("k", *([F.col(weight).cast("double").alias("w")] if weight else [])).toPandas().to_parquet(src)
    out = tmp_path / f"{weight}.sk"
    assert cli.main(["sketch", str(src), "--column", "k", *(["--weight", "w"] if weight else []), *argv,
                     "-o", str(out)]) == 0
    return ss.from_bytes(out.read_bytes())


@pytest.mark.parametrize("args", [(), pytest.param((4096,), marks=SLOW), pytest.param((4096, 3), marks=SLOW),
                                  (64, 5, 1)], ids=["default", "nbytes", "seed", "shape"])
def test_sum_and_count_sketches_of_the_same_arguments_join_everywhere(nspark, tables, tmp_path, args):
    a, _ = tables
    sql_args = "".join(f", {x}" for x in args)
    kw = dict(zip(("width", "depth", "seed") if len(args) == 3 else ("nbytes", "seed"), args))
    count_t = default_sketch(**kw)
    sum_t = default_sketch(**kw, dtype="float64")
    assert (sum_t.width, sum_t.depth) == (count_t.width, count_t.depth)  # one shape
    core = _core(a, sum_t, "wd").join_size(_core(a, count_t))
    numbers = {"core": core.value}
    for fn in ("skim_sketch_agg", "py_skim_sketch_agg"):
        q = (f"SELECT skim_join_size(s, c) AS v FROM (SELECT {fn}(k, wd{sql_args}) AS s, "
             f"{fn}(k{sql_args}) AS c FROM hn_a)")
        numbers[fn] = nspark.sql(q).collect()[0].v
    numbers["estimate_join_size"] = spark_udaf.estimate_join_size(a, "k", a, "k", lweight="wd", **kw).value
    cli_argv = (["--width", str(args[0]), "--depth", str(args[1]), "--seed", str(args[2])] if len(args) == 3 else
                (["--nbytes", str(args[0])] if args else []) + (["--seed", str(args[1])] if len(args) > 1 else []))
    left, right = _cli_sketch(tmp_path, a, "wd", cli_argv), _cli_sketch(tmp_path, a, None, cli_argv)
    numbers["cli"] = left.join_size(right).value
    assert len(set(numbers.values())) == 1, numbers
    assert left.to_bytes() == _core(a, sum_t, "wd").to_bytes()


# -- 8. sizes out of range: one message, naming the argument, its range and the remedy ---------------
@pytest.mark.parametrize("nbytes", [2**31, 10**12, pytest.param(335544416, marks=SLOW)])
def test_budget_too_large_is_refused_alike_in_core_native_and_python_sql(nspark, nbytes):
    with pytest.raises(ValueError) as core:
        ss.SkimmedSketch.for_bytes(nbytes)
    msg = str(core.value)
    assert msg.startswith("nbytes must be an int in [80, 335544415] ") and msg.endswith(
        f"got {nbytes}: give a smaller budget")
    for fn in ("skim_sketch_agg", "py_skim_sketch_agg"):
        with pytest.raises(Exception) as e:
            nspark.sql(f"SELECT {fn}(id, {nbytes}) AS s FROM range(3)").collect()
        assert msg in str(e.value), fn
    assert ss.SkimmedSketch.for_bytes(335544415).width == 2**24  # the top of the range is valid


@pytest.mark.parametrize("fn", ["skim_hash_sketch_agg", "py_skim_hash_sketch_agg", "skim_sketch_agg",
                                "py_skim_sketch_agg"])
def test_a_hash_shape_beyond_a_jvm_array_is_refused_naming_width_and_depth(nspark, fn):
    # the Python builders refuse it with the same words (they would have allocated 32 GB of counters)
    with pytest.raises(Exception, match=r"skim_(hash_)?sketch_agg\W.*width \* depth must be at most 134217728 "
                                        r"counters in SQL .*got 16777216 \* 255 = 4278190080: give a smaller width"):
        nspark.sql(f"SELECT {fn}(id, 16777216, 255, 0) FROM range(3)").collect()


# -- 10. a template holding data is refused, as the Python builders refuse it ------------------------
@pytest.mark.parametrize("full", [ss.SkimmedSketch.for_bytes(4096).update([1, 2]),
                                  ss.HashSketch(64, 3, dtype="float64").update([None], weights=1.5)],
                         ids=["entries", "null weight"])
def test_a_template_holding_data_is_refused_in_sql_as_in_python(nspark, tables, full):
    a, _ = tables
    with pytest.raises(ValueError) as py:
        require_template(full, "template")
    with pytest.raises(ValueError, match="holds data"):
        spark_udaf.sketch_column(a, "k", full)
    with pytest.raises(Exception) as e:
        nspark.sql(f"SELECT skim_sketch_like_agg(k, X'{full.to_bytes().hex()}') FROM hn_a").collect()
    assert "skim_sketch_like_agg" in str(e.value) and str(py.value) in str(e.value)


# -- 5. seeds at the unsigned edges ------------------------------------------------------------------
@pytest.mark.parametrize("seed", [pytest.param(0, marks=SLOW), pytest.param(2**63 - 1, marks=SLOW), 2**63, 2**64 - 1])
def test_seeds_at_the_unsigned_edges_alike_in_helpers_sql_and_core(nspark, tables, seed):
    a, _ = tables
    want = _core(a, ss.SkimmedSketch.for_bytes(4096, seed=seed)).to_bytes()
    hwant = _core(a, ss.HashSketch(64, 3, seed)).to_bytes()
    lit = str(seed) if seed < 2**63 else f"CAST('{seed}' AS DECIMAL(20,0))"
    r = a.agg(SF.skim_sketch_agg("k", nbytes=4096, seed=seed).alias("d"),
              SF.skim_hash_sketch_agg("k", 64, 3, seed=seed).alias("h")).collect()[0]
    assert (bytes(r.d), bytes(r.h)) == (want, hwant)
    for fn in ("skim_sketch_agg", "py_skim_sketch_agg"):
        got = nspark.sql(f"SELECT {fn}(k, 4096, {lit}) AS d, {fn.replace('sketch_agg', 'hash_sketch_agg')}"
                         f"(k, 64, 3, {lit}) AS h FROM hn_a").collect()[0]
        assert (bytes(got.d), bytes(got.h)) == (want, hwant), fn


@pytest.mark.parametrize("seed", [-1, 2**64])
def test_seeds_outside_the_unsigned_range_are_refused_by_the_helpers(seed):
    with pytest.raises(ValueError, match=rf"skim_sketch_agg: seed must be an integer in \[0, 2\*\*64\), got {seed}"):
        SF.skim_sketch_agg("k", seed=seed)
    with pytest.raises(ValueError, match=r"seed must be in \[0, 18446744073709551615\]"):
        ss.HashSketch(64, 3, seed)


# -- 9. a small driver: an allocation failure fails one query, never the driver ---------------------
SMALL_DRIVER = textwrap.dedent("""
    import sys
    from pyspark.sql import SparkSession
    from spark_udaf import native
    spark = native.configure(SparkSession.builder.master("local[1]").config("spark.driver.memory", "1g")
                             .config("spark.ui.enabled", "false")).getOrCreate()
    spark.sparkContext.setLogLevel("OFF")
    try:  # 7 tables of 2^24 int64 counters: 940 MB, more than the heap holds
        spark.sql("SELECT skim_hash_sketch_agg(id, 16777216, 7) FROM range(10)").collect()
        print("BUILT")
    except Exception as e:
        print("FAILED", "SketchMemoryError" in str(e), "ran out of memory" in str(e))
    print("ALIVE", spark.sql("SELECT skim_join_size(skim_sketch_agg(id), skim_sketch_agg(id)) AS v FROM range(100)")
          .collect()[0].v)
    spark.stop()
""")


@pytest.mark.slow
def test_an_allocation_failure_in_a_small_driver_fails_one_query_only():
    if not native.available():
        pytest.skip("no JDK")
    env = dict(os.environ, PYSPARK_PYTHON=sys.executable, PYTHONPATH=os.getcwd())
    out = subprocess.run([sys.executable, "-c", SMALL_DRIVER], capture_output=True, text=True, env=env, timeout=600)
    assert "FAILED True True" in out.stdout and "ALIVE 100.0" in out.stdout, out.stdout + out.stderr[-3000:]
