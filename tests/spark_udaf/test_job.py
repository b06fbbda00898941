"""The Spark demo job and its deterministic Zipf data generator."""

import numpy as np
import pytest

import skimsketch as ss
from spark_udaf import job
from spark_udaf.datagen import zipf_keys, zipf_table

pytestmark = pytest.mark.spark


def test_zipf_table_is_independent_of_partitioning(spark):
    expected = zipf_keys(np.arange(3000), 1.2, 1000, shift=7, seed=3)
    for parts in (1, 4):
        got = [r.k for r in zipf_table(spark, 3000, 1.2, 1000, 7, 3, parts).orderBy("k").collect()]
        assert got == sorted(expected.tolist())
    assert expected.min() >= 0 and expected.max() < 1000
    # skewed: rank 1 (key 0 + shift) is the most frequent key
    assert np.bincount(expected).argmax() == 7


def test_zipf_keys_rejects_bad_parameters():
    with pytest.raises(ValueError, match="domain must be"):
        zipf_keys(np.arange(3), 1.0, 0)
    with pytest.raises(ValueError, match="skew z must be"):
        zipf_keys(np.arange(3), -1.0, 10)


def test_main_prints_estimate_interval_exact_error_timings(spark, capsys):
    argv = ["--rows", "20000", "--right-rows", "15000", "--zipf", "1.1", "--domain", "5000", "--shift", "3",
            "--width", "256", "--depth", "5", "--partitions", "3"]
    assert job.main(argv) == 0
    out = capsys.readouterr().out
    left = zipf_keys(np.arange(20000), 1.1, 5000, 0, 1)
    right = zipf_keys(np.arange(15000), 1.1, 5000, 3, 2)
    exact = ss.exact_join_size(left, right)
    est = ss.SkimmedSketch(width=256, depth=5, seed=0, domain=5000).update(left).join_size(
        ss.SkimmedSketch(width=256, depth=5, seed=0, domain=5000).update(right))
    assert f"exact      : {exact:,}" in out
    assert f"estimate   : {est.value:,.0f}  interval [{est.low:,.0f}, {est.high:,.0f}] at 95% (skimmed)" in out
    assert "error      : sketch estimate off by" in out and "timings    : both sketches" in out
    assert "x faster) on the same Parquet files" in out
    assert not spark.sparkContext._jsc.sc().isStopped()  # the shared session was reused, not stopped


def test_main_fallback_and_parquet_inputs(spark, tmp_path, capsys):
    zipf_table(spark, 5000, 1.0, 800, 0, 5).write.parquet(str(tmp_path / "l"))
    zipf_table(spark, 4000, 1.0, 800, 2, 6).write.parquet(str(tmp_path / "r"))
    argv = ["--left", str(tmp_path / "l"), "--right", str(tmp_path / "r"), "--width", "8", "--depth", "3",
            "--tolerance", "0.001"]
    assert job.main(argv) == 0
    out = capsys.readouterr().out
    exact = ss.exact_join_size(zipf_keys(np.arange(5000), 1.0, 800, 0, 5), zipf_keys(np.arange(4000), 1.0, 800, 2, 6))
    # --left/--right build the library default too (a skimmed sketch over unbounded keys)
    shape = ", ".join(f"{k}={v}" for k, v in ss.SkimmedSketch(8, 3, seed=0).params.items())
    assert f"sketch     : SkimmedSketch({shape})" in out
    assert "(skimmed)" in out and "answered exactly" in out and f"exact      : {exact:,}" in out


def test_default_sketch_is_the_library_default_for_the_budget(spark, tmp_path, capsys):
    argv = ["--rows", "3000", "--domain", "500", "--shift", "2", "--nbytes", "4096", "--no-exact",
            "--workdir", str(tmp_path), "--kind", "skimmed"]
    assert job.main(argv) == 0
    out = capsys.readouterr().out
    expected = ss.SkimmedSketch.for_bytes(4096, seed=0, domain=500)
    shape = ", ".join(f"{k}={v}" for k, v in expected.params.items())
    assert expected.exact_mode  # the default starts exact: the line states the budget and the capacity
    assert (f"sketch     : SkimmedSketch({shape}), at most 4,096 bytes each (exact up to "
            f"{expected.exact_capacity:,} distinct keys, then counters)") in out
    assert (tmp_path / "left").is_dir() and (tmp_path / "right").is_dir()  # --workdir keeps the tables


def test_the_job_s_default_summary_is_the_join_sample(spark, tmp_path, capsys):
    argv = ["--rows", "3000", "--domain", "500", "--shift", "2", "--nbytes", "1024", "--repeat", "1"]
    assert job.main(argv) == 0
    out = capsys.readouterr().out
    left, right = zipf_keys(np.arange(3000), 1.0, 500, 0, 1), zipf_keys(np.arange(3000), 1.0, 500, 2, 2)
    a = ss.JoinSample.for_bytes(1024).update(left)
    est = a.join_size(ss.JoinSample.for_bytes(1024).update(right))
    assert "sketch     : JoinSample(nbytes=1024, seed=0, dtype=int64), at most 1,024 bytes each" in out
    assert f"estimate   : {est.value:,.0f}  interval [{est.low:,.0f}, {est.high:,.0f}] at 95% (sample)" in out
    assert "summary    : sample" in out and f"exact      : {ss.exact_join_size(left, right):,}" in out


def test_bad_arguments_exit_with_usage():
    with pytest.raises(SystemExit):
        job.parse_args(["--left", "x"])
    with pytest.raises(SystemExit):
        job.parse_args(["--width", "0", "--depth", "3"])
    with pytest.raises(SystemExit):
        job.parse_args(["--width", "64"])  # --depth missing
