"""SKIMDENSE (skimsketch.sketch.skim.skimdense): skimming at depth 3, heavy hitters found or refused, intervals, cost."""

import math

import numpy as np
import pytest

import skimsketch as ss
from data.zipf import zipf_draws
from skimsketch.sketch.skim import skimdense as sd
from skimsketch.sketch.skim.candidates import MAX_SCAN_DOMAIN
from skimsketch.sketch.sizing import DEFAULT_DEPTH


M = 1 << 18


def zipf_freqs(rng, m, z, n, shift=0):
    """Frequency vector of n Zipf(z) draws over [0, m), shifted right by ``shift`` (mod m)."""
    p = 1.0 / np.arange(1, m + 1, dtype=np.float64) ** z
    return np.roll(rng.multinomial(n, p / p.sum()), shift)


def sketched(proto, freq):
    keys = np.flatnonzero(freq)
    return proto.empty_like().update(keys, weights=freq[keys])


def mean_errors(depth, counters, workloads, seeds, n=1_000_000):
    out = {"hash": [], "skimmed": []}
    for seed in range(seeds):
        rng = np.random.default_rng(40 + seed)
        for z, shift in workloads:
            f, g = zipf_freqs(rng, M, z, n), zipf_freqs(rng, M, z, n, shift)
            exact = float(np.dot(f.astype(float), g))
            h = ss.HashSketch(counters // depth, depth, seed=seed)
            s = ss.SkimmedSketch(counters // depth, depth, seed=seed, domain=M)
            out["hash"].append(abs(sketched(h, f).join_size(sketched(h, g)).value - exact) / exact)
            out["skimmed"].append(abs(sketched(s, f).join_size(sketched(s, g)).value - exact) / exact)
    return {k: float(np.mean(v)) for k, v in out.items()}


@pytest.mark.parametrize("depth", [pytest.param(d, marks=[] if d == 3 else [pytest.mark.slow])
                                   for d in sorted({3, DEFAULT_DEPTH})])  # depth 3 in the default run
def test_skimming_halves_the_hash_error_on_zipf_at_16k_counters(depth):
    """Zipf 1.0 and 1.5 shifted joins at 16K counters (depth 3 and the default depth), 4 seeds."""
    e = mean_errors(depth, 16384, [(1.0, 100), (1.0, 300), (1.2, 50), (1.5, 30)], seeds=4)
    assert e["skimmed"] <= 0.5 * e["hash"], e


def test_depth_3_skims_heavy_keys_with_their_frequencies():
    rng = np.random.default_rng(1)
    f = zipf_freqs(rng, M, 1.2, 1_000_000)
    s = sketched(ss.SkimmedSketch(5461, 3, seed=4, domain=M), f)
    res = s.skim()
    assert res.rounds >= 2 and len(res.keys) > 50  # peeling goes on as the residual shrinks
    top = np.argsort(-f)[:30]
    assert set(top.tolist()) <= set(res.keys.tolist())
    got = dict(zip(res.keys.tolist(), res.values.tolist()))
    for k in top.tolist():
        assert abs(got[k] - f[k]) <= res.threshold, (k, got[k], f[k], res.threshold)


def test_heavy_hitters_complete_above_resolution_or_refused():
    rng = np.random.default_rng(2)
    f = zipf_freqs(rng, M, 1.1, 500_000)
    s = sketched(ss.SkimmedSketch(1365, 3, seed=5, domain=M), f)
    res = s.skim()
    t = 2 * res.resolution
    hh = s.heavy_hitters(t)
    # every key clearly above t is listed, nothing far below it is
    assert set(np.flatnonzero(f >= 1.5 * t).tolist()) <= set(hh), (t, res.resolution)
    assert all(f[k] >= 0.5 * t for k in hh)
    with pytest.raises(ValueError, match=r"cannot resolve keys below \|frequency\| [0-9.e+]+"):
        s.heavy_hitters(res.resolution / 4)


def test_unbounded_heavy_hitters_beyond_capacity_are_refused_not_truncated():
    """Many heavy ids and a small hierarchy: the answer is complete or an error names the threshold."""
    rng = np.random.default_rng(3)
    pool = rng.integers(-(2**63), 2**63 - 1, 400, dtype=np.int64)
    keys = np.concatenate([np.repeat(pool, 200), rng.integers(-(2**63), 2**63 - 1, 20_000, dtype=np.int64)])
    s = ss.SkimmedSketch(256, 3, seed=6, hier_width=16, hier_depth=2).update(keys)
    for t in (50, 100, 150):
        try:
            hh = s.heavy_hitters(t)
        except ValueError as err:
            assert "cannot resolve keys below" in str(err)
            continue
        assert set(pool.tolist()) <= set(hh), (t, len(set(pool.tolist()) - set(hh)))


def test_huge_domain_refused_at_construction_with_remedy():
    with pytest.raises(ValueError, match=r"domain=None"):
        ss.SkimmedSketch(64, 3, seed=1, domain=2**30)
    ok = ss.SkimmedSketch(64, 3, seed=1, domain=MAX_SCAN_DOMAIN)
    assert ok.domain == MAX_SCAN_DOMAIN


# (1.1, 64, 3) in the default run; the other two: slow
@pytest.mark.parametrize("z,width,depth", [(1.1, 64, 3), pytest.param(0.8, 200, 3, marks=pytest.mark.slow),
                                           pytest.param(1.5, 200, 5, marks=pytest.mark.slow)])
def test_interval_coverage_and_width(z, width, depth):
    """Seeded trials: the default (normal) interval covers at the stated rate (3 sd binomial slack),
    the Chebyshev one too, and the default's median half-width stays within 5x the median error."""
    trials, conf, m = 80, 0.9, 1 << 14
    hits = {"normal": 0, "chebyshev": 0}
    half, err = [], []
    for t in range(trials):
        rng = np.random.default_rng(20_000 + t)
        f, g = zipf_draws(rng, 50_000, m, z), zipf_draws(rng, 50_000, m, z, 7)
        exact = ss.exact_join_size(f, g)
        a = ss.SkimmedSketch(width, depth, seed=t, domain=m)
        a, b = a.copy().update(f), a.copy().update(g)
        for bound in hits:
            e = a.join_size(b, confidence=conf, bound=bound)
            hits[bound] += e.contains(exact)
            if bound == "normal":
                half.append(e.width / 2)
                err.append(abs(e.value - exact))
    floor = conf - 3 * np.sqrt(conf * (1 - conf) / trials)
    assert min(hits.values()) / trials >= floor, hits
    assert np.median(half) <= 5 * np.median(err), (np.median(half), np.median(err))


def test_bad_bound_rejected():
    a = ss.SkimmedSketch(64, 3, seed=1, domain=100).update([1, 2, 3])
    with pytest.raises(ValueError, match="bound must be one of"):
        a.join_size(a, bound="hoeffding")


def test_round_threshold_controls_chance_passes():
    """On pure noise counters the rule lets through about ``budget`` of ``tested`` absent keys."""
    rng = np.random.default_rng(0)
    counters = rng.normal(0, 100, (3, 512))
    rules = sd.pass_rules(counters, 1 << 18, budget=0.25)
    assert [r for _, r in rules] == [2, 3]
    t3 = {r: t for t, r in rules}[3]
    share = (np.abs(counters) >= t3).mean(axis=1) / 2
    assert (1 << 18) * 2 * np.prod(share) <= 0.25 / 2


def test_a_skim_that_finds_every_key_answers_exactly_and_its_interval_covers():
    """The dense values are the least-squares fit of the counters: when the dense keys are all the
    keys (few distinct keys, a wide sketch), the fit is exact and so is the join size."""
    rng = np.random.default_rng(11)
    m = 2000
    for seed in range(4):
        f = rng.integers(40, 100, m)
        g = rng.integers(40, 100, m)
        keys = np.arange(m)
        s = ss.SkimmedSketch(3000, 5, seed=seed, domain=m)
        a, b = s.copy().update(keys, weights=f), s.copy().update(keys, weights=g)
        exact = float(f @ g)
        e = a.join_size(b)
        assert len(a.skim().keys) == m
        assert abs(e.value - exact) <= 1e-9 * exact, (seed, e.value, exact)
        assert e.low <= exact <= e.high
        hh = a.heavy_hitters()
        assert all(round(hh[k]) == f[k] for k in range(m)) and max(abs(hh[k] - f[k]) for k in range(m)) < 1e-3


def _pass_rules_everywhere(residual, tested, budget, floor, extra):
    """pass_rules by evaluating the chance-pass probability at every candidate threshold."""
    rs, xs, passes = sd.chance_passes(residual, tested, budget, floor, extra)
    ok = passes(np.arange(len(xs)))
    return [(float(xs[ok[:, j].argmax()]) if ok[:, j].any() else math.inf, r) for j, r in enumerate(rs)]


def test_pass_rules_grid_search_equals_evaluating_every_threshold():
    rng = np.random.default_rng(3)
    for t in range(150):
        d, w = int(rng.integers(1, 40)), int(rng.integers(1, 600))
        residual = [rng.normal(size=(d, w)) * 100, rng.integers(-3, 4, size=(d, w)).astype(float),
                    np.round(rng.standard_cauchy(size=(d, w)) * 10)][t % 3]
        tested = int(rng.integers(0, 10 ** int(rng.integers(1, 7))))
        args = (float(rng.choice([1e-3, 0.05, 0.5])), float(rng.choice([0.0, 1.0, 50.0])), int(rng.integers(0, 2)))
        assert sd.pass_rules(residual, tested, *args) == _pass_rules_everywhere(residual, tested, *args), (t, d, w)


def test_passing_by_ranked_estimates_equals_counting_tables():
    rng = np.random.default_rng(8)
    for _ in range(200):
        d, m = int(rng.integers(1, 30)), int(rng.integers(0, 150))
        e = np.round(rng.normal(size=(d, m)) * 5)
        rules = [(float(rng.choice([rng.uniform(0, 10), math.inf, 0.0, 3.0])), r) for r in range(d // 2 + 1, d + 1)]
        want = np.zeros(m, dtype=bool)
        for t, r in rules:
            if math.isfinite(t):
                want |= ((e >= t).sum(axis=0) >= r) | ((e <= -t).sum(axis=0) >= r)
        assert (sd._passing(e, rules) == want).all()
