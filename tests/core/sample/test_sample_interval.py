"""The join sample's interval (skimsketch sample interval module): exact values of its parts, its guarantee
checked by enumerating every outcome of small inputs, and its sure bounds."""

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from skimsketch.sample.interval import GRID, count_upper, interval, scaled, tail_bound

DELTA = 0.02


def test_grid_holds_the_sub_gaussian_optimum():
    assert GRID[len(GRID) // 2] == 1.0


@pytest.mark.parametrize("delta", [0.05, 0.005])
def test_count_upper_with_nothing_seen_is_log_inverse_delta(delta):
    assert count_upper(0, delta) == pytest.approx(-math.log(delta), rel=0, abs=0)


@pytest.mark.parametrize("n", [1, 3, 10, 100])
def test_count_upper_is_the_chernoff_root(n):
    mu = count_upper(n, DELTA)
    assert n < mu
    assert n * math.log(math.e * mu / n) - mu == pytest.approx(math.log(DELTA), abs=1e-9)


@pytest.mark.parametrize("n", [0, 1, 4, 20])
def test_count_upper_covers_a_binomial(n):
    """At the bound's mean, a sum of many small Bernoulli variables (the worst case: Poisson) is at most n
    with probability at most delta."""
    mu = count_upper(n, DELTA)
    poisson_cdf = sum(math.exp(-mu) * mu**k / math.factorial(k) for k in range(n + 1))
    assert poisson_cdf <= DELTA


def test_tail_bound_of_the_light_light_term_alone_is_sub_gaussian():
    v = 12345.0
    assert tail_bound([], [], [], v, DELTA) == pytest.approx(math.sqrt(2 * math.log(1 / DELTA) * v), rel=1e-12)


def test_tail_bound_is_zero_without_random_keys():
    assert tail_bound([], [], [], 0.0, DELTA) == 0.0


def _shortfall_probability(a, p, t):
    """P(sum a (1 - B / p) >= t) by enumerating every outcome of independent B ~ Bernoulli(p)."""
    total = 0.0
    for outcome in itertools.product((0, 1), repeat=len(a)):
        prob, short = 1.0, 0.0
        for ak, pk, bk in zip(a, p, outcome):
            prob *= pk if bk else 1.0 - pk
            short += ak * (1.0 - bk / pk)
        if short >= t:
            total += prob
    return total


keys = st.lists(st.tuples(st.floats(0.01, 100.0), st.floats(0.001, 0.999)), min_size=1, max_size=7)


@settings(max_examples=150, deadline=None)
@given(keys)
def test_tail_bound_holds_for_every_outcome_of_known_keys(ks):
    a, p = (np.array(x) for x in zip(*ks))
    t = tail_bound(a, p, [], 0.0, DELTA)
    assert _shortfall_probability(a, p, t) <= DELTA + 1e-12


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(st.floats(0.1, 100.0), st.floats(0.001, 1.0)), min_size=1, max_size=7),
       st.floats(1e-4, 1.0))
def test_tail_bound_holds_whatever_the_unresolved_partners(ks, tau):
    """A key certain on one side with a partner the other sample did not resolve: ``a = f g``,
    ``p = tau g^2`` for any ``g < 1 / sqrt(tau)``; the bound uses only ``f / sqrt(tau)``."""
    f, x = (np.array(v) for v in zip(*ks))  # x = g sqrt(tau) in (0, 1]
    x = np.minimum(x, 0.999)
    g = x / math.sqrt(tau)
    t = tail_bound([], [], f / math.sqrt(tau), 0.0, DELTA)
    assert _shortfall_probability(f * g, tau * g * g, t) <= DELTA + 1e-12


def _facts(totals, tau, n_keys, nonneg=True, integer=True, units=None, dropped=1.0):
    """A sample's facts; its table's dropped keys hold ``dropped`` each on average."""
    totals = np.asarray(totals, dtype=np.float64)
    u = np.linspace(0.05, 0.95, len(totals)) if units is None else np.asarray(units, dtype=np.float64)
    total = float(totals.sum()) + dropped * (n_keys - len(totals))
    return scaled(u, totals, tau, n_keys, total, nonneg, integer)


def test_a_complete_side_with_every_key_resolved_is_exact():
    """F kept every key; G kept both of F's keys: J is known although G's p < 1, so the width is zero and the
    value is the exact product sum (not the Horvitz-Thompson value)."""
    (a, ea), (b, eb) = _facts([3, 5], math.inf, 2), _facts([2, 4, 9], 0.01, 50, units=[0.001, 0.01, 0.5])
    r = interval(a, b, np.array([0, 1]), np.array([0, 1]), 0.95)
    scale = 2.0 ** (ea + eb)
    assert r.low == r.high == r.value
    assert r.value * scale == 3 * 2 + 5 * 4


def test_count_join_never_has_a_negative_lower_end():
    (a, _), (b, _) = _facts([1, 2, 3], 0.05, 1000), _facts([1, 1, 7], 0.05, 1000)
    r = interval(a, b, np.array([0]), np.array([0]), 0.95)
    assert r.low >= 0
    assert r.low < r.value < r.high


def test_signed_tables_widen_both_ways():
    (a, _), (b, _) = _facts([4, -3, 2], 0.05, 500, nonneg=None), _facts([5, 2, -6], 0.05, 500, nonneg=None)
    signed = interval(a, b, np.array([0]), np.array([0]), 0.95)
    (a2, _), (b2, _) = _facts([4, 3, 2], 0.05, 500), _facts([5, 2, 6], 0.05, 500)
    unsigned = interval(a2, b2, np.array([0]), np.array([0]), 0.95)
    assert signed.value - signed.low > unsigned.value - unsigned.low
    assert signed.low < 0 < signed.high


@pytest.mark.parametrize("magnitude", [1e-150, 1e-30, 1e30, 1e100, 1e150])
def test_extreme_float_totals_give_finite_bounds_in_proportion(magnitude):
    totals = np.array([1.5, 2.5, 0.75])
    out = []
    for m in (1.0, magnitude):
        (a, ea), (b, eb) = (_facts(totals * m, 0.2 / (m * m), 40, integer=False, dropped=m) for _ in range(2))
        r = interval(a, b, np.array([0, 1, 2]), np.array([0, 1, 2]), 0.95)
        out.append(np.array([r.value, r.low, r.high]) * 2.0 ** (ea + eb) / (m * m))
    assert np.all(np.isfinite(out[1]))
    np.testing.assert_allclose(out[1], out[0], rtol=1e-12)


@pytest.mark.parametrize("magnitude", [1e-150, 1e-30, 1e30, 1e150])
def test_float_totals_at_the_ends_of_the_range_round_trip_with_finite_intervals(magnitude):
    import skimsketch as ss

    rng = np.random.default_rng(3)
    keys = np.arange(400)
    a = ss.JoinSample.for_bytes(1024, seed=5, dtype="float64").update(keys, weights=rng.random(400) * magnitude)
    b = ss.JoinSample.for_bytes(1024, seed=5, dtype="float64").update(keys[100:], weights=rng.random(300) * magnitude)
    e = ss.from_bytes(a.to_bytes()).join_size(ss.from_bytes(b.to_bytes()))
    assert all(math.isfinite(x) for x in (e.value, e.low, e.high)) and e.low < e.value < e.high


@pytest.mark.parametrize("total", [1e-160, 1e160])
def test_float_totals_beyond_the_old_rankable_range_are_sampled_at_their_scale(total):
    """Issue 36: 2^-511 .. 2^511 no longer bounds a float total (skimsketch/sample/scale.py); a table of 1.0 and
    ``total`` keeps both, exactly, and answers a join exactly."""
    import skimsketch as ss

    s = ss.JoinSample.for_bytes(1024, dtype="float64").update([1, 2], weights=[1.0, total])
    back = ss.from_bytes(s.to_bytes())
    assert back.scale != 0 and sorted(back.sample_items()[1].tolist()) == sorted([1.0, total])
    other = ss.JoinSample.for_bytes(1024, dtype="float64").update([1, 2], weights=[1.0, 1 / total])
    assert back.join_size(ss.from_bytes(other.to_bytes())).value == 1.0 + total * (1 / total)
