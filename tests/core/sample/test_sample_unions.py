"""Unions of finished join samples (issue 33 item 7): the rule does not depend on the tables' sizes.

A daily pipeline that unions finished samples used to work while every day's sample kept every key and fail on
the first day one did not. Now a finished sample holding keys never merges (nor updates), complete or not, so the
refusal comes on the first run, naming the patterns that work every day: the union of the rows (or of the
days' per-key totals), skimmed sketches, or key-hash pieces (docs/sample.md, "Unions over time")."""

from __future__ import annotations

import functools

import numpy as np
import pytest

import skimsketch as ss
from skimsketch.sample.join_sample import SampleMergeError

NBYTES, SEED = 512, 3
REMEDY = r"refused even when both kept every key.*GROUP BY key.*skimmed sketches.*partition=\(i, P\)"


def day(keys, weights=None) -> ss.JoinSample:
    """A day's sample as a pipeline stores it: built, written, read back."""
    return ss.from_bytes(ss.JoinSample.for_bytes(NBYTES, seed=SEED).update(keys, weights=weights).to_bytes())


@pytest.mark.parametrize("sizes", [(3, 5), (3, 40_000), (40_000, 50_000)])
def test_a_union_of_days_is_refused_on_small_days_as_on_big_ones(sizes):
    days = [day(np.arange(i, i + n)) for i, n in enumerate(sizes)]
    assert [d.tau == float("inf") for d in days] == [n < 50 for n in sizes]  # small days kept every key
    assert all(d.finished for d in days)
    with pytest.raises(SampleMergeError, match="their keys may overlap.*" + REMEDY):
        days[0].copy().merge(days[1])
    with pytest.raises(ValueError, match="cannot update a finished JoinSample.*even when it kept every key"):
        days[0].copy().update([7])


def test_the_documented_daily_patterns_are_exact_every_day():
    rng = np.random.default_rng(5)
    rows = [rng.zipf(1.3, n) % 30_000 for n in (40, 60_000, 30)]  # a small day, a big day, a small day
    whole = ss.JoinSample.for_bytes(NBYTES, seed=SEED).update(np.concatenate(rows))
    assert whole.tau < float("inf")
    # the days' per-key totals (GROUP BY key), kept instead of their samples: the sample of their union
    totals = [np.unique(r, return_counts=True) for r in rows]
    keys, counts = np.concatenate([k for k, _ in totals]), np.concatenate([c for _, c in totals])
    assert ss.JoinSample.for_bytes(NBYTES, seed=SEED).update(keys, weights=counts).to_bytes() == whole.to_bytes()
    # the building samples (before to_bytes) merge exactly
    building = [ss.JoinSample.for_bytes(NBYTES, seed=SEED).update(r) for r in rows]
    assert functools.reduce(lambda a, b: a.merge(b), building).to_bytes() == whole.to_bytes()
    # skimmed sketches union exactly (linear) whatever the day
    sk = [ss.SkimmedSketch.for_bytes(4096, seed=SEED, domain=30_000).update(r) for r in rows]
    merged = functools.reduce(lambda a, b: a.merge(b), [ss.from_bytes(s.to_bytes()) for s in sk])
    assert merged.to_bytes() == ss.SkimmedSketch.for_bytes(4096, seed=SEED, domain=30_000).update(
        np.concatenate(rows)).to_bytes()


def test_samples_without_keys_merge_with_anything():
    full = day(np.arange(10_000))
    nulls = day([None, None, 4]).copy()
    empty_read = day([])
    assert not empty_read.finished and empty_read.copy().update([1, 1]).to_bytes() == \
        ss.JoinSample.for_bytes(NBYTES, seed=SEED).update([1, 1]).to_bytes()
    only_nulls = ss.from_bytes(ss.JoinSample.for_bytes(NBYTES, seed=SEED).update([None, None]).to_bytes())
    for a, b in ((ss.JoinSample.for_bytes(NBYTES, seed=SEED), full), (full, empty_read), (only_nulls, full)):
        got = a.copy().merge(b)
        assert got.finished and got.sample_items()[0].tolist() == full.sample_items()[0].tolist()
        assert got.null_weight == a.null_weight + b.null_weight and got.total_weight == full.total_weight
    assert nulls.finished  # a kept key: finished whatever its size


def test_a_building_template_takes_a_finished_sample_as_the_builders_do():
    """spark_udaf's builders return template.empty_like().merge(built): that is no merge of two tables."""
    full = day(np.arange(10_000))
    got = ss.JoinSample.for_bytes(NBYTES, seed=SEED).merge(full)
    assert got.to_bytes() == full.to_bytes() and got.finished


def test_pieces_of_one_partitioning_still_merge_exactly_and_an_empty_piece_counts():
    keys = np.arange(20_000)
    part = ss.JoinSample.partition_of(keys, 3, seed=SEED)
    pieces = [ss.from_bytes(ss.JoinSample.for_bytes(NBYTES, seed=SEED, partition=(i, 3))
                            .update(keys[part == i] if i else []).to_bytes()) for i in range(3)]
    merged = functools.reduce(lambda a, b: a.merge(b), pieces)
    assert merged.partition is None
    assert merged.to_bytes() == ss.JoinSample.for_bytes(NBYTES, seed=SEED).update(keys[part != 0]).to_bytes()
