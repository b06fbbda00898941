"""The ranks of a coordinated priority sample (:mod:`skimsketch.sample.join_sample`), bit-exact on every platform.

Every definition here is part of the sample format (``docs/format.md``, "Kind 5: the
join sample"); changing one is a format change. All from :mod:`skimsketch.keys.hashing`'s
seeded tabulation family of the canonical int64 key (:mod:`skimsketch.keys.canonical`)::

    h(k)      = word_{RANK_WORD}(k)            (u64; RANK_WORD = 2**23)
    mix(k)    = the splitmix64 finalizer of k as u64 (a bijection; below)
    fp(k)     = (h(k) ^ mix(k)) >> 12          (the key's 52-bit fingerprint: the sample is over fingerprints)
    u         = (2 * fp + 1) * 2**-53          (IEEE double, exact: an odd multiple of 2**-53 in (0, 1))
    w         = |double(f)|                    (round-to-nearest conversion of the total, then abs)
    rank      = u / (w * w)                    (two IEEE double operations, round to nearest even;
                                                w*w may overflow to inf (rank 0) or underflow to 0 (rank inf))
    order     = (rank, fp) lexicographic: a total order of distinct fingerprints
    part_P    = ((fp & 0xFFFFFFFF) * P) >> 32  (partition of a fingerprint among P in [1, 4096], exact u64)

The family hashes a 64-bit key through a 32-bit fold, so ``h`` alone would give two of a
million string keys one fingerprint about a hundred times; XOR with ``mix(k)``, a fixed
bijection of the whole key, keeps ``h``'s uniformity and independence and separates keys
that share a fold. Keys with one fingerprint (probability about ``K^2 / 2**53`` among ``K``
keys) are one entry of the sample, with the sum of their totals. A *legacy* sample (read from
layout 1, whose ranks came from ``h >> 12``) keeps ``fp = h >> 12``.

    mix(z):  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9;  z = (z ^ (z >> 27)) * 0x94D049BB133111EB;
             return z ^ (z >> 31)                        (u64 arithmetic, modulo 2**64) A fingerprint whose total is zero has
no rank (it is not in the table). ``u`` is uniform on ``2**52`` points of (0, 1), so
``P(rank < t) = min(1, t f^2)`` up to ``2**-52``: the inclusion probability of the
estimator (:mod:`skimsketch.sample.estimator`).
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from ..keys.hashing import family

__all__ = ["FP_BITS", "MAX_PARTITIONS", "RANK_WORD", "fingerprints", "mix", "order", "partitions", "partitions_fp", "ranks",
           "unit_hashes", "units"]

RANK_WORD = 1 << 23  # far from the words of the sketches (< 2**21), AGMS (2**20 + ...) and the hierarchy (2**22 + ...)
FP_BITS = 52
MAX_PARTITIONS = 4096
_SIZES = (1 << 16, 1 << 16, (1 << 17) - 1)
_TWO_M53 = 2.0**-53
_LOW32 = np.int64(0xFFFFFFFF)


@lru_cache(maxsize=16)
def _table(seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``T_i[c][RANK_WORD]``: three uint64 tables."""
    fam = family(seed)
    words = np.array([RANK_WORD], dtype=np.uint64)
    out = tuple(np.ascontiguousarray(fam.table_entries(i, np.arange(size), words)[:, 0]) for i, size in enumerate(_SIZES))
    for t in out:
        t.flags.writeable = False
    return out


def mix(keys: np.ndarray) -> np.ndarray:
    """The splitmix64 finalizer of every canonical key (uint64; module docstring).

    >>> [hex(int(x)) for x in mix(np.array([0, 1, -1], dtype=np.int64))]
    ['0x0', '0x5692161d100b05e5', '0xb4d055fcf2cbbd7b']
    """
    z = np.ascontiguousarray(keys, dtype=np.int64).view(np.uint64).copy()
    with np.errstate(over="ignore"):
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


def fingerprints(keys: np.ndarray, seed: int, legacy: bool = False) -> np.ndarray:
    """``fp(k) = (h(k) ^ mix(k)) >> 12`` of every canonical key (int64 in ``[0, 2**52)``; module docstring);
    ``legacy``: ``h(k) >> 12``, the fingerprint of a sample read from layout 1."""
    t0, t1, t2 = _table(seed)
    c0, c1, c2 = family(seed).chars(np.ascontiguousarray(keys, dtype=np.int64))
    h = np.take(t0, c0)
    h ^= np.take(t1, c1)
    h ^= np.take(t2, c2)
    if not legacy:
        h ^= mix(keys)
    return (h >> np.uint64(12)).astype(np.int64)


def units(fp: np.ndarray) -> np.ndarray:
    """``u = (2 fp + 1) 2**-53`` of fingerprints (float64 in (0, 1), exact)."""
    return (np.asarray(fp, dtype=np.int64) * 2 + 1).astype(np.float64) * _TWO_M53


def unit_hashes(keys: np.ndarray, seed: int) -> np.ndarray:
    """``u(k)`` of every key (float64 in (0, 1); module docstring).

    >>> u = unit_hashes(np.arange(1000), 0)
    >>> bool(((u > 0) & (u < 1)).all()), round(float(u.mean()), 1)
    (True, 0.5)
    """
    return units(fingerprints(keys, seed))


def ranks(fp: np.ndarray, totals: np.ndarray, scale: int = 0) -> np.ndarray:
    """``rank = u / (w * w)`` of fingerprints with ``w = |double(total)| * 2^scale`` (float64; module docstring;
    a sample's scale exponent: :mod:`skimsketch.sample.scale`)."""
    w = np.abs(np.asarray(totals).astype(np.float64))
    if scale:
        w = np.ldexp(w, scale)
    with np.errstate(over="ignore", divide="ignore"):
        return units(fp) / (w * w)


def order(fp: np.ndarray, rank: np.ndarray) -> np.ndarray:
    """The permutation sorting fingerprints by ``(rank, fp)``."""
    return np.lexsort((np.asarray(fp, dtype=np.int64), rank))


def _check_count(count) -> None:
    if not (isinstance(count, (int, np.integer)) and 1 <= count <= MAX_PARTITIONS):
        raise ValueError(f"partition count must be an int in [1, {MAX_PARTITIONS}], got {count!r}")


def partitions_fp(fp: np.ndarray, count: int) -> np.ndarray:
    """``part_count`` of every fingerprint (int64 in ``[0, count)``; module docstring)."""
    _check_count(count)
    return ((np.asarray(fp, dtype=np.int64) & _LOW32) * np.int64(count)) >> np.int64(32)


def partitions(keys: np.ndarray, seed: int, count: int) -> np.ndarray:
    """``part_count(fp(k))`` of every canonical key (int64 in ``[0, count)``)."""
    _check_count(count)
    return partitions_fp(fingerprints(keys, seed), count)
