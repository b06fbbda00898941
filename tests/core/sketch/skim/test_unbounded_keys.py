"""Vectorised string/bytes fingerprints: identical to the per-key MurmurHash3 definition in every container."""

import numpy as np
import pytest

import skimsketch as ss
from skimsketch.keys.canonical import canonicalize, fingerprint64_many

pa = pytest.importorskip("pyarrow")
pd = pytest.importorskip("pandas")


def random_strings(n=3000, seed=0):
    rng = np.random.default_rng(seed)
    alphabet = list("abcxyz0123456789-_ ") + ["é", "ü", "€", "日", "本", "🙂"]
    lens = np.concatenate([np.arange(0, 70), rng.integers(0, 40, n - 70)])  # every length up to 69, both sides of 16k
    return ["".join(rng.choice(alphabet, int(k))) for k in lens]


def reference(values):
    return [ss.fingerprint64(v if isinstance(v, bytes) else v.encode("utf-8")) for v in values]


def test_fingerprint64_many_matches_scalar_for_every_length():
    rng = np.random.default_rng(1)
    blobs = [rng.integers(0, 256, k, dtype=np.uint8).tobytes() for k in list(range(0, 130)) + [1000, 4097]]
    blobs += [b"\0", b"a\0", b"\0" * 16, b"x" * 15 + b"\0"]  # NUL bytes, also trailing ones, are data
    offs = np.cumsum([0] + [len(b) for b in blobs])
    got = fingerprint64_many(offs, np.frombuffer(b"".join(blobs), np.uint8))
    assert got.tolist() == reference(blobs)
    # pinned values of the canonical form (also pinned for the scalar path in test_hashing.py)
    one = fingerprint64_many(np.array([0, 4]), np.frombuffer(b"skim", np.uint8))
    assert one.tolist() == [815987628662419427]


def test_containers_agree_with_the_scalar_definition():
    words = random_strings()
    want = reference(words)
    arr = pa.array(words)
    for c in (words, np.array(words), np.array(words, dtype=object), pd.Series(words), pd.Series(words, dtype="string"),
              arr, pa.array(words, type=pa.large_string()), arr.slice(5), pa.chunked_array([arr[:100], arr[100:]]),
              arr.dictionary_encode(), pa.array([w.encode() for w in words], type=pa.binary())):
        got = canonicalize(c).keys.tolist()
        expect = want[5:] if c is not None and len(got) == len(words) - 5 else want
        assert got == expect, type(c)


def test_nulls_and_mixed_object_columns_keep_their_semantics():
    words = ["a", None, "bb", float("nan"), pd.NA, "ccc"]
    b = canonicalize(pd.Series(words, dtype=object), weights=[1, 2, 3, 4, 5, 6])
    assert b.keys.tolist() == reference(["a", "bb", "ccc"]) and b.null_weight == 11
    with pytest.raises(ss.KeyTypeError, match="mix integers and strings"):
        canonicalize(np.array(["a", 3, b"a", None], dtype=object))
    with pytest.raises(ss.KeyTypeError, match="bool"):
        canonicalize(np.array(["a", True], dtype=object))
    with pytest.raises(ss.KeyTypeError, match="not integral"):
        canonicalize(np.array(["a", 1.5], dtype=object))
    for seq in (["a", None, "bb"], ["a", float("nan"), "bb"], ["a", pd.NA, "bb"]):
        lst = canonicalize(seq, weights=[1, 4, 2])
        assert lst.keys.tolist() == reference(["a", "bb"]) and lst.null_weight == 4, seq
    assert canonicalize(["a", b"a"]).keys.tolist() == [ss.fingerprint64(b"a")] * 2
    with pytest.raises(ss.KeyTypeError, match="bool"):
        canonicalize(["a", False])
    arrow = canonicalize(pa.array(["x", None, "y"]))
    assert arrow.keys.tolist() == reference(["x", "y"]) and arrow.null_weight == 1


def test_string_sketches_identical_across_containers_for_every_kind():
    words = random_strings(800, seed=3)
    for mk in (lambda: ss.HashSketch(64, 5, 1), lambda: ss.SkimmedSketch(64, 5, 1), lambda: ss.AGMSSketch(16, 3, 1)):
        ref = mk().update(words)
        for c in (pa.array(words), pd.Series(words), np.array(words)):
            assert mk().update(c).to_bytes() == ref.to_bytes()
