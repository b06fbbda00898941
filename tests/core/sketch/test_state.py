"""LinearState: one place for add/merge/subtract, overflow and all-or-nothing rules."""

import pickle

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import skimsketch as ss
from skimsketch.sketch.state import LinearState

SHAPES = {"counters": (2, 3), "hierarchy": (4,)}
I64MAX = 2**63 - 1


def filled(dtype="int64", seed=0, total=5, null=1):
    rng = np.random.default_rng(seed)
    return LinearState.of({k: rng.integers(-9, 9, s).astype(dtype) for k, s in SHAPES.items()}, total, null,
                          dtype == "float64")


def test_add_merge_subtract_copy_eq():
    a, b = filled(seed=1), filled(seed=2, total=7, null=0)
    c = a.copy()
    c.merge(b)
    for k in SHAPES:
        assert np.array_equal(c.array(k), a.array(k) + b.array(k))
    assert (c.total, c.null) == (12, 1)
    c.subtract(b)
    assert c == a and c is not a and c.array("counters") is not a.array("counters")
    c.add({"hierarchy": np.ones(4, dtype=np.int64)}, 0, 0, "update")  # arrays not named: unchanged
    assert np.array_equal(c.array("counters"), a.array("counters")) and c != a
    assert LinearState(SHAPES, "int64").is_empty and not a.is_empty
    assert a.nbytes == 4 * (6 + 4) and a.counter_width == 4  # int32 until a value needs more


def test_views_are_read_only():
    v = filled().view("counters")
    with pytest.raises(ValueError):
        v[0, 0] = 1


@pytest.mark.parametrize("where", ["counters", "hierarchy", "total", "null"])
def test_int_overflow_anywhere_raises_and_changes_nothing(where):
    s = filled()
    before = s.copy()
    big = {k: np.zeros(shape, dtype=np.int64) for k, shape in SHAPES.items()}
    d_total = d_null = 0
    if where in big:
        big[where].flat[-1] = I64MAX - 20
    elif where == "total":
        d_total = I64MAX - 20
    else:
        d_null = I64MAX - 20
    s.add({k: v for k, v in big.items()}, d_total, d_null, "update")  # fits once (values are small)
    with pytest.raises(ss.CounterOverflowError, match="update would overflow"):
        s.add(big, d_total, d_null, "update")
    s.subtract(LinearState.of(big, d_total, d_null, False))
    assert s == before


def test_subtract_of_int64_min_is_an_overflow():
    s = LinearState(SHAPES, "int64")
    m = LinearState.of({"counters": np.full((2, 3), -(2**63)), "hierarchy": np.zeros(4)}, 0, 0, False)
    with pytest.raises(ss.CounterOverflowError):
        s.subtract(m)
    assert s.is_empty


@pytest.mark.parametrize("where", ["counters", "total", "null"])
def test_float_overflow_to_infinity_raises_and_changes_nothing(where):
    s = LinearState(SHAPES, "float64")  # zeros: adding and removing 1.7e308 is exact
    before = s.copy()
    d = {"counters": np.zeros((2, 3))}
    kw = {"counters": 0.0, "total": 0.0, "null": 0.0}
    kw[where] = 1.7e308
    d["counters"][0, 0] = kw["counters"]
    s.add(d, kw["total"], kw["null"], "merge")
    with pytest.raises(ss.CounterOverflowError, match="float64 counters to infinity"):
        s.add(d, kw["total"], kw["null"], "merge")
    s.add({"counters": -d["counters"]}, -kw["total"], -kw["null"], "merge")
    assert s == before


def test_float_sketch_overflow_raises_before_anything_changes():
    for sk in (ss.HashSketch(8, 2, dtype="float64"), ss.SkimmedSketch(64, 2, dtype="float64"),
               ss.PairSketch(4, 4, 2, 1, 2, dtype="float64")):
        args = ([1], [2]) if isinstance(sk, ss.PairSketch) else ([1],)
        sk.update(*args, weights=1e308)
        before = pickle.dumps(sk)
        with pytest.raises(ss.CounterOverflowError):
            sk.update(*args, weights=1e308)
        with pytest.raises(ss.CounterOverflowError):
            sk.merge(sk.copy())
        assert pickle.dumps(sk) == before


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(-(2**62), 2**62), min_size=6, max_size=6), st.integers(-(2**62), 2**62))
def test_merge_equals_elementwise_python_sum(vals, t):
    a = LinearState.of({"counters": np.array(vals).reshape(2, 3)}, t, 0, False)
    b = a.copy()
    exact = [2 * v for v in vals]
    if all(-(2**63) <= v <= I64MAX for v in exact + [2 * t]):
        b.merge(a)
        assert b.array("counters").ravel().tolist() == exact and b.total == 2 * t
    else:
        with pytest.raises(ss.CounterOverflowError):
            b.merge(a)
        assert b == a
