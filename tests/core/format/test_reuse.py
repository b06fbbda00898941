"""Stored summaries read again (skimsketch.format.reuse): equal bytes decode and prepare once, answers never go
stale, and the cache stays within its bound."""

import numpy as np
import pytest

import skimsketch as ss
from skimsketch.errors import CorruptSketchError
from skimsketch.format import reuse

MAKERS = {
    "sample": lambda: ss.JoinSample.for_bytes(2048, seed=3),
    "skimmed": lambda: ss.SkimmedSketch.for_bytes(2048, seed=3),
    "hash": lambda: ss.HashSketch.for_bytes(2048, seed=3),
    "agms": lambda: ss.AGMSSketch(32, 5, seed=3),
    "heavy": lambda: ss.HeavyKeySketch.for_bytes(2048, seed=3),
}


@pytest.fixture(autouse=True)
def fresh_cache():
    reuse.clear()
    yield
    reuse.set_limit(reuse.LIMIT)
    reuse.clear()


def _keys(seed, n=20_000, domain=5000):
    return np.random.default_rng(seed).zipf(1.2, n) % domain


def _pair(kind):
    return MAKERS[kind]().update(_keys(1)), MAKERS[kind]().update(_keys(2))


@pytest.mark.parametrize("kind", sorted(MAKERS))
def test_equal_bytes_give_equal_independent_objects_with_the_same_answers(kind):
    f, g = _pair(kind)
    bf, bg = f.to_bytes(), g.to_bytes()
    want = f.join_size(g)
    x1, x2 = ss.from_bytes(bf), ss.from_bytes(bytearray(bf))
    assert x1 is not x2 and x1 == x2 == ss.from_bytes(bf)
    assert reuse.stats()["hits"] >= 2
    for x in (x1, x2):
        got = x.join_size(ss.from_bytes(bg))
        assert (got.value, got.low, got.high) == (want.value, want.low, want.high)


def test_a_skimmed_sketch_read_again_skims_once():
    f, g = _pair("skimmed")
    bf, bg = f.to_bytes(), g.to_bytes()
    ss.from_bytes(bf).join_size(ss.from_bytes(bg))
    a, b = ss.from_bytes(bf), ss.from_bytes(bg)
    assert "skim" in a._cache and "skim" in b._cache  # prepared by the first pair's objects
    assert a.skim() is ss.from_bytes(bf).skim()


@pytest.mark.parametrize("kind", ["skimmed", "hash", "agms"])
def test_a_sketch_updated_after_a_join_answers_anew(kind):
    f, g = _pair(kind)
    bf, bg = f.to_bytes(), g.to_bytes()
    x, y = ss.from_bytes(bf), ss.from_bytes(bg)
    before = x.join_size(y)
    more = _keys(3, 5000)
    x.update(more)
    want = f.copy().update(more).join_size(g)
    got = x.join_size(y)
    assert (got.value, got.low, got.high) == (want.value, want.low, want.high)
    assert got.value != before.value
    again = ss.from_bytes(bf).join_size(ss.from_bytes(bg))  # the stored bytes still answer as before
    assert (again.value, again.low, again.high) == (before.value, before.low, before.high)
    y.merge(ss.from_bytes(bf))
    assert y.join_size(x).value == g.copy().merge(f).join_size(f.copy().update(more)).value


def test_a_sample_updated_after_a_join_answers_anew():
    """Of the samples read from bytes only one without keys updates (a finished one holding keys refuses,
    complete or not: docs/sample.md); its kept copy must not answer for it afterwards."""
    f = ss.JoinSample.for_bytes(4096, seed=3).update([None])
    g = ss.JoinSample.for_bytes(4096, seed=3).update([1, 3, 3])
    bf, bg = f.to_bytes(), g.to_bytes()
    x = ss.from_bytes(bf)
    assert x.join_size(ss.from_bytes(bg)).value == 0.0
    x.update([3, 3, 3])
    assert x.join_size(ss.from_bytes(bg)).value == 6.0
    assert ss.from_bytes(bf).join_size(ss.from_bytes(bg)).value == 0.0
    assert ss.from_bytes(bf).n_keys == 0
    y = ss.from_bytes(bg)
    with pytest.raises(ValueError, match="cannot update a finished JoinSample"):
        y.update([1])
    assert ss.from_bytes(bg).sample_items()[1].sum() == 3


def test_bytes_with_a_kept_summarys_length_and_checksum_are_still_checked():
    blob = _pair("sample")[0].to_bytes()
    ss.from_bytes(blob)
    forged = bytearray(blob)
    forged[len(forged) // 2] ^= 0x10
    with pytest.raises(CorruptSketchError):
        ss.from_bytes(bytes(forged))


def test_the_cache_keeps_within_its_bound_and_can_be_turned_off():
    reuse.set_limit(40_000)
    blobs = [MAKERS["hash"]().update(_keys(s, 2000)).to_bytes() for s in range(8)]
    for b in blobs:
        ss.from_bytes(b)
    st = reuse.stats()
    assert st["bytes"] <= 40_000 and st["summaries"] == st["bytes"] // len(blobs[0])
    reuse.set_limit(0)
    assert reuse.stats()["summaries"] == 0
    assert ss.from_bytes(blobs[0]) == ss.from_bytes(blobs[0])
    assert reuse.stats()["summaries"] == 0
    with pytest.raises(ValueError, match="nbytes"):
        reuse.set_limit(-1)
