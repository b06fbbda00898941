"""Join estimates of float sketches whose counters are far from 1 (issue 36: 1e100 totals gave NaN intervals):
the variance bounds multiply four counters' magnitudes, so the estimate is taken on exactly rescaled copies."""

import math

import numpy as np
import pytest

import skimsketch as ss


@pytest.mark.parametrize("kind", [ss.SkimmedSketch, ss.HashSketch, ss.AGMSSketch])
@pytest.mark.parametrize("magnitude", [1e-150, 1e-40, 1e40, 1e100, 1e150])
def test_join_estimates_scale_with_the_weights(kind, magnitude):
    rng = np.random.default_rng(1)
    keys = rng.integers(0, 5000, 20000)
    out = []
    for m in (1.0, magnitude):
        a = kind.for_bytes(4096, seed=3, dtype="float64").update(keys[:10000], weights=np.full(10000, 1.5 * m))
        b = a.empty_like().update(keys[5000:], weights=np.full(15000, 0.5 * m))
        e = a.join_size(b)
        assert all(math.isfinite(x) for x in (e.value, e.low, e.high)), e
        out.append(np.array([e.value, e.low, e.high]) / (m * m))
    np.testing.assert_allclose(out[1], out[0], rtol=1e-9)


def test_rescaling_leaves_the_sketch_unchanged():
    a = ss.HashSketch.for_bytes(4096, seed=3, dtype="float64").update([1, 2, 3], weights=[1e100, 2e100, 3e100])
    before = a.to_bytes()
    a.join_size(a.copy())
    assert a.to_bytes() == before


def test_an_interval_that_missed_below_zero_falls_back_to_cauchy_schwarz_not_to_zero_width():
    """A fact table against a dimension holding 30 % of its keys (``benchmarks/adversarial_shapes.py``), hash seed
    10009 at 4 KB: the skimmed estimate's normal interval (``bound="normal"``; the default Chebyshev one covers
    here) lies wholly below 0 (a heavy fact key against the dimension's residual), so clipping at 0 gave
    ``[0, 0]`` for an exact 313,122. Non-negative data: ``J <= sqrt(F2 F2)``."""
    from benchmarks import adversarial_shapes as adv

    kf, _, kg, _ = adv.SHAPES["factdim_cover30"].make(np.random.default_rng(0), 1.0)
    a = ss.SkimmedSketch.for_bytes(4096, seed=10009).update(kf)
    b = ss.SkimmedSketch.for_bytes(4096, seed=10009).update(kg)
    e = a.join_size(b, bound="normal")
    J = ss.exact_join_size(kf, kg)
    assert a.join_size(b).low <= J <= a.join_size(b).high
    assert e.detail["bound"] == "cauchy-schwarz" and e.low == 0.0 < J <= e.high
    assert e.high <= math.sqrt(a.self_join_size().high * b.self_join_size().high) * (1 + 1e-12)


def pareto_pair():
    """Two tables of 40,000 distinct ids in ``[0, 2^40)`` sharing half of them, Pareto(1.2) float totals
    (data seed 0): ``kf, wf, kg, wg``."""
    rng = np.random.default_rng(0)
    k = 40_000
    ids = np.sort(rng.integers(0, 1 << 40, k + k // 2 + (k + k // 2) // 8 + 16))
    ids = rng.permutation(ids[np.concatenate([[True], ids[1:] != ids[:-1]])])[: k + k // 2]
    wf, wg = rng.pareto(1.2, k) + 1.0, rng.pareto(1.2, k) + 1.0
    return rng.permutation(ids[:k]), wf, rng.permutation(ids[k // 2:]), wg


def test_the_cauchy_schwarz_fallback_of_far_float_counters_is_taken_on_the_rescaled_copies():
    """Float totals near 1e100 whose normal interval falls wholly below 0 (skimmed, 1 KB, hash seed 10012 of the
    adversarial benchmark's float shape): the fallback's F2 bounds are taken on the rescaled copies (they
    overflowed: OverflowError, 1 seed in 40) and equal the answer at scale 1, times 1e200."""
    kf, wf, kg, wg = pareto_pair()
    got = {}
    for scale in (1.0, 1e100):
        a, b = (ss.SkimmedSketch.for_bytes(1024, seed=10012, dtype="float64").update(keys, weights=w * scale)
                for keys, w in ((kf, wf), (kg, wg)))
        got[scale] = a.join_size(b, bound="normal")
    assert got[1.0].detail.get("bound") == "cauchy-schwarz" == got[1e100].detail.get("bound")
    assert got[1e100].low == 0.0 and math.isclose(got[1e100].high, got[1.0].high * 1e200, rel_tol=1e-9)


@pytest.mark.parametrize("scale", [1e100, 1e-100, 1e150])
@pytest.mark.parametrize("cls", [ss.HashSketch, ss.AGMSSketch, ss.SkimmedSketch])
def test_self_join_of_far_float_counters_is_the_scaled_answer(cls, scale):
    """F2^2 of 1e100 counters overflows a double: the self-join is taken on an exactly rescaled copy."""
    keys = np.random.default_rng(1).integers(0, 1000, 5000)
    one, far = (cls.for_bytes(2048, seed=3, dtype="float64").update(keys, weights=np.full(len(keys), w))
                for w in (1.0, scale))
    a, b = one.self_join_size(), far.self_join_size()
    assert (b.value / scale**2, b.low / scale**2, b.high / scale**2) == pytest.approx((a.value, a.low, a.high),
                                                                                      rel=1e-9)
