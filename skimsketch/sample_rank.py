"""The ranks of a coordinated priority sample (:mod:`skimsketch.sample`), bit-exact on every platform.

Every definition here is part of the sample format (``docs/format.md``, "Kind 5: the
join sample"); changing one is a format change. All from :mod:`skimsketch.hashing`'s
seeded tabulation family of the canonical int64 key (:mod:`skimsketch.keys`)::

    h(k)      = word_{RANK_WORD}(k)            (u64; RANK_WORD = 2**23)
    q(k)      = word_{RANK_WORD + 1}(k)        (u64; the key-hash partition word)
    u(k)      = (2 * (h >> 12) + 1) * 2**-53   (IEEE double, exact: an odd multiple of 2**-53 in (0, 1))
    w(k)      = |double(f(k))|                 (round-to-nearest conversion of the total, then abs)
    rank(k)   = u(k) / (w(k) * w(k))           (two IEEE double operations, round to nearest even;
                                                w*w may overflow to inf (rank 0) or underflow to 0 (rank inf))
    order     = (rank, k) lexicographic, k as a signed int64: a total order of distinct keys
    part_P(k) = ((q >> 32) * P) >> 32          (partition of k among P in [1, 4096], exact u64 arithmetic)

A key whose total is zero has no rank (it is not in the table). ``u`` is uniform on
``2**52`` points of (0, 1), so ``P(rank(k) < t) = min(1, t f(k)^2)`` up to ``2**-52``:
the inclusion probability of the estimator (:mod:`skimsketch.sample_estimate`).
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from .hashing import family

__all__ = ["MAX_PARTITIONS", "RANK_WORD", "keys_order", "partitions", "ranks", "unit_hashes"]

RANK_WORD = 1 << 23  # far from the words of the sketches (< 2**21), AGMS (2**20 + ...) and the hierarchy (2**22 + ...)
MAX_PARTITIONS = 4096
_SIZES = (1 << 16, 1 << 16, (1 << 17) - 1)
_TWO_M53 = 2.0**-53


@lru_cache(maxsize=16)
def _tables(seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``T_i[c][RANK_WORD + j]`` for j = 0, 1: three (characters, 2) uint64 tables."""
    fam = family(seed)
    words = np.array([RANK_WORD, RANK_WORD + 1], dtype=np.uint64)
    out = tuple(np.ascontiguousarray(fam.table_entries(i, np.arange(size), words)) for i, size in enumerate(_SIZES))
    for t in out:
        t.flags.writeable = False
    return out


def _words(keys: np.ndarray, seed: int) -> np.ndarray:
    """``(h, q)`` of every canonical key -> (n, 2) uint64."""
    t0, t1, t2 = _tables(seed)
    c0, c1, c2 = family(seed).chars(np.ascontiguousarray(keys, dtype=np.int64))
    out = np.take(t0, c0, axis=0)
    out ^= np.take(t1, c1, axis=0)
    out ^= np.take(t2, c2, axis=0)
    return out


def unit_hashes(keys: np.ndarray, seed: int) -> np.ndarray:
    """``u(k)`` of every key (float64 in (0, 1); module docstring).

    >>> u = unit_hashes(np.arange(1000), 0)
    >>> bool(((u > 0) & (u < 1)).all()), round(float(u.mean()), 1)
    (True, 0.5)
    """
    h = _words(keys, seed)[:, 0]
    return ((h >> np.uint64(12)) * np.uint64(2) + np.uint64(1)).astype(np.float64) * _TWO_M53


def ranks(keys: np.ndarray, totals: np.ndarray, seed: int) -> np.ndarray:
    """``rank(k) = u(k) / (w * w)`` with ``w = |double(total)|`` (float64; module docstring)."""
    w = np.abs(np.asarray(totals).astype(np.float64))
    with np.errstate(over="ignore", divide="ignore"):
        return unit_hashes(keys, seed) / (w * w)


def keys_order(keys: np.ndarray, rank: np.ndarray) -> np.ndarray:
    """The permutation sorting keys by ``(rank, key)`` (signed keys)."""
    return np.lexsort((np.asarray(keys, dtype=np.int64), rank))


def partitions(keys: np.ndarray, seed: int, count: int) -> np.ndarray:
    """``part_count(k)`` of every key (int64 in ``[0, count)``; module docstring)."""
    if not (isinstance(count, (int, np.integer)) and 1 <= count <= MAX_PARTITIONS):
        raise ValueError(f"partition count must be an int in [1, {MAX_PARTITIONS}], got {count!r}")
    q = _words(keys, seed)[:, 1]
    return (((q >> np.uint64(32)) * np.uint64(count)) >> np.uint64(32)).astype(np.int64)
