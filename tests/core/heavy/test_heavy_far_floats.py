"""HeavyKeySketch joins of float counts far from 1: the variance multiplies four magnitudes (at 1e100 it
overflowed to a NaN estimate); the estimate is taken on copies scaled by exact powers of two and scaled back."""

from __future__ import annotations

import numpy as np
import pytest

import skimsketch as ss


@pytest.mark.parametrize("scale", [1e100, 1e-100, 1e-150])
def test_far_float_counts_give_the_scaled_answer(scale):
    rng = np.random.default_rng(1)
    kf, kg = rng.zipf(1.3, 50_000) % 5000, rng.zipf(1.3, 50_000) % 5000
    got = {}
    for w in (1.0, scale):
        a, b = (ss.HeavyKeySketch.for_bytes(2048, seed=3, dtype="float64").update(k, weights=np.full(len(k), w))
                for k in (kf, kg))
        got[w] = (a.join_size(b), a.self_join_size())
    for one, far in zip(got[1.0], got[scale]):
        assert not one.low == one.high  # these sketches spilled: a real interval
        assert (far.value, far.low, far.high) == pytest.approx(
            (one.value * scale**2, one.low * scale**2, one.high * scale**2), rel=1e-9)


def test_an_answer_past_the_doubles_is_infinite_not_an_error():
    keys = np.arange(3000) % 700
    a = ss.HeavyKeySketch.for_bytes(1024, seed=1, dtype="float64").update(keys, weights=np.full(len(keys), 1e160))
    with np.errstate(over="ignore"):
        e = a.self_join_size()
    assert e.value == e.high == float("inf")
