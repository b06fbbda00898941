"""Exact mode: exact frequencies until the capacity, then counters for good (docs/format.md, "Exact mode")."""

import functools
import pickle
import struct

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import skimsketch as ss
from skimsketch.format import header as fmt
from skimsketch.sketch.exact_mode import exact_capacity
from skimsketch.stats.exact_store import ExactStore

from ..sketches import fix_crc, forget_signs

I32MAX = 2**31 - 1

# (class, constructor arguments) of every sketch shape that has an exact mode
SHAPES = {
    "hash": (ss.HashSketch, {"width": 16, "depth": 3}),
    "agms": (ss.AGMSSketch, {"width": 8, "depth": 3}),
    "bounded": (ss.SkimmedSketch, {"width": 16, "depth": 3, "domain": 1 << 16}),
    "unbounded": (ss.SkimmedSketch, {"width": 16, "depth": 3, "hier_width": 16, "hier_depth": 2}),
}


def build(name, exact=True, seed=3, **kw):
    cls, args = SHAPES[name]
    return cls(seed=seed, exact=exact, **args, **kw)


def distinct_keys(n, seed=0):
    return np.random.default_rng(seed).choice(1 << 16, size=n, replace=False).astype(np.int64)


# -- capacity and budget ----------------------------------------------------------
@pytest.mark.parametrize("name", sorted(SHAPES))
def test_capacity_rule(name):
    sk = build(name)
    counters = sk.depth * sk.width + (6 * sk.hier_depth * sk.hier_width if name == "unbounded" else 0)
    assert sk.exact_capacity == (4 * counters - 12) // 16 == exact_capacity(counters, False)
    assert build(name, dtype="float64").exact_capacity == (8 * counters - 12) // 16
    assert exact_capacity(1, False) == 0  # a sketch too small for one entry converts on its first key


@pytest.mark.parametrize("domain", [None, 1 << 20])
@pytest.mark.parametrize("dtype", ["int64", "float64"])
@pytest.mark.parametrize("nbytes", [4096, 16384, 65536])
def test_for_bytes_budget_holds_in_exact_mode_at_capacity(nbytes, dtype, domain):
    sk = ss.SkimmedSketch.for_bytes(nbytes, seed=1, dtype=dtype, domain=domain)
    counter_mode = ss.SkimmedSketch.for_bytes(nbytes, seed=1, dtype=dtype, domain=domain, exact=False)
    assert sk.exact_mode and not counter_mode.exact_mode
    cap = sk.exact_capacity
    assert cap > 0
    # the widest entries: every weight needs 64 bits
    sk.update(distinct_keys(cap, seed=nbytes), weights=2**40 if dtype == "int64" else 0.5)
    assert sk.exact_mode and len(sk.exact_entries) == cap and sk.counter_width == 8
    budget = nbytes if dtype == "int64" else 2 * nbytes  # float counters keep the count shape (8 bytes each)
    assert sk.nbytes == 16 * cap <= counter_mode.nbytes <= budget
    assert len(sk.to_bytes()) == 80 + 16 * cap <= len(counter_mode.to_bytes()) <= budget


# -- exact answers -------------------------------------------------------------------
@pytest.mark.parametrize("name", sorted(SHAPES))
def test_answers_are_exact(name):
    f = [1, 1, 2, 5, 5, 5, None]
    g = [1, 5, 5, 9]
    a, b = build(name).update(f), build(name).update(g)
    for e, want in ((a.join_size(b), ss.exact_join_size(f, g)), (a.self_join_size(), ss.exact_self_join_size(f)),
                    (a.frequency(5), 3), (a.frequency(77), 0), (ss.join_size(a, b), 8)):
        assert (e.value, e.low, e.high, e.confidence, e.method) == (want, want, want, 1.0, "exact")
    s = build(name, dtype="float64").update(f, weights=[0.5, 1.5, 2.0, 1.0, 1.0, 1.0, 9.0])
    e = ss.join_sum(s, b)
    assert (e.value, e.width, e.method) == (2.0 + 6.0, 0.0, "exact")


def test_exact_answers_beyond_float_precision_are_kept():
    a = build("hash").update([1], weights=2**62 + 1)
    b = build("hash").update([1], weights=3)
    assert a.join_size(b).detail["exact"] == 3 * (2**62 + 1)
    assert a.frequency(1).detail["exact"] == 2**62 + 1


def test_heavy_hitters_and_skim_are_exact():
    s = build("unbounded").update(["a"] * 5 + ["b"] * 2 + ["c"]).update(["c"], weights=-1)
    ka, kb = ss.canonical_key("a"), ss.canonical_key("b")
    assert s.heavy_hitters() == {ka: 5, kb: 2}
    assert s.heavy_hitters(3) == {ka: 5}
    assert s.heavy_hitters(0.5) == {ka: 5, kb: 2}  # no resolution limit: every key is known
    res = s.skim()
    assert sorted(res.keys.tolist()) == sorted([ka, kb]) and not res.residual.any() and res.resolution == 0
    with pytest.raises(ValueError, match="threshold"):
        s.heavy_hitters(0)


@pytest.mark.parametrize("name", sorted(SHAPES))
def test_exact_side_against_a_counter_side_reads_the_converted_counters(name):
    f = [1, 1, 2, 3, 3, 3]
    g = list(range(40)) * 2
    exact, plain = build(name).update(f), build(name, exact=False).update(f)
    other = build(name, exact=False).update(g)
    assert np.array_equal(exact.counters, plain.counters)
    if name == "unbounded":
        assert np.array_equal(exact.hierarchy_counters, plain.hierarchy_counters)
    got, want = exact.join_size(other), plain.join_size(other)
    assert got.method == want.method != "exact"
    if name in ("hash", "agms"):  # same per-table estimates (F2 of the exact side is exact)
        assert got.value == want.value
    else:  # every exact key is a dense key known exactly: the residual is zero
        assert got.detail["dense_f"] == 3
    assert other.join_size(exact).method != "exact"


# -- conversion ----------------------------------------------------------------------
@pytest.mark.parametrize("name", sorted(SHAPES))
@pytest.mark.parametrize("dtype", ["int64", "float64"])
def test_conversion_exactly_at_capacity_plus_one(name, dtype):
    sk = build(name, dtype=dtype)
    cap = sk.exact_capacity
    k = distinct_keys(cap + 1, seed=1)
    w = np.arange(1, cap + 2) * (1.5 if dtype == "float64" else 1)
    sk.update(k[:cap], weights=w[:cap])
    assert sk.exact_mode and len(sk.exact_entries) == cap
    sk.update(k[:cap], weights=w[:cap])  # existing keys: no growth
    assert sk.exact_mode
    sk.update(k[cap:], weights=w[cap:])  # one more key: counters
    assert not sk.exact_mode and sk.exact_entries is None
    plain = build(name, exact=False, dtype=dtype).update(k, weights=w).update(k[:cap], weights=w[:cap])
    assert sk == plain and sk.to_bytes() == plain.to_bytes()
    sk.update(k, weights=-w).update(k[:cap], weights=-w[:cap])  # back to nothing: never converts back
    assert not sk.exact_mode and sk.is_empty
    assert sk.to_bytes() == forget_signs(build(name, exact=False, dtype=dtype)).to_bytes()  # it saw deletes


@pytest.mark.parametrize("name", sorted(SHAPES))
def test_merge_of_exact_sketches_converts_at_capacity_plus_one(name):
    cap = build(name).exact_capacity
    k = distinct_keys(cap + 1, seed=2)
    a, b = build(name).update(k[: cap // 2]), build(name).update(k[cap // 2 : cap])
    ab = a.copy().merge(b)
    assert ab.exact_mode and ab == build(name).update(k[:cap])
    c = build(name).update(k[cap:])
    abc = ab.copy().merge(c)
    assert not abc.exact_mode and abc.to_bytes() == build(name, exact=False).update(k).to_bytes()
    # exact + counters (either side) gives counters
    plain = build(name, exact=False).update(k[cap:])
    assert not ab.copy().merge(plain).exact_mode and ab.copy().merge(plain).to_bytes() == abc.to_bytes()
    assert plain.copy().merge(ab).to_bytes() == abc.to_bytes()
    assert abc.copy().subtract(c) == forget_signs(build(name, exact=False).update(k[:cap]))  # a subtract: no sign flag
    assert (ab + c - c).to_bytes() == forget_signs(build(name, exact=False).update(k[:cap])).to_bytes()


def test_subtract_of_exact_sketches_stays_exact_and_drops_zeros():
    a = build("hash").update([1, 2, 2, 3])
    b = build("hash").update([2, 2, 3, 4])
    d = a.copy().subtract(b)
    assert d.exact_mode and d.exact_entries == {1: 1, 4: -1} and d.total_weight == 0
    assert d.key_domain == "int"
    assert a.copy().subtract(a).to_bytes() == forget_signs(build("hash")).to_bytes()  # a subtract: no sign flag


def test_a_large_positive_batch_converts_directly_to_the_same_counters(monkeypatch):
    sk = build("hash").update([1, 2], weights=[-5, 3])  # capacity 11
    big = np.arange(100, 10_100)
    judged = []
    real = ExactStore.surely_outgrows
    monkeypatch.setattr(ExactStore, "surely_outgrows", lambda self, *a: judged.append(real(self, *a)) or judged[-1])
    direct = sk.copy().update(big)  # judged from a probe of the batch: converts before aggregating
    assert judged == [True]
    stepwise = sk.copy()
    for chunk in np.array_split(big, 100):
        stepwise.update(chunk)
    assert judged[1:] == [False]  # a short batch is aggregated exactly (here it converts; then counters)
    plain = build("hash", exact=False).update([1, 2], weights=[-5, 3]).update(big)
    assert not direct.exact_mode and direct.to_bytes() == stepwise.to_bytes() == plain.to_bytes()
    # a batch that cancels keys is aggregated exactly: here it ends at the capacity and stays exact
    full = build("hash").update(big[:11])
    full.update(np.concatenate([big[:11], big[50:61]]), weights=np.r_[np.full(11, -1), np.full(11, 2)])
    assert full.exact_mode and full.exact_entries == {int(k): 2 for k in big[50:61]}


def test_conversion_of_huge_weights_is_exact_and_fails_only_on_real_overflow():
    # counters can overflow where the exact weights do not: the conversion then raises, all or nothing;
    # otherwise its counters are exactly the sum of the keys' own counters (whatever the order)
    entries = {1: 2**62, 2: -(2**62), 3: 2**62 - 7, 4: -(2**62) + 5}
    outcomes = set()
    for seed in range(40):
        sk = ss.HashSketch(2, 8, seed=seed, exact=True)  # capacity 3
        for key in (1, 2, 3):
            sk.update([key], weights=entries[key])
        before = sk.to_bytes()
        ref = sum(ss.HashSketch(2, 8, seed=seed).update([k], weights=w).counters.astype(object)
                  for k, w in entries.items())
        fits = all(-(2**63) <= int(x) < 2**63 for x in ref.flat)
        try:
            sk.update([4], weights=entries[4])
        except ss.CounterOverflowError:
            assert not fits and sk.to_bytes() == before and sk.exact_mode
            outcomes.add("raised")
            continue
        assert fits and not sk.exact_mode and np.array_equal(sk.counters.astype(object), ref)
        assert sk.total_weight == sum(entries.values())
        outcomes.add("converted")
    assert outcomes == {"raised", "converted"}


# -- deletes, widening, overflow --------------------------------------------------------
def test_deletes_remove_keys_and_empty_sketches_are_canonical():
    sk = build("unbounded").update(["a", "b", "b"]).update(["b"], weights=-2)
    assert sk.exact_entries == {ss.canonical_key("a"): 1} and sk.key_domain == "str"
    sk.update(["a"], weights=-1)
    assert sk.is_empty and sk.key_domain is None and sk.exact_entries == {}
    assert sk.to_bytes() == forget_signs(build("unbounded")).to_bytes()  # as fresh, but it saw deletes
    neg = build("hash").update([5], weights=-7)  # negative frequencies are kept too
    assert neg.exact_entries == {5: -7} and neg.frequency(5).value == -7


def test_weights_widen_exactly_at_the_32_bit_limit():
    sk = build("hash").update([7], weights=I32MAX)
    assert sk.counter_width == 4 and sk.nbytes == 12 and sk.to_bytes()[32] == 3
    sk.update([7])
    assert sk.counter_width == 8 and sk.nbytes == 16 and sk.to_bytes()[32] == 1
    assert sk.exact_entries == {7: I32MAX + 1} and ss.from_bytes(sk.to_bytes()) == sk
    sk.update([7], weights=-2)  # fits again: int32 in memory and in bytes
    assert sk.counter_width == 4 and sk.to_bytes() == forget_signs(build("hash").update([7], weights=I32MAX - 1)).to_bytes()
    low = build("hash").update([1], weights=-(2**31))
    assert low.counter_width == 4 and low.update([1], weights=-1).counter_width == 8


def test_overflow_at_the_64_bit_limit_changes_nothing():
    sk = build("hash").update([1], weights=2**63 - 2).update([2], weights=-(2**63) + 1)
    before = sk.to_bytes()
    for op in (lambda: sk.update([1], weights=2), lambda: sk.update([2], weights=-2),
               lambda: sk.merge(build("hash").update([1], weights=2)),
               lambda: sk.subtract(build("hash").update([2], weights=2)),
               lambda: sk.update([3], weights=2**62).update([3], weights=2**62)):
        with pytest.raises(ss.CounterOverflowError):
            op()
    sk.update([3], weights=-(2**62))  # the last op's first update went through: undo it
    assert sk.to_bytes() == before
    assert sk.update([1]).exact_entries[1] == 2**63 - 1
    mn = build("hash").update([1], weights=-(2**62)).update([1], weights=-(2**62))  # int64's minimum
    with pytest.raises(ss.CounterOverflowError):
        build("hash").subtract(mn)


def test_float_weights_stay_finite():
    sk = build("hash", dtype="float64").update([1, 2], weights=[1.5e308, 0.25])
    before = sk.to_bytes()
    for op in (lambda: sk.update([1], weights=1e308), lambda: sk.update([1], weights=1e308),
               lambda: sk.merge(sk.copy())):
        with pytest.raises(ss.CounterOverflowError):
            op()
        assert sk.to_bytes() == before


def test_key_domain_rules_hold_in_exact_mode():
    ints, strs = build("hash").update([1]), build("hash").update(["a"])
    with pytest.raises(ss.KeyTypeError):
        ints.update(["b"])
    with pytest.raises(ss.IncompatibleSketchError, match="key_domain"):
        ints.merge(strs)
    with pytest.raises(ss.IncompatibleSketchError, match="key_domain"):
        ints.join_size(strs)
    with pytest.raises(ss.KeyDomainError):
        build("bounded").update([1 << 16])
    assert ints.exact_entries == {1: 1}


def test_exact_and_counter_sketches_are_compatible_but_not_equal():
    a, b = build("hash").update([1, 2]), build("hash", exact=False).update([1, 2])
    assert a.params == dict(b.params, exact=True) and a != b
    a.check_compatible(b)
    assert "exact=True" in repr(a) and "exact" not in repr(b)
    with pytest.raises(TypeError, match="exact"):
        ss.HashSketch(8, 2, exact="yes")


# -- serialisation ----------------------------------------------------------------------
@pytest.mark.parametrize("name", sorted(SHAPES))
def test_round_trips(name):
    for sk in (build(name), build(name).update([3, 9, 3, None]), build(name, dtype="float64").update([4], weights=0.5)):
        back = ss.from_bytes(sk.to_bytes())
        assert back == sk and back.to_bytes() == sk.to_bytes() and back.exact_mode
        assert pickle.loads(pickle.dumps(sk)) == sk and sk.copy() == sk
        assert sk.empty_like().exact_mode


def test_exact_layout():
    sk = ss.HashSketch(10, 3, seed=42, exact=True).update([5, -2, 5, None])
    b = sk.to_bytes()
    assert b[7] == fmt.FLAG_EXACT | fmt.FLAG_NONNEG and b[32] == 3  # flags: exact, non-negative; weights int32
    assert struct.unpack_from("<qqI", b, 44) == (3, 1, 12 + 2 * 12)
    assert struct.unpack_from("<4sBBBBI", b, 64) == (b"EXCT", 1, 0, 0, 0, 2)
    assert struct.unpack_from("<qqii", b, 76) == (-2, 5, 1, 2)
    assert len(b) == 64 + 12 + 24 + 4
    u = ss.SkimmedSketch(32, 3, hier_width=64, hier_depth=3, exact=True).to_bytes()
    assert struct.unpack_from("<4sBBBBI", u, 64) == (b"EXCT", 1, 6, 3, 0, 0) and u[7] == fmt.FLAG_EXACT | fmt.FLAG_NONNEG | 1


def _exact_blob(sk):
    head, _, ext = fmt.decode(sk.to_bytes())
    return head, bytearray(ext)


def _rewrite(head, ext):
    return fmt.encode(head, np.zeros(0), bytes(ext), head.counter_width)


def _mutations():
    def keys_swapped(head, ext):
        k = np.frombuffer(bytes(ext[12:28]), "<i8")
        ext[12:28] = k[::-1].tobytes()
        return _rewrite(head, ext)

    def weight_zero(head, ext):
        n = struct.unpack_from("<I", ext, 8)[0]
        ext[12 + 8 * n : 16 + 8 * n] = b"\0\0\0\0"
        head.total_weight -= 1
        return _rewrite(head, ext)

    def wide(head, ext):
        n = struct.unpack_from("<I", ext, 8)[0]
        w = np.frombuffer(bytes(ext[12 + 8 * n :]), "<i4").astype("<i8")
        head.counter_width = 8
        return _rewrite(head, bytes(ext[: 12 + 8 * n]) + w.tobytes())

    def byte(i, v):
        def f(head, ext):
            ext[i] = v
            return _rewrite(head, ext)
        return f

    def total(head, ext):
        head.total_weight += 1
        return _rewrite(head, ext)

    def key_domain(head, ext):
        head.key_domain = None
        return _rewrite(head, ext)

    def empty_flag(head, ext):
        head.empty = True
        return _rewrite(head, ext)

    def count(head, ext):
        ext[8] += 1
        return _rewrite(head, ext)

    def v1(head, ext):
        b = bytearray(_rewrite(head, ext))
        b[4], b[32], b[33] = 1, 1, 0  # version 1: int64 counter type, no key domain
        return fix_crc(bytes(b))

    return [
        (keys_swapped, "strictly ascending"), (weight_zero, "zero weight"), (wide, "non-canonical"),
        (byte(0, ord("X")), "magic"), (byte(4, 2), "version"), (byte(5, 4), "hierarchy shape"),
        (byte(7, 1), "reserved"), (total, "sum to the total"), (key_domain, "key domain"),
        (empty_flag, "empty"), (count, "size mismatch"), (v1, "reserved header bits"),
    ]


@pytest.mark.parametrize("mutate,msg", _mutations(), ids=lambda x: x if isinstance(x, str) else x.__name__)
def test_corrupt_exact_blobs_are_rejected(mutate, msg):
    head, ext = _exact_blob(ss.HashSketch(8, 3, seed=1, exact=True).update([4, 9, 9]))
    with pytest.raises(ss.CorruptSketchError, match=msg):
        ss.from_bytes(mutate(head, ext))


def test_entries_beyond_capacity_or_domain_are_rejected():
    sk = ss.HashSketch(8, 3, seed=1, exact=True).update([1, 2, 3])  # capacity 5
    head, _, ext = fmt.decode(sk.to_bytes())
    head.width = 4  # capacity 2
    with pytest.raises(ss.CorruptSketchError, match="capacity"):
        ss.from_bytes(_rewrite(head, ext))
    b = ss.SkimmedSketch(8, 3, domain=100, exact=True).update([1, 99]).to_bytes()
    bad = fix_crc(b[:24] + struct.pack("<Q", 50) + b[32:])
    with pytest.raises(ss.CorruptSketchError, match="domain"):
        ss.from_bytes(bad)
    u = ss.SkimmedSketch(8, 3, hier_width=16, hier_depth=2, exact=True).to_bytes()
    for lg, hd in ((3, 2), (4, 1), (25, 2), (0, 2), (4, 0)):
        with pytest.raises(ss.CorruptSketchError, match="hierarchy shape"):
            ss.from_bytes(fix_crc(u[:69] + bytes([lg, hd]) + u[71:]))
    # (0, 0): no hierarchy, an unbounded sketch that scans its key range
    assert ss.from_bytes(fix_crc(u[:69] + bytes([0, 0]) + u[71:])).search == "range"


def test_fuzzed_exact_blobs_are_rejected():
    blob = build("unbounded").update(["p", "q", "q"]).to_bytes()
    rng = np.random.default_rng(9)
    for _ in range(300):
        arr = bytearray(blob)
        arr[int(rng.integers(len(arr)))] ^= 1 << int(rng.integers(8))
        with pytest.raises(ss.CorruptSketchError):
            ss.from_bytes(bytes(arr))
    head, _, ext = fmt.decode(blob)
    for _ in range(300):  # checksum fixed: the structural checks must catch every change they can see
        arr = bytearray(ext)
        pos = int(rng.integers(len(arr)))
        arr[pos] ^= 1 << int(rng.integers(8))
        bad = _rewrite(head, arr)
        try:
            got = ss.from_bytes(bad)
        except ss.CorruptSketchError:
            continue
        # a flip that keeps every invariant is another valid sketch (e.g. another key): it must round-trip
        assert got.to_bytes() == bad and got.exact_mode


# -- merge equivalence and linearity ---------------------------------------------------------
@pytest.mark.parametrize("name", sorted(SHAPES))
@pytest.mark.parametrize("extra", [-1, 0, 1])
def test_insert_only_builds_are_byte_identical_across_partitionings(name, extra):
    cap = build(name).exact_capacity
    rng = np.random.default_rng(cap + extra + 7)
    pool = distinct_keys(cap + extra, seed=5)
    k = np.concatenate([pool, rng.choice(pool, 3 * len(pool))])
    rng.shuffle(k)
    w = rng.integers(1, 4, len(k))
    w[::97] = 2**33  # some partials need int64 weights
    whole = build(name).update(k, weights=w)
    assert whole.exact_mode == (extra <= 0)
    for n_parts in (2, 3, 7):
        parts = [build(name).update(kk, weights=ww) for kk, ww in zip(np.array_split(k, n_parts),
                                                                      np.array_split(w, n_parts))]
        for order in (parts, parts[::-1], parts[1:] + parts[:1]):
            merged = functools.reduce(lambda a, b: a.merge(b), order[1:], order[0].copy())
            assert merged == whole and merged.to_bytes() == whole.to_bytes()


key_lists = st.lists(st.integers(-50, 50), max_size=40)


@settings(max_examples=60, deadline=None)
@given(batches=st.lists(st.tuples(key_lists, st.integers(-3, 3)), min_size=1, max_size=6),
       cut=st.integers(0, 6), seed=st.integers(0, 2**64 - 1))
def test_any_signed_history_keeps_the_counters_of_its_data(batches, cut, seed):
    """Whatever the mode at the end, the counters are those of the data; exact mode holds its exact frequencies."""
    sk = ss.SkimmedSketch(4, 3, seed=seed, hier_width=16, hier_depth=2, exact=True)  # capacity 50
    plain = ss.SkimmedSketch(4, 3, seed=seed, hier_width=16, hier_depth=2)
    left, right = sk.copy(), sk.copy()
    for i, (keys, w) in enumerate(batches):
        sk.update(keys, weights=w)
        plain.update(keys, weights=w)
        (left if i < cut else right).update(keys, weights=w)
    merged = left.copy().merge(right)
    for s in (sk, merged):
        assert np.array_equal(s.counters, plain.counters) and s.total_weight == plain.total_weight
        assert np.array_equal(s.hierarchy_counters, plain.hierarchy_counters)
        if s.exact_mode:
            ref = {}
            for keys, w in batches:
                for key in keys:
                    ref[key] = ref.get(key, 0) + w
            assert s.exact_entries == {k: v for k, v in sorted(ref.items()) if v}
        else:
            assert s.to_bytes() == plain.to_bytes()
    if sk.exact_mode and merged.exact_mode:
        assert merged.to_bytes() == sk.to_bytes()


@settings(max_examples=60, deadline=None)
@given(a=st.lists(st.integers(0, 40), max_size=30), b=st.lists(st.integers(0, 40), max_size=30),
       c=st.lists(st.integers(0, 40), max_size=30))
def test_insert_only_merge_order_never_matters(a, b, c):
    make = functools.partial(ss.HashSketch, 8, 2, 11, exact=True)  # capacity 3: conversion is frequent
    x, y, z = make().update(a), make().update(b), make().update(c)
    whole = make().update(a + b + c).to_bytes()
    for order in ((x, y, z), (z, y, x), (y, x, z), (y, z, x)):
        assert ss.union(*order).to_bytes() == whole
    assert ((x + y) + z).to_bytes() == (x + (y + z)).to_bytes() == whole
