"""Census-style synthetic data: pinned values and its documented properties."""

import numpy as np
import pytest

from data.census import (
    CPS_DOMAIN,
    CPS_RECORDS,
    OVERTIME,
    SYNTHETIC_NOTE,
    TOP_CODE,
    WAGE,
    AmountModel,
    census_attribute,
    census_pair,
)


@pytest.fixture(scope="module")
def pair():
    return census_pair(seed=0)


def _binomial_ok(count, n, p, sigmas=5):
    return abs(count - n * p) <= sigmas * np.sqrt(n * p * (1 - p))


def test_defaults_match_the_paper_sizes(pair):
    wage, overtime = pair
    assert CPS_RECORDS == 159_434 and CPS_DOMAIN == 288_416 and TOP_CODE == 288_415
    assert len(wage) == len(overtime) == CPS_RECORDS
    assert wage.dtype == overtime.dtype == np.int64


def test_pinned_values_for_seed_0(pair):
    wage, overtime = pair
    assert wage[:8].tolist() == [41500, 66083, 32900, 37800, 90000, 180000, 26300, 30000]
    assert overtime[:12].tolist() == [0, 0, 0, 0, 0, 0, 0, 0, 0, 26400, 0, 0]
    assert int((wage == 0).sum()) == 3115
    assert int((overtime == 0).sum()) == 140232
    assert int((wage == TOP_CODE).sum()) == 3186
    assert int((wage % 100 == 0).sum()) == 110562


def test_domain_bounds(pair):
    for a in pair:
        assert a.min() >= 0 and a.max() <= TOP_CODE < CPS_DOMAIN


def test_most_overtime_is_zero_and_few_wages_are(pair):
    wage, overtime = pair
    n = CPS_RECORDS
    assert _binomial_ok(int((overtime == 0).sum()), n, OVERTIME.zero_share)
    assert _binomial_ok(int((wage == 0).sum()), n, WAGE.zero_share)
    assert (overtime == 0).mean() > 0.8


def test_heaping_on_round_dollars(pair):
    wage, overtime = pair
    for a, model in ((wage, WAGE), (overtime, OVERTIME)):
        body = a[(a > 0) & (a < TOP_CODE)]
        cents_share = dict(model.heaping)[1]
        # Every non-cent unit is a whole-dollar multiple; exact-cent amounts land on
        # a whole dollar 1% of the time.
        expected = (1 - cents_share) + cents_share * 0.01
        assert _binomial_ok(int((body % 100 == 0).sum()), len(body), expected)
    body = wage[(wage > 0) & (wage < TOP_CODE)]
    # $100 multiples are far more common than the 1-in-100 of whole-dollar amounts.
    assert (body % 10_000 == 0).mean() > 0.2
    # The most frequent non-zero wages are all round $100 amounts (heaps).
    counts = np.bincount(body)
    top10 = np.argsort(counts)[::-1][:10]
    assert all(v % 10_000 == 0 for v in top10.tolist())


def test_top_code_spike(pair):
    wage, _ = pair
    # P(LogNormal(ln 620, 0.75) > $2,884.15) = 2.02%, times 0.98 non-zero.
    p_top = (1 - WAGE.zero_share) * 0.0202
    assert _binomial_ok(int((wage == TOP_CODE).sum()), CPS_RECORDS, p_top)
    counts = np.bincount(wage, minlength=CPS_DOMAIN)
    # A spike: the top code outweighs the whole $2,500..$2,884.14 band below it,
    # and is 5x the most frequent single value (a $100 heap) of the $2,000+ band.
    assert counts[TOP_CODE] > counts[250_000:TOP_CODE].sum()
    assert counts[TOP_CODE] > 5 * counts[200_000:TOP_CODE].max()


def test_long_right_tail(pair):
    wage, _ = pair
    nz = wage[wage > 0]
    # median ~$620, 90th percentile above twice that, 99th percentile at the top code
    assert np.median(nz) < 70_000
    assert np.percentile(nz, 90) > 2 * np.median(nz)
    assert np.percentile(nz, 99) == TOP_CODE


def test_deterministic_and_seed_sensitive():
    a = census_pair(n=5000, seed=3)
    b = census_pair(n=5000, seed=3)
    c = census_pair(n=5000, seed=4)
    assert all(np.array_equal(x, y) for x, y in zip(a, b))
    assert not np.array_equal(a[0], c[0])


def test_synthetic_note_says_so():
    assert "SYNTHETIC" in SYNTHETIC_NOTE and "not the CPS" in SYNTHETIC_NOTE


def test_model_validation():
    with pytest.raises(ValueError, match="sum to 1"):
        AmountModel(0.1, 100.0, 0.5, heaping=((100, 0.5),))
    with pytest.raises(ValueError, match="zero_share"):
        AmountModel(1.5, 100.0, 0.5, heaping=((100, 1.0),))
    with pytest.raises(ValueError, match="n must"):
        census_attribute(WAGE, -1)
    tiny = AmountModel(0.0, 0.001, 0.0, heaping=((5_000, 1.0),))  # rounds to 0 -> one unit
    assert set(census_attribute(tiny, 100).tolist()) == {5_000}
