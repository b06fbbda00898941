"""One conformance suite run over every sketch class.

A pair sketch (two key columns) takes each key column as both of its columns
(``sketches.update``); the query tests run on the single-column kinds (``queries``)."""

import functools
import math
import pickle

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import skimsketch as ss
from skimsketch.sketch.sizing import COUNTER_BYTES, DEFAULT_DEPTH, framed_budget, shape_for_bytes

from ..sketches import DOMAIN, FACTORIES, KINDS, PAIR_WIDTH_B, base_kind, forget_signs, keys, point, update

pytestmark = pytest.mark.parametrize("kind", KINDS)


def make(kind, **kw):
    return FACTORIES[kind](**kw)


def queries(kind):
    """Skip a test of single-column queries (join_size, frequency, key domain, sizing) for a pair sketch."""
    if kind == "pair":
        pytest.skip("a pair sketch answers chain joins only: tests/core/sketch/test_multiway.py")


def assert_same(a, b):
    assert a == b
    assert a.to_bytes() == b.to_bytes()


def assert_same_data(a, b):
    """``a`` (built with deletes) holds ``b``'s data. Identical when both ended in the same mode,
    except for the sign flag (``a`` saw deletes: ``b`` is compared as if it had, :func:`forget_signs`),
    and that a range-scanning sketch in counter mode keeps the key range of every key it saw,
    deleted or not (docs/format.md): then ``a``'s range covers ``b``'s, and ``b`` widened to it
    (through the public API: merge then subtract keys at both ends) equals ``a``. A build that
    passed through more distinct keys than its exact capacity stays in counter mode."""
    if getattr(a, "exact_mode", False) != getattr(b, "exact_mode", False):
        assert np.array_equal(a.counters, b.counters) and a.total_weight == b.total_weight
        assert a.null_weight == b.null_weight and a.key_domain == b.key_domain
        return
    if getattr(a, "search", None) == "range" and a.key_range is not None and a.key_range != b.key_range:
        lo, hi = a.key_range
        assert not a.exact_mode and (b.key_range is None or lo <= b.key_range[0] <= b.key_range[1] <= hi)
        ends = b.empty_like().update([lo, hi])
        b = b.copy().merge(ends).subtract(ends) if not b.is_empty else b
    if getattr(a, "nonnegative", False) != getattr(b, "nonnegative", False):
        b = forget_signs(b)
    assert_same(a, b)


# -- serde ---------------------------------------------------------------
def test_serde_round_trip_empty_filled_merged(kind):
    empty = make(kind)
    filled = update(make(kind), keys(seed=1))
    merged = update(make(kind), keys(seed=2)).merge(filled)
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
    sk = update(make(kind), keys(seed=3))
    assert_same(pickle.loads(pickle.dumps(sk)), sk)
    c = sk.copy()
    assert_same(c, sk)
    update(c, [1])
    assert c != sk  # deep copy


def test_float_counter_round_trip(kind):
    sk = update(make(kind, dtype="float64"), keys(seed=4, n=300), weights=np.linspace(-2.5, 7.25, 300))
    assert_same(ss.from_bytes(sk.to_bytes()), sk)


# -- linearity and merge --------------------------------------------------
def test_merge_equivalence_five_partials(kind):
    k = keys(n=5000, seed=5)
    whole = update(make(kind), k)
    parts = [update(make(kind), p) for p in np.array_split(k, 5)]
    merged = functools.reduce(lambda a, b: a.merge(b), parts[1:], parts[0].copy())
    assert_same(merged, whole)
    assert_same(ss.union(*parts), whole)
    assert np.array_equal(merged.counters, whole.counters)


def test_merge_returns_self_and_update_returns_self(kind):
    a = make(kind)
    assert update(a, [1, 2]) is a
    assert a.merge(make(kind)) is a
    assert a.subtract(make(kind)) is a


def test_deletes_insert_all_delete_half(kind):
    k = keys(n=3000, seed=6)
    a = update(update(make(kind), k), k[:1500], weights=-1)
    assert_same_data(a, update(make(kind), k[1500:]))
    b = update(update(make(kind), k), k[1500:], weights=np.full(1500, -1))
    assert_same_data(b, update(make(kind), k[:1500]))
    assert_same_data(update(update(make(kind), k), k, weights=-1), make(kind))


def test_subtract_is_inverse_of_merge(kind):
    a = update(make(kind), keys(seed=7))
    b = update(make(kind), keys(seed=8))
    assert_same_data((a + b) - b, a)


def test_scalar_weight_equals_repetition(kind):
    k = keys(n=200, seed=9)
    assert_same(update(make(kind), k, weights=3), update(make(kind), np.concatenate([k, k, k])))
    assert_same(update(make(kind), k, weights=3), update(make(kind), k, weights=np.full(len(k), 3)))


@settings(max_examples=25, deadline=None)
@given(
    a=st.lists(st.integers(0, DOMAIN - 1), max_size=60),
    b=st.lists(st.integers(0, DOMAIN - 1), max_size=60),
    wa=st.integers(-5, 5),
)
def test_linearity_property(kind, a, b, wa):
    left = update(make(kind), a, weights=wa).merge(update(make(kind), b))
    right = update(update(make(kind), list(a) * abs(wa), weights=1 if wa >= 0 else -1), b)
    assert_same(left, right)
    assert left.total_weight == wa * len(a) + len(b)


@settings(max_examples=15, deadline=None)
@given(st.lists(st.integers(0, DOMAIN - 1), min_size=1, max_size=80), st.randoms(use_true_random=False))
def test_order_independence_property(kind, a, rnd):
    shuffled = list(a)
    rnd.shuffle(shuffled)
    assert_same(update(make(kind), a), update(make(kind), shuffled))


@settings(max_examples=15, deadline=None)
@given(st.lists(st.integers(0, DOMAIN - 1), max_size=80), st.integers(0, 2**64 - 1))
def test_serde_property(kind, a, seed):
    sk = update(make(kind, seed=seed), a)
    assert_same(ss.from_bytes(sk.to_bytes()), sk)


# -- inputs ----------------------------------------------------------------
def test_containers_give_identical_sketches(kind):
    pd = pytest.importorskip("pandas")
    pa = pytest.importorskip("pyarrow")
    k = keys(n=500, seed=10)
    ref = update(make(kind), k)
    for container in (list(k), tuple(k.tolist()), k.astype(np.int32), pd.Series(k), pa.array(k),
                      pa.chunked_array([k[:100], k[100:]]), pd.Series(k, dtype="Int64")):
        assert_same(update(make(kind), container), ref)


def test_nulls_are_skipped_and_counted(kind):
    pd = pytest.importorskip("pandas")
    pa = pytest.importorskip("pyarrow")
    ref = update(make(kind), [1, 2, 3])
    for container in ([1, None, 2, 3, None], np.array([1, np.nan, 2, 3, np.nan]),
                      pd.Series([1, None, 2, 3, None], dtype="Int64"), pa.array([1, None, 2, 3, None])):
        sk = update(make(kind), container)
        assert sk.null_weight == 2
        assert np.array_equal(sk.counters, ref.counters)
        assert sk.total_weight == 3
    sk = update(make(kind), [None, 4], weights=[5, 1])
    assert sk.null_weight == 5 and sk.total_weight == 1


def test_null_weights_skip_their_row(kind):
    pd = pytest.importorskip("pandas")
    pa = pytest.importorskip("pyarrow")
    ref = update(make(kind), [1, 3, None], weights=[2, 4, 5])
    for w in ([2, None, 4, 5], np.array([2, np.nan, 4, 5]), pd.Series([2, None, 4, 5], dtype="Int64"),
              pa.array([2, None, 4, 5])):
        sk = update(make(kind), [1, 2, 3, None], weights=w)
        assert_same(sk, ref)
        assert (sk.total_weight, sk.null_weight) == (6, 5)


# -- rejects ---------------------------------------------------------------
@pytest.mark.parametrize("field,change", [("seed", {"seed": 6}), ("width", {"width": 32}), ("depth", {"depth": 7})])
def test_incompatible_merge_and_join_name_the_field(kind, field, change):
    a, b = update(make(kind), [1, 2]), update(make(kind, **change), [1, 2])
    ops = [lambda: a.merge(b), lambda: a.join_size(b), lambda: ss.join_size(a, b), lambda: a.subtract(b)]
    if kind == "pair":  # no two-way join; its fields are width_a, seed_a (the a side takes these arguments)
        ops, field = [ops[0], ops[3]], {"depth": "depth"}.get(field, f"{field}_a")
    for op in ops:
        with pytest.raises(ss.IncompatibleSketchError, match=field) as ei:
            op()
        assert ei.value.field == field
    assert a == update(make(kind), [1, 2])  # unchanged


def test_incompatible_kind(kind):
    a = make(kind)
    other = make([k for k in KINDS if base_kind(k) != base_kind(kind)][0])
    with pytest.raises(ss.IncompatibleSketchError, match="kind"):
        a.merge(other)
    if kind != "pair":
        with pytest.raises(ss.IncompatibleSketchError, match="kind"):
            a.join_size(other)
    with pytest.raises(ss.IncompatibleSketchError):
        a.merge("not a sketch")


def test_merge_rejects_other_counter_type_but_join_accepts(kind):
    a, b = update(make(kind), [1, 2, 2]), update(make(kind, dtype="float64"), [2], weights=[1.5])
    with pytest.raises(ss.IncompatibleSketchError, match="dtype"):
        a.merge(b)
    assert kind == "pair" or a.join_size(b).value == pytest.approx(3.0, abs=1e-9) or kind == "agms"  # agms_exact: exact


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
    sk = update(make(kind), [1, 2])
    before = sk.to_bytes()
    with pytest.raises(ss.KeyTypeError, match=err):
        update(sk, bad)
    assert sk.to_bytes() == before


@pytest.mark.parametrize(
    "weights,err",
    [([1, 2], "shape"), ([0.5, 1, 1], "non-integral"), ([np.inf, 1, 1], "NaN or infinity"), (True, "bool"), ("x", "int or float"), (object(), "int or float")],
)
def test_bad_weights_rejected(kind, weights, err):
    sk = make(kind)
    with pytest.raises(ss.KeyTypeError, match=err):
        update(sk, [1, 2, 3], weights=weights)
    assert sk.is_empty


def test_counter_overflow_raises_and_loses_nothing(kind):
    big = 2**62
    sk = update(make(kind), [1], weights=big)
    before = sk.to_bytes()
    with pytest.raises(ss.CounterOverflowError):
        update(sk, [1], weights=big)
    with pytest.raises(ss.CounterOverflowError):
        sk.merge(sk.copy())
    with pytest.raises(ss.CounterOverflowError):
        update(sk, [1, 1, 1], weights=[big, big, big])
    assert sk.to_bytes() == before
    assert sk.total_weight == big


@pytest.mark.parametrize("shape", [{"width": 0}, {"depth": 0}, {"width": 2**30}, {"depth": 300}, {"seed": -1},
                                   {"seed": 2**64}, {"width": 2.5}, {"dtype": "int32"}])
def test_bad_shape_rejected(kind, shape):
    with pytest.raises((ValueError, TypeError)):
        make(kind, **shape)


def test_bad_confidence_rejected(kind):
    queries(kind)
    a = update(make(kind), [1])
    for c in (0, 1, 1.5, -0.1):
        with pytest.raises(ValueError, match="confidence"):
            a.join_size(a, confidence=c)


# -- queries -----------------------------------------------------------------
def test_estimates_are_estimates(kind):
    queries(kind)
    a, b = update(make(kind), keys(seed=11)), update(make(kind), keys(seed=12))
    for e in (a.join_size(b), a.self_join_size(), a.frequency(0)):
        assert isinstance(e, ss.Estimate)
        if a.exact_mode:  # exact answers: zero width, confidence 1
            assert e.method == "exact" and e.low == e.value == e.high and e.confidence == 1.0
        else:
            assert e.low <= e.value <= e.high and e.confidence == 0.95
        assert float(e) == e.value
    assert a.join_size(b, confidence=0.99).width >= a.join_size(b, confidence=0.8).width


def test_exact_when_no_collisions(kind):
    # few keys in a wide sketch: hash and skimmed estimates are exact (pinned seed)
    queries(kind)
    if kind == "agms":
        pytest.skip("AGMS counters mix every key: never exact")
    f = [1, 1, 1, 2, 7, 7]
    g = [1, 2, 2, 7, 9]
    a, b = update(make(kind, width=4096), f), update(make(kind, width=4096), g)
    assert a.join_size(b).value == ss.exact_join_size(f, g) == 7
    assert a.self_join_size().value == ss.exact_self_join_size(f) == 14
    assert a.frequency(1).value == 3 and a.frequency(9).value == 0


def test_nbytes_counts_counters(kind):
    if kind.endswith("_exact"):  # exact mode: 8 bytes per key plus 4 (int32) or 8 per weight, no counters
        sk = make(kind, width=100, depth=3)
        assert sk.nbytes == 0 and len(sk.to_bytes()) == 64 + 12 + 4
        sk.update([1, 2, 2])
        assert sk.counter_width == 4 and sk.nbytes == 2 * 12 and len(sk.to_bytes()) == 80 + 2 * 12
        sk.update([1], weights=2**40)
        assert sk.counter_width == 8 and sk.nbytes == 2 * 16 and len(sk.to_bytes()) == 80 + 2 * 16
        return
    sk = make(kind, width=100, depth=3)
    cells = 100 * 3 * (PAIR_WIDTH_B if kind == "pair" else 1)  # a pair sketch: width_a x width_b per table
    assert sk.counter_width == 4 and sk.counters.dtype == np.int32
    assert sk.nbytes >= cells * 4
    # the format stores the counters plus any extension state (unbounded skimmed: the prefix hierarchy,
    # behind a 12-byte extension header; pair: its 24-byte extension); nbytes must cover all of it
    # (a range sketch: a 16-byte key range in memory, in a 24-byte extension)
    fixed = 16 if kind == "skimmed_range" else 0
    ext_header = 24 if kind == "pair" else 12
    assert 64 + sk.nbytes + 4 <= len(sk.to_bytes()) <= 64 + sk.nbytes + 4 + ext_header
    if kind != "skimmed_unbounded":
        ext = 24 if kind == "pair" or fixed else 8 if kind == "skimmed_virtual" else 0  # virtual: the lg block
        assert len(sk.to_bytes()) == 64 + cells * 4 + 4 + ext
    wide = update(make(kind, width=100, depth=3), [1], weights=2**40)
    assert wide.counter_width == 8 and wide.nbytes - fixed == 2 * (sk.nbytes - fixed)
    assert len(wide.to_bytes()) == len(sk.to_bytes()) + sk.nbytes - fixed


def test_shape_from_targets(kind):
    queries(kind)  # a pair sketch is shaped by its chain's sketches (PairSketch.for_chain)
    cls = type(make(kind))
    kind = base_kind(kind)
    extra = {"skimmed": {"domain": DOMAIN}, "skimmed_unbounded": {"search": "prefix"},
             "skimmed_range": {"search": "range"}, "skimmed_virtual": {"virtual_lg": 12}}.get(kind, {})
    # the skimmed sketch's for_bytes starts in exact mode (tests/core/sketch/test_exact_mode.py): counters here
    assert cls.for_bytes(65536, seed=3, **extra).exact_mode == kind.startswith("skimmed")
    s = cls.for_bytes(65536, seed=3, exact=False, **extra)
    # the budget bounds the state and the serialised form, at 4 bytes per int32 counter
    assert s.nbytes <= 65536 and len(update(s, keys(n=2000)).to_bytes()) <= 65536
    assert s.counters.itemsize == COUNTER_BYTES and s.depth == DEFAULT_DEPTH
    ext = {"skimmed_range": 24, "skimmed_virtual": 8}.get(kind, 0)  # the key range / virtual-layout extension
    if kind == "skimmed_unbounded":  # the hierarchy takes part of the budget: main width is what is left
        assert s.hier_width is not None and len(s.to_bytes()) + s.depth * COUNTER_BYTES > 65536
    else:
        assert len(s.to_bytes()) == 68 + ext + 4 * s.width * s.depth  # the frame and the counters
        assert (s.width, s.depth) == shape_for_bytes(65536 - 68 - ext) == ((65536 - 68 - ext) // 4 // 5, 5)
    if kind == "skimmed_range":
        assert s.search == "range" and s.key_range == (int(keys(n=2000).min()), int(keys(n=2000).max()))
    # float counters (a SUM sketch): the count sketch's shape, so the two join, in up to twice the bytes
    f = cls.for_bytes(65536, seed=3, dtype="float64", exact=False, **extra)
    assert f.params == dict(s.params, dtype="float64")
    assert f.nbytes <= 2 * 65536 and len(update(f, [1], weights=0.5).to_bytes()) <= 2 * 65536
    assert math.isfinite(f.join_size(s).value)  # joins, no width mismatch
    smallest = {"skimmed_unbounded": 84, "skimmed_range": 96, "skimmed_virtual": 80}.get(kind, 72)  # frame (+ ext) + 1 counter
    frame = smallest - 4
    largest = frame + 4 * DEFAULT_DEPTH * (2**24 + 1) - 1  # 2**24 counters a table at the default depth
    for n, remedy in ((smallest - 1, "larger"), (largest + 1, "smaller"), (10**12, "smaller")):
        with pytest.raises(ValueError, match=rf"^nbytes must be an int in \[{smallest}, {largest}\] \(the {frame}-byte "
                           rf"serialised frame and one counter, up to 16777216 counters a table at depth 5\), "
                           rf"got {n}: give a {remedy} budget$"):
            cls.for_bytes(n, **extra)
    assert shape_for_bytes(framed_budget(largest, frame)) == (2**24, 5)  # the top of the range exists
    e = cls.for_error(0.1, 0.05, **extra)
    assert (e.width, e.depth) == (1478, 3)


# -- counter widths: int32 by default, widened exactly to int64 -------------------
I32MAX = 2**31 - 1


def test_widening_at_the_32_bit_limit_is_exact_and_reported(kind):
    sk = update(make(kind), [7], weights=I32MAX - 1)
    assert sk.counter_width == 4 and point(sk, 7) == I32MAX - 1
    update(sk, [7])  # exactly at the limit: still int32
    assert sk.counter_width == 4 and point(sk, 7) == I32MAX
    fixed = 16 if kind == "skimmed_range" else 0  # a range sketch's key range: not a counter
    nb = sk.nbytes - fixed
    update(sk, [7])  # one past it: every array widens, nothing wraps
    assert sk.counter_width == 8 and sk.counters.dtype == np.int64
    assert sk.nbytes - fixed == (nb + 4 if getattr(sk, "exact_mode", False) else 2 * nb)  # exact: the one weight widens
    assert point(sk, 7) == I32MAX + 1 and sk.total_weight == I32MAX + 1
    assert_same(sk, update(make(kind), [7], weights=I32MAX + 1))
    assert_same(ss.from_bytes(sk.to_bytes()), sk)
    update(sk, [7], weights=-(I32MAX + 1))  # deletes: back to empty, bytes canonical again
    assert sk.is_empty and sk.to_bytes() == forget_signs(make(kind)).to_bytes()  # it saw deletes


def test_negative_widening_and_merge_of_mixed_widths(kind):
    a = update(make(kind), [1], weights=-I32MAX)  # counters are +-I32MAX: int32
    assert a.counter_width == 4
    b = update(make(kind), [1], weights=-2)
    assert a.copy().merge(b).counter_width == 8  # +-(2**31 + 1): beyond int32 whatever the sign
    w = update(make(kind), [9], weights=2**40)
    m = a.copy().merge(w)
    assert m.counter_width == 8 and m.total_weight == 2**40 - I32MAX
    assert_same_data(m.subtract(w), a)  # values back in int32 range: same bytes as before
    assert_same(make(kind).merge(w).subtract(w), forget_signs(make(kind)))  # a subtract: no sign flag


def test_merge_across_partitionings_is_byte_identical_with_widening(kind):
    k = keys(n=3000, seed=8)
    w = np.ones(len(k), dtype=np.int64)
    w[::500] = 2**33  # some partitions need 64-bit counters, others not
    whole = update(make(kind), k, weights=w)
    for n_parts in (2, 3, 7):
        parts = [update(make(kind), kk, weights=ww) for kk, ww in zip(np.array_split(k, n_parts),
                                                                       np.array_split(w, n_parts))]
        assert_same(ss.union(*parts), whole)
        assert_same(ss.union(*parts[::-1]), whole)


def test_overflow_at_the_64_bit_limit_raises_and_loses_nothing(kind):
    sk = update(make(kind), [1], weights=2**63 - 2)
    before = sk.to_bytes()
    with pytest.raises(ss.CounterOverflowError):
        update(sk, [1, 1], weights=[1, 1])
    with pytest.raises(ss.CounterOverflowError):
        sk.merge(update(make(kind), [1], weights=2))
    update(sk, [1])  # exactly int64 max
    assert sk.total_weight == 2**63 - 1
    assert ss.from_bytes(sk.to_bytes()) == sk
    assert update(make(kind), [1], weights=2**63 - 2).to_bytes() == before


def test_float_counters_overflow_raises_before_anything_changes(kind):
    sk = update(make(kind, dtype="float64"), [1, 2], weights=[8.5e307, 0.5])
    big = update(make(kind, dtype="float64"), [1], weights=8.5e307)
    big.merge(big.copy())  # 1.7e308: still finite
    before = sk.to_bytes()
    for op in (lambda: update(sk, [1], weights=1e308), lambda: sk.merge(big),
               lambda: update(sk, [1, 1], weights=[5e307, 5e307])):
        with pytest.raises(ss.CounterOverflowError):
            op()
        assert sk.to_bytes() == before


# -- key domain: integers or strings/bytes, recorded, checked, serialised -------------
def test_key_domain_recorded_checked_and_serialised(kind):
    queries(kind)
    if base_kind(kind) == "skimmed":
        pytest.skip("a skimmed sketch with a declared domain takes integer keys only")
    ints, strs = update(make(kind), [1, 2, None]), update(make(kind), ["a", b"b"])
    assert (ints.key_domain, strs.key_domain, update(make(kind), [None]).key_domain) == ("int", "str", None)
    for op in ("merge", "subtract"):
        with pytest.raises(ss.IncompatibleSketchError, match="key_domain") as e:
            getattr(ints.copy(), op)(strs)
        assert e.value.field == "key_domain"
    with pytest.raises(ss.IncompatibleSketchError, match="key_domain"):
        ints.join_size(strs)
    before = ints.to_bytes()
    with pytest.raises(ss.KeyTypeError, match="holds integer keys, got string/bytes keys"):
        update(ints, ["a"])
    assert ints.to_bytes() == before
    assert ss.from_bytes(strs.to_bytes()).key_domain == "str"
    assert make(kind).merge(strs).key_domain == "str"  # an empty domain adopts the other's
    assert update(make(kind), [None]).merge(ints).key_domain == "int"
    back = ints.copy().subtract(update(make(kind), [1, 2]))  # no non-null key left: no domain
    assert back.key_domain is None and back.to_bytes() == forget_signs(update(make(kind), [None])).to_bytes()
    assert update(back, ["z"]).key_domain == "str"
