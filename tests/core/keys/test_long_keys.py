"""Very long str/bytes keys (1-10 MB): the same fingerprint as MurmurHash3 through every container and both
kernels (issue 19, item 8). Hashing is linear in the bytes (benchmarks/bench_update.py measures MB/s)."""

import mmh3
import numpy as np
import pytest

import skimsketch as ss
from skimsketch import kernels
from skimsketch.keys.fingerprints import LONG_KEY_BYTES, fingerprints_reference
from skimsketch.keys.canonical import canonical_key, canonicalize

pa = pytest.importorskip("pyarrow")
pd = pytest.importorskip("pandas")

MB = 1 << 20


def mmh3_key(data: bytes) -> int:
    return mmh3.hash64(data, 0, True, True)[0]


@pytest.fixture(scope="module")
def long_keys():
    rng = np.random.default_rng(19)
    blob = rng.integers(0, 256, 10 * MB + 7, dtype=np.uint8).tobytes()
    text = "é" * (MB // 2) + "skim" * (MB // 4) + "🙂"  # 2 MB of multi-byte UTF-8, then ASCII
    return [blob, blob[:MB], blob[: 10 * MB], text]


def want(keys):
    return [mmh3_key(k.encode("utf-8") if isinstance(k, str) else k) for k in keys]


@pytest.mark.parametrize("name", ["numpy", "compiled"])
def test_long_keys_in_every_container_match_mmh3(long_keys, name):
    expected = want(long_keys)
    strs = [k for k in long_keys if isinstance(k, str)]
    blobs = [k for k in long_keys if isinstance(k, bytes)]
    with kernels.use(name):
        assert [canonical_key(k) for k in long_keys] == expected
        assert canonicalize(blobs).keys.tolist() == want(blobs)
        assert canonicalize(strs + [None]).keys.tolist() == want(strs)
        assert canonicalize(np.array(long_keys, dtype=object)).keys.tolist() == expected
        assert canonicalize(pd.Series(strs, dtype="string")).keys.tolist() == want(strs)
        assert canonicalize(pa.array(blobs, type=pa.large_binary())).keys.tolist() == want(blobs)
        assert canonicalize(pa.array(strs)).keys.tolist() == want(strs)


def test_lengths_around_the_long_key_threshold_match_mmh3():
    rng = np.random.default_rng(4)
    lens = [0, 1, 15, 16, 17, LONG_KEY_BYTES - 1, LONG_KEY_BYTES, LONG_KEY_BYTES + 1, 4 * LONG_KEY_BYTES + 3, MB + 1]
    blobs = [rng.integers(0, 256, k, dtype=np.uint8).tobytes() for k in lens]
    offs = np.cumsum([0] + lens)
    data = np.frombuffer(b"".join(blobs), np.uint8)
    assert fingerprints_reference(offs, data).tolist() == want(blobs)
    assert kernels.CompiledKernels().fingerprints(offs, data).tolist() == want(blobs)


def test_a_sketch_of_long_keys_equals_one_of_their_fingerprints(long_keys):
    """A long key is one key: the sketch of the keys equals the sketch of their int64 fingerprints."""
    a = ss.HashSketch(256, 5, 3).update(long_keys)
    b = ss.HashSketch(256, 5, 3).update(np.array(want(long_keys), dtype=np.int64))
    assert np.array_equal(a.counters, b.counters)
