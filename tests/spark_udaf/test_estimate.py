"""estimate_join_size: the sketch answer, and the exact fallback beyond the tolerance."""

import math

import numpy as np
import pandas as pd
import pytest

import skimsketch as ss
import spark_udaf

pytestmark = pytest.mark.spark


@pytest.fixture(scope="module")
def tables(spark):
    rng = np.random.default_rng(8)
    f = pd.DataFrame({"k": (rng.zipf(1.3, 5000) % 1000).astype("int64")})
    g = pd.DataFrame({"k": ((rng.zipf(1.3, 5000) + 3) % 1000).astype("int64")})
    return f, g, spark.createDataFrame(f).repartition(3), spark.createDataFrame(g).repartition(2)


def test_sketch_answer_equals_in_memory_estimate(tables):
    f, g, F, G = tables
    template = ss.HashSketch(width=256, depth=5, seed=6)
    got = spark_udaf.estimate_join_size(F, "k", G, "k", template)
    a = template.empty_like().update(f["k"])
    b = template.empty_like().update(g["k"])
    expected = a.join_size(b)
    assert (got.value, got.low, got.high, got.method) == (expected.value, expected.low, expected.high, "hash")
    assert got.detail["answered_by"] == "sketch" and got.detail["within_tolerance"]
    assert got.detail["sketch_bytes"] == len(a.to_bytes()) + len(b.to_bytes())
    assert template.is_empty  # the template is not filled


def test_fallback_to_exact_when_interval_too_wide(tables):
    f, g, F, G = tables
    exact = ss.exact_join_size(f["k"], g["k"])
    got = spark_udaf.estimate_join_size(F, "k", G, "k", width=16, depth=3, tolerance=0.01)
    assert got.method == "exact" and got.detail["answered_by"] == "exact"
    assert got.value == got.low == got.high == exact and got.confidence == 1.0
    sk = got.detail["sketch_estimate"]
    assert sk.method == "skimmed" and spark_udaf.relative_half_width(sk) > 0.01  # the library default's kind


def test_no_fallback_when_disabled_or_within_tolerance(tables):
    _, _, F, G = tables
    got = spark_udaf.estimate_join_size(F, "k", G, "k", width=16, depth=3, tolerance=0.01, fallback=False)
    assert got.method == "skimmed" and got.detail["within_tolerance"] is False
    loose = spark_udaf.estimate_join_size(F, "k", G, "k", width=16, depth=3, tolerance=1e9)
    assert loose.method == "skimmed" and loose.detail["answered_by"] == "sketch"


def test_the_default_sketch_is_the_library_default(tables):
    """summary="sketch": SkimmedSketch.for_bytes(16384) (the CLI's and native SQL's default), or (width, depth);
    with no summary the default is the join sample (tests/spark_udaf/test_sample_api.py)."""
    f, g, F, G = tables
    got = spark_udaf.estimate_join_size(F, "k", G, "k", path="python", summary="sketch")  # path="auto": see test_hostile_inputs
    a = ss.SkimmedSketch.for_bytes(16384).update(f["k"])
    want = a.join_size(a.empty_like().update(g["k"]))
    assert (got.value, got.low, got.high, got.method) == (want.value, want.low, want.high, want.method)
    sized = spark_udaf.estimate_join_size(F, "k", G, "k", nbytes=4096, seed=3, path="python", summary="sketch")
    a = ss.SkimmedSketch.for_bytes(4096, seed=3).update(f["k"])
    want = a.join_size(a.empty_like().update(g["k"]))
    assert (sized.value, sized.low, sized.high) == (want.value, want.low, want.high)
    with pytest.raises(ValueError, match="either a template sketch or nbytes/width/depth/seed"):
        spark_udaf.estimate_join_size(F, "k", G, "k", ss.HashSketch(64, 3), width=64, depth=3)
    with pytest.raises(ValueError, match="width and depth go together"):
        spark_udaf.estimate_join_size(F, "k", G, "k", width=64)


def test_weighted_estimate_with_float_weights(spark):
    a = spark.createDataFrame([(1, 0.5), (2, 1.5), (1, 1.0)], "k int, x double")
    b = spark.createDataFrame([(1, 2), (3, 1)], "k int, y int")
    got = spark_udaf.estimate_join_size(a, "k", b, "k", lweight="x", rweight="y", width=64, depth=5)
    exact = spark_udaf.exact_join_size(a, "k", b, "k", "x", "y")
    assert exact == 3.0
    assert got.value == pytest.approx(exact)  # three keys in 64 buckets x 5 tables: medians are collision-free


def test_relative_half_width():
    assert spark_udaf.relative_half_width(ss.Estimate(100.0, 90.0, 120.0, 0.95, "hash")) == 0.2
    assert spark_udaf.relative_half_width(ss.Estimate(0.0, -1.0, 1.0, 0.95, "hash")) == math.inf
    assert spark_udaf.relative_half_width(ss.Estimate.exact(0)) == 0.0


def test_bad_arguments(tables):
    _, _, F, G = tables
    with pytest.raises(ValueError, match="tolerance must be"):
        spark_udaf.estimate_join_size(F, "k", G, "k", tolerance=-1)
    with pytest.raises(TypeError, match="sketch must be a skimsketch sketch"):
        spark_udaf.estimate_join_size(F, "k", G, "k", sketch="hash")


def test_two_job_path_gives_the_same_answer(tables):
    _, _, F, G = tables
    template = ss.HashSketch(width=128, depth=5, seed=2)
    one = spark_udaf.estimate_join_size(F, "k", G, "k", template)
    two = spark_udaf.estimate_join_size(F, "k", G, "k", template, single_job=False, merge="tree")
    assert (one.value, one.low, one.high) == (two.value, two.low, two.high)


def test_parquet_path_inputs_use_the_fast_path(spark, tables, tmp_path):
    f, g, F, G = tables
    F.write.parquet(str(tmp_path / "f"))
    template = ss.HashSketch(width=128, depth=5, seed=2)
    from_df = spark_udaf.estimate_join_size(F, "k", G, "k", template)
    from_path = spark_udaf.estimate_join_size(str(tmp_path / "f"), "k", G, "k", template)
    assert (from_path.value, from_path.low, from_path.high) == (from_df.value, from_df.low, from_df.high)
    fb = spark_udaf.estimate_join_size([str(tmp_path / "f")], "k", G, "k", width=8, depth=3, tolerance=0.0)
    assert fb.method == "exact" and fb.value == ss.exact_join_size(f["k"], g["k"])
