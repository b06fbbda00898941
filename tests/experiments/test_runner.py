"""The experiment runner's building blocks, on small data."""

from dataclasses import replace

import numpy as np
import pytest

import skimsketch as ss
from data.zipf import join_size_from_frequencies, shifted_pair_frequencies, zipf_stream
from experiments.metrics import memory_levels, paper_error
from experiments.runner import agms_subsketch, aggregate, plan, run_task
from experiments.workloads import FIGURES, FULL, METHODS, QUICK, figure_data, sparse
from skimsketch.sketch.sizing import COUNTER_BYTES

TINY = replace(QUICK, mode="tiny", zipf_n=20_000, zipf_domain=2048, census_n=5_000, reps=1,
               widths=(50, 100), depths=(11, 23))


def test_agms_subgrid_equals_sketch_built_at_that_shape():
    keys = zipf_stream(5_000, 1000, 1.0, seed=3)
    big = ss.AGMSSketch(100, 23, seed=9).update(keys)
    for w, d in [(50, 11), (100, 11), (50, 23), (7, 3)]:
        sub = agms_subsketch(big, w, d)
        direct = ss.AGMSSketch(w, d, seed=9).update(keys)
        assert sub == direct
        other = ss.AGMSSketch(w, d, seed=9).update(keys[:2000])
        assert sub.join_size(other).value == direct.join_size(other).value
    with pytest.raises(ValueError, match="sub-grid"):
        agms_subsketch(big, 101, 5)


@pytest.mark.parametrize("kind", ["agms", "hash", "skimmed"])
def test_distinct_keys_with_counts_equal_the_stream(kind):
    keys = zipf_stream(20_000, 4096, 1.2, seed=1)
    uniq, counts = sparse(np.bincount(keys, minlength=4096))

    def make():
        if kind == "agms":
            return ss.AGMSSketch(30, 5, seed=2)
        if kind == "hash":
            return ss.HashSketch(30, 5, seed=2)
        return ss.SkimmedSketch(30, 5, seed=2, domain=4096)

    assert make().update(keys) == make().update(uniq, counts)


def test_figure_data_is_the_documented_zipf_pair_and_deterministic():
    d = figure_data("5a", TINY, 0)
    f, g = shifted_pair_frequencies(TINY.zipf_n, TINY.zipf_domain, 1.0, 100, seed=0)
    assert np.array_equal(d.freq_f, f) and np.array_equal(d.workloads[0].freq_g, g)
    assert [w.shift for w in d.workloads] == [100, 200, 300]
    for w in d.workloads:
        assert w.join_size == join_size_from_frequencies(d.freq_f, w.freq_g)
    again = figure_data("5a", TINY, 0)
    assert all(np.array_equal(a.freq_g, b.freq_g) for a, b in zip(d.workloads, again.workloads))
    other_rep = figure_data("5a", TINY, 1)
    assert not np.array_equal(d.freq_f, other_rep.freq_f)


def test_census_figure_is_marked_synthetic():
    d = figure_data("census", TINY, 0)
    assert d.domain == 288_416 and "SYNTHETIC" in d.synthetic_note
    assert d.freq_f.sum() == d.workloads[0].freq_g.sum() == TINY.census_n


def test_full_and_quick_configs():
    assert (FULL.zipf_n, FULL.zipf_domain, FULL.census_n) == (4_000_000, 1 << 18, 159_434)
    assert FULL.widths == (50, 100, 150, 200, 250) and FULL.depths == (11, 23, 35, 47, 59)
    assert 5 <= FULL.reps <= 10
    assert set(FIGURES) == {"5a", "5b", "census"}
    assert FIGURES["5a"][2:] == (1.0, (100, 200, 300)) and FIGURES["5b"][2:] == (1.5, (30, 50))


def test_plan_covers_every_figure_method_and_rep():
    tasks = plan(TINY)
    assert len(tasks) == len(TINY.figures) * len(METHODS) * TINY.reps
    assert all(t.cost > 0 for t in tasks)
    assert [t.cost for t in tasks] == sorted((t.cost for t in tasks), reverse=True)


@pytest.mark.parametrize("method", METHODS)
def test_run_task_samples(method):
    samples = run_task(TINY, "5b", 0, method)
    levels = memory_levels(TINY.widths, TINY.depths)
    n_shapes = len(levels) if method == "skimmed_default" else 4
    assert len(samples) == 2 * n_shapes  # two shifts
    for s in samples:
        assert s["error"] == paper_error(s["join_size"], s["estimate"])
        assert s["seconds"] >= 0 and s["nbytes"] >= COUNTER_BYTES * s["counters"]
        if method != "skimmed_default":
            assert s["counters"] == s["width"] * s["depth"]
            assert f"{s['width']}x{s['depth']}" in levels[s["level"]].label
    if method == "countmin":  # never an underestimate on insert-only data
        assert all(s["estimate"] >= s["join_size"] for s in samples)


def test_run_task_is_deterministic():
    a = run_task(TINY, "census", 0, "skimmed")
    b = run_task(TINY, "census", 0, "skimmed")
    assert [s["estimate"] for s in a] == [s["estimate"] for s in b]


def test_aggregate_rows():
    samples = run_task(TINY, "5b", 0, "hash") + run_task(replace(TINY, reps=2), "5b", 1, "hash")
    rows = aggregate(samples)
    assert len(rows) == 2 * 3  # two workloads x three levels
    r = next(r for r in rows if r["workload"] == "zipf1.5_shift30" and r["memory_level"] == 1)
    sel = [s for s in samples if s["workload"] == "zipf1.5_shift30" and s["level"] == 1]
    assert r["shapes"] == "100x11;50x23" and r["n_shapes"] == 2 and r["repetitions"] == 2
    assert r["n_estimates"] == 4
    assert r["mean_error"] == pytest.approx(np.mean([s["error"] for s in sel]))
    assert r["std_error"] == pytest.approx(np.std([s["error"] for s in sel], ddof=1))
    assert r["memory_counters"] == pytest.approx(1125.0) and r["memory_bytes"] == pytest.approx(COUNTER_BYTES * 1125.0)
    assert r["dataset"] == "zipf"


def test_run_all_with_progress_bar_single_process(capsys):
    from experiments.runner import run_all

    cfg = replace(TINY, figures=("5b",), methods=("hash", "countmin"), reps=2)
    logged = []
    samples, info = run_all(cfg, jobs=1, progress=True, log=logged.append)
    assert len(samples) == 2 * 2 * 4 * 2  # methods x workloads x shapes x reps
    assert "estimated" in logged[0]
    assert "100%" in capsys.readouterr().err
    assert set(info["task_cpu_seconds"]) == {f"5b/{m}/rep{r}" for m in cfg.methods for r in range(2)}
    assert info["wall_seconds"] > 0 and info["cpu_seconds_in_tasks"] > 0


def test_hash_and_skimmed_share_counters_so_the_comparison_isolates_skimming():
    keys = zipf_stream(10_000, 4096, 1.0, seed=1)
    h = ss.HashSketch(50, 11, seed=7).update(keys)
    s = ss.SkimmedSketch(50, 11, seed=7, domain=4096).update(keys)
    assert np.array_equal(h.counters, s.counters)
