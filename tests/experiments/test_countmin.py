"""Count-Min adapter: the serialised-counter parser and the inner-product estimate."""

import numpy as np
import pytest

pytest.importorskip("datasketches")
from datasketches import count_min_sketch  # noqa: E402

from experiments import countmin  # noqa: E402


def _cells(item, num_hashes, num_buckets, seed):
    """Bucket of ``item`` in every row, found from a one-item sketch's counters."""
    one = count_min_sketch(num_hashes, num_buckets, seed)
    one.update(int(item), 1.0)
    c = countmin.counters(one)
    assert (c.sum(axis=1) == 1).all() and ((c == 0) | (c == 1)).all()
    return c.argmax(axis=1)


def test_counters_shape_total_and_layout():
    cm = countmin.build(np.array([1, 5, 1000]), np.array([2, 3, 1]), num_hashes=3, num_buckets=5, seed=7)
    c = countmin.counters(cm)
    assert c.shape == (3, 5) and c.dtype == np.float64
    assert (c.sum(axis=1) == 6).all()  # every row holds the total weight
    blob = cm.serialize()
    assert len(blob) == 16 + 8 * (1 + 15)
    assert np.frombuffer(blob, "<f8", count=1, offset=16)[0] == 6.0  # total weight before the counters


def test_parser_agrees_with_get_estimate():
    rng = np.random.default_rng(0)
    keys = np.unique(rng.integers(0, 10_000, 3_000))
    counts = rng.integers(1, 50, len(keys))
    d, w, seed = 4, 37, 11
    cm = countmin.build(keys, counts, num_hashes=d, num_buckets=w, seed=seed)
    c = countmin.counters(cm)
    for item in [int(keys[0]), int(keys[17]), int(keys[-1]), 123_456]:
        cells = _cells(item, d, w, seed)
        assert c[np.arange(d), cells].min() == cm.get_estimate(item)
        if item in keys:
            assert cm.get_estimate(item) >= counts[np.searchsorted(keys, item)]


def test_empty_sketch_has_zero_counters():
    c = countmin.counters(count_min_sketch(3, 8, 1))
    assert c.shape == (3, 8) and not c.any()


def test_join_size_is_min_over_rows_and_never_below_exact():
    rng = np.random.default_rng(1)
    kf = np.arange(200)
    ff = rng.integers(1, 20, 200)
    kg = np.arange(100, 300)
    fg = rng.integers(1, 20, 200)
    exact = int((ff[100:] * fg[:100]).sum())
    a = countmin.build(kf, ff, 5, 64, seed=3)
    b = countmin.build(kg, fg, 5, 64, seed=3)
    rows = np.einsum("rq,rq->r", countmin.counters(a), countmin.counters(b))
    assert countmin.join_size(a, b) == rows.min() >= exact


def test_join_size_exact_without_collisions():
    # Two keys in 4001 buckets: with this seed they do not collide in any row.
    a = countmin.build(np.array([3, 9]), np.array([4, 5]), 3, 4001, seed=5)
    b = countmin.build(np.array([3, 10]), np.array([7, 2]), 3, 4001, seed=5)
    assert countmin.join_size(a, b) == 28.0


def test_incompatible_sketches_raise():
    a = countmin.build(np.array([1]), np.array([1]), 3, 16, seed=1)
    with pytest.raises(ValueError, match="shapes"):
        countmin.join_size(a, countmin.build(np.array([1]), np.array([1]), 3, 17, seed=1))
    with pytest.raises(ValueError, match="seed"):
        countmin.join_size(a, countmin.build(np.array([1]), np.array([1]), 3, 16, seed=2))


def test_state_bytes():
    assert countmin.state_bytes(11, 50) == 4 * 550  # int32 counts, as the library's counters
