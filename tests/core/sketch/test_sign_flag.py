"""The sign flag of format version 4 (docs/format.md, "Version 4: the sign flag"): what
``Sketch.nonnegative`` knows survives ``to_bytes``/``from_bytes``, canonically, and older
bytes keep their old meaning."""

import struct
import zlib

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import skimsketch as ss
from skimsketch.format import header as fmt

from ..sketches import DOMAIN, FACTORIES, KINDS, fix_crc

SIGNED = [k for k in KINDS if k != "pair"]  # the kinds with a sign rule


def _as_version(blob: bytes, version: int) -> bytes:
    """``blob`` rewritten as an older format version would have written it (the sign flag cleared)."""
    return fix_crc(blob[:4] + struct.pack("<H", version) + blob[6:7] + bytes([blob[7] & ~fmt.FLAG_NONNEG]) + blob[8:])


# -- the property: the flag round-trips, canonically ---------------------------------------------------

KEY = st.one_of(st.none(), st.integers(0, DOMAIN - 1))
STEP = st.one_of(
    st.tuples(st.just("update"), st.lists(st.tuples(KEY, st.integers(-3, 3)), max_size=12)),
    st.tuples(st.sampled_from(["merge", "subtract"]), st.lists(st.tuples(KEY, st.integers(-3, 3)), max_size=6)),
)


@settings(max_examples=40, deadline=None)
@given(data=st.data())
@pytest.mark.parametrize("kind", SIGNED)
def test_the_flag_round_trips_canonically_and_follows_the_rule(kind, data):
    sk = FACTORIES[kind]()
    knows = True  # the rule, tracked independently: no negative weight of a non-null key, no subtract of data
    for op, rows in data.draw(st.lists(STEP, max_size=5)):
        keys, weights = [k for k, _ in rows], [w for _, w in rows]
        if op == "update":
            sk.update(keys, weights=weights)
            knows &= all(w >= 0 for k, w in rows if k is not None)
        else:
            other = sk.empty_like().update(keys, weights=weights)
            getattr(sk, op)(other)
            knows &= all(w >= 0 for k, w in rows if k is not None) and (op == "merge" or other.is_empty)
        blob = sk.to_bytes()
        back = ss.from_bytes(blob)
        assert sk.nonnegative == knows
        assert back.nonnegative == sk.nonnegative and back == sk
        assert back.to_bytes() == blob and bool(blob[7] & fmt.FLAG_NONNEG) == knows and blob[4] == fmt.VERSION


# -- the rule, case by case --------------------------------------------------------------------------

@pytest.mark.parametrize("kind", SIGNED)
def test_a_delete_reinserted_keeps_the_flag_clear_in_bytes(kind):
    plain = FACTORIES[kind]().update([1, 2, 3])
    reinserted = FACTORIES[kind]().update([1, 2, 3]).update([2], weights=-1).update([2])
    assert np.array_equal(plain.counters, reinserted.counters) and plain.total_weight == reinserted.total_weight
    assert plain.nonnegative and not reinserted.nonnegative
    assert ss.from_bytes(plain.to_bytes()).nonnegative and not ss.from_bytes(reinserted.to_bytes()).nonnegative
    # the bytes differ exactly in the flag
    a, b = plain.to_bytes(), reinserted.to_bytes()
    assert a[7] == b[7] | fmt.FLAG_NONNEG and a[8:-4] == b[8:-4] and a[:7] == b[:7]
    if reinserted.exact_mode:  # the entries are all >= 0, but the rule (not the entries) is recorded
        assert all(w > 0 for w in reinserted.exact_entries.values())


@pytest.mark.parametrize("kind", SIGNED)
def test_merges_and_the_null_weight(kind):
    pos, neg = FACTORIES[kind]().update([1, 2]), FACTORIES[kind]().update([3], weights=-1)
    assert not ss.from_bytes(pos.copy().merge(neg).to_bytes()).nonnegative
    assert not ss.from_bytes(neg.copy().merge(pos).to_bytes()).nonnegative
    assert ss.from_bytes(pos.copy().merge(pos).to_bytes()).nonnegative
    # a negative weight of a null key (the null weight) says nothing of the frequencies; a zero weight neither
    nulls = FACTORIES[kind]().update([1, None, 2], weights=[2, -4, 0])
    assert nulls.nonnegative and ss.from_bytes(nulls.to_bytes()).nonnegative
    # subtracting nothing keeps it; subtracting a sketch of only a null weight does not
    assert pos.copy().subtract(pos.empty_like()).nonnegative
    assert not pos.copy().subtract(pos.empty_like().update([None])).nonnegative
    # an emptied sketch is written as a fresh one but for the flag
    emptied = pos.copy().update([1, 2], weights=-1)
    assert emptied.is_empty and emptied.to_bytes()[8:-4] == pos.empty_like().to_bytes()[8:-4]
    assert not ss.from_bytes(emptied.to_bytes()).nonnegative


def test_float_weights_and_negative_zero():
    sk = ss.HashSketch(16, 3, dtype="float64").update([1, 2], weights=[0.5, -0.0])
    assert sk.nonnegative and ss.from_bytes(sk.to_bytes()).nonnegative
    sk.update([1], weights=-0.25)
    assert not ss.from_bytes(sk.to_bytes()).nonnegative


def test_note_nonnegative_is_recorded():
    sk = ss.HashSketch(16, 3).update([1, 2]).update([5], weights=-1).update([5])
    assert not sk.nonnegative
    assert ss.from_bytes(sk.note_nonnegative().to_bytes()).nonnegative


def test_an_agms_subsketch_keeps_what_its_sketch_knows():
    big = ss.AGMSSketch(16, 4, seed=3).update([1, 2, 3])
    assert big.subsketch(8, 2).nonnegative
    big.update([4], weights=-1)
    assert not big.subsketch(8, 2).nonnegative  # (it used to claim it: a new sketch's default)


def test_a_sliding_window_keeps_the_flag_of_its_panes():
    from skimsketch.stream import WindowedSketch

    w = WindowedSketch(ss.HashSketch(32, 3, seed=2), window=3, slide=1)
    for t in range(8):
        w.update([t, t + 1], [t, t])
    fresh = ss.HashSketch(32, 3, seed=2).update([k for t in range(5, 8) for k in (t, t + 1)])
    assert w.sketch_at().nonnegative and w.sketch_at().to_bytes() == fresh.to_bytes()  # expired panes subtracted
    w.update([100], [8], weights=[-1])
    assert not w.sketch_at().nonnegative
    assert not WindowedSketch.from_bytes(w.to_bytes()).sketch_at().nonnegative  # the streaming state's bytes
    for t in range(9, 12):  # the pane with the delete leaves the window
        w.update([t], [t])
    assert w.sketch_at().nonnegative and WindowedSketch.from_bytes(w.to_bytes()).sketch_at().nonnegative


# -- bytes: versions, readers, refusals ------------------------------------------------------------------

@pytest.mark.parametrize("kind", SIGNED)
def test_older_versions_keep_their_meaning(kind):
    sk = FACTORIES[kind]().update([1, 2, 3])
    version = 3 if getattr(sk, "search", None) == "virtual" else 2
    old = ss.from_bytes(_as_version(sk.to_bytes(), version))
    # counter mode: unknown (only an empty sketch knows); exact mode: the entries tell
    assert old.nonnegative == sk.exact_mode
    assert not ss.from_bytes(_as_version(FACTORIES[kind]().update([1, 2], weights=[1, -1]).to_bytes(),
                                         version)).nonnegative
    empty = FACTORIES[kind]().update([1], weights=-1).update([1])
    assert ss.from_bytes(_as_version(empty.to_bytes(), version)).nonnegative  # empty: known, as before
    assert old.to_bytes()[4] == fmt.VERSION  # rewritten as version 4, with what it knew


@pytest.mark.parametrize("version", [1, 2, 3])
def test_versions_before_4_refuse_the_flag_bit_and_4_refuses_the_next(version):
    """The readers of versions 1 to 3 refused an unknown flag bit: bit 4 is reserved there (docs/format.md)."""
    kind = "skimmed_virtual" if version == 3 else "hash"
    blob = FACTORIES[kind]().update([1, 2]).to_bytes()
    if version == 1:
        blob = fix_crc(blob[:32] + bytes([1, 0]) + blob[34:64] + np.frombuffer(blob, "<i4", -1, 64)[:-1]
                       .astype("<i8").tobytes() + blob[-4:])  # int64 counters, no key domain
    assert blob[7] & fmt.FLAG_NONNEG
    with pytest.raises(ss.CorruptSketchError, match="reserved header bits are set"):
        ss.from_bytes(fix_crc(blob[:4] + struct.pack("<H", version) + blob[6:]))
    with pytest.raises(ss.CorruptSketchError, match="reserved header bits are set"):
        ss.from_bytes(fix_crc(blob[:7] + bytes([blob[7] | 32]) + blob[8:]))


def test_the_flag_is_refused_where_it_cannot_hold():
    neg_total = ss.HashSketch(16, 3).update([1], weights=-1).to_bytes()
    with pytest.raises(ss.CorruptSketchError, match="the total weight is negative"):
        ss.from_bytes(fix_crc(neg_total[:7] + bytes([neg_total[7] | fmt.FLAG_NONNEG]) + neg_total[8:]))
    neg_entry = ss.HashSketch(16, 3, exact=True).update([1, 2], weights=[3, -1]).to_bytes()
    with pytest.raises(ss.CorruptSketchError, match="exact-mode entry is negative"):
        ss.from_bytes(fix_crc(neg_entry[:7] + bytes([neg_entry[7] | fmt.FLAG_NONNEG]) + neg_entry[8:]))
    pair = ss.PairSketch(8, 4, 3, seed_a=1, seed_b=2).update([1], ["x"]).to_bytes()
    assert not pair[7] & fmt.FLAG_NONNEG and pair[4] == fmt.VERSION
    with pytest.raises(ss.CorruptSketchError, match="sign flag"):
        ss.from_bytes(fix_crc(pair[:7] + bytes([pair[7] | fmt.FLAG_NONNEG]) + pair[8:]))
    with pytest.raises(ValueError, match="has no sign flag"):
        head, counters, ext = fmt.decode(ss.HashSketch(16, 3).update([1]).to_bytes())
        head.version = 2
        fmt.encode(head, counters, ext, head.counter_width)


def test_crc_covers_the_flag():
    blob = ss.HashSketch(16, 3).update([1]).to_bytes()
    flipped = blob[:7] + bytes([blob[7] & ~fmt.FLAG_NONNEG]) + blob[8:]
    with pytest.raises(ss.CorruptSketchError, match="checksum"):
        ss.from_bytes(flipped)
    assert zlib.crc32(flipped[:-4]) != struct.unpack("<I", blob[-4:])[0]
