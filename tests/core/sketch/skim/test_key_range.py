"""The range-scanning unbounded skimmed sketch (``search="range"``, the ``for_bytes`` default before the virtual layout; old blobs keep it)."""

import numpy as np
import pytest

import skimsketch as ss
from skimsketch.sketch import layout as sketch_layout
from skimsketch.sketch.skim.candidates import MAX_SCAN_DOMAIN

from ...sketches import fix_crc, forget_signs


def zipf_keys(n, m, z, seed):
    rng = np.random.default_rng(seed)
    return (rng.zipf(z, n) - 1) % m


def test_for_bytes_default_scans_the_key_range_within_budget():
    for nb in (4096, 16384, 65536):
        s = ss.SkimmedSketch.for_bytes(nb, seed=1, exact=False, search="range")
        assert s.search == "range" and s.hier_width is None and s.key_range is None
        s.update(zipf_keys(5000, 1000, 1.2, 0))
        assert s.nbytes <= nb and len(s.to_bytes()) <= nb < len(s.to_bytes()) + 4 * s.depth
        assert len(s.to_bytes()) == 68 + 24 + 4 * s.width * s.depth
    assert ss.SkimmedSketch.for_bytes(4096, hier_depth=2).search == "prefix"


def test_range_scan_equals_the_domain_scan_over_the_same_keys():
    """Keys covering [0, m): the range sketch tests exactly the bounded sketch's candidates."""
    m = 1 << 12
    f = np.concatenate([zipf_keys(40_000, m, 1.3, 1), [0, m - 1]])
    g = np.concatenate([zipf_keys(40_000, m, 1.3, 2), [0, m - 1]])
    for w, d in ((128, 5), (300, 3)):
        r = ss.SkimmedSketch(w, d, seed=4, search="range")
        b = ss.SkimmedSketch(w, d, seed=4, domain=m)
        er = r.copy().update(f).join_size(r.copy().update(g))
        eb = b.copy().update(f).join_size(b.copy().update(g))
        assert (er.value, er.low, er.high) == (eb.value, eb.low, eb.high)
        assert er.detail["dense_f"] == eb.detail["dense_f"] > 0
        assert r.copy().update(f).heavy_hitters() == b.copy().update(f).heavy_hitters()


def test_offset_ranges_find_heavy_keys():
    base = 10**12
    k = base + zipf_keys(50_000, 100_000, 1.3, 3)
    s = ss.SkimmedSketch.for_bytes(16384, seed=2, search="range").update(k)
    uk, uc = np.unique(k, return_counts=True)
    t = s.skim().resolution  # the report's: its chance control is per query, stricter than peeling's per round
    hh = s.heavy_hitters()
    assert set(uk[uc >= 3 * t].tolist()) <= set(hh) and len(hh) >= 10
    assert set(hh) <= set(uk.tolist())
    assert s.key_range == (int(k.min()), int(k.max()))


def test_string_keys_and_wide_ranges_answer_as_the_hash_sketch_and_refuse_heavy_hitters():
    rng = np.random.default_rng(5)
    words = [f"w{i}" for i in rng.zipf(1.3, 20_000) % 5000]
    wide = np.concatenate([zipf_keys(20_000, 5000, 1.3, 6) * 1000, [MAX_SCAN_DOMAIN * 1000]])
    for keys in (words, wide):
        s = ss.SkimmedSketch(256, 5, seed=3, search="range").update(keys)
        h = ss.HashSketch(256, 5, seed=3).update(keys)
        assert not s.scans_keys
        assert s.join_size(s).value == h.join_size(h).value
        with pytest.raises(ValueError, match="cannot enumerate its keys.*search='prefix'"):
            s.heavy_hitters()
        with pytest.raises(ValueError, match="cannot enumerate"):
            s.heavy_hitters(100)
    assert ss.SkimmedSketch(256, 5, seed=3, search="range").heavy_hitters() == {}  # empty: nothing missed


def test_range_is_min_max_of_inserted_keys_merged_in_any_order():
    parts = [[5, 9, 7], [-3, 2], [100], []]
    sk = [ss.SkimmedSketch(64, 3, seed=1, search="range").update(p) for p in parts]
    assert [s.key_range for s in sk] == [(5, 9), (-3, 2), (100, 100), None]
    a = ss.union(*sk)
    assert a.key_range == (-3, 100)
    assert a.to_bytes() == ss.union(*sk[::-1]).to_bytes() == ss.SkimmedSketch(64, 3, seed=1, search="range").update(
        [k for p in parts for k in p]).to_bytes()
    # zero weights do not count, deletes keep the range until the sketch is all zero again
    z = ss.SkimmedSketch(64, 3, seed=1, search="range").update([1, 50], weights=[1, 0])
    assert z.key_range == (1, 1)
    z.update([1], weights=-1)
    assert z.key_range is None and z.is_empty and z == forget_signs(ss.SkimmedSketch(64, 3, seed=1, search="range"))
    n = ss.SkimmedSketch(64, 3, seed=1, search="range").update([None, None])
    assert n.key_range is None and n.null_weight == 2
    assert ss.SkimmedSketch(64, 3, seed=1, search="range").update([1, 2], weights=0).key_range is None


def test_range_round_trips_and_corrupt_extensions_are_refused():
    s = ss.SkimmedSketch(32, 3, seed=2, search="range").update([-(2**63), 2**63 - 1, 5])
    b = s.to_bytes()
    back = ss.from_bytes(b)
    assert back == s and back.key_range == (-(2**63), 2**63 - 1) and back.search == "range"
    assert ss.from_bytes(ss.SkimmedSketch(32, 3, seed=2, search="range").to_bytes()).key_range is None
    ext = 64
    good = sketch_layout.encode_key_range((3, 9))
    assert len(good) == sketch_layout.KEY_RANGE_BYTES == 24 and good[:4] == b"KRNG"

    def patched(blob, off, raw):
        return fix_crc(blob[: ext + off] + raw + blob[ext + off + len(raw):])

    one = ss.SkimmedSketch(32, 3, seed=2, search="range").update([3, 9]).to_bytes()
    for off, raw, msg in ((0, b"KRNX", "magic"), (4, b"\x02", "version"), (5, b"\x02", "reserved"),
                          (6, b"\x01", "reserved"), (8, (10).to_bytes(8, "little"), "empty"),
                          (5, b"\x00", "no range")):
        with pytest.raises(ss.CorruptSketchError, match=msg):
            ss.from_bytes(patched(one, off, raw))
    strs = ss.SkimmedSketch(32, 3, seed=2, search="range").update(["a"]).to_bytes()
    with pytest.raises(ss.CorruptSketchError, match="string keys"):
        ss.from_bytes(patched(strs, 5, b"\x01"))


def test_search_parameter_is_checked_and_part_of_compatibility():
    with pytest.raises(ValueError, match="search must be one of"):
        ss.SkimmedSketch(64, 3, search="scan")
    with pytest.raises(ValueError, match="only applies to unbounded keys"):
        ss.SkimmedSketch(64, 3, domain=100, search="range")
    with pytest.raises(ValueError, match="only apply to search='prefix'"):
        ss.SkimmedSketch(64, 3, search="range", hier_width=16)
    r = ss.SkimmedSketch(64, 3, seed=1, search="range").update([1])
    p = ss.SkimmedSketch(64, 3, seed=1, search="prefix").update([1])
    for a, b in ((r, p), (p, r)):
        with pytest.raises(ss.IncompatibleSketchError) as e:
            a.copy().merge(b)
        assert e.value.field == "search"


def test_exact_mode_range_is_the_entries_and_conversion_keeps_it():
    s = ss.SkimmedSketch.for_bytes(4096, seed=3, search="range")
    assert s.exact_mode and s.search == "range"
    s.update([10, 20, 30]).update([10], weights=-1)
    assert s.key_range == (20, 30)  # exact mode: the keys held
    back = ss.from_bytes(s.to_bytes())
    assert back == s and back.key_range == (20, 30) and back.search == "range"
    cap = s.exact_capacity
    big = np.arange(100, 100 + cap + 5)
    converted = s.copy().update(big)
    assert not converted.exact_mode and converted.key_range == (20, int(big[-1]))
    # the converted sketch is byte-identical to a counter-mode build of the same data (which saw a delete)
    plain = forget_signs(ss.SkimmedSketch.for_bytes(4096, seed=3, exact=False, search="range").update([20, 30]).update(big))
    assert converted.to_bytes() == plain.to_bytes()
    # a counter-mode sketch merged into an exact one: counters, ranges united
    m = ss.SkimmedSketch.for_bytes(4096, seed=3, search="range").update([-7]).merge(plain)
    assert not m.exact_mode and m.key_range == (-7, int(big[-1]))
