"""The virtual layout (``search="virtual"``, the ``for_bytes`` default): every key type is
skimmed as a signed id in ``[0, 2**lg)`` (skimsketch/sketch/skim/virtual.py)."""

import numpy as np
import pytest

import skimsketch as ss
from skimsketch.sketch.skim.virtual import virtual_ids

from ...sketches import forget_signs

pa = pytest.importorskip("pyarrow")
pd = pytest.importorskip("pandas")

M = 1 << 16


def zipf_pair(seed, n=400_000, z=1.5, shift=20):
    """Frequencies of two Zipf streams over [0, M), the second shifted (the paper's setup, smaller)."""
    rng = np.random.default_rng([seed, 17])
    p = 1.0 / np.arange(1, M + 1) ** z
    p /= p.sum()
    f = rng.multinomial(n, p)
    g = np.roll(rng.multinomial(n, p), shift)
    return f, g


def as_type(keys: np.ndarray, how: str):
    if how == "int":
        return keys
    if how == "spread":  # 64-bit ids spread over the whole range (a bijection of the small ints)
        return (keys.astype(np.uint64) * np.uint64(0x9E3779B97F4A7C15)).view(np.int64)
    strings = np.char.add("key-", np.char.zfill(keys.astype(str), 7))
    if how == "str":
        return strings.astype(object)
    if how == "bytes":
        return np.array([s.encode() for s in strings.tolist()], dtype=object)
    if how == "pandas":
        return pd.Series(strings.astype(object))
    if how == "arrow":
        return pa.array(strings.tolist())
    raise AssertionError(how)


def errors(how, seeds=range(6), nbytes=16384, z=1.5):
    out, dense = [], []
    for seed in seeds:
        f, g = zipf_pair(seed, z=z)
        nz_f, nz_g = np.flatnonzero(f), np.flatnonzero(g)
        a = ss.SkimmedSketch.for_bytes(nbytes, seed=seed + 1).update(as_type(nz_f, how), weights=f[nz_f])
        b = a.empty_like().update(as_type(nz_g, how), weights=g[nz_g])
        assert a.search == "virtual" and not a.exact_mode
        e = a.join_size(b)
        exact = float(np.dot(f.astype(float), g))
        out.append(abs(e.value - exact) / exact)
        dense.append(e.detail["dense_f"])
    return float(np.mean(out)), float(np.median(dense))


def test_every_string_container_gives_the_same_bytes():
    keys = np.random.default_rng(2).zipf(1.3, 20_000) % 5000
    blobs = {how: ss.SkimmedSketch.for_bytes(4096, seed=1).update(as_type(keys, how)).to_bytes()
             for how in ("str", "bytes", "pandas", "arrow")}
    assert len(set(blobs.values())) == 1


def check_key_types_match_small_integers(seeds, tolerance, z):
    base, dense_int = errors("int", seeds, z=z)
    hash_err = []
    for seed in seeds:
        f, g = zipf_pair(seed, z=z)
        a = ss.HashSketch.for_bytes(16384, seed=seed + 1).update(np.arange(M), weights=f)
        b = a.empty_like().update(np.arange(M), weights=g)
        hash_err.append(abs(a.join_size(b).value - np.dot(f.astype(float), g)) / np.dot(f.astype(float), g))
    assert dense_int >= 20 and base < 0.5 * np.mean(hash_err)  # skimming pays on this workload
    for how in ("spread", "str"):
        err, dense = errors(how, seeds, z=z)
        assert dense >= 20, how
        assert err <= tolerance * base, (how, err, base)


@pytest.mark.slow  # 16 seeds take about 40 s; the 200-seed siblings below hold the 1.25x claim
def test_every_key_type_is_skimmed_about_as_well_as_small_integers():
    """Quick version (16 seeds, so a looser 2x; Zipf 1.5, where strings without skimming were
    6x worse): the key types differ only by which random map sends keys to ids. (8 seeds gave
    spread / int = 1.6 with the old skim floor and 2.02 with the justified one; 16 seeds 1.87 and
    1.47 for strings: the per-seed errors vary tenfold.)"""
    check_key_types_match_small_integers(range(16), 2.0, z=1.5)


@pytest.mark.slow
@pytest.mark.parametrize("z", [1.2, 1.5])
def test_every_key_type_is_skimmed_as_well_as_small_integers(z):
    # the key types are equal in distribution (another random map each): 200 seeds keep the
    # noise of the ratio of two mean errors near 10 %, under the 1.25x claim (64 seeds gave 1.26)
    check_key_types_match_small_integers(range(200), 1.25, z=z)


def test_the_sketch_is_the_hash_sketch_of_the_signed_virtual_ids():
    keys = np.array([5, -7, 2**62, 5, 9], dtype=np.int64)
    s = ss.SkimmedSketch(64, 4, seed=3, virtual_lg=12).update(keys, weights=[1, 2, 3, 4, -5])
    ids, signs = virtual_ids(keys, 3, 12)
    h = ss.HashSketch(64, 4, seed=3).update(ids, weights=np.array([1, 2, 3, 4, -5]) * signs)
    assert np.array_equal(s.counters, h.counters)
    assert s.total_weight == 1 + 2 + 3 + 4 - 5


def test_long_unweighted_batches_are_counted_per_id_with_the_same_counters():
    keys = np.random.default_rng(0).integers(0, 5000, 300_000)
    s = ss.SkimmedSketch(128, 5, seed=4, virtual_lg=10).update(keys)  # 300K keys >= 2**10 / 4: counted per id
    t = ss.SkimmedSketch(128, 5, seed=4, virtual_lg=10)
    for part in np.array_split(keys, 300):  # 1000-key batches: hashed key by key
        t.update(part)
    assert s == t and s.to_bytes() == t.to_bytes()


def test_merges_over_any_partitioning_and_deletes_are_exact():
    rng = np.random.default_rng(5)
    keys = np.char.add("u", rng.zipf(1.3, 50_000).astype(str)).astype(object)
    whole = ss.SkimmedSketch.for_bytes(4096, seed=9).update(keys)
    parts = [whole.empty_like().update(p) for p in np.array_split(keys[rng.permutation(len(keys))], 7)]
    merged = parts[3].copy()
    for p in parts[:3] + parts[4:]:
        merged.merge(p)
    assert merged.to_bytes() == whole.to_bytes()
    extra = np.array(["gone-1", "gone-2"] * 500, dtype=object)
    with_extra = whole.copy().update(extra).update(extra, weights=-1)
    assert with_extra.to_bytes() == forget_signs(whole).to_bytes()  # the same, but it saw deletes


def test_exact_mode_converts_to_the_virtual_counters_and_joins_across_modes():
    small = ["k1", "k2", "k1", "k3"]
    exact = ss.SkimmedSketch.for_bytes(16384, seed=2).update(small)
    assert exact.exact_mode and exact.search == "virtual"
    counters = ss.SkimmedSketch.for_bytes(16384, seed=2, exact=False).update(small)
    assert np.array_equal(exact.counters, counters.counters)
    rng = np.random.default_rng(1)
    big = np.char.add("k", rng.zipf(1.5, 200_000).astype(str)).astype(object)
    other = ss.SkimmedSketch.for_bytes(16384, seed=2).update(big)
    assert not other.exact_mode
    truth = ss.exact_join_size(small, big)
    est = exact.join_size(other)  # the exact side's entries are summed per virtual id, as skimming finds them
    assert est.low <= truth <= est.high and abs(est.value - truth) <= 0.02 * truth + 5
    assert ss.from_bytes(exact.to_bytes()) == exact and exact.to_bytes()[4] == 4  # format version 4 (3 before the sign flag)


def test_heavy_hitters_name_only_the_keys_they_are_given():
    rng = np.random.default_rng(3)
    heavy = {"alice": 5000, "bob": 3000, "carol": 2000}
    keys = np.concatenate([np.repeat(list(heavy), list(heavy.values())),
                           np.char.add("x", rng.integers(0, 50_000, 100_000).astype(str))]).astype(object)
    s = ss.SkimmedSketch.for_bytes(16384, seed=5).update(keys)
    with pytest.raises(ValueError, match="virtual ids.*candidates="):
        s.heavy_hitters()
    found = s.heavy_hitters(candidates=["alice", "bob", "carol", "dave", "x17"])
    assert set(found) == {ss.canonical_key(k) for k in heavy}
    for k, w in heavy.items():
        assert abs(found[ss.canonical_key(k)] - w) <= 0.05 * w
        f = s.frequency(k)
        assert f.low <= w <= f.high
    assert set(s.heavy_hitters(2500, candidates=list(heavy))) == {ss.canonical_key("alice"), ss.canonical_key("bob")}
    with pytest.raises(ss.KeyTypeError, match="never match"):
        s.heavy_hitters(candidates=[1, 2])


def test_virtual_collisions_leave_the_estimate_unbiased():
    """A tiny virtual domain (2**10 ids for 3000 keys): colliding keys only add zero-mean terms."""
    rng = np.random.default_rng(11)
    keys = np.arange(3000)
    f, g = rng.poisson(20, 3000), rng.poisson(20, 3000)
    truth = float(np.dot(f, g))
    est = [ss.SkimmedSketch(4096, 5, seed=s, virtual_lg=10).update(keys, weights=f).join_size(
        ss.SkimmedSketch(4096, 5, seed=s, virtual_lg=10).update(keys, weights=g)).value for s in range(40)]
    # each estimate's sd is about sqrt(F2 F2 / 2**10) ~ 4% of the truth; the mean of 40 within 3 sd of it
    assert abs(np.mean(est) - truth) <= 3 * np.std(est) / np.sqrt(40) + 1e-6 * truth


def test_parameters_are_checked_and_old_layouts_still_build():
    with pytest.raises(ValueError, match="virtual_lg must be an int in \\[10, 22\\]"):
        ss.SkimmedSketch(64, 3, virtual_lg=23)
    with pytest.raises(ValueError, match="virtual_lg only applies"):
        ss.SkimmedSketch(64, 3, search="range", virtual_lg=12)
    a, b = ss.SkimmedSketch(64, 3, virtual_lg=12), ss.SkimmedSketch(64, 3, virtual_lg=14)
    with pytest.raises(ss.IncompatibleSketchError, match="virtual_lg"):
        a.merge(b)
    assert ss.SkimmedSketch.for_bytes(4096, search="range").search == "range"
    assert ss.SkimmedSketch.for_bytes(4096).virtual_lg == 20
