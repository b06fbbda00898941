"""Dense batches are hashed as (distinct key, count): the same counters as hashing every key."""

import numpy as np

import skimsketch as ss
from skimsketch.kernels import key_counts


def _one_by_one(sketch, keys, chunk=1000):
    """The sketch updated in batches too short for the dense path."""
    for s in range(0, len(keys), chunk):
        sketch.update(keys[s : s + chunk])
    return sketch


def test_key_counts_only_when_the_span_is_at_most_the_batch():
    keys = np.array([5, 3, 5, 4, 3, 5] * 20000, dtype=np.int64)
    got, counts = key_counts(keys, None)
    assert got.tolist() == [3, 4, 5] and counts.tolist() == [40000, 20000, 60000]
    spread = np.arange(0, 2 * 70000, 2, dtype=np.int64)  # span 139999 > 70000 keys
    assert key_counts(spread, None)[0] is spread
    weights = np.ones(len(keys), dtype=np.int64)
    assert key_counts(keys, weights)[0] is keys  # weighted batches are hashed as they are
    short = np.array([1, 1, 2], dtype=np.int64)
    assert key_counts(short, None)[0] is short


def test_dense_batches_give_the_counters_of_short_batches():
    rng = np.random.default_rng(4)
    keys = rng.zipf(1.3, 300_000).astype(np.int64) % 50_000 - 20_000  # negative keys too
    makers = [lambda: ss.HashSketch(256, 5, seed=3), lambda: ss.HashSketch(256, 5, seed=3, dtype="float64"),
              lambda: ss.SkimmedSketch(256, 5, seed=3), lambda: ss.SkimmedSketch.for_bytes(4096, seed=3),
              lambda: ss.SkimmedSketch(256, 5, seed=3, domain=1 << 16)]
    for make in makers:
        ks = keys if make().params.get("domain") is None else keys + 20_000
        assert make().update(ks).to_bytes() == _one_by_one(make(), ks).to_bytes()


def test_exact_mode_aggregates_dense_batches_like_the_sort():
    from skimsketch.stats.exact_store import aggregate

    rng = np.random.default_rng(5)
    keys = rng.integers(-50, 250, 100_000).astype(np.int64)
    for float_weights in (False, True):
        uk, agg = aggregate(keys, None, float_weights)
        want_k, want_c = np.unique(keys, return_counts=True)
        assert uk.tolist() == want_k.tolist() and agg.tolist() == want_c.tolist() and agg.dtype == np.int64
    sketch = ss.SkimmedSketch.for_bytes(16384, seed=1).update(keys)
    assert sketch.exact_mode and sketch.to_bytes() == _one_by_one(ss.SkimmedSketch.for_bytes(16384, seed=1),
                                                                   keys).to_bytes()
