"""The skimmed join's interval model: one table's deviation with the terms' covariances
(estimator._table_sd) and the normal factor that allows a bias (bounds.biased_normal_z)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import skimsketch as ss
from skimsketch.sketch.skim import estimator
from skimsketch.stats.bounds import biased_normal_z, normal_median_k


def _coverage(z: float, bias: float) -> float:
    """P(|Z - bias| <= z) for Z ~ N(0, 1)."""
    return 0.5 * (math.erf((z - bias) / math.sqrt(2)) + math.erf((z + bias) / math.sqrt(2)))


@pytest.mark.parametrize("conf", [0.5, 0.9, 0.95, 0.99, 0.999999])
@pytest.mark.parametrize("bias", [0.0, 0.25, 0.5, 1.0, 3.0])
def test_biased_z_covers_exactly(conf, bias):
    z = biased_normal_z(conf, bias)
    assert _coverage(z, bias) == pytest.approx(conf, abs=1e-12)
    assert biased_normal_z(conf, -bias) == z  # the allowance is for a bias of either sign


def test_biased_z_without_bias_is_the_normal_quantile():
    assert biased_normal_z(0.95, 0.0) == pytest.approx(1.959963984540054, abs=1e-12)
    assert normal_median_k(5, 0.95, 0.0) == normal_median_k(5, 0.95)


def test_bias_widens_monotonically():
    zs = [biased_normal_z(0.95, b) for b in (0.0, 0.1, 0.5, 1.0, 2.0)]
    assert zs == sorted(zs) and zs[0] < zs[-1]
    assert normal_median_k(5, 0.95, 0.5) / normal_median_k(5, 0.95) == pytest.approx(
        biased_normal_z(0.95, 0.5) / biased_normal_z(0.95, 0.0))


def _parts(x: float, y: float, xy: float):
    return ((x, xy), (xy, y))


def test_table_sd_self_join_adds_the_cross_terms():
    """f = g: the two cross terms Z(f_d, r) and Z(r, f_d) are one draw, so their deviations add."""
    fd, r, w = 1e6, 4e4, 100
    ff = _parts(fd, r, 0.0)
    fg = ((fd, 0.0), (0.0, r))  # f_d . g_d = F2(f_d), r_f . r_g = F2(r)
    sd = estimator._table_sd(ff, ff, fg, w)
    cross = math.sqrt(fd * r / w)
    res = math.sqrt((r * r + r * r) / w)
    assert sd == pytest.approx(math.sqrt((2 * cross) ** 2 + res ** 2))  # 4 F2(f_d) F2(r) + 2 F2(r)^2


def test_table_sd_disjoint_joins_add_in_quadrature():
    """f and g share nothing: the terms are uncorrelated and their variances add."""
    w = 64
    ff, gg = _parts(9.0, 4.0, 0.0), _parts(25.0, 16.0, 0.0)
    fg = ((0.0, 0.0), (0.0, 0.0))
    expected = math.sqrt((9.0 * 16.0 + 4.0 * 25.0 + 4.0 * 16.0) / w)
    assert estimator._table_sd(ff, gg, fg, w) == pytest.approx(expected)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.floats(-1e3, 1e3, allow_nan=False), min_size=8, max_size=8),
       st.lists(st.floats(-1e3, 1e3, allow_nan=False), min_size=8, max_size=8))
def test_table_sd_at_most_the_sum_of_deviations(fv, gv):
    """With consistent inner products (Cauchy-Schwarz) the covariance bound never exceeds the
    linear sum of the three terms' deviations (the model it replaced)."""
    f = np.array(fv).reshape(2, 4)  # rows: the dense and residual parts of f
    g = np.array(gv).reshape(2, 4)
    ff, gg, fg = f @ f.T, g @ g.T, f @ g.T
    w = 32
    linear = sum(math.sqrt((ff[i][i] * gg[j][j] + fg[i][j] ** 2) / w) for i, j in estimator.SKETCHED)
    assert estimator._table_sd(ff, gg, fg, w) <= linear * (1 + 1e-9) + 1e-9


def test_join_interval_narrower_when_the_sides_differ_than_on_a_self_join():
    """The same sketches: the interval of a shifted join is narrower than the linear-sum model's,
    the self-join's keeps the cross terms together (and covers)."""
    rng = np.random.default_rng(3)
    keys = rng.zipf(1.3, 200_000) % 50_000
    a = ss.SkimmedSketch.for_bytes(16384, seed=5).update(keys)
    b = ss.SkimmedSketch.for_bytes(16384, seed=5).update(keys + 7)
    exact_ab = float(np.dot(np.bincount(keys, minlength=50_010).astype(float),
                            np.bincount(keys + 7, minlength=50_010).astype(float)))
    e = a.join_size(b)
    assert e.low <= exact_ab <= e.high
    s = a.join_size(a)
    exact_aa = float(np.sum(np.bincount(keys).astype(float) ** 2))
    assert s.low <= exact_aa <= s.high
