"""Totals never wrap (issue 19, item 4): null weights and total weights are exact integers, or the update raises
and changes nothing; a float64 sketch's totals of integer weights are the exact sum, rounded once."""

import numpy as np
import pytest

import skimsketch as ss
from skimsketch.errors import CounterOverflowError
from skimsketch.kernels import exact_int_sum, weight_total
from skimsketch.keys.canonical import canonical_rows, canonicalize

I64_MIN, I64_MAX = -(2**63), 2**63 - 1


def test_exact_int_sum_never_wraps():
    rng = np.random.default_rng(0)
    for v in ([I64_MAX] * 5, [I64_MIN] * 3 + [1], [I64_MAX, I64_MIN, I64_MAX], [2**62] * 1000, []):
        assert exact_int_sum(np.array(v, dtype=np.int64)) == sum(v)
    big = rng.integers(I64_MIN, I64_MAX, 10_000)
    assert exact_int_sum(big) == sum(big.tolist())
    u = np.array([2**64 - 1, 2**63, 5], dtype=np.uint64)
    assert exact_int_sum(u) == 2**64 - 1 + 2**63 + 5


def test_null_weights_past_int64_are_exact_in_the_batch():
    b = canonicalize([None, None, 1], weights=np.array([2**62, 2**62, 7]))
    assert b.null_weight == 2**63 and isinstance(b.null_weight, int)
    _, _, null, _ = canonical_rows({"a": [None, "x", None]}, weights=[I64_MAX, 1, I64_MAX])
    assert null == 2 * I64_MAX


@pytest.mark.parametrize("kind", [ss.HashSketch, ss.SkimmedSketch, ss.AGMSSketch])
def test_null_weights_past_int64_raise_on_integer_sketches_and_change_nothing(kind):
    sk = kind(64, 3, 1).update([1, None], weights=[5, 3])
    before = sk.to_bytes()
    with pytest.raises(CounterOverflowError, match="int64"):
        sk.update([None, None, 2], weights=np.array([2**62, 2**62, 1]))
    assert sk.to_bytes() == before and sk.null_weight == 3


@pytest.mark.parametrize("kind", [ss.HashSketch, ss.SkimmedSketch, ss.AGMSSketch])
def test_int64_weights_into_float_sketches_give_exact_totals(kind):
    sk = kind(64, 3, 1, dtype="float64")
    sk.update([1, 2, None, None], weights=np.array([I64_MAX, 1, I64_MAX, I64_MAX]))
    assert sk.total_weight == float(2**63) and sk.null_weight == float(2 * I64_MAX)  # was -2**63 and -2.0
    sk = kind(64, 3, 1, dtype="float64").update([1, 2, 3], weights=np.array([2**60, 1, -(2**60)]))
    assert sk.total_weight == 1.0
    sk = kind(64, 3, 1, dtype="float64").update(np.arange(4), weights=np.full(4, 2**61 + 1))
    assert sk.total_weight == float(4 * (2**61 + 1))  # rounded once from the exact sum


def test_weight_total_bounds_the_counters():
    w = np.array([I64_MIN])  # |w| = 2**63: one counter could hold +2**63
    with pytest.raises(CounterOverflowError):
        weight_total(w, 1, False)
    assert weight_total(w, 1, True) == -float(2**63)
    assert weight_total(np.array([I64_MAX - 5, -5]), 2, False) == I64_MAX - 10
    with pytest.raises(CounterOverflowError):  # a net total that fits, but signs could carry a counter past int64
        weight_total(np.array([I64_MAX, -5]), 2, False)


def test_integer_sketches_refuse_a_weight_of_minus_two_to_the_63():
    sk = ss.HashSketch(16, 1, 1)
    with pytest.raises(CounterOverflowError):
        sk.update([5, 5], weights=np.array([I64_MIN, 0]))
    assert sk.is_empty
