"""Zipf / shifted-Zipf generator: pinned frequencies, shift semantics, speed."""

import time

import numpy as np
import pytest

from data.zipf import (
    generator,
    join_size_from_frequencies,
    shift_frequencies,
    shift_keys,
    shifted_pair,
    shifted_pair_frequencies,
    zipf_frequencies,
    zipf_probabilities,
    zipf_stream,
)


def test_probabilities_value_v_has_rank_v_plus_1():
    p = zipf_probabilities(4, 1.0)
    h = 1 + 1 / 2 + 1 / 3 + 1 / 4
    np.testing.assert_allclose(p, [1 / h, 1 / (2 * h), 1 / (3 * h), 1 / (4 * h)])
    np.testing.assert_allclose(zipf_probabilities(5, 0.0), [0.2] * 5)  # z = 0 is uniform


def test_pinned_frequencies_for_fixed_seed():
    # Exact counts: any change to sampling, seeding or rank convention shows here.
    assert zipf_frequencies(1000, 8, 1.0, seed=7).tolist() == [366, 186, 121, 84, 74, 65, 54, 50]
    assert zipf_frequencies(1000, 8, 1.0, seed=7, stream=1).tolist() == [
        388, 183, 113, 86, 80, 56, 58, 36,
    ]
    assert zipf_stream(12, 5, 1.0, seed=3).tolist() == [2, 0, 4, 0, 0, 1, 2, 0, 2, 1, 2, 0]
    f, g = shifted_pair_frequencies(4_000_000, 2**18, 1.0, 100, seed=0)
    assert f[:5].tolist() == [307389, 153098, 101605, 76405, 61093]
    assert g[100:105].tolist() == [307183, 153503, 102154, 76360, 61178]
    assert join_size_from_frequencies(f, g) == 4882306936


def test_deterministic_and_streams_independent():
    a = zipf_stream(10_000, 100, 1.2, seed=5)
    b = zipf_stream(10_000, 100, 1.2, seed=5)
    c = zipf_stream(10_000, 100, 1.2, seed=6)
    d = zipf_stream(10_000, 100, 1.2, seed=5, stream=1)
    assert np.array_equal(a, b)
    assert not np.array_equal(a, c)
    assert not np.array_equal(a, d)


def test_stream_matches_frequencies_exactly():
    for kw in ({}, {"shift": 7}, {"shift": 7, "overflow": "drop"}, {"stream": 3}):
        keys = zipf_stream(50_000, 64, 1.0, seed=11, **kw)
        freq = zipf_frequencies(50_000, 64, 1.0, seed=11, **kw)
        assert np.array_equal(np.bincount(keys, minlength=64), freq), kw
        assert keys.dtype == np.int64


def test_stream_is_shuffled_not_sorted():
    keys = zipf_stream(10_000, 50, 1.0, seed=1)
    assert not np.all(np.diff(keys) >= 0)


def test_shift_wrap_semantics():
    base = zipf_frequencies(1000, 8, 1.5, seed=7)
    shifted = zipf_frequencies(1000, 8, 1.5, seed=7, shift=3)
    # g(v) = f(v - 3 mod 8): the three tail values wrap onto 0, 1, 2.
    assert shifted.tolist() == [42, 32, 14, 525, 183, 90, 64, 50]
    assert shifted.tolist() == base[[5, 6, 7, 0, 1, 2, 3, 4]].tolist()
    assert shifted.sum() == 1000  # wrap keeps every element
    assert zipf_stream(12, 5, 1.0, seed=3, shift=2).tolist() == [4, 2, 1, 2, 2, 3, 4, 2, 4, 3, 4, 2]


def test_shift_drop_semantics():
    dropped = zipf_frequencies(1000, 8, 1.5, seed=7, shift=3, overflow="drop")
    assert dropped.tolist() == [0, 0, 0, 525, 183, 90, 64, 50]
    assert dropped.sum() == 1000 - (42 + 32 + 14)
    keys = zipf_stream(12, 5, 1.0, seed=3, shift=2, overflow="drop")
    assert keys.tolist() == [4, 2, 2, 2, 3, 4, 2, 4, 3, 4, 2]  # the one 4 (-> 6) dropped


def test_shift_helpers():
    assert shift_frequencies(np.array([5, 3, 2, 1]), 1).tolist() == [1, 5, 3, 2]
    assert shift_frequencies(np.array([5, 3, 2, 1]), 1, "drop").tolist() == [0, 5, 3, 2]
    assert shift_frequencies(np.array([5, 3, 2, 1]), 0).tolist() == [5, 3, 2, 1]
    assert shift_keys(np.array([0, 3, 1]), 2, 4).tolist() == [2, 1, 3]
    assert shift_keys(np.array([0, 3, 1]), 2, 4, "drop").tolist() == [2, 3]


def test_shift_zero_is_self_join_distribution_and_join_shrinks_with_shift():
    sizes = []
    for s in (0, 30, 50, 100):
        f, g = shifted_pair_frequencies(200_000, 2**12, 1.5, s, seed=2)
        sizes.append(join_size_from_frequencies(f, g))
    assert sizes == sorted(sizes, reverse=True)


def test_pair_uses_independent_streams_and_matches_frequencies():
    f, g = shifted_pair(20_000, 256, 1.0, 10, seed=4)
    ff, gg = shifted_pair_frequencies(20_000, 256, 1.0, 10, seed=4)
    assert np.array_equal(np.bincount(f, minlength=256), ff)
    assert np.array_equal(np.bincount(g, minlength=256), gg)
    assert np.array_equal(ff, zipf_frequencies(20_000, 256, 1.0, seed=4))
    assert not np.array_equal(np.roll(ff, 10), gg)  # G is not a copy of F


def test_invalid_arguments():
    with pytest.raises(ValueError, match="shift"):
        zipf_frequencies(10, 8, 1.0, shift=8)
    with pytest.raises(ValueError, match="shift"):
        zipf_frequencies(10, 8, 1.0, shift=-1)
    with pytest.raises(ValueError, match="overflow"):
        zipf_frequencies(10, 8, 1.0, shift=1, overflow="clip")
    with pytest.raises(ValueError, match="domain"):
        zipf_stream(10, 0, 1.0)
    with pytest.raises(ValueError, match="z"):
        zipf_stream(10, 8, -1.0)
    with pytest.raises(ValueError, match="n"):
        zipf_stream(-1, 8, 1.0)
    with pytest.raises(ValueError, match="seed"):
        generator(-1)


def test_join_size_exact_and_overflow_safe():
    assert join_size_from_frequencies(np.array([2, 1, 0]), np.array([3, 0, 5])) == 6
    big = np.array([2**40, 2**40], dtype=np.int64)
    assert join_size_from_frequencies(big, big) == 2 * 2**80
    with pytest.raises(ValueError, match="shape"):
        join_size_from_frequencies(np.zeros(3), np.zeros(4))


def test_four_million_elements_well_under_a_second():
    # CPU time (single-threaded numpy), best of 3: robust to other jobs sharing the machine.
    zipf_stream(1000, 2**18, 1.0, seed=0)  # warm-up
    best = min(_cpu_timed(lambda: zipf_stream(4_000_000, 2**18, 1.0, seed=0)) for _ in range(3))
    assert best < 0.9, f"4M-element Zipf stream took {best:.2f}s of CPU"


def _cpu_timed(fn):
    t = time.process_time()
    fn()
    return time.process_time() - t
