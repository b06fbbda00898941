"""JoinSample estimates: unbiasedness and interval coverage on fixed data over many hash seeds (seeded)."""

from __future__ import annotations

import numpy as np
import pytest

import skimsketch as ss


def _tables(kind: str):
    rng = np.random.default_rng(17)
    if kind == "zipf_shift":  # skewed, heavy keys of one side meet the other's middle
        d = 4000
        f = np.bincount((rng.zipf(1.2, 60000) - 1) % d, minlength=d)
        g = np.roll(np.bincount((rng.zipf(1.2, 60000) - 1) % d, minlength=d), 20)
    elif kind == "zipf_past":  # g's heavy keys are f's keys just past its sample (shift 300 > 123 entries a side)
        d = 8000
        f = np.bincount((rng.zipf(1.2, 60000) - 1) % d, minlength=d)
        g = np.roll(np.bincount((rng.zipf(1.2, 60000) - 1) % d, minlength=d), 300)
    elif kind == "indep_heavy":  # every key on both sides, each side's heavy keys its own (data-lake joins)
        d = 8000
        f = np.bincount((rng.zipf(1.2, 60000) - 1) % d, minlength=d)[rng.permutation(d)]
        g = np.bincount((rng.zipf(1.2, 60000) - 1) % d, minlength=d)[rng.permutation(d)]
    else:  # flat: a few thousand keys with correlated rates
        d = 3000
        rate = np.exp(rng.normal(0, 1, d)) * 10
        f, g = rng.poisson(rate), rng.poisson(rate)
    keys = rng.choice(10**12, d, replace=False).astype(np.int64)
    return keys, f, g


def _estimates(kind: str, nbytes: int, seeds: range):
    keys, f, g = _tables(kind)
    J = float(np.dot(f.astype(float), g.astype(float)))
    out = []
    for s in seeds:
        a = ss.JoinSample.for_bytes(nbytes, seed=s).update(keys[f > 0], weights=f[f > 0])
        b = ss.JoinSample.for_bytes(nbytes, seed=s).update(keys[g > 0], weights=g[g > 0])
        out.append(a.join_size(b))
    return J, out


@pytest.mark.parametrize("kind", ["zipf_shift", "flat"])
def test_the_join_estimate_is_unbiased(kind):
    """At 2048 bytes the rare large terms of ``zipf_shift`` (a heavy key of one side against a key of total 1-2
    on the other: kept by both with probability about tau_g) occur in every 300 draws; at 1024 bytes a run of 300
    can miss them all and its mean sits 6 standard errors low, while the next 300 hold one and sit on J."""
    J, est = _estimates(kind, 2048, range(300))
    v = np.array([e.value for e in est])
    se = v.std() / np.sqrt(len(v))
    assert abs(v.mean() - J) <= 4 * se, (v.mean(), J, se)
    assert se < 0.05 * J  # the test can fail: the estimates are not all equal to J


#: median half-width over median error, measured over these 200 draws at 1024 bytes; the fitted allowances of
#: the previous release gave 2.64 and 2.74, but covered 0.26-0.48 on shapes they were not fitted to
#: (docs/sample.md, "The interval")
WIDTH = {"zipf_shift": 11.72, "flat": 3.49, "zipf_past": 3.49, "indep_heavy": 9.82}


@pytest.mark.parametrize("kind", ["zipf_shift", "flat", "zipf_past", "indep_heavy"])
def test_the_interval_covers_at_its_confidence(kind):
    """``zipf_past``: g's heavy keys are f's keys just past what its sample keeps; ``indep_heavy``: much of ``J``
    on keys neither sample keeps. Measured coverage over these 200 draws: 1.00, 0.99 (flat), 1.00, 1.00."""
    J, est = _estimates(kind, 1024, range(200))
    cover = np.mean([e.contains(J) for e in est])
    err = np.median([abs(e.value - J) for e in est])
    half = np.median([(e.high - e.low) / 2 for e in est])
    assert cover >= 0.92, cover  # 95 % intervals; 200 draws: 0.92 is 2 standard errors below
    assert err > 0 and half / err <= 1.05 * WIDTH[kind], half / err


def test_the_neither_kept_bound_is_the_headers_sure_bound():
    """``S0 = min(n0 / sqrt(tau_f tau_g), D_f / sqrt(tau_g), D_g / sqrt(tau_f))``: at most ``n0`` keys neither sample
    kept, each below ``1 / sqrt(tau)`` on each side, their totals summing to each side's dropped mass ``D``;
    zero when a sample kept every key."""
    keys, f, g = _tables("indep_heavy")
    a = ss.JoinSample.for_bytes(1024, seed=3).update(keys[f > 0], weights=f[f > 0])
    b = ss.JoinSample.for_bytes(1024, seed=3).update(keys[g > 0], weights=g[g > 0])
    (fa, ta), (fb, tb) = a.sample_items(), b.sample_items()
    n0 = min(int((f > 0).sum()) - len(fa), int((g > 0).sum()) - len(fb))
    d_f, d_g = float(f.sum() - ta.sum()), float(g.sum() - tb.sum())
    m_f, m_g = 1 / np.sqrt(a.tau), 1 / np.sqrt(b.tau)
    detail = a.join_size(b).detail
    assert detail["neither_bound"] == pytest.approx(min(n0 * m_f * m_g, d_f * m_g, d_g * m_f), rel=1e-12)
    whole = ss.JoinSample.for_bytes(1 << 20, seed=3).update(keys[g > 0], weights=g[g > 0])  # keeps every key
    assert a.join_size(whole).detail["neither_bound"] == 0.0


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["zipf_shift", "flat"])
@pytest.mark.parametrize("nbytes", [1024, 2048])
def test_the_interval_covers_at_its_confidence_many_seeds(kind, nbytes):
    J, est = _estimates(kind, nbytes, range(1000))
    assert np.mean([e.contains(J) for e in est]) >= 0.94
    v = np.array([e.value for e in est])
    assert abs(v.mean() - J) <= 4 * v.std() / np.sqrt(len(v))


def test_self_join_is_unbiased():
    keys, f, _ = _tables("zipf_shift")
    F2 = float(np.dot(f.astype(float), f.astype(float)))
    v = np.array([ss.JoinSample.for_bytes(512, seed=s).update(keys[f > 0], weights=f[f > 0]).self_join_size().value
                  for s in range(200)])
    assert abs(v.mean() - F2) <= 4 * v.std() / np.sqrt(len(v)) and v.std() > 0
