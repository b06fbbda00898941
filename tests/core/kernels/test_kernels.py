"""The compiled kernels against the numpy reference: the same bytes for every key type, seed and shape.

Each property draws inputs with hypothesis and runs both implementations of the
:class:`skimsketch.kernels.Kernels` interface (or a whole update under ``kernels.use``);
results must be identical (float64 results bit for bit). Speed is measured in
benchmarks/bench_update.py, never here.
"""

import hashlib
import os

import mmh3
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import skimsketch as ss
from skimsketch import kernels
from skimsketch.kernels import compiled
from skimsketch.errors import CounterOverflowError
from skimsketch.keys.hashing import family

pa = pytest.importorskip("pyarrow")
pd = pytest.importorskip("pandas")

REF, FAST = kernels.NumpyKernels(), kernels.CompiledKernels()
I64_MIN, I64_MAX = -(2**63), 2**63 - 1


def test_the_compiled_kernels_are_built_and_current():
    """CI builds the extension from a clean clone (./dev installs the package): it must load, from this source."""
    if os.environ.get("SKIMSKETCH_KERNELS") == "numpy":
        pytest.skip("SKIMSKETCH_KERNELS=numpy asks for the reference")
    assert kernels.available()["compiled"] is None, kernels.available()["compiled"]
    assert kernels.backend().name == "compiled"


def test_a_stale_extension_is_not_used(monkeypatch):
    class Stale:
        SOURCE_SHA = "0" * 40

    monkeypatch.setattr(compiled, "_ckernels", Stale)
    assert "another version" in compiled.compiled_problem()
    monkeypatch.setattr(compiled, "_ckernels", None)
    assert "not built" in compiled.compiled_problem() and not compiled.extension_built()


def test_use_restores_the_active_kernels_and_names_bad_choices():
    before = kernels.backend()
    with kernels.use("numpy") as k:
        assert kernels.backend() is k and k.name == "numpy"
    assert kernels.backend() is before
    with pytest.raises(ValueError, match="'fast'"):
        with kernels.use("fast"):
            pass


def same(a, b):
    """Equal values, dtype and shape; float64 compared bit for bit."""
    assert a.dtype == b.dtype and a.shape == b.shape
    if a.dtype == np.float64:
        assert a.view(np.int64).tolist() == b.view(np.int64).tolist()
    else:
        assert np.array_equal(a, b)


def draw_weights(data, kind: str, n: int):
    """None, or ``n`` weights of ``kind``: small ints, ints beyond float64's exact range (the reference's exact
    int64 path; their absolute sum stays below 2**63), or floats from +-1e300 down to subnormal."""
    if kind == "none":
        return None
    if kind == "int":
        return np.array(data.draw(st.lists(st.integers(-1000, 1000), min_size=n, max_size=n)), dtype=np.int64)
    if kind == "bigint":
        w = np.array(data.draw(st.lists(st.integers(-(2**60), 2**60), min_size=n, max_size=n)), dtype=np.int64)
        return w // max(n, 1)
    return np.array(data.draw(st.lists(st.floats(-1e300, 1e300) | st.floats(-1, 1), min_size=n, max_size=n)))


int64s = st.one_of(st.integers(I64_MIN, I64_MAX), st.sampled_from([0, 1, -1, I64_MIN, I64_MAX, 2**32, -(2**32)]))
seeds = st.one_of(st.integers(0, 2**64 - 1), st.sampled_from([0, 1, 7, 2**64 - 1]))


@settings(max_examples=60, deadline=None)
@given(keys=st.lists(int64s, max_size=300), seed=seeds, width=st.integers(1, 5000), depth=st.integers(1, 12),
       weights=st.sampled_from(["none", "int", "bigint", "float"]), float_counters=st.booleans(), data=st.data())
def test_hash_delta_is_identical(keys, seed, width, depth, weights, float_counters, data):
    k = np.array(keys, dtype=np.int64)
    w = draw_weights(data, weights, len(k))
    float_counters = float_counters or weights == "float"
    fam = family(seed)
    with np.errstate(over="ignore", invalid="ignore"):
        same(REF.hash_delta(fam, k, w, width, depth, float_counters),
             FAST.hash_delta(fam, k, w, width, depth, float_counters))


def test_float_sums_follow_the_reference_order_across_chunks():
    """Float sums are not associative: the compiled kernel sums per 32,768-key chunk, in key order, as bincount does."""
    rng = np.random.default_rng(5)
    n = 100_003
    k = rng.integers(0, 50, n)  # few keys: every cell sums thousands of weights
    w = rng.choice([1e16, 1.0, -3.3e15, 0.1, -7.0], n)
    fam = family(3)
    a = REF.hash_delta(fam, k, w, 7, 5, True)
    same(a, FAST.hash_delta(fam, k, w, 7, 5, True))
    b = FAST.hash_delta(fam, k[::-1].copy(), w[::-1].copy(), 7, 5, True)
    assert not np.array_equal(a, b)  # the order matters for these weights, so the test can fail


@settings(max_examples=60, deadline=None)
@given(blobs=st.lists(st.binary(max_size=80) | st.binary(min_size=250, max_size=700), max_size=40))
def test_fingerprints_are_identical_and_are_mmh3(blobs):
    offs = np.cumsum([0] + [len(b) for b in blobs]).astype(np.int64)
    data = np.frombuffer(b"".join(blobs), np.uint8)
    want = [mmh3.hash64(b, 0, True, True)[0] for b in blobs]
    assert REF.fingerprints(offs, data).tolist() == want
    assert FAST.fingerprints(offs, data).tolist() == want


def test_fingerprints_refuse_offsets_outside_the_data():
    with pytest.raises(ValueError, match="outside the 4 data bytes"):
        FAST.fingerprints(np.array([0, 9]), np.frombuffer(b"skim", np.uint8))


nullish = st.sampled_from([None, float("nan"), pd.NA, pd.NaT])
text = st.text(max_size=30) | st.text(min_size=200, max_size=400)


@settings(max_examples=60, deadline=None)
@given(items=st.lists(text | st.binary(max_size=40) | nullish, max_size=40))
def test_object_fingerprints_are_identical(items):
    arr = np.empty(len(items), dtype=object)
    arr[:] = items
    a, b = REF.object_fingerprints(arr), FAST.object_fingerprints(arr)
    if any(isinstance(x, str) and not _utf8(x) for x in items):
        assert a is None and b is None
        return
    assert (a[1] is None) == (b[1] is None)
    assert a[0].tolist() == b[0].tolist()
    if a[1] is not None:
        assert a[1].tolist() == b[1].tolist()
        assert a[0][a[1]].tolist() == [0] * int(a[1].sum())
    for x, got in zip(items, a[0].tolist()):
        if isinstance(x, (str, bytes)):
            assert got == ss.fingerprint64(x.encode() if isinstance(x, str) else x)


def _utf8(s):
    try:
        s.encode("utf-8")
        return True
    except UnicodeEncodeError:
        return False


@pytest.mark.parametrize("odd", [3, 2.5, b"x".decode, bytearray(b"x"), np.float64("nan"), True])
def test_object_fingerprints_decline_other_elements(odd):
    arr = np.array(["a", None, odd], dtype=object)
    assert REF.object_fingerprints(arr) is None
    assert FAST.object_fingerprints(arr) is None


def test_object_fingerprints_do_not_change_the_strings():
    """The compiled path encodes a non-ASCII str into a temporary: no UTF-8 copy is attached to the user's object."""
    import sys

    s = "".join(["héllo", "wörld"])  # built at run time: not interned
    before = sys.getsizeof(s)
    FAST.object_fingerprints(np.array([s], dtype=object))
    assert sys.getsizeof(s) == before


# -- whole updates: the same sketch bytes with either kernels, for every key container ----------
WORDS = ["user-1", "", "héllo", "日本", "x" * 40, "y" * 300, "user-1", "a\0b"]


def containers():
    ints = np.array([5, -1, 2**40, I64_MIN, I64_MAX, 5, 0], dtype=np.int64)
    return {
        "int list": ints.tolist(),
        "int64 array": ints,
        "uint32 array": np.array([1, 2, 3, 2**32 - 1], dtype=np.uint32),
        "float with NaN": np.array([1.0, np.nan, 3.0]),
        "pandas Int64": pd.Series([1, None, 3], dtype="Int64"),
        "str list": WORDS,
        "str list with None": WORDS + [None],
        "bytes list": [w.encode() for w in WORDS],
        "numpy U": np.array(WORDS),
        "numpy S": np.array([w.encode() for w in WORDS if "\0" not in w]),
        "object": np.array(WORDS + [None, np.nan], dtype=object),
        "pandas object": pd.Series(WORDS + [None]),
        "pandas string": pd.Series(WORDS + [None], dtype="string"),
        "pyarrow string": pa.array(WORDS + [None]),
        "pyarrow large_string": pa.array(WORDS, type=pa.large_string()),
        "pyarrow binary": pa.array([w.encode() for w in WORDS], type=pa.binary()),
        "pyarrow sliced": pa.array(WORDS + [None]).slice(2, 5),
        "pyarrow chunked": pa.chunked_array([WORDS[:3], WORDS[3:]]),
        "pyarrow dictionary": pa.array(WORDS).dictionary_encode(),
    }


SKETCHES = {
    "hash": lambda w, d, seed, dt: ss.HashSketch(w, d, seed, dtype=dt),
    "skimmed exact mode": lambda w, d, seed, dt: ss.SkimmedSketch(w, d, seed, dtype=dt, exact=True),
    "skimmed": lambda w, d, seed, dt: ss.SkimmedSketch(w, d, seed, dtype=dt),
    "skimmed prefix": lambda w, d, seed, dt: ss.SkimmedSketch(w, d, seed, dtype=dt, search="prefix", exact=False),
}


def sketch_bytes(name, kind, keys, weights, width, depth, seed, dtype):
    with kernels.use(name):
        sk = SKETCHES[kind](width, depth, seed, dtype)
        return sk.update(keys, weights=weights).to_bytes()


@settings(max_examples=40, deadline=None)
@given(container=st.sampled_from(sorted(containers())), kind=st.sampled_from(sorted(SKETCHES)), seed=seeds,
       width=st.integers(1, 3000), depth=st.integers(1, 11), dtype=st.sampled_from(["int64", "float64"]),
       weighted=st.sampled_from([None, "int", "float", "scalar"]), wseed=st.integers(0, 2**32 - 1))
def test_updates_give_the_same_bytes(container, kind, seed, width, depth, dtype, weighted, wseed):
    keys = containers()[container]
    n = len(keys)
    rng = np.random.default_rng(wseed)
    weights = {None: None, "int": rng.integers(-50, 50, n), "scalar": 3,
               "float": rng.normal(0, 1e3, n) if dtype == "float64" else rng.integers(-9, 9, n).astype(float)}[weighted]
    a = sketch_bytes("numpy", kind, keys, weights, width, depth, seed, dtype)
    b = sketch_bytes("compiled", kind, keys, weights, width, depth, seed, dtype)
    assert a == b


@pytest.mark.parametrize("kind", sorted(SKETCHES))
def test_large_batches_give_the_same_bytes(kind):
    """Batches past the chunk sizes and the key-count shortcut (spread keys, dense keys, strings, float weights)."""
    rng = np.random.default_rng(11)
    n = 120_000
    spread = rng.integers(I64_MIN, I64_MAX, n)
    dense = rng.integers(0, 5000, n)
    strings = pa.array([f"user-{i}" for i in rng.integers(0, 20_000, n // 4).tolist()])
    for keys, weights, dtype in ((spread, None, "int64"), (dense, None, "int64"), (strings, None, "int64"),
                                 (spread, rng.integers(-(2**40), 2**40, n), "int64"),
                                 (spread, rng.standard_cauchy(n), "float64"), (dense, rng.integers(0, 9, n), "float64")):
        a = sketch_bytes("numpy", kind, keys, weights, 814, 5, 1, dtype)
        b = sketch_bytes("compiled", kind, keys, weights, 814, 5, 1, dtype)
        assert hashlib.sha256(a).hexdigest() == hashlib.sha256(b).hexdigest()


@settings(max_examples=20, deadline=None)
@given(seed=seeds, width=st.integers(1, 3000), depth=st.integers(1, 11), n=st.integers(0, 70_000),
       weighted=st.booleans())
def test_bounded_domain_sketches_give_the_same_bytes(seed, width, depth, n, weighted):
    rng = np.random.default_rng(n)
    keys = rng.integers(0, 2**18, n)
    weights = rng.integers(-5, 5, n) if weighted else None
    out = []
    for name in ("numpy", "compiled"):
        with kernels.use(name):
            out.append(ss.SkimmedSketch(width, depth, seed, domain=2**18).update(keys, weights=weights).to_bytes())
    assert out[0] == out[1]


def test_overflowing_weights_raise_the_same_way():
    for name in ("numpy", "compiled"):
        with kernels.use(name):
            sk = ss.HashSketch(64, 3, 1)
            with pytest.raises(CounterOverflowError):
                sk.update([1, 2], weights=np.array([I64_MAX, 1]))
            assert sk.is_empty


# -- the query's loops: the skim's candidate scan and the table estimates -----------------------
@settings(max_examples=60, deadline=None)
@given(seed=seeds, width=st.integers(1, 300), depth=st.integers(1, 9), n=st.integers(0, 3000), data=st.data())
def test_candidate_scan_and_estimates_are_identical(seed, width, depth, n, data):
    from skimsketch.sketch.skim.candidates import range_candidates

    lo = data.draw(st.integers(-(2**40), 2**40))
    cand = range_candidates(seed, width, depth, lo, lo + n)
    rng = np.random.default_rng(n)
    hot = rng.random((depth, width)) < data.draw(st.floats(0, 1))
    exclude = rng.random(len(cand)) < 0.2
    need = data.draw(st.integers(1, depth))
    order, starts = cand.bucket_index(width)
    a = REF.hot_candidates(order, starts, hot, exclude, need)
    b = FAST.hot_candidates(order, starts, hot, exclude, need)
    same(a.astype(np.int64), b)
    want = [i for i in range(len(cand)) if not exclude[i] and hot[np.arange(depth), cand.buckets[:, i]].sum() >= need]
    assert b.tolist() == want
    residual = rng.normal(0, 1e6, (depth, width))
    for buckets, signs in ((cand.buckets, cand.signs), (np.ascontiguousarray(cand.buckets), np.ascontiguousarray(cand.signs))):
        same(REF.estimates(residual, buckets, signs, b), FAST.estimates(residual, buckets, signs, b))


def test_estimates_refuse_indices_outside_the_candidates():
    b, s = np.zeros((2, 3), dtype=np.int64), np.ones((2, 3))
    with pytest.raises(IndexError, match="index 3 outside"):
        FAST.estimates(np.zeros((2, 4)), b, s, np.array([3]))
    with pytest.raises(IndexError, match="bucket 9 outside"):
        FAST.estimates(np.zeros((2, 4)), b + 9, s, np.array([0]))


@pytest.mark.parametrize("z, shift", [(1.0, 100), (1.5, 30), (0.8, 0)])  # Zipf 0.5 no longer skims here (MIN_DENSE_SHARE)
def test_skims_and_joins_are_identical(z, shift):
    from data.zipf import zipf_draws

    rng = np.random.default_rng(int(z * 10) + shift)
    m = 2**16
    f, g = zipf_draws(rng, 200_000, m, z), zipf_draws(rng, 200_000, m, z, shift)
    out = []
    for name in ("numpy", "compiled"):
        with kernels.use(name):
            a = ss.SkimmedSketch(512, 5, 3, domain=m).update(f)
            b = ss.SkimmedSketch(512, 5, 3, domain=m).update(g)
            est = a.join_size(b)
            sk = a.skim()
            out.append((est.value, est.low, est.high, sk.keys.tolist(), sk.values.tolist(), sk.residual.tobytes()))
    assert out[0] == out[1]
    assert len(out[0][3]) > 0  # the skim found dense keys: the compared path ran


@settings(max_examples=60, deadline=None)
@given(keys=st.lists(int64s, max_size=300), seed=seeds, lg=st.integers(10, 22), width=st.integers(1, 5000),
       depth=st.integers(1, 12), weights=st.sampled_from(["none", "int", "float"]), float_counters=st.booleans(),
       data=st.data())
def test_the_fused_virtual_map_is_identical_to_virtual_ids_then_hashing(keys, seed, lg, width, depth, weights,
                                                                        float_counters, data):
    from skimsketch.sketch.skim.virtual import virtual_ids, virtual_salt

    k = np.array(keys, dtype=np.int64)
    w = draw_weights(data, weights, len(k))
    float_counters = float_counters or weights == "float"
    fam, salt = family(seed), virtual_salt(seed)
    ids, signs = virtual_ids(k, seed, lg)
    composed = REF.hash_delta(fam, ids, signs.astype(np.int64) if w is None else w * signs, width, depth,
                              float_counters)
    same(composed, REF.virtual_hash_delta(fam, k, w, salt, lg, width, depth, float_counters))
    same(composed, FAST.virtual_hash_delta(fam, k, w, salt, lg, width, depth, float_counters))


def test_the_fused_virtual_map_over_chunks_and_bad_lg():
    rng = np.random.default_rng(8)
    k, w = rng.integers(I64_MIN, I64_MAX, 70_000), rng.standard_cauchy(70_000)
    fam = family(9)
    for weights, fc in ((None, False), (None, True), (rng.integers(-9, 9, 70_000), False), (w, True)):
        same(REF.virtual_hash_delta(fam, k, weights, 12345, 20, 814, 5, fc),
             FAST.virtual_hash_delta(fam, k, weights, 12345, 20, 814, 5, fc))
    with pytest.raises(ValueError, match="lg=63"):
        FAST.virtual_hash_delta(fam, k, None, 1, 63, 814, 5, False)


@settings(max_examples=40, deadline=None)
@given(keys=st.lists(int64s, max_size=2000), seed=seeds, lg=st.integers(10, 22))
def test_virtual_counts_are_the_per_id_sums_of_virtual_ids(keys, seed, lg):
    from skimsketch.sketch.skim.virtual import virtual_ids, virtual_salt

    k = np.array(keys, dtype=np.int64)
    ids, signs = virtual_ids(k, seed, lg)
    net = {}
    for i, s in zip(ids.tolist(), signs.tolist()):
        net[i] = net.get(i, 0) + s
    want = sorted((i, c) for i, c in net.items() if c)
    for impl in (REF, FAST):
        got_ids, got_net = impl.virtual_counts(k, virtual_salt(seed), lg)
        assert got_ids.dtype == got_net.dtype == np.int64
        assert list(zip(got_ids.tolist(), got_net.tolist())) == want
