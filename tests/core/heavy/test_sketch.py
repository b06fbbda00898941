"""HeavyKeySketch's API: sizes, exact small cases, key types, deletes refused, merges, reproducibility, bytes."""

import copy
import pickle

import numpy as np
import pytest

import skimsketch as ss
from skimsketch.errors import CorruptSketchError, CounterOverflowError, IncompatibleSketchError, KeyTypeError
from skimsketch.heavy import HeavyKeySketch, shape_for_bytes
from skimsketch.heavy.codec import serialised_size


def _zipf(seed, n, domain=5000, z=1.3):
    return ((np.random.default_rng(seed).zipf(z, n) - 1) % domain).astype(np.int64)


@pytest.mark.parametrize("nbytes", [512, 1000, 4096, 16384, 65536, 1 << 20])
def test_for_bytes_fits_the_budget(nbytes):
    sk = HeavyKeySketch.for_bytes(nbytes, seed=3).update(_zipf(1, 20000))
    b, w = shape_for_bytes(nbytes)
    assert (sk.buckets, sk.width, sk.depth) == (b, w, 4)
    assert serialised_size(b, w, 4, 4, sk.filter_per_bucket) <= nbytes
    assert len(sk.to_bytes()) <= nbytes and sk.nbytes <= nbytes


def test_for_bytes_refuses_bad_budgets():
    with pytest.raises(ValueError, match="nbytes"):
        HeavyKeySketch.for_bytes(100)
    with pytest.raises(TypeError, match="nbytes"):
        HeavyKeySketch.for_bytes(4096.0)
    with pytest.raises(ValueError, match="dtype"):
        HeavyKeySketch.for_bytes(4096, dtype="int32")


def test_exact_while_nothing_spills():
    a = HeavyKeySketch.for_bytes(4096, seed=1).update([1, 1, 2, 3, None], weights=[1, 2, 5, 1, 9])
    b = HeavyKeySketch.for_bytes(4096, seed=1).update([1, 3, 3, 4])
    e = a.join_size(b)
    assert (e.value, e.low, e.high, e.confidence) == (3 * 1 + 1 * 2, 5.0, 5.0, 1.0)
    assert a.self_join_size().value == 9 + 25 + 1
    assert a.null_weight == 9 and a.total_weight == 9


def test_deletes_are_refused_and_point_to_the_skimmed_sketch():
    sk = HeavyKeySketch.for_bytes(4096).update([1, 2])
    before = sk.to_bytes()
    for kw in ({"weights": [1, -1]}, {"weights": -2}):
        with pytest.raises(ValueError, match="SkimmedSketch"):
            sk.update([1, 2], **kw)
    with pytest.raises(ValueError, match="SkimmedSketch"):
        sk.update([None], weights=[-1])
    assert sk.to_bytes() == before


def test_string_keys_and_key_domains():
    a = HeavyKeySketch.for_bytes(4096, seed=2).update(["x", "y", "x", b"z"])
    b = HeavyKeySketch.for_bytes(4096, seed=2).update(["x", "z"])
    assert a.join_size(b).value == 3 and a.key_domain == "str"
    with pytest.raises(KeyTypeError, match="one key domain"):
        a.update([1])
    with pytest.raises(IncompatibleSketchError, match="key_domain"):
        a.join_size(HeavyKeySketch.for_bytes(4096, seed=2).update([1]))


def test_incompatible_joins_and_merges():
    a = HeavyKeySketch.for_bytes(4096, seed=2)
    with pytest.raises(IncompatibleSketchError, match="seed"):
        a.join_size(HeavyKeySketch.for_bytes(4096, seed=3))
    with pytest.raises(IncompatibleSketchError, match="width"):
        a.join_size(HeavyKeySketch.for_bytes(8192, seed=2))
    with pytest.raises(IncompatibleSketchError, match="buckets"):
        a.merge(HeavyKeySketch(a.buckets + 1, a.width, seed=2))
    with pytest.raises(IncompatibleSketchError, match="type"):
        a.join_size(ss.HashSketch(16, 3, seed=2))
    # the bucket count may differ in a join (the tables are exact; the residual rows align)
    c = HeavyKeySketch(a.buckets + 3, a.width, seed=2).update([1, 2])
    assert a.update([1]).join_size(c).value == 1


def test_reproducible_for_a_seed_and_an_order():
    keys = _zipf(5, 30000)
    one = HeavyKeySketch.for_bytes(2048, seed=8).update(keys)
    two = HeavyKeySketch.for_bytes(2048, seed=8)
    for part in np.array_split(keys, 7):  # batches do not matter, only the order of the rows
        two.update(part)
    assert one.to_bytes() == two.to_bytes() and one.draws > 0
    other_order = HeavyKeySketch.for_bytes(2048, seed=8).update(keys[::-1])
    assert other_order.to_bytes() != one.to_bytes()  # order-dependent bytes (documented)


def test_round_trip_is_byte_identical_and_continues_identically():
    keys = _zipf(6, 20000)
    sk = HeavyKeySketch.for_bytes(2048, seed=4).update(keys[:10000])
    back = ss.from_bytes(sk.to_bytes())
    assert isinstance(back, HeavyKeySketch) and back == sk and back.to_bytes() == sk.to_bytes()
    assert HeavyKeySketch.from_bytes(sk.to_bytes()) == sk
    sk.update(keys[10000:])
    back.update(keys[10000:])
    assert back.to_bytes() == sk.to_bytes()  # the draws' position travels in the bytes
    assert pickle.loads(pickle.dumps(sk)) == sk and copy.deepcopy(sk) == sk
    other = HeavyKeySketch.for_bytes(2048, seed=4)
    assert sk.join_size(other).value == back.join_size(other).value
    with pytest.raises(IncompatibleSketchError):
        HeavyKeySketch.from_bytes(ss.HashSketch(16, 3).to_bytes())


def test_counter_width_is_canonical():
    small = HeavyKeySketch.for_bytes(1024, seed=1).update([1, 2], weights=[5, 2**31 - 1])
    big = HeavyKeySketch.for_bytes(1024, seed=1).update([1, 2], weights=[5, 2**31])
    assert len(big.to_bytes()) > len(small.to_bytes())
    assert ss.from_bytes(big.to_bytes()).join_size(small).value == pytest.approx(5 * 5 + 2**31 * (2**31 - 1), rel=1e-15)


def test_float_weights():
    a = HeavyKeySketch.for_bytes(4096, seed=1, dtype="float64").update([1, 2, 2], weights=[0.5, 1.25, 2.0])
    b = HeavyKeySketch.for_bytes(4096, seed=1, dtype="float64").update([2], weights=2.0)
    assert a.join_size(b).value == 6.5
    assert ss.from_bytes(a.to_bytes()) == a
    with pytest.raises(KeyTypeError):
        HeavyKeySketch.for_bytes(4096).update([1], weights=[0.5])


def test_overflow_is_refused_and_leaves_the_sketch():
    sk = HeavyKeySketch.for_bytes(1024).update([1], weights=[2**62])
    before = sk.to_bytes()
    with pytest.raises(CounterOverflowError):
        sk.update([2], weights=[2**62])
    assert sk.to_bytes() == before


def test_merge_of_pieces_is_valid_and_close_to_one_stream():
    keys = _zipf(9, 40000)
    g = _zipf(10, 40000)
    one = HeavyKeySketch.for_bytes(4096, seed=2).update(keys)
    other = HeavyKeySketch.for_bytes(4096, seed=2).update(g)
    pieces = [HeavyKeySketch.for_bytes(4096, seed=2).update(p) for p in np.array_split(keys, 8)]
    merged = ss.union(*pieces)
    assert merged.total_weight == len(keys)
    truth = float(np.dot(np.bincount(keys, minlength=5000).astype(float), np.bincount(g, minlength=5000)))
    e1, e8 = one.join_size(other), merged.join_size(other)
    assert abs(e8.value - truth) <= 4 * e8.detail["se"] + 1e-9
    assert e1.contains(truth) or abs(e1.value - truth) < 0.05 * truth
    with pytest.raises(CorruptSketchError):
        ss.from_bytes(merged.to_bytes()[:-1])
