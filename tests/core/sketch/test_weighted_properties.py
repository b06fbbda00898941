"""Hypothesis properties of weighted updates, over every sketch class.

Weighted updates are exact and linear: splitting a batch (in any place,
updating twice or merging two partials) gives the same bytes as one update;
a delete (the same rows with negated weights) cancels its insert back to the
empty sketch; rows with a null weight are skipped as if absent; and the
sketch's exact fields (``total_weight``, ``null_weight``, single-key answers)
equal exact arithmetic on the same rows. Float weights are drawn on a dyadic
grid (multiples of 1/4, small), so every float sum is exact and the bytes
cannot depend on the order of additions.
"""

import math

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import skimsketch as ss

from ..sketches import DOMAIN, FACTORIES, KINDS, forget_signs

# one key column: the pair sketch (two key columns) gets the same properties in test_conformance.py
pytestmark = pytest.mark.parametrize("kind", [k for k in KINDS if k != "pair"])

KEY = st.one_of(st.none(), st.integers(0, DOMAIN - 1))
INT_W = st.integers(-50, 50)
FLOAT_W = st.integers(-32, 32).map(lambda q: q / 4)
NULL_W = st.sampled_from([None, float("nan")])


def rows(weight):
    return st.lists(st.tuples(KEY, weight), max_size=40)


def make(kind, dtype="int64"):
    return FACTORIES[kind](dtype=dtype)


def split(pairs):
    keys = [k for k, _ in pairs]
    weights = [w for _, w in pairs]
    return keys, weights


def assert_same(a, b):
    assert a.to_bytes() == b.to_bytes()


@settings(max_examples=30, deadline=None)
@given(data=st.data())
def test_split_batches_give_the_bytes_of_one_batch(kind, data):
    dtype = data.draw(st.sampled_from(["int64", "float64"]))
    pairs = data.draw(rows(INT_W if dtype == "int64" else FLOAT_W))
    cut = data.draw(st.integers(0, len(pairs)))
    keys, weights = split(pairs)
    whole = make(kind, dtype).update(keys, weights=weights)
    twice = make(kind, dtype).update(keys[:cut], weights=weights[:cut]).update(keys[cut:], weights=weights[cut:])
    merged = make(kind, dtype).update(keys[:cut], weights=weights[:cut]) \
        .merge(make(kind, dtype).update(keys[cut:], weights=weights[cut:]))
    assert_same(whole, twice)
    assert_same(whole, merged)
    assert whole.total_weight == sum(w for k, w in pairs if k is not None)
    assert whole.null_weight == sum(w for k, w in pairs if k is None)


@settings(max_examples=30, deadline=None)
@given(data=st.data())
def test_deletes_cancel_to_the_empty_sketch(kind, data):
    dtype = data.draw(st.sampled_from(["int64", "float64"]))
    pairs = data.draw(rows(INT_W if dtype == "int64" else FLOAT_W))
    keys, weights = split(pairs)
    sk = make(kind, dtype).update(keys, weights=weights)
    sk.update(list(reversed(keys)), weights=[-w for w in reversed(weights)])
    # the empty sketch's bytes, with the sign flag of a sketch that saw a negative weight of a non-null key
    # (w or its delete -w), or (subtract) subtracted a non-empty sketch: tests/core/sketches.forget_signs
    deleted = any(k is not None and w != 0 for k, w in pairs)
    assert_same(sk, forget_signs(make(kind, dtype)) if deleted else make(kind, dtype))
    assert sk.is_empty and sk.total_weight == 0 and sk.null_weight == 0 and sk.nonnegative == (not deleted)
    e = sk.self_join_size()
    assert (e.value, e.low, e.high) == (0, 0, 0)  # an empty sketch answers exactly
    inserted = make(kind, dtype).update(keys, weights=weights)
    other = make(kind, dtype).update(keys, weights=weights)
    # the flag clears when the rows held a delete, or (subtract) the subtracted sketch is not empty: null weights
    # that cancel, [(None, 1), (None, -1)], leave it empty and the flag set
    cleared = not other.nonnegative or not other.is_empty
    diff = inserted.subtract(other)
    assert_same(diff, forget_signs(make(kind, dtype)) if cleared else make(kind, dtype))


@settings(max_examples=30, deadline=None)
@given(data=st.data())
def test_null_weights_skip_their_row_in_every_container(kind, data):
    dtype = data.draw(st.sampled_from(["int64", "float64"]))
    weight = INT_W if dtype == "int64" else FLOAT_W
    pairs = data.draw(st.lists(st.tuples(KEY, st.one_of(weight, NULL_W)), max_size=40))
    kept = [(k, w) for k, w in pairs if w is not None and not (isinstance(w, float) and math.isnan(w))]
    want = make(kind, dtype).update(*split(kept)) if kept else make(kind, dtype)
    keys, weights = split(pairs)
    assert_same(make(kind, dtype).update(keys, weights=weights), want)
    arrow_w = pa.array([None if w is None else w for w in weights],
                       pa.float64() if dtype == "float64" or any(isinstance(w, float) for w in weights) else pa.int64())
    assert_same(make(kind, dtype).update(pa.array(keys, pa.int64()), weights=arrow_w), want)
    if dtype == "float64":  # NaN and None both become NaN in a float array: still skipped
        as_np = np.array([np.nan if w is None else w for w in weights], dtype=np.float64)
        assert_same(make(kind, dtype).update(keys, weights=as_np), want)


@settings(max_examples=30, deadline=None)
@given(key=st.integers(0, DOMAIN - 1), weights=st.lists(INT_W, min_size=1, max_size=20),
       nulls=st.lists(INT_W, max_size=5))
def test_single_key_answers_are_exact(kind, key, weights, nulls):
    """One distinct key never collides: its frequency and self-join size are exact."""
    sk = make(kind).update([key] * len(weights) + [None] * len(nulls), weights=weights + nulls)
    f = sum(weights)
    assert sk.total_weight == f and sk.null_weight == sum(nulls)
    assert ss.exact_self_join_size([key] * len(weights), weights) == f * f
    assert sk.self_join_size().value == f * f
    assert sk.frequency(key).value == f


@settings(max_examples=30, deadline=None)
@given(key=st.integers(0, DOMAIN - 1), fw=st.lists(INT_W, min_size=1, max_size=10),
       gw=st.lists(INT_W, min_size=1, max_size=10))
def test_single_key_join_is_exact(kind, key, fw, gw):
    a = make(kind).update([key] * len(fw), weights=fw)
    b = make(kind).update([key] * len(gw), weights=gw)
    want = ss.exact_join_size([key] * len(fw), [key] * len(gw), weights_f=fw, weights_g=gw)
    assert want == sum(fw) * sum(gw)
    assert a.join_size(b).value == want


@settings(max_examples=30, deadline=None)
@given(pairs=rows(INT_W), scalar=st.integers(-7, 7))
def test_a_scalar_weight_is_that_weight_on_every_row(kind, pairs, scalar):
    keys = [k for k, _ in pairs]
    assert_same(make(kind).update(keys, weights=scalar), make(kind).update(keys, weights=[scalar] * len(keys)))


@pytest.mark.parametrize("pairs", [[(None, 1), (None, -1)], [(1, 2), (1, -2)], [(None, 1)], [(3, 1)]])
def test_subtract_clears_the_sign_flag_only_for_a_delete_or_a_non_empty_sketch(kind, pairs):
    """Hypothesis found the first case: null weights that cancel leave the subtracted sketch empty, so the
    difference keeps the sign flag (docs/format.md, "the sign flag")."""
    keys, weights = split(pairs)
    other = make(kind).update(keys, weights=weights)
    diff = make(kind).update(keys, weights=weights).subtract(other)
    cleared = pairs != [(None, 1), (None, -1)]  # the others held a delete or left the subtracted sketch non-empty
    assert_same(diff, forget_signs(make(kind)) if cleared else make(kind))
    assert diff.nonnegative == (not cleared) and diff.is_empty
