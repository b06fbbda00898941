"""The default skimmed sketch against the plain hash sketch of the same bytes on data where
skimming has little to gain: flat, correlated tables close to a self-join (issue 17)."""

import numpy as np
import pytest

import skimsketch as ss


def flat_correlated(seed, keys=3800, sigma=1.2):
    """A few thousand spread 64-bit ids with lognormal per-key rates shared by both sides
    (4 to 400 rows per key), each side drawn around them."""
    rng = np.random.default_rng([seed, 4242])
    rate = np.clip(np.exp(rng.normal(0.0, sigma, keys)) * 30.0, 4.0, 400.0)
    f, g = (rng.poisson(rate * np.exp(rng.normal(0.0, 0.3, keys))) for _ in range(2))
    return rng.integers(-(2**63), 2**63 - 1, keys, dtype=np.int64), f, g


def compare(nbytes, seeds):
    """(mean relative error of the default, of the hash sketch, coverage of the default's 95% interval)."""
    ours, theirs, covered = [], [], 0
    for seed in seeds:
        ids, f, g = flat_correlated(seed)
        exact = float(np.dot(f.astype(float), g))
        for proto, out in ((ss.SkimmedSketch.for_bytes(nbytes, seed=seed, exact=False), ours),
                           (ss.HashSketch.for_bytes(nbytes, seed=seed), theirs)):
            e = proto.empty_like().update(ids, weights=f).join_size(proto.empty_like().update(ids, weights=g))
            out.append(abs(e.value - exact) / exact)
            if out is ours:
                covered += e.contains(exact)
    return float(np.mean(ours)), float(np.mean(theirs)), covered / len(seeds)


@pytest.mark.parametrize("nbytes", [pytest.param(4096, marks=pytest.mark.slow), 16384])  # 16384 in the default run
def test_default_is_not_worse_than_the_hash_sketch_on_flat_correlated_data(nbytes):
    ours, theirs, coverage = compare(nbytes, range(16))
    assert ours <= 1.3 * theirs, (ours, theirs)  # 16 seeds: the 1.1x claim is the slow test's
    assert coverage >= 12 / 16  # 80 seeds (slow test, docs/defaults.md): 0.925 at 4 KB, 0.975 at 16 KB


@pytest.mark.slow
@pytest.mark.parametrize("nbytes", [4096, 16384, 65536])
def test_default_is_within_1_1x_of_the_hash_sketch_over_many_seeds(nbytes):
    ours, theirs, coverage = compare(nbytes, range(80))
    assert ours <= 1.1 * theirs, (ours, theirs)
    assert coverage >= 0.9  # 95% nominal; 80 seeds: the binomial 1% quantile is 0.9
