"""Prefix hierarchy: finding the dense keys of an unbounded-key skimmed sketch.

Without a domain to scan, :class:`~skimsketch.SkimmedSketch` keeps, beside
its main hash-sketch counters, ``LEVELS`` small hash sketches over *prefixes*
of a per-key 64-bit value, and finds the dense keys top-down at query time
(the dyadic/hierarchical search of Cormode and Muthukrishnan's Count-Min
paper and of the skimmed-sketch paper's unbounded case, here with fan-out
``2**FANOUT_BITS = 256`` instead of 2).

The per-key value ``y`` is a seeded bijection of the canonical int64 key::

    salt   = T_0[0][HIER_WORD_BASE]                   (hashing.py's table stream)
    y      = mix(key XOR salt)                        (splitmix64 finaliser: a bijection)
    key    = unmix(y) XOR salt                        (so dense keys come back as keys)

so small or clustered integer keys get well-spread prefixes, and every dense
key found at the bottom is reported as its canonical key (an int64 key as
itself, a str/bytes key as its :func:`~skimsketch.fingerprint64`).

Levels. Level ``l = 0..5`` sketches the top ``16 + 8*l`` bits of ``y`` (16, 24,
..., 56 bits); the main counters play the part of the 64-bit bottom level.
Each level has ``hier_depth`` tables of ``hier_width = 2**lg`` signed
counters (same counter type as the main counters). Prefix hashing is *simple
tabulation* over the bytes of ``y`` (byte 0 = the top byte)::

    P_i[c][t] = 32-bit half (t & 1) of T_0[c][HIER_WORD_BASE + 1 + 16*i + (t >> 1)]
    u_l[t]    = P_0[byte_0][t] XOR P_1[byte_1][t] XOR ... XOR P_{l+1}[byte_{l+1}][t]
    sign      = +1 if bit 31 of u is 0 else -1
    bucket    = bits 30 .. 31-lg of u          (= ((u & 0x7FFFFFFF) * 2**lg) >> 31)

``T_0`` is the first tabulation table stream of :mod:`skimsketch.hashing` (same
seed, word indices ``>= 2**22`` that no other sketch uses), so the hierarchy
is reproducible everywhere the main family is. Simple tabulation is 3-wise
independent, enough for Count-sketch point estimates (pairwise suffices);
the hash of a prefix one byte longer is its parent's hash XOR one table
entry, so an update costs one 256-entry table look-up per level, not a full
hash. Update: per level and table, ``C[l][t][bucket] += w * sign`` — one
bincount over all levels.

Search (``search``): all ``2**16`` top-level prefixes are tested; a prefix
*passes* when at least ``r`` of its table estimates clear the threshold with
one sign, ``r`` (a majority or more) chosen per level like the main guard:
the smallest ``r`` for which the expected number of tested prefixes passing
by chance (a prefix that holds no weight lands in a uniformly random bucket
with a random sign) stays within ``MAX_EXPAND / 4``. At most ``MAX_EXPAND``
passing prefixes (the largest ``|median|``) are expanded into their 256
children at the next level; the children of the last level are full values
``y``, i.e. candidate keys, which the skimmed sketch re-estimates on its main
counters with its impostor-controlled guard (the number of keys tested
replaces the domain size). Query cost is therefore bounded:
``2**16 + LEVELS * MAX_EXPAND * 256`` prefix estimates plus at most
``MAX_EXPAND * 256`` main-sketch estimates, whatever the stream.

Limits: a key is found only if every prefix on its path passes. With
non-negative frequencies a prefix's weight is at least its dense key's, so
misses come only from sketch noise (collisions in a narrow level); under
deletes that leave negative frequencies, opposite-signed keys sharing a
prefix can cancel. A missed dense key is simply not skimmed: the join
estimate stays unbiased, with the plain hash sketch's variance for that key.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from .hashing import _M1, _M2, _mix, family

__all__ = ["PrefixHierarchy", "hierarchy", "LEVELS", "TOP_BITS", "FANOUT_BITS", "MAX_EXPAND",
           "HIER_WORD_BASE", "MIN_LG", "MAX_LG", "MAX_HIER_DEPTH", "chance_tail", "agree_mask"]

LEVELS = 6
TOP_BITS = 16
FANOUT_BITS = 8
HIER_WORD_BASE = 1 << 22
MAX_EXPAND = 1024
MIN_LG, MAX_LG = 4, 24  # hierarchy widths 16 .. 2**24
MAX_HIER_DEPTH = 32
_CHUNK = 1 << 15
_FLOAT_EXACT = float(2**52)

# modular inverses of the splitmix64 multipliers
_M1_INV = np.uint64(pow(int(_M1), -1, 1 << 64))
_M2_INV = np.uint64(pow(int(_M2), -1, 1 << 64))


def unmix(z: np.ndarray) -> np.ndarray:
    """Inverse of :func:`skimsketch.hashing._mix` on a uint64 array."""
    z = z ^ (z >> np.uint64(31)) ^ (z >> np.uint64(62))
    z = z * _M2_INV
    z = z ^ (z >> np.uint64(27)) ^ (z >> np.uint64(54))
    z = z * _M1_INV
    return z ^ (z >> np.uint64(30)) ^ (z >> np.uint64(60))


def chance_tail(counters: np.ndarray, t: float) -> np.ndarray:
    """``tail[r]`` = P[at least r of the tables give an estimate ``>= t``] for a weightless key.

    Such a key lands in a uniformly random bucket of table p with a random
    sign, so it clears ``t`` there with probability ``pi_p / 2``, ``pi_p``
    the share of the table's buckets with ``|counter| >= t``; the count of
    tables that do is Poisson-binomial. ``counters``: (tables, width).
    """
    half = (np.abs(counters) >= t).mean(axis=1) / 2.0
    d = len(half)
    dist = np.zeros(d + 1)
    dist[0] = 1.0
    for q in half:
        dist[1:] = dist[1:] * (1 - q) + dist[:-1] * q
        dist[0] *= 1 - q
    return np.cumsum(dist[::-1])[::-1]


def agree_mask(est: np.ndarray, t: float, agree: int) -> tuple[np.ndarray, np.ndarray]:
    """(mask, median) for (n, d) table estimates: at least ``agree`` tables ``>= t`` (or all ``<= -t``)."""
    d = est.shape[1]
    lo, hi = d - agree, agree - 1
    kth = sorted({lo, hi, (d - 1) // 2, d // 2})
    part = np.partition(est, kth, axis=1)
    med = 0.5 * (part[:, (d - 1) // 2] + part[:, d // 2])
    return (part[:, lo] >= t) | (part[:, hi] <= -t), med


class PrefixHierarchy:
    """Hashing, updates and search of the prefix levels for one (seed, lg, depth)."""

    def __init__(self, seed: int, lg: int, depth: int):
        self.seed, self.lg, self.depth = seed, lg, depth
        self.width = 1 << lg
        fam = family(seed)
        self.salt = np.uint64(int(fam.table_entries(0, np.array([0]), np.array([HIER_WORD_BASE]))[0, 0]))
        n_words = (depth + 1) // 2
        words = np.arange(n_words, dtype=np.uint64)
        # P[i]: (256, depth) uint32 for byte position i = 0 .. LEVELS
        self.tables = []
        for i in range(LEVELS + 1):
            w = fam.table_entries(0, np.arange(256), words + np.uint64(HIER_WORD_BASE + 1 + 16 * i))
            self.tables.append(np.ascontiguousarray(np.ascontiguousarray(w).view(np.uint32)[:, :depth]))
        self.shift = np.uint32(31 - lg)
        self.offsets = (np.arange(LEVELS * depth, dtype=np.int64) * (2 * self.width)).reshape(LEVELS, depth)
        self.shape = (LEVELS, depth, self.width)
        self._top = None

    # -- keys <-> values ---------------------------------------------------
    def values(self, keys: np.ndarray) -> np.ndarray:
        """The 64-bit values ``y = mix(key ^ salt)`` (uint64) of int64 keys."""
        return _mix(np.ascontiguousarray(keys, dtype=np.int64).view(np.uint64) ^ self.salt)

    def keys(self, values: np.ndarray) -> np.ndarray:
        """Canonical int64 keys of values ``y`` (inverse of :meth:`values`)."""
        return (unmix(np.asarray(values, dtype=np.uint64)) ^ self.salt).view(np.int64)

    # -- updates -------------------------------------------------------------
    def _cells(self, keys: np.ndarray) -> np.ndarray:
        """(n, LEVELS, depth) int64 cell ids ``(l*depth + t)*2*width + sign*width + bucket``."""
        y = self.values(keys)
        yb = y.view(np.uint8).reshape(-1, 8)  # little-endian: column 7 is the top byte
        cells = np.empty((len(keys), LEVELS, self.depth), dtype=np.int64)
        acc = np.take(self.tables[0], yb[:, 7], axis=0)
        acc ^= np.take(self.tables[1], yb[:, 6], axis=0)
        for lvl in range(LEVELS):
            if lvl:
                acc ^= np.take(self.tables[lvl + 1], yb[:, 6 - lvl], axis=0)
            np.add(acc >> self.shift, self.offsets[lvl], out=cells[:, lvl, :], casting="unsafe")
        return cells

    def delta(self, keys: np.ndarray, weights: np.ndarray | None, float_counters: bool) -> np.ndarray:
        """Counter delta (LEVELS, depth, width) of a batch of canonical keys and weights."""
        per_key = LEVELS * self.depth
        n_cells = per_key * 2 * self.width
        exact_float = weights is None or float_counters or float(np.abs(weights).sum(dtype=np.float64)) < _FLOAT_EXACT
        acc = np.zeros(n_cells, dtype=np.int64 if (weights is None or not exact_float) else np.float64)
        for s in range(0, len(keys), _CHUNK):
            cells = self._cells(keys[s : s + _CHUNK]).ravel()
            if weights is None:
                acc += np.bincount(cells, minlength=n_cells)
            elif exact_float:
                acc += np.bincount(cells, weights=np.repeat(weights[s : s + _CHUNK], per_key), minlength=n_cells)
            else:  # huge integer weights: exact int64 scatter-add
                np.add.at(acc, cells, np.repeat(weights[s : s + _CHUNK], per_key))
        acc = acc.reshape(LEVELS, self.depth, 2, self.width)
        delta = acc[:, :, 0, :] - acc[:, :, 1, :]
        if not float_counters and delta.dtype != np.int64:
            delta = np.rint(delta).astype(np.int64)
        return delta

    # -- queries -------------------------------------------------------------
    def _estimates(self, counters: np.ndarray, words: np.ndarray) -> np.ndarray:
        """(n, depth) table estimates at one level from prefix hash words (n, depth) uint32."""
        cell = (words >> self.shift).astype(np.intp)  # sign * width + bucket
        bucket = cell & (self.width - 1)
        sign = 1.0 - 2.0 * (cell >> self.lg)
        rows = np.arange(self.depth)[None, :]
        return counters[rows, bucket] * sign

    def _top_words(self) -> np.ndarray:
        if self._top is None:
            self._top = (self.tables[0][:, None, :] ^ self.tables[1][None, :, :]).reshape(-1, self.depth)
        return self._top

    def _level_pass(self, counters: np.ndarray, est: np.ndarray, t: float, tested: int):
        """Passing mask and |median| at one level (agreement chosen from chance passes)."""
        d = self.depth
        tail = chance_tail(counters, t)
        budget = MAX_EXPAND / 4.0
        agree = d
        for r in range(d // 2 + 1, d + 1):
            if tested * 2.0 * tail[r] <= budget:
                agree = r
                break
        mask, med = agree_mask(est, t, agree)
        return mask, np.abs(med)

    def search(self, counters: np.ndarray, t: float, max_expand: int = MAX_EXPAND):
        """Candidate keys whose prefixes pass at every level -> (int64 keys, stats dict).

        ``counters``: (LEVELS, depth, width) float64. ``stats``: prefixes tested
        and passing per level, whether the expansion cap cut, keys returned."""
        prefixes = np.arange(1 << TOP_BITS, dtype=np.uint64)
        words = self._top_words()
        tested, passed, capped = [], [], False
        for lvl in range(LEVELS):
            est = self._estimates(counters[lvl], words)
            mask, mag = self._level_pass(counters[lvl], est, t, len(prefixes))
            tested.append(len(prefixes))
            keep = np.flatnonzero(mask)
            passed.append(len(keep))
            if len(keep) > max_expand:
                capped = True
                keep = keep[np.argsort(-mag[keep], kind="stable")[:max_expand]]
                keep.sort()
            prefixes, words = prefixes[keep], words[keep]
            children = np.arange(256, dtype=np.uint64)
            prefixes = ((prefixes[:, None] << np.uint64(8)) | children[None, :]).ravel()
            if lvl + 1 < LEVELS:
                words = (words[:, None, :] ^ self.tables[lvl + 2][None, :, :]).reshape(-1, self.depth)
        keys = self.keys(prefixes)
        return keys, {"tested": tested, "passed": passed, "capped": capped, "candidates": len(keys)}


@lru_cache(maxsize=64)
def hierarchy(seed: int, lg: int, depth: int) -> PrefixHierarchy:
    """The (cached) prefix hierarchy of a seed and shape."""
    return PrefixHierarchy(seed, lg, depth)
