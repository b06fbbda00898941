"""The partner estimate of keys only one sample kept (``skimsketch.sample.partner``): exact values by hand."""

from __future__ import annotations

import math

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from skimsketch.sample.partner import partner_means

NAN = float("nan")


def test_without_a_prior_the_mean_is_the_deciders_survival_integral():
    # deciders at c = 1 (kept by the other sample, |g| = 3), 2 and 4 (not kept); d = 0: no prior mass.
    # S = 0 on (0, 1), 1/2 on (1, 2), 1/3 on (2, 3), 0 on (3, 4); S(4) = 0, so E = 1/2 + 1/3.
    e = partner_means(np.array([1.0, 2.0, 4.0]), np.array([3.0, NAN, NAN]), np.array([4.0]), 0.0)
    assert math.isclose(e[0], 5 / 6, rel_tol=1e-15)


def test_the_prior_is_markovs_bound_at_the_dropped_mean():
    # as above with d = 1: S(v) = (min(1, 1/v) + hits) / (1 + N) on each piece
    integral = 1 + (math.log(2) + 1) / 2 + (math.log(1.5) + 1) / 3 + math.log(4 / 3) / 3
    s4 = (1 / 4) / 4
    e = partner_means(np.array([1.0, 2.0, 4.0]), np.array([3.0, NAN, NAN]), np.array([4.0]), 1.0)
    assert math.isclose(e[0], (integral - 4 * s4) / (1 - s4), rel_tol=1e-13)


def test_without_deciders_the_prior_alone_speaks_and_the_bound_caps():
    # S(v) = min(1, 2 / v): below c = 4 the integral is 2 + 2 ln 2 and S(4) = 1/2
    e = partner_means(np.zeros(0), np.zeros(0), np.array([4.0, 0.5]), 2.0)
    assert math.isclose(e[0], (2 + 2 * math.log(2) - 2) / 0.5, rel_tol=1e-15)
    assert e[1] == 0.5  # |g| < c = 0.5 whatever the dropped mean says


def test_deciders_whose_partners_sit_at_one_level_give_that_level():
    # 200 deciders whose partner is 50: the ones with c <= 50 were kept by the other sample, the rest not;
    # a key with bound 90 then has a partner near 50, far above the dropped mean 1
    c = np.linspace(1, 100, 200)
    partner = np.where(c <= 50, 50.0, NAN)
    e = partner_means(c, partner, np.array([90.0]), 1.0)
    assert 45 <= e[0] <= 50, e


@given(st.lists(st.tuples(st.floats(0.01, 100), st.one_of(st.none(), st.floats(0.0, 200))), max_size=30),
       st.lists(st.floats(0.01, 100), min_size=1, max_size=5), st.floats(0.0, 50))
def test_the_estimate_lies_between_the_dropped_mean_and_the_bound(deciders, query, d):
    c = np.array([x for x, _ in deciders], dtype=float)
    partner = np.array([NAN if y is None else max(y, x) for x, y in deciders], dtype=float)  # kept: |g| >= c
    q = np.array(query)
    e = partner_means(c, partner, q, d)
    assert np.all(e <= q) and np.all(e >= np.minimum(q, d) * (1 - 1e-12))
