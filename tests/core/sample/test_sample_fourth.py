"""Join samples, fourth pass of issue 33 (the core's half): batched updates, crafted blobs, labels, legacy blobs."""

from __future__ import annotations

import numpy as np
import pytest

import skimsketch as ss
from skimsketch.sample import totals as totals_mod


# -- item 4: building in batches is near-linear, and exactly the eager result ------------------------------
def test_many_small_updates_merge_the_table_a_logarithmic_number_of_times(monkeypatch):
    merges = []
    real = totals_mod.Totals._merge

    def counted(self):
        if self._pending:
            merges.append(self._pending_n)
        real(self)

    monkeypatch.setattr(totals_mod.Totals, "_merge", counted)
    s = ss.JoinSample.for_bytes(4096).update(np.arange(300_000))
    merges.clear()
    for k in range(300_000, 300_500):  # one key at a time into a 300K-key table
        s.update([k])
    assert merges == []  # nothing re-merged the table
    assert s.n_keys == 300_500 and len(merges) == 1  # the query merged once
    keys = np.random.default_rng(1).permutation(1_000_000)
    s = ss.JoinSample.for_bytes(4096)
    merges.clear()
    for c in np.array_split(keys, 200):
        s.update(c)
    assert len(merges) <= 8  # doubling: about log2(200) merges, not 200
    assert s.to_bytes() == ss.JoinSample.for_bytes(4096).update(keys).to_bytes()


@pytest.mark.parametrize("dtype", ["int64", "float64"])
def test_batched_totals_equal_the_eager_sums_in_order(dtype):
    rng = np.random.default_rng(3)
    s = ss.JoinSample.for_bytes(1024, dtype=dtype)
    want: dict = {}
    for i in range(40):
        k = rng.integers(0, 70_000 if i % 3 else 30, rng.integers(1, 6000))
        w = rng.normal(size=len(k)) * 10 if dtype == "float64" else rng.integers(-2, 4, len(k))
        s.update(k, w)
        fp = ss.sample.rank.fingerprints(np.asarray(k, dtype=np.int64), 0)
        batch: dict = {}
        for f, x in zip(fp.tolist(), w.tolist()):  # a batch is summed first (bincount order), then added
            batch[f] = batch.get(f, 0) + x
        for f, x in batch.items():
            want[f] = want.get(f, 0) + x
    want = {f: x for f, x in want.items() if x != 0}
    assert s.n_keys == len(want)
    fps, tot = s.sample_items()
    for f, t in zip(fps.tolist(), tot.tolist()):
        assert t == want[f]


def test_an_overflow_in_a_later_batch_is_raised_by_that_update_and_changes_nothing():
    s = ss.JoinSample.for_bytes(1024).update([1, 2], [2**62, 5])
    before = s.copy()
    s.update([3], [7])
    with pytest.raises(ss.CounterOverflowError, match="overflow"):
        s.update([1], [2**62])  # 2**63 does not fit int64
    assert s.to_bytes() == before.update([3], [7]).to_bytes()
    f = ss.JoinSample.for_bytes(1024, dtype="float64").update([1], [1e308])
    with pytest.raises(ss.CounterOverflowError, match="infinity"):
        f.update([1], [1e308])
    assert f.total_weight == 1e308  # unchanged; its sample is stored at scale exponent 484 - 1024
    assert f.frequency(1).value == 1e308 and f.scale == -540


def test_deletes_that_empty_a_batched_table_free_its_key_domain():
    s = ss.JoinSample.for_bytes(1024).update([1, 2, 3])
    s.update([1, 2, 3], -1)
    assert s.key_domain is None and s.n_keys == 0
    s.update(["a"])  # the table holds no integer key any more
    assert s.key_domain == "str"
    with pytest.raises(ss.KeyTypeError, match="holds string/bytes keys, got integer keys"):
        s.update([5])


# -- item 5: a crafted blob is refused before it allocates for the entries it claims -----------------------
def _crafted(n_claim: int, fp_bytes: int, totals: bytes, float_totals: bool = False, parts: int = 1) -> bytes:
    """A blob with a valid checksum claiming ``n_claim`` entries over an all-zero fingerprint section."""
    import struct

    from skimsketch.format import header as fmt

    ext = struct.pack("<4sBB2sIIdQ", b"SMPL", 2, 1 if parts > 1 else 0, b"\0\0", n_claim, parts, 0.5, n_claim + 1)
    if parts > 1:
        ext += bytes([1] + [0] * (-(-parts // 8) - 1))
    ext += struct.pack("<BI", 0, fp_bytes) + bytes(fp_bytes) + totals
    head = fmt.Header(5, 1 << 30, 1, 0, None, float_totals, 0.0, n_claim + 1, 0, False, counter_width=8,
                      key_domain="int")
    return fmt.encode(head, np.zeros(0), ext, 8)


@pytest.mark.parametrize("case", ["varint", "float", "partial", "varint-long"])
def test_a_crafted_blob_claiming_millions_of_entries_is_refused_before_allocating(case):
    import tracemalloc

    n = 16_000_000
    blob = {"varint": lambda: _crafted(n, 2_000_000, b"\x02" * 10),
            "float": lambda: _crafted(n, 2_000_000, bytes(8), float_totals=True),
            "partial": lambda: _crafted(n, 2_000_000, b"\x02" * 10, parts=2),
            "varint-long": lambda: _crafted(1000, 200, b"\x02" * 10_001)}[case]()
    tracemalloc.start()
    try:
        with pytest.raises(ss.CorruptSketchError, match="totals section of"):
            ss.from_bytes(blob)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 4 * len(blob) + (1 << 20)  # before: 1.8 GB for the 2 MB blob


def test_the_largest_entry_count_the_bytes_allow_still_reads():
    blob = _crafted(8 * 1000, 1000, b"\x02" * 8000)  # 8000 one-bit fingerprints, 8000 one-byte totals
    s = ss.from_bytes(blob)
    assert len(s.sample_items()[0]) == 8000


# -- item 10: legacy (layout-1) samples -----------------------------------------------------------------------
def _legacy(name: str) -> ss.JoinSample:
    from tests.core.sample import sample_golden

    return ss.from_bytes(sample_golden.legacy_path(name).read_bytes())


def test_a_layout1_partial_piece_reads_round_trips_and_joins_legacy_samples():
    piece = _legacy("piece")
    assert piece.partition == ((1,), 3) and piece.finished
    again = ss.from_bytes(piece.to_bytes())  # layout 2, flags partial | legacy
    assert again == piece and again.to_bytes()[64 + 5] == 3
    assert again.self_join_size().value == pytest.approx(92996.37291385506, rel=1e-9)  # the previous release's
    assert piece.join_size(_legacy("zipf_g")).value == again.join_size(_legacy("zipf_g")).value
    new = ss.JoinSample.for_bytes(1024, seed=42, partition=(0, 3)).update([1])
    with pytest.raises(ss.IncompatibleSketchError, match="rank hash differs"):
        piece.copy().merge(new)


def test_a_complete_layout1_piece_refuses_new_rows_naming_the_remedy():
    import struct

    from skimsketch.format import header as fmt

    ext = struct.pack("<4sBB2sIIdQ", b"SMPL", 1, 1, b"\0\0", 1, 2, float("inf"), 1) + b"\x01"
    ext += struct.pack("<q", 7) + struct.pack("<i", 3)
    head = fmt.Header(5, 8, 1, 0, None, False, 0.0, 3, 0, False, counter_width=4, key_domain="int")
    piece = ss.from_bytes(fmt.encode(head, np.zeros(0), ext, 4))
    assert piece.partition == ((0,), 2) and piece.finished and piece.frequency(7).value == 3
    with pytest.raises(ValueError, match="cannot update a layout-1 partial piece.*merge it with the other pieces"):
        piece.update([7])


@pytest.mark.parametrize("legacy_first", [True, False])
def test_an_empty_legacy_sample_joins_and_merges_a_new_one(legacy_first):
    empty = _legacy("empty")
    assert empty.n_keys == 0
    new = ss.JoinSample.for_bytes(empty.budget, seed=empty.seed).update([1, 2, 2])
    a, b = (empty, new) if legacy_first else (new, empty)
    assert a.join_size(b).value == 0.0
    merged = a.copy().merge(b)
    assert merged.to_bytes()[64 + 5] == 0  # the new rank hash: it holds the new sample's keys
    assert merged.frequency(2).value == 2 and merged.join_size(new).value == 5.0
    with pytest.raises(ss.IncompatibleSketchError, match="rank hash differs"):
        _legacy("zipf").join_size(new)


def test_the_sample_helpers_are_exported():
    assert ss.sample_max_entries(4096) == 3547 and issubclass(ss.SampleMergeError, ss.IncompatibleSketchError)


# -- item 8: labels ---------------------------------------------------------------------------------------------
def test_finished_says_what_update_and_merge_do_whatever_the_size():
    """A sample read from bytes holding keys is finished, also when it kept every key (issue 33 item 7: the rule
    must not depend on the table's size); one without keys is not, and updates."""
    s = ss.JoinSample.for_bytes(1024).update([1, 2, 3])
    back = ss.from_bytes(s.to_bytes())
    assert back.finished and back.to_bytes() == s.to_bytes() and "finished" in repr(back)
    with pytest.raises(ValueError, match="cannot update a finished JoinSample"):
        back.update([4])
    empty = ss.from_bytes(ss.JoinSample.for_bytes(1024).update([None]).to_bytes())
    assert not empty.finished and empty.update([4]).n_keys == 1 and "building" in repr(empty)
    big = ss.from_bytes(ss.JoinSample.for_bytes(256).update(np.arange(1000)).to_bytes())
    assert big.finished and "finished" in repr(big)
