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

Levels. Level ``l = 0..5`` sketches the top ``12 + 8*l`` bits of ``y`` (12, 20,
..., 52 bits); the main counters play the part of the 64-bit bottom level
(the last step tests ``2**12`` children of each passing 52-bit prefix there).
Each level has ``hier_depth`` tables of ``hier_width = 2**lg`` signed
counters (same counter type as the main counters). Prefix hashing is *simple
tabulation* over the characters of ``y``: ``c_0`` = its top 12 bits, ``c_i`` =
the ``i``-th byte after them (``i = 1..5``)::

    P_i[c][t] = 32-bit half (t & 1) of T_0[c][HIER_WORD_BASE + 1 + 16*i + (t >> 1)]
    u_l[t]    = P_0[c_0][t] XOR P_1[c_1][t] XOR ... XOR P_l[c_l][t]
    z         = u_l[t] * 0x9E3779B1 mod 2**32
    sign      = +1 if bit 31 of z is 0 else -1
    bucket    = bits 30 .. 31-lg of z          (= ((z & 0x7FFFFFFF) * 2**lg) >> 31)

``T_0`` is the first tabulation table stream of :mod:`skimsketch.keys.hashing` (same
seed, word indices ``>= 2**22`` that no other sketch uses), so the hierarchy
is reproducible everywhere the main family is. Simple tabulation is 3-wise
independent, enough for Count-sketch point estimates (pairwise suffices);
the hash of a prefix one byte longer is its parent's hash XOR one table
entry, so an update costs one 256-entry table look-up per level, not a full
hash. The multiplication (a bijection, so it keeps the independence) makes
the bucket bits depend on all bits of ``u``: without it a prefix colliding
with a heavy one at some level would collide again with that prefix's
child at every level below (both children XOR the same entry), and every
chance pass would propagate down the hierarchy. Update: per level and table,
``C[l][t][bucket] += w * sign`` — one bincount over all levels.

Search (``search``): all ``2**12`` top-level prefixes are tested (a short top
level keeps the number tested there, and with it the chance passes a narrow
level must rule out, small); passing prefixes are expanded into their 256
children at the next level; after the last level each passing prefix yields
``2**12`` candidate keys. At each level (:meth:`PrefixHierarchy._level_select`):

* A rule ``(x, r)`` passes a prefix when at least ``r`` of its table
  estimates are ``>= x`` (or all of those ``<= -x``). A prefix holding no
  weight lands in a uniformly random bucket with a random sign, so its chance
  to pass is a Poisson-binomial tail of the shares of buckets beyond ``x``
  (:func:`chance_tail`, as for the main guard). For every majority ``r`` the
  threshold ``x >= T`` is the smallest (``T`` or a counter magnitude) keeping
  ``tested * chance`` within a budget split among the rules; a prefix passes
  if it passes any rule (``r = depth`` reaches lighter prefixes, smaller ``r``
  with a higher threshold tolerates tables spoilt by collisions).
* Peel: prefixes passing the rules for ``PEEL_BUDGET`` (0.01 expected chance
  passes) are accepted one at a time, heaviest first, each re-checked on the
  counters left by the ones before, and their median estimates subtracted
  from a copy of the level's counters (skimming applied to the level: lighter
  prefixes that shared buckets with them come clear); up to ``PEEL_ROUNDS``.
* Expand: on the peeled counters the other prefixes pass the rules for
  ``max(LEVEL_BUDGET_MIN, tested * CHANCE_RATE)`` with ``CHANCE_RATE = 1/512``:
  each expanded prefix yields on average at most half a false child among its
  256, so the search cannot blow up; a level too narrow for the stream raises
  its thresholds and keeps only its heaviest prefixes.

At most ``MAX_EXPAND`` passing prefixes (the largest ``|median|``) are
expanded per level, ``MAX_EXPAND / 4`` at the last. The candidate keys are
re-estimated on the main counters with the skimmed sketch's impostor-controlled
guard (the number of keys tested replaces the domain size). Query cost is
therefore bounded: ``2**12 + LEVELS * MAX_EXPAND * 256`` prefix estimates plus
at most ``MAX_EXPAND / 4 * 2**12`` main-sketch estimates, whatever the stream.
Capacity: a level of width ``w`` separates about ``w / 4`` heavy prefixes at
the full threshold (``(pi/2)**r <= 1/512`` needs a small share ``pi`` of heavy
buckets); the tests require the ``w / 8`` heaviest to be found (docs/unbounded.md).

Limits: a key is found only if every prefix on its path passes. With
non-negative frequencies a prefix's weight is at least its dense key's, so
misses come only from sketch noise (collisions in a narrow level); under
deletes that leave negative frequencies, opposite-signed keys sharing a
prefix can cancel. A missed dense key is simply not skimmed: the join
estimate stays unbiased, with the plain hash sketch's variance for that key.
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np

from ...keys.hashing import family, mix, unmix
from .hierarchy_shape import (
    BOTTOM_BITS,
    FANOUT_BITS,
    LEVELS,
    MAX_HIER_DEPTH,
    MAX_LG,
    MIN_HIER_DEPTH,
    MIN_LG,
    TOP_BITS,
)
from ...kernels import accumulate_cells, as_counter_delta

__all__ = ["PrefixHierarchy", "hierarchy", "LEVELS", "TOP_BITS", "FANOUT_BITS", "MAX_EXPAND",
           "HIER_WORD_BASE", "MIN_LG", "MAX_LG", "MAX_HIER_DEPTH", "MIN_HIER_DEPTH", "chance_tail"]

MAX_BOTTOM_DIVISOR = 4  # the last level expands at most MAX_EXPAND / 4 prefixes (4096 children each)
HIER_WORD_BASE = 1 << 22
MAX_EXPAND = 512
CHANCE_RATE = 1.0 / 512  # allowed chance-pass probability of a tested prefix (split among the rules)
LEVEL_BUDGET_MIN = 8.0  # ... but at least this many expected chance passes per level
PEEL_BUDGET = 0.01  # expected chance passes of the strict (peeling) rule per round: a false peel wipes a heavy prefix
PEEL_ROUNDS = 3
_ZMUL = np.uint32(0x9E3779B1)


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


def _row_passes(e: list, rules) -> float | None:
    """Median of one prefix's table estimates if it passes any rule, else ``None`` (scalar fast path)."""
    for x, r in rules:
        if sum(v >= x for v in e) >= r or sum(v <= -x for v in e) >= r:
            srt = sorted(e)
            n = len(srt)
            return 0.5 * (srt[(n - 1) // 2] + srt[n // 2])
    return None


class PrefixHierarchy:
    """Hashing, updates and search of the prefix levels for one (seed, lg, depth)."""

    def __init__(self, seed: int, lg: int, depth: int):
        self.seed, self.lg, self.depth = seed, lg, depth
        self.width = 1 << lg
        fam = family(seed)
        self.salt = np.uint64(int(fam.table_entries(0, np.array([0]), np.array([HIER_WORD_BASE]))[0, 0]))
        n_words = (depth + 1) // 2
        words = np.arange(n_words, dtype=np.uint64)
        # P[i]: (2**TOP_BITS or 256, depth) uint32 for character i = 0 .. LEVELS-1
        self.tables = []
        for i in range(LEVELS):
            size = 1 << (TOP_BITS if i == 0 else FANOUT_BITS)
            w = fam.table_entries(0, np.arange(size), words + np.uint64(HIER_WORD_BASE + 1 + 16 * i))
            self.tables.append(np.ascontiguousarray(np.ascontiguousarray(w).view(np.uint32)[:, :depth]))
        # the same tables column by column: columns[t][i] = P_i[:, t] uint32
        self.columns = [[np.ascontiguousarray(tab[:, t]) for tab in self.tables] for t in range(depth)]
        self.shift = np.uint32(31 - lg)
        self.offsets = (np.arange(LEVELS * depth, dtype=np.int64) * (2 * self.width)).reshape(LEVELS, depth)
        self.shape = (LEVELS, depth, self.width)
        self._top = None

    # -- keys <-> values ---------------------------------------------------
    def values(self, keys: np.ndarray) -> np.ndarray:
        """The 64-bit values ``y = mix(key ^ salt)`` (uint64) of int64 keys."""
        return mix(np.ascontiguousarray(keys, dtype=np.int64).view(np.uint64) ^ self.salt)

    def keys(self, values: np.ndarray) -> np.ndarray:
        """Canonical int64 keys of values ``y`` (inverse of :meth:`values`)."""
        return (unmix(np.asarray(values, dtype=np.uint64)) ^ self.salt).view(np.int64)

    # -- updates -------------------------------------------------------------
    def _cells(self, keys: np.ndarray) -> np.ndarray:
        """(LEVELS, depth, n) int64 cell ids ``(l*depth + t)*2*width + sign*width + bucket``.

        Table by table with 1-D look-ups into the table columns (much
        faster than gathering rows): ``u`` of level l is the running XOR."""
        y = self.values(keys)
        chars = [(y >> np.uint64(64 - TOP_BITS)).astype(np.intp)]
        mask = np.uint64((1 << FANOUT_BITS) - 1)
        for i in range(1, LEVELS):
            chars.append(((y >> np.uint64(64 - TOP_BITS - FANOUT_BITS * i)) & mask).astype(np.intp))
        cells = np.empty((LEVELS, self.depth, len(keys)), dtype=np.int64)
        for t in range(self.depth):
            cols = self.columns[t]
            acc = np.take(cols[0], chars[0])
            z = np.empty_like(acc)
            for lvl in range(LEVELS):
                if lvl:
                    acc ^= np.take(cols[lvl], chars[lvl])
                np.multiply(acc, _ZMUL, out=z)
                z >>= self.shift
                np.add(z, self.offsets[lvl, t], out=cells[lvl, t], casting="unsafe")
        return cells

    def delta(self, keys: np.ndarray, weights: np.ndarray | None, float_counters: bool) -> np.ndarray:
        """Counter delta (LEVELS, depth, width) of a batch of canonical keys and weights."""
        per_key = LEVELS * self.depth
        acc = accumulate_cells(len(keys), lambda a, b: self._cells(keys[a:b]), weights,
                               per_key * 2 * self.width, per_key, False, float_counters)
        acc = acc.reshape(LEVELS, self.depth, 2, self.width)
        return as_counter_delta(acc[:, :, 0, :] - acc[:, :, 1, :], float_counters)

    # -- queries -------------------------------------------------------------
    def _cells_of_words(self, words: np.ndarray):
        """(buckets (n, depth) intp, signs (n, depth) float64) of prefix hash words."""
        cell = ((words * _ZMUL) >> self.shift).astype(np.intp)  # sign * width + bucket
        return cell & (self.width - 1), 1.0 - 2.0 * (cell >> self.lg)

    def _estimates(self, counters: np.ndarray, words: np.ndarray) -> np.ndarray:
        """(n, depth) table estimates at one level from prefix hash words (n, depth) uint32."""
        bucket, sign = self._cells_of_words(words)
        return counters[np.arange(self.depth)[None, :], bucket] * sign

    def _top_words(self) -> np.ndarray:
        if self._top is None:
            self._top = self.tables[0]
        return self._top

    def _rules(self, counters: np.ndarray, t: float, tested: int, budget: float) -> list[tuple[float, int]]:
        """Pass rules ``(threshold, r)`` for one level: "at least ``r`` tables beyond ``threshold`` with one sign".

        A prefix that holds no weight passes rule ``(x, r)`` with probability
        ``2 P[PoissonBinomial(pi(x)/2) >= r]`` (:func:`chance_tail`). For each
        majority ``r`` the threshold is the smallest value ``>= t`` (``t`` or a
        counter magnitude) at which ``tested`` such prefixes give at most
        ``budget / (number of rules)`` passes (``inf`` if none): a prefix
        passes if it passes any rule. The rule with ``r = depth`` reaches
        lighter prefixes; the ones with smaller ``r`` (a higher threshold)
        tolerate tables spoilt by collisions with other heavy prefixes."""
        d = self.depth
        rs = list(range(d // 2 + 1, d + 1))
        share = budget / len(rs)
        mags = np.abs(counters)
        xs = np.unique(mags[mags > t])
        xs = np.concatenate([[t], xs])  # candidate thresholds, increasing
        # shares of buckets at or beyond each candidate threshold, per table -> Poisson-binomial tails
        srt = np.sort(mags, axis=1)
        pi = np.stack([(srt.shape[1] - np.searchsorted(row, xs, side="left")) / srt.shape[1] for row in srt])
        dist = np.zeros((len(xs), d + 1))
        dist[:, 0] = 1.0
        for q in pi / 2.0:  # one table at a time
            dist[:, 1:] = dist[:, 1:] * (1 - q)[:, None] + dist[:, :-1] * q[:, None]
            dist[:, 0] *= 1 - q
        tail = np.cumsum(dist[:, ::-1], axis=1)[:, ::-1]  # tail[i, r] = P[X >= r] at threshold xs[i]
        out = []
        for r in rs:
            ok = np.flatnonzero(tested * 2.0 * tail[:, r] <= share)
            out.append((float(xs[ok[0]]) if len(ok) else math.inf, r))
        return out

    @staticmethod
    def _passes(est: np.ndarray, rules) -> tuple[np.ndarray, np.ndarray]:
        """(mask, median of the passing rows) of (n, d) estimates under a union of rules."""
        mask = np.zeros(len(est), dtype=bool)
        for x, r in rules:
            if math.isfinite(x):
                mask |= ((est >= x).sum(axis=1) >= r) | ((est <= -x).sum(axis=1) >= r)
        return mask, np.median(est[mask], axis=1) if mask.any() else np.zeros(0)

    def _level_select(self, counters: np.ndarray, words: np.ndarray, t: float):
        """Indices of the passing prefixes, their |median| estimates, and the expansion threshold.

        1. Peel: prefixes passing a strict rule (expected chance passes at
           most ``PEEL_BUDGET``) are accepted one at a time, heaviest first,
           each re-checked on the counters left by the ones before, and their
           median estimates subtracted from a copy of the level's counters —
           the skimming idea applied to the level, so heavy prefixes that
           collided with heavier ones, and the threshold raised by their
           buckets, come clear; up to ``PEEL_ROUNDS`` rounds.
        2. Expand: on the peeled counters the remaining prefixes pass the
           subcritical rule (expected chance passes at most
           ``max(LEVEL_BUDGET_MIN, tested * CHANCE_RATE)``: on average at most
           half a false child per expanded prefix)."""
        n = len(words)
        c = counters.copy()
        bucket, sign = self._cells_of_words(words)
        rows = np.arange(self.depth)[None, :]
        rem = np.arange(n)
        found, mags = [], []
        for _ in range(PEEL_ROUNDS):
            rules = self._rules(c, t, n, PEEL_BUDGET)
            if not len(rem):
                break
            mask, med = self._passes(c[rows, bucket[rem]] * sign[rem], rules)
            if not mask.any():
                break
            # greedy, heaviest first, each re-estimated on what the ones before left: a prefix that
            # only looked strong through a heavier one's buckets fails once that one is peeled
            peeled = []
            tables = np.arange(self.depth)
            for i in rem[mask][np.argsort(-np.abs(med), kind="stable")].tolist():
                m = _row_passes((c[tables, bucket[i]] * sign[i]).tolist(), rules)
                if m is not None:
                    c[tables, bucket[i]] -= m * sign[i]
                    peeled.append(i)
                    mags.append(np.array([abs(m)]))
            if not peeled:
                break
            found.append(np.array(peeled, dtype=np.intp))
            rem = np.setdiff1d(rem, found[-1], assume_unique=True)
        rules = self._rules(c, t, n, max(LEVEL_BUDGET_MIN, n * CHANCE_RATE))
        tl = min(x for x, _ in rules)
        if len(rem):
            mask, med = self._passes(c[rows, bucket[rem]] * sign[rem], rules)
            found.append(rem[mask])
            mags.append(np.abs(med))
        if not found:
            return np.zeros(0, dtype=np.intp), np.zeros(0), tl
        idx, mag = np.concatenate(found), np.concatenate(mags)
        order = np.argsort(idx)
        return idx[order], mag[order], tl

    def search(self, counters: np.ndarray, t: float, max_expand: int = MAX_EXPAND):
        """Candidate keys whose prefixes pass at every level -> (int64 keys, stats dict).

        ``counters``: (LEVELS, depth, width) float64. ``stats``: prefixes tested
        and passing per level, each level's lowest pass threshold, whether the expansion cap cut
        and the estimate of the heaviest prefix it dropped (``cut``), keys returned. Every key
        whose prefixes all clear ``max(thresholds + cut)`` is returned (up to sketch noise)."""
        prefixes = np.arange(1 << TOP_BITS, dtype=np.uint64)
        words = self._top_words()
        tested, passed, thresholds, cut, capped = [], [], [], [], False
        for lvl in range(LEVELS):
            keep, mag, tl = self._level_select(counters[lvl], words, t)
            thresholds.append(tl)
            tested.append(len(prefixes))
            passed.append(len(keep))
            cap = max_expand if lvl + 1 < LEVELS else max(1, max_expand // MAX_BOTTOM_DIVISOR)
            if len(keep) > cap:
                capped = True
                order = np.argsort(-mag, kind="stable")
                cut.append(float(mag[order[cap]]))  # the heaviest prefix dropped: lighter keys may be missed
                keep = np.sort(keep[order[:cap]])
            prefixes, words = prefixes[keep], words[keep]
            step = FANOUT_BITS if lvl + 1 < LEVELS else BOTTOM_BITS
            children = np.arange(1 << step, dtype=np.uint64)
            prefixes = ((prefixes[:, None] << np.uint64(step)) | children[None, :]).ravel()
            if lvl + 1 < LEVELS:
                words = (words[:, None, :] ^ self.tables[lvl + 1][None, :, :]).reshape(-1, self.depth)
        keys = self.keys(prefixes)
        return keys, {"tested": tested, "passed": passed, "thresholds": thresholds, "capped": capped,
                      "cut": cut, "candidates": len(keys)}


@lru_cache(maxsize=64)
def hierarchy(seed: int, lg: int, depth: int) -> PrefixHierarchy:
    """The (cached) prefix hierarchy of a seed and shape."""
    return PrefixHierarchy(seed, lg, depth)
