"""Unbiasedness and coverage, seeded: many independent sketch seeds on fixed streams that overflow the table."""

import numpy as np
import pytest

from skimsketch.heavy import HeavyKeySketch


def _weighted_stream(rng, freq):
    """The frequencies as a stream of (key, part of its count) arrivals in random order: 3 parts a key."""
    keys = np.flatnonzero(freq)
    cuts = np.sort(rng.integers(0, freq[keys][:, None] + 1, size=(len(keys), 2)), axis=1)
    w = np.stack([cuts[:, 0], cuts[:, 1] - cuts[:, 0], freq[keys] - cuts[:, 1]], axis=1)
    k = np.repeat(keys, 3)
    w = w.ravel()
    order = rng.permutation(len(k))
    k, w = k[order], w[order]
    return k[w > 0].astype(np.int64), w[w > 0].astype(np.int64)


def _pair(seed, shift):
    rng = np.random.default_rng(seed)
    m = 1500
    p = 1.0 / np.arange(1, m + 1) ** 1.1
    p /= p.sum()
    f = rng.multinomial(15000, p)
    g = np.roll(rng.multinomial(15000, p), shift)
    return rng, f, g


@pytest.mark.parametrize("shift", [0, 40])
def test_unbiased_and_covering(shift):
    rng, f, g = _pair(1, shift)
    J = float(np.dot(f.astype(float), g))
    fa, fw = _weighted_stream(rng, f)
    ga, gw = _weighted_stream(rng, g)
    vals, cover, ses = [], [], []
    for seed in range(100):
        a = HeavyKeySketch(4, 40, 4, seed=seed).update(fa, fw)
        b = HeavyKeySketch(4, 40, 4, seed=seed).update(ga, gw)
        e = a.join_size(b)
        vals.append(e.detail.get("unclipped", (e.value,))[0])
        cover.append(e.contains(J))
        ses.append(e.detail["se"])
    vals = np.array(vals)
    sd = vals.std()
    assert abs(vals.mean() - J) < 4 * sd / np.sqrt(len(vals)), (vals.mean(), J, sd)
    assert np.mean(cover) >= 0.9
    # the interval's standard error tracks the realised spread (within a factor 2)
    assert 0.5 < np.median(ses) / sd < 2.0


def test_self_join_unbiased():
    rng, f, _ = _pair(2, 0)
    F2 = float(np.dot(f.astype(float), f))
    fa, fw = _weighted_stream(rng, f)
    vals = []
    for seed in range(80):
        e = HeavyKeySketch(4, 40, 4, seed=seed).update(fa, fw).self_join_size()
        vals.append(e.detail.get("unclipped", (e.value,))[0])
    vals = np.array(vals)
    assert abs(vals.mean() - F2) < 4 * vals.std() / np.sqrt(len(vals))
