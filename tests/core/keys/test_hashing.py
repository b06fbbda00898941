"""The hash family: pinned vectors, agreement with the documented definition, properties."""

import hashlib

import numpy as np
import pytest

import skimsketch as ss
from skimsketch.keys.hashing import AGMS_WORD_BASE, HashFamily, family

from ..sketches import M64, ref_mix

G = 0x9E3779B97F4A7C15


def ref_word(seed, x, j):
    """word_j(x) transcribed from the hashing module's docstring, in plain Python ints."""
    state = [ref_mix(seed + (s + 1) * G) for s in range(4)]
    a = state[0]
    b = ref_mix(state[0] + G)
    x &= M64
    lo, hi = x & 0xFFFFFFFF, x >> 32
    fold = lo ^ ((((a * hi + b) & M64) >> 32) & 0xFFFFFFFF)
    c0, c1 = fold & 0xFFFF, fold >> 16
    out = 0
    for i, c in enumerate((c0, c1, c0 + c1)):
        out ^= ref_mix(state[i + 1] + (j * 2**18 + c + 1) * G)
    return out


KEYS = np.array([0, 1, 2, 12345, -1, 2**40 + 3, -(2**63), 2**63 - 1], dtype=np.int64)


def test_pinned_word_vectors():
    got = [hex(x) for x in family(7).words(KEYS, 1)[:, 0]]
    assert got == ['0xa68aaca1f4a68b15', '0x876d1dbadbf16826', '0x2074d43057a199f6', '0x253335b21731cac3',
                   '0xce663ac078e32f8c', '0xdcc2c7ad5faa4f7', '0xea9ace3a4bbc30b0', '0x3996c753cfb7a593']


def test_pinned_buckets_and_signs():
    b, s = family(7).buckets_signs(KEYS, 1000, 3)
    assert b.tolist() == [[911, 718, 684, 181, 944, 671, 591, 622], [301, 58, 253, 290, 612, 107, 832, 449],
                          [64, 933, 641, 832, 851, 661, 591, 944]]
    assert s.tolist() == [[-1, -1, 1, 1, 1, -1, 1, -1], [-1, -1, 1, 1, -1, 1, -1, 1], [-1, 1, 1, 1, 1, 1, -1, 1]]


def test_pinned_agms_bits_and_fingerprints_and_bytes():
    assert family(7).agms_sign_bits(KEYS[:3], 0, 8).tolist() == [
        [1, 0, 0, 1, 0, 1, 0, 0], [1, 0, 0, 1, 0, 1, 0, 1], [0, 1, 1, 1, 0, 1, 0, 0]]
    assert ss.fingerprint64(b"skim") == 815987628662419427
    assert ss.fingerprint64("héllo".encode()) == 5634419923683204234
    # format version 4 bytes (int32 counters, key domain, sign flag); one key domain per sketch. The counters are
    # also pinned against format-version-1 blobs in tests/core/format/golden (int and string keys)
    ints, strs = ss.HashSketch(64, 3, 7).update([1, 2, 3]), ss.HashSketch(64, 3, 7).update(["a", b"b"])
    assert hashlib.sha256(ints.to_bytes()).hexdigest() == "f7b5dccd0794eac35eade59bebb7f0af964be9bd2a278fe77cb1853479d0d9d3"
    assert hashlib.sha256(strs.to_bytes()).hexdigest() == "a72dced4272380362e23b01767c7d9d1f9bb5d991fa6b3c2fd94e9f4ba489c27"


@pytest.mark.parametrize("seed", [0, 1, 2**63 + 5, 2**64 - 1])
def test_numpy_path_matches_documented_definition(seed):
    rng = np.random.default_rng(seed % 1000)
    keys = np.concatenate([KEYS, rng.integers(-(2**63), 2**63 - 1, 40, dtype=np.int64)])
    fam = HashFamily(seed)
    words = fam.words(keys, 6)
    for i, x in enumerate(keys.tolist()):
        for j in range(6):
            assert int(words[i, j]) == ref_word(seed, x, j)
    # the hash-sketch rows and AGMS bits are documented bit fields of those words
    width, depth = 777, 5
    b, s = fam.buckets_signs(keys, width, depth)
    for i, x in enumerate(keys.tolist()[:10]):
        for p in range(depth):
            u = (ref_word(seed, x, p >> 1) >> (32 * (p & 1))) & 0xFFFFFFFF
            assert b[p, i] == ((u & 0x7FFFFFFF) * width) >> 31
            assert s[p, i] == (1 if u >> 31 == 0 else -1)
        bits = fam.agms_sign_bits(keys[i : i + 1], 2, 70)[0]
        for q in (0, 63, 64, 69):
            assert bits[q] == (ref_word(seed, x, AGMS_WORD_BASE + 2 * 2**12 + (q >> 6)) >> (q & 63)) & 1


def test_scalar_and_batch_paths_agree():
    """frequency() hashes one key at a time; update() hashes chunks: same cells."""
    keys = np.arange(100_000, dtype=np.int64) * 7919
    fam = family(3)
    whole = fam.signed_cells(keys, 300, 5)
    for i in (0, 1, 32767, 32768, 99_999):
        assert np.array_equal(fam.signed_cells(keys[i : i + 1], 300, 5)[0], whole[i])


def test_buckets_uniform_and_signs_balanced():
    keys = np.arange(200_000, dtype=np.int64)
    b, s = family(11).buckets_signs(keys, 100, 4)
    assert b.min() == 0 and b.max() == 99
    counts = np.stack([np.bincount(row, minlength=100) for row in b])
    # chi-square-ish: every bucket within 6 sigma of 2000 (sigma ~ 44.5)
    assert np.abs(counts - 2000).max() < 6 * 45, counts
    assert np.abs(s.sum(axis=1)).max() < 6 * np.sqrt(200_000)
    # tables are different functions
    assert (b[0] == b[1]).mean() < 0.02


def test_fold_injective_on_small_keys():
    fam = family(5)
    keys = np.arange(-(2**16), 2**18, dtype=np.int64)
    small = keys[keys >= 0]
    assert len(np.unique(fam.fold(small))) == len(small)
    neg = keys[keys < 0]
    assert len(np.unique(fam.fold(neg))) == len(neg)


def test_four_wise_products_are_unbiased_on_structured_keys():
    """Simple tabulation would give xi(a)xi(b)xi(c)xi(d) = +1 for 'rectangles' of
    keys; the derived character removes that bias."""
    fam = family(0)
    x0 = np.array([3, 77])
    x1 = np.array([5, 9])
    rect = np.array([(i << 16) | j for i in x1 for j in x0], dtype=np.int64)
    prods = []
    for seed in range(400):
        _, s = HashFamily(seed).buckets_signs(rect, 16, 1)
        prods.append(int(np.prod(s[0])))
    assert abs(np.mean(prods)) < 0.25, np.mean(prods)
    del fam


def test_seed_validation():
    with pytest.raises(ValueError, match="seed"):
        HashFamily(-1)
    with pytest.raises(ValueError, match="seed"):
        HashFamily(2**64)


def test_agms_counters_do_not_depend_on_shape():
    k = (np.random.default_rng(1).zipf(1.5, 3000) - 1) % 5000
    big = ss.AGMSSketch(100, 7, seed=9).update(k)
    small = ss.AGMSSketch(37, 3, seed=9).update(k)
    assert np.array_equal(big.counters[:3, :37], small.counters)
    assert big.subsketch(37, 3) == small and big.subsketch(37, 3).to_bytes() == small.to_bytes()
    for bad in ((101, 3), (37, 8), (0, 1)):
        with pytest.raises(ValueError, match="subsketch shape"):
            big.subsketch(*bad)
