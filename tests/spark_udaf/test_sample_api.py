"""The Python API's join samples: sketch_column / sketch_by with a JoinSample template (the JVM path and
the Python path give the core's bytes), the Column helper, and estimate_join_size's choice of summary."""

import logging
import math

import pytest

import skimsketch as ss
import spark_udaf
from spark_udaf import functions as SF
from spark_udaf import native

from .test_sample_sql import _rows, SCHEMA

pytestmark = pytest.mark.spark


@pytest.fixture(scope="module")
def df(spark):
    if not native.available():
        pytest.skip("no JDK: the native jar cannot be built here (javac not found)")
    return spark.createDataFrame(_rows(), SCHEMA).repartition(5)


def _want(key_index: int, weight_index, template):
    rows = [r for r in _rows() if weight_index is None or r[weight_index] is not None]
    w = None if weight_index is None else [r[weight_index] for r in rows]
    return template.empty_like().update([r[key_index] for r in rows], weights=w).to_bytes()


@pytest.mark.parametrize("path", ["native", "python"])
def test_sketch_column_builds_the_core_sample_on_both_paths(df, path, caplog):
    ints, floats = ss.JoinSample.for_bytes(1024, seed=2), ss.JoinSample.for_bytes(1024, seed=2, dtype="float64")
    with caplog.at_level(logging.INFO, logger="spark_udaf"):
        got = spark_udaf.sketch_column(df, "ks", ints, weight="wi", path=path)
    assert ("native path (JVM)" in caplog.text) == (path == "native")
    assert got.finished and got.to_bytes() == _want(2, 4, ints)
    assert got.tau < float("inf")  # the budget dropped keys
    assert spark_udaf.sketch_column(df, "kb", ints, path=path).to_bytes() == _want(1, None, ints)
    assert spark_udaf.sketch_column(df, "kx", floats, weight="wd", path=path).to_bytes() == _want(3, 5, floats)
    assert spark_udaf.sketch_column(df, "ki", floats, weight="wi", path=path).to_bytes() == _want(0, 4, floats)


def test_templates_are_checked_and_sketch_by_groups(df, spark):
    with pytest.raises(ValueError, match="holds data"):
        spark_udaf.sketch_column(df, "kb", ss.JoinSample.for_bytes(1024).update([1]))
    with pytest.raises(ValueError, match="piece of a key-hash partitioning"):
        spark_udaf.sketch_column(df, "kb", ss.JoinSample.for_bytes(1024, partition=(0, 2)))
    with pytest.raises(ss.KeyTypeError, match="non-integral weight"):  # the core's check, on the Python path
        spark_udaf.sketch_column(df, "kb", ss.JoinSample.for_bytes(1024), weight="wd")
    t = ss.JoinSample.for_bytes(600, seed=1)
    by = {r.g: bytes(r.sketch) for r in spark_udaf.sketch_by(df.withColumn("g", df.kb % 2), "kb", t, "g").collect()}
    rows = _rows()
    assert set(by) == {-1, 0, 1, None}  # SQL's remainder keeps the sign; the NULL keys' group
    for g, blob in by.items():
        keys = [r[1] for r in rows if (r[1] is None if g is None else r[1] is not None and math.fmod(r[1], 2) == g)]
        assert blob == t.empty_like().update(keys).to_bytes(), g
    got = df.agg(SF.skim_sample_agg("kb", "wi", nbytes=1024, seed=2).alias("s")).collect()[0].s
    assert bytes(got) == _want(1, 4, ss.JoinSample.for_bytes(1024, seed=2))


def test_estimate_join_size_defaults_to_the_sample_and_says_so(df):
    left, right = df, df.selectExpr("kb + 1 AS kb", "wi")
    got = spark_udaf.estimate_join_size(left, "kb", right, "kb", nbytes=1024)
    a = ss.JoinSample.for_bytes(1024).update([r[1] for r in _rows()])
    b = ss.JoinSample.for_bytes(1024).update([None if r[1] is None else r[1] + 1 for r in _rows()])
    want = a.join_size(b)
    assert got.method == "sample" and got.detail["summary"] == "sample"
    assert (got.value, got.low, got.high) == pytest.approx((want.value, want.low, want.high), rel=1e-12)
    sk = spark_udaf.estimate_join_size(left, "kb", right, "kb", nbytes=4096, summary="sketch")
    assert sk.detail["summary"] == "sketch" and sk.method != "sample"
    t = spark_udaf.estimate_join_size(left, "kb", right, "kb", ss.JoinSample.for_bytes(2048, seed=4))
    assert t.detail["summary"] == "sample"
    with pytest.raises(ValueError, match="summary must be one of"):
        spark_udaf.estimate_join_size(left, "kb", right, "kb", summary="histogram")
    with pytest.raises(ValueError, match="width/depth shape a sketch"):
        spark_udaf.estimate_join_size(left, "kb", right, "kb", width=64, depth=3, summary="sample")


def test_the_python_sql_functions_answer_samples_as_the_core():
    """The Python fallbacks of the estimate functions (no jar, or estimates='python') read samples too."""
    from spark_udaf import sql

    a = ss.JoinSample.for_bytes(1024, seed=1).update([i % 700 for i in range(3000)])
    b = ss.JoinSample.for_bytes(1024, seed=1).update([i % 900 for i in range(2000)])
    ab, bb = a.to_bytes(), b.to_bytes()
    e = ss.from_bytes(ab).join_size(ss.from_bytes(bb))
    assert sql.join_impl([ab], [bb], False) == [e.value]
    assert sql.self_join_impl([ab], False) == [ss.from_bytes(ab).self_join_size().value]
    info = sql.info_impl([ab])[0]
    assert (info["kind"], info["width"], info["depth"], info["nbytes"]) == ("JoinSample", a.budget, 1, len(ab))
    sketch = ss.SkimmedSketch.for_bytes(4096).update([1]).to_bytes()
    with pytest.raises(ss.IncompatibleSketchError, match=r"type differs \('JoinSample' != 'SkimmedSketch'\)"):
        sql.join_impl([ab], [sketch], False)
