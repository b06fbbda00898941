"""One conformance suite run over every sketch class (STYLE habit 8)."""

import functools
import pickle

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import skimsketch as ss
from skimsketch.sizing import COUNTER_BYTES, DEFAULT_DEPTH, shape_for_bytes

from .sketches import DOMAIN, FACTORIES, KINDS, keys

pytestmark = pytest.mark.parametrize("kind", KINDS)


def make(kind, **kw):
    return FACTORIES[kind](**kw)


def assert_same(a, b):
    assert a == b
    assert a.to_bytes() == b.to_bytes()


# -- serde ---------------------------------------------------------------
def test_serde_round_trip_empty_filled_merged(kind):
    empty = make(kind)
    filled = make(kind).update(keys(seed=1))
    merged = make(kind).update(keys(seed=2)).merge(filled)
    for sk in (empty, filled, merged):
        blob = sk.to_bytes()
        back = ss.from_bytes(blob)
        assert type(back) is type(sk)
        assert_same(back, sk)
        assert back.params == sk.params
        assert type(sk).from_bytes(blob) == sk
    assert empty.is_empty and not filled.is_empty
    assert ss.from_bytes(empty.to_bytes()).is_empty


def test_pickle_and_copy(kind):
    sk = make(kind).update(keys(seed=3))
    assert_same(pickle.loads(pickle.dumps(sk)), sk)
    c = sk.copy()
    assert_same(c, sk)
    c.update([1])
    assert c != sk  # deep copy


def test_float_counter_round_trip(kind):
    sk = make(kind, dtype="float64").update(keys(seed=4, n=300), weights=np.linspace(-2.5, 7.25, 300))
    assert_same(ss.from_bytes(sk.to_bytes()), sk)


# -- linearity and merge --------------------------------------------------
def test_merge_equivalence_five_partials(kind):
    k = keys(n=5000, seed=5)
    whole = make(kind).update(k)
    parts = [make(kind).update(p) for p in np.array_split(k, 5)]
    merged = functools.reduce(lambda a, b: a.merge(b), parts[1:], parts[0].copy())
    assert_same(merged, whole)
    assert_same(ss.union(*parts), whole)
    assert np.array_equal(merged.counters, whole.counters)


def test_merge_returns_self_and_update_returns_self(kind):
    a = make(kind)
    assert a.update([1, 2]) is a
    assert a.merge(make(kind)) is a
    assert a.subtract(make(kind)) is a


def test_deletes_insert_all_delete_half(kind):
    k = keys(n=3000, seed=6)
    a = make(kind).update(k).update(k[:1500], weights=-1)
    assert_same(a, make(kind).update(k[1500:]))
    b = make(kind).update(k).update(k[1500:], weights=np.full(1500, -1))
    assert_same(b, make(kind).update(k[:1500]))
    assert_same(make(kind).update(k).update(k, weights=-1), make(kind))


def test_subtract_is_inverse_of_merge(kind):
    a = make(kind).update(keys(seed=7))
    b = make(kind).update(keys(seed=8))
    assert_same((a + b) - b, a)


def test_scalar_weight_equals_repetition(kind):
    k = keys(n=200, seed=9)
    assert_same(make(kind).update(k, weights=3), make(kind).update(np.concatenate([k, k, k])))
    assert_same(make(kind).update(k, weights=3), make(kind).update(k, weights=np.full(len(k), 3)))


@settings(max_examples=25, deadline=None)
@given(
    a=st.lists(st.integers(0, DOMAIN - 1), max_size=60),
    b=st.lists(st.integers(0, DOMAIN - 1), max_size=60),
    wa=st.integers(-5, 5),
)
def test_linearity_property(kind, a, b, wa):
    left = make(kind).update(a, weights=wa).merge(make(kind).update(b))
    right = make(kind).update(list(a) * abs(wa), weights=1 if wa >= 0 else -1).update(b)
    assert_same(left, right)
    assert left.total_weight == wa * len(a) + len(b)


@settings(max_examples=15, deadline=None)
@given(st.lists(st.integers(0, DOMAIN - 1), min_size=1, max_size=80), st.randoms(use_true_random=False))
def test_order_independence_property(kind, a, rnd):
    shuffled = list(a)
    rnd.shuffle(shuffled)
    assert_same(make(kind).update(a), make(kind).update(shuffled))


@settings(max_examples=15, deadline=None)
@given(st.lists(st.integers(0, DOMAIN - 1), max_size=80), st.integers(0, 2**64 - 1))
def test_serde_property(kind, a, seed):
    sk = make(kind, seed=seed).update(a)
    assert_same(ss.from_bytes(sk.to_bytes()), sk)


# -- inputs ----------------------------------------------------------------
def test_containers_give_identical_sketches(kind):
    pd = pytest.importorskip("pandas")
    pa = pytest.importorskip("pyarrow")
    k = keys(n=500, seed=10)
    ref = make(kind).update(k)
    for container in (list(k), tuple(k.tolist()), k.astype(np.int32), pd.Series(k), pa.array(k),
                      pa.chunked_array([k[:100], k[100:]]), pd.Series(k, dtype="Int64")):
        assert_same(make(kind).update(container), ref)


def test_nulls_are_skipped_and_counted(kind):
    pd = pytest.importorskip("pandas")
    pa = pytest.importorskip("pyarrow")
    ref = make(kind).update([1, 2, 3])
    for container in ([1, None, 2, 3, None], np.array([1, np.nan, 2, 3, np.nan]),
                      pd.Series([1, None, 2, 3, None], dtype="Int64"), pa.array([1, None, 2, 3, None])):
        sk = make(kind).update(container)
        assert sk.null_weight == 2
        assert np.array_equal(sk.counters, ref.counters)
        assert sk.total_weight == 3
    sk = make(kind).update([None, 4], weights=[5, 1])
    assert sk.null_weight == 5 and sk.total_weight == 1


# -- rejects ---------------------------------------------------------------
@pytest.mark.parametrize("field,change", [("seed", {"seed": 6}), ("width", {"width": 32}), ("depth", {"depth": 7})])
def test_incompatible_merge_and_join_name_the_field(kind, field, change):
    a, b = make(kind).update([1, 2]), make(kind, **change).update([1, 2])
    for op in (lambda: a.merge(b), lambda: a.join_size(b), lambda: ss.join_size(a, b), lambda: a.subtract(b)):
        with pytest.raises(ss.IncompatibleSketchError, match=field) as ei:
            op()
        assert ei.value.field == field
    assert a == make(kind).update([1, 2])  # unchanged


def test_incompatible_kind(kind):
    a = make(kind)
    other = make([k for k in KINDS if k != kind][0])
    with pytest.raises(ss.IncompatibleSketchError, match="kind"):
        a.merge(other)
    with pytest.raises(ss.IncompatibleSketchError, match="kind"):
        a.join_size(other)
    with pytest.raises(ss.IncompatibleSketchError):
        a.merge("not a sketch")


def test_merge_rejects_other_counter_type_but_join_accepts(kind):
    a, b = make(kind).update([1, 2, 2]), make(kind, dtype="float64").update([2], weights=[1.5])
    with pytest.raises(ss.IncompatibleSketchError, match="dtype"):
        a.merge(b)
    assert a.join_size(b).value == pytest.approx(3.0, abs=1e-9) or kind == "agms"


@pytest.mark.parametrize(
    "bad,err",
    [
        ([True, False], "bool"),
        ([1.5], "not integral"),
        ([{"a": 1}], "unsupported key type"),
        (np.array(["2020-01-01"], dtype="datetime64[D]"), "unsupported key dtype"),
        (np.array([[1, 2], [3, 4]]), "one-dimensional"),
        ([2**70], "int64"),
        (np.array([2**63], dtype=np.uint64), "int64"),
    ],
)
def test_bad_keys_rejected_and_sketch_unchanged(kind, bad, err):
    sk = make(kind).update([1, 2])
    before = sk.to_bytes()
    with pytest.raises(ss.KeyTypeError, match=err):
        sk.update(bad)
    assert sk.to_bytes() == before


@pytest.mark.parametrize(
    "weights,err",
    [([1, 2], "shape"), ([0.5, 1, 1], "non-integral"), ([np.nan, 1, 1], "NaN"), (True, "bool"), ("x", "int or float"), (object(), "int or float")],
)
def test_bad_weights_rejected(kind, weights, err):
    sk = make(kind)
    with pytest.raises(ss.KeyTypeError, match=err):
        sk.update([1, 2, 3], weights=weights)
    assert sk.is_empty


def test_counter_overflow_raises_and_loses_nothing(kind):
    big = 2**62
    sk = make(kind).update([1], weights=big)
    before = sk.to_bytes()
    with pytest.raises(ss.CounterOverflowError):
        sk.update([1], weights=big)
    with pytest.raises(ss.CounterOverflowError):
        sk.merge(sk.copy())
    with pytest.raises(ss.CounterOverflowError):
        sk.update([1, 1, 1], weights=[big, big, big])
    assert sk.to_bytes() == before
    assert sk.total_weight == big


@pytest.mark.parametrize("shape", [{"width": 0}, {"depth": 0}, {"width": 2**30}, {"depth": 300}, {"seed": -1},
                                   {"seed": 2**64}, {"width": 2.5}, {"dtype": "int32"}])
def test_bad_shape_rejected(kind, shape):
    with pytest.raises((ValueError, TypeError)):
        make(kind, **shape)


def test_bad_confidence_rejected(kind):
    a = make(kind).update([1])
    for c in (0, 1, 1.5, -0.1):
        with pytest.raises(ValueError, match="confidence"):
            a.join_size(a, confidence=c)


# -- queries -----------------------------------------------------------------
def test_estimates_are_estimates(kind):
    a, b = make(kind).update(keys(seed=11)), make(kind).update(keys(seed=12))
    for e in (a.join_size(b), a.self_join_size(), a.frequency(0)):
        assert isinstance(e, ss.Estimate)
        assert e.low <= e.value <= e.high and e.confidence == 0.95
        assert float(e) == e.value
    assert a.join_size(b, confidence=0.99).width >= a.join_size(b, confidence=0.8).width


def test_exact_when_no_collisions(kind):
    # few keys in a wide sketch: hash and skimmed estimates are exact (pinned seed)
    if kind == "agms":
        pytest.skip("AGMS counters mix every key: never exact")
    f = [1, 1, 1, 2, 7, 7]
    g = [1, 2, 2, 7, 9]
    a, b = make(kind, width=4096).update(f), make(kind, width=4096).update(g)
    assert a.join_size(b).value == ss.exact_join_size(f, g) == 7
    assert a.self_join_size().value == ss.exact_self_join_size(f) == 14
    assert a.frequency(1).value == 3 and a.frequency(9).value == 0


def test_nbytes_counts_counters(kind):
    sk = make(kind, width=100, depth=3)
    assert sk.nbytes >= 100 * 3 * 8
    # the format stores the counters plus any extension state (unbounded skimmed: the prefix hierarchy,
    # behind a 12-byte extension header); nbytes must cover all of it
    assert 64 + sk.nbytes + 4 <= len(sk.to_bytes()) <= 64 + sk.nbytes + 4 + 12
    if kind != "skimmed_unbounded":
        assert len(sk.to_bytes()) == 64 + 100 * 3 * 8 + 4


def test_shape_from_targets(kind):
    cls = type(make(kind))
    extra = {"domain": DOMAIN} if kind == "skimmed" else {}
    s = cls.for_bytes(65536, seed=3, **extra)
    counted = s.nbytes // s.counters.itemsize * COUNTER_BYTES  # budgets count COUNTER_BYTES per counter
    if kind == "skimmed_unbounded":  # the hierarchy takes part of the budget: main width is what is left
        assert counted <= 65536 < counted + s.depth * COUNTER_BYTES and s.depth == DEFAULT_DEPTH
        assert s.hier_width is not None
    else:
        assert counted <= 65536 and (s.width, s.depth) == shape_for_bytes(65536) == (65536 // 4 // 5, 5)
    e = cls.for_error(0.1, 0.05, **extra)
    assert (e.width, e.depth) == (1478, 3)
