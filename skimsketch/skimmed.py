"""The skimmed sketch (Ganguly, Garofalakis, Rastogi, EDBT 2004).

Maintained exactly like a :class:`~skimsketch.HashSketch` (same update, same
memory). At query time, SKIMDENSE estimates every key's frequency, records
the *dense* ones (``|f̂(v)| >= T``) and subtracts them from the counters; the
residual sketch ``H'`` then only holds small frequencies, so its self-join
size — and with it the error — is small. ESTSKIMJOINSIZE returns::

    f̂_d·ĝ_d                                   (exact: no sketch error)
  + median_p sum_q D_f[p][q] * H'_g[p][q]       (dense f  x residual g)
  + median_p sum_q H'_f[p][q] * D_g[p][q]       (residual f x dense g)
  + median_p sum_q H'_f[p][q] * H'_g[p][q]      (residual x residual)

where ``D = H - H'`` is the hash sketch of the dense frequencies. Since
``H'`` is exactly the sketch of ``f - f̂_d``, the three sketched terms are
unbiased; each has variance at most ``(F2(a) F2(b) + (a·b)^2) / width`` for its
two vectors, and the interval is a union bound over the three
Chebyshev-median intervals (:mod:`skimsketch.bounds`).

Threshold: ``T = skim_factor * n / width`` with ``n = max(|total weight|,
sqrt(F2 estimate))`` — the stream's L1 norm when frequencies are non-negative,
and still a lower bound on it under deletes. The default factor is justified
by ``benchmarks/skim_factor.py`` (see docs/defaults.md).

False-dense guard: a key absent from the stream that collides with heavy
keys in most tables gets a heavy estimate; skimming it corrupts ``H'`` (and
steals the heavy keys' mass). With a domain much larger than the stream there
can be many such impostors, and no rule on one key's estimates tells them from
the true keys. So: (1) a key is dense only when at least ``r`` of its table
estimates clear ``T`` with one sign, ``r`` chosen per query so that the
expected number of domain keys passing by chance stays below
``IMPOSTOR_BUDGET`` (:meth:`SkimmedSketch.agreement`; at least two thirds of
the tables); (2) candidates sharing no bucket with another candidate are
skimmed at once; the others one at a time, fewest shared buckets first, each
re-estimated on the residual left by the ones before — and only when the
expected number of impostors is within budget. If it is not (too few tables
for the domain), only the unshared candidates are skimmed and the estimate
degrades gracefully towards the plain hash sketch's.
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np

from .bounds import check_confidence, chebyshev_k
from .errors import KeyDomainError
from .estimate import Estimate
from .hash_sketch import HashSketch, f2_bound, row_dots
from .hashing import family

__all__ = ["SkimmedSketch", "SkimResult", "DEFAULT_SKIM_FACTOR"]

DEFAULT_SKIM_FACTOR = 1.0
MAX_ROUNDS = 4
# expected number of absent keys that may pass the guard by chance in one scan
IMPOSTOR_BUDGET = 0.25
_DOMAIN_CHUNK = 1 << 16


class SkimResult:
    """Dense keys, their estimated frequencies, and the residual counters."""

    __slots__ = ("keys", "values", "residual", "dense_sketch", "threshold", "rounds", "agree", "impostors")

    def __init__(self, keys, values, residual, dense_sketch, threshold, rounds, agree, impostors):
        self.agree = agree  # tables that had to agree for a key to count as dense
        self.impostors = impostors  # expected absent keys passing that rule by chance
        self.keys = keys  # int64, sorted
        self.values = values  # float64
        self.residual = residual  # float64 (depth, width)
        self.dense_sketch = dense_sketch  # float64 (depth, width) = counters - residual
        self.threshold = threshold
        self.rounds = rounds


@lru_cache(maxsize=64)
def _domain_chunk_hashes(seed: int, width: int, depth: int, start: int):
    """Buckets and signs of the domain chunk ``[start, start + _DOMAIN_CHUNK)``,
    cached: a join skims two sketches of one shape over the same domain."""
    keys = np.arange(start, start + _DOMAIN_CHUNK, dtype=np.int64)
    buckets, signs = family(seed).buckets_signs(keys, width, depth)
    return buckets.astype(np.int32), signs


def _guard_index(depth: int) -> int:
    return (depth - 1) // 3


class SkimmedSketch(HashSketch):
    """Skimmed sketch over the integer domain ``[0, domain)``.

    >>> import skimsketch as ss
    >>> f = ss.SkimmedSketch(width=64, depth=5, seed=2, domain=1000).update([5] * 500 + list(range(100)))
    >>> g = ss.SkimmedSketch(width=64, depth=5, seed=2, domain=1000).update([5] * 300 + list(range(50)))
    >>> e = f.join_size(g)
    >>> e.method, e.detail["dense_f"], e.detail["dense_g"]
    ('skimmed', 1, 1)
    """

    KIND = 3
    METHOD = "skimmed"

    def __init__(self, width: int, depth: int, seed: int = 0, domain: int | None = None,
                 dtype: str = "int64", skim_factor: float = DEFAULT_SKIM_FACTOR):
        if domain is None:
            raise ValueError(
                "SkimmedSketch without a domain (unbounded int64/str/bytes keys) is not supported yet: "
                "pass domain=m for integer keys in [0, m), or use HashSketch"
            )
        if isinstance(domain, bool) or not isinstance(domain, (int, np.integer)) or not 1 <= domain < 2**63:
            raise ValueError(f"domain must be an int in [1, 2**63), got {domain!r}")
        if isinstance(skim_factor, bool) or not isinstance(skim_factor, (int, float)) or not (
            math.isfinite(skim_factor) and skim_factor > 0
        ):
            raise ValueError(f"skim_factor must be a positive finite number, got {skim_factor!r}")
        super().__init__(width, depth, seed, dtype)
        self._domain_size = int(domain)
        self._skim_factor = float(skim_factor)

    @property
    def domain(self) -> int:
        return self._domain_size

    @property
    def skim_factor(self) -> float:
        return self._skim_factor

    @property
    def params(self) -> dict:
        return dict(super().params, domain=self._domain_size, skim_factor=self._skim_factor)

    def check_compatible(self, other, operation="combine", same_dtype=True):
        # skim_factor is a query-time setting: it never makes sketches incompatible
        if isinstance(other, SkimmedSketch) and other._skim_factor != self._skim_factor:
            other = other.copy()
            other._skim_factor = self._skim_factor
        super().check_compatible(other, operation, same_dtype)

    def empty_like(self):
        return type(self)(**self.params)

    def _validate_keys(self, keys):
        if len(keys) and (keys.min() < 0 or keys.max() >= self._domain_size):
            bad = keys[(keys < 0) | (keys >= self._domain_size)][0]
            raise KeyDomainError(f"key {int(bad)} is outside the declared domain [0, {self._domain_size})")

    def _domain(self):
        return self._domain_size

    def _kind_param(self) -> float:
        return self._skim_factor

    @classmethod
    def _from_header(cls, head, ext):
        if head.domain is None:
            from .errors import CorruptSketchError

            raise CorruptSketchError("skimmed sketch without a domain is not readable by this version")
        return cls(head.width, head.depth, head.seed, domain=head.domain,
                   dtype="float64" if head.float_counters else "int64", skim_factor=head.param)

    # -- SKIMDENSE ---------------------------------------------------------
    def threshold(self) -> float:
        """``T = skim_factor * n / width`` with ``n = max(|total weight|, sqrt(F2 estimate))``."""
        n = max(abs(float(self._total)), math.sqrt(f2_bound(self._self_tables())))
        return self._skim_factor * n / self._width

    def _table_estimates(self, counters: np.ndarray, keys: np.ndarray) -> np.ndarray:
        """(len(keys), depth) table estimates ``counters[p][h_p(v)] * xi_p(v)``."""
        if len(keys) == _DOMAIN_CHUNK and keys[0] % _DOMAIN_CHUNK == 0:
            buckets, signs = _domain_chunk_hashes(self._seed, self._width, self._depth, int(keys[0]))
        else:
            buckets, signs = self.family.buckets_signs(keys, self._width, self._depth)
        return (np.take_along_axis(counters, buckets, axis=1) * signs).T

    def _select(self, est: np.ndarray, t: float, agree: int):
        """(guard mask, median, median-passing mask) from (n, depth) table estimates.

        The guard holds when at least ``agree`` tables give ``>= t`` (or all of
        them ``<= -t``) — not only their median."""
        d = self._depth
        lo, hi = d - agree, agree - 1
        kth = sorted({lo, hi, (d - 1) // 2, d // 2})
        part = np.partition(est, kth, axis=1)
        med = 0.5 * (part[:, (d - 1) // 2] + part[:, d // 2])
        guard = (part[:, lo] >= t) | (part[:, hi] <= -t)
        return guard, med, np.abs(med) >= t

    def agreement(self, counters: np.ndarray, t: float) -> tuple[int, float]:
        """(tables that must agree, expected impostors) for a domain scan at threshold ``t``.

        A key absent from the stream lands in a uniformly random bucket of
        each table with a random sign, so it looks ``>= t`` in table p with
        probability ``pi_p / 2``, ``pi_p`` being the share of that table's
        buckets with ``|counter| >= t``. The expected number of the domain's
        keys that pass "at least r tables agree" by chance is
        ``domain * 2 * P[PoissonBinomial(pi/2) >= r]``; we take the smallest
        ``r >= depth - floor((depth-1)/3)`` that keeps it below
        ``IMPOSTOR_BUDGET`` (``r = depth`` if none does).
        """
        d = self._depth
        half = (np.abs(counters) >= t).mean(axis=1) / 2.0
        dist = np.zeros(d + 1)  # Poisson-binomial distribution of agreeing tables
        dist[0] = 1.0
        for q in half:
            dist[1:] = dist[1:] * (1 - q) + dist[:-1] * q
            dist[0] *= 1 - q
        tail = np.cumsum(dist[::-1])[::-1]  # tail[r] = P[X >= r]
        for r in range(d - _guard_index(d), d + 1):
            expected = self._domain_size * 2.0 * tail[r]
            if expected <= IMPOSTOR_BUDGET:
                return r, float(expected)
        return d, float(self._domain_size * 2.0 * tail[d])

    def skim(self) -> SkimResult:
        """Run SKIMDENSE (cached until the sketch changes).

        1. Scan the domain; candidates are keys whose median estimate clears T.
        2. Candidates that share no bucket with another candidate do not
           interact: those passing the guard are skimmed at once.
        3. The others are visited sequentially, fewest shared buckets first
           (a true heavy key rarely shares; an absent key that looks heavy
           shares a bucket with a heavy key in most tables), re-estimated on
           the current residual and skimmed if they pass the guard; passes
           repeat until nothing changes (at most ``MAX_ROUNDS``).
        """
        res = self._cache.get("skim")
        if res is not None:
            return res
        counters = self._counters.astype(np.float64)
        residual = counters.copy()
        t = self.threshold()
        found: dict[int, float] = {}
        rounds = 0
        agree, impostors = self.depth, 0.0
        if t > 0:
            rounds = 1
            agree, impostors = self.agreement(counters, t)
            trusted = impostors <= IMPOSTOR_BUDGET
            cand, cand_med, cand_guard = [], [], []
            need = (self._depth + 1) // 2  # tables with |estimate| >= T that |median| >= T needs
            for s in range(0, self._domain_size, _DOMAIN_CHUNK):
                keys = np.arange(s, min(s + _DOMAIN_CHUNK, self._domain_size), dtype=np.int64)
                est = self._table_estimates(counters, keys)
                keep = (np.abs(est) >= t).sum(axis=1) >= need
                keys, est = keys[keep], est[keep]
                guard, med, passing = self._select(est, t, agree)
                cand.append(keys[passing])
                cand_med.append(med[passing])
                cand_guard.append(guard[passing])
            cand, cand_med, cand_guard = map(np.concatenate, (cand, cand_med, cand_guard))
            shared = self._shared_buckets(cand)
            alone = (shared == 0) & cand_guard
            self._subtract_dense(residual, cand[alone], cand_med[alone])
            found.update(zip(cand[alone].tolist(), cand_med[alone].tolist()))
            order = np.lexsort((-np.abs(cand_med), shared))
            # keys sharing buckets are only skimmed when chance passes are rare
            pending = [i for i in order.tolist() if not alone[i]] if trusted else []
            while pending and rounds < MAX_ROUNDS:
                rounds += 1
                left = []
                for i in pending:
                    key = cand[i : i + 1]
                    guard, med, _ = self._select(self._table_estimates(residual, key), t, agree)
                    if guard[0]:
                        self._subtract_dense(residual, key, med)
                        found[int(key[0])] = found.get(int(key[0]), 0.0) + float(med[0])
                    else:
                        left.append(i)
                if len(left) == len(pending):
                    break
                pending = left
        keys_arr = np.array(sorted(found), dtype=np.int64)
        vals_arr = np.array([found[k] for k in keys_arr.tolist()], dtype=np.float64)
        res = SkimResult(keys_arr, vals_arr, residual, counters - residual, t, rounds, agree, impostors)
        self._cache["skim"] = res
        return res

    def _shared_buckets(self, keys: np.ndarray) -> np.ndarray:
        """For each key, in how many tables its bucket holds another of ``keys``."""
        if not len(keys):
            return np.zeros(0, dtype=np.int64)
        buckets, _ = self.family.buckets_signs(keys, self._width, self._depth)
        shared = np.zeros(len(keys), dtype=np.int64)
        for p in range(self._depth):
            occupancy = np.bincount(buckets[p], minlength=self._width)
            shared += occupancy[buckets[p]] > 1
        return shared

    def _subtract_dense(self, residual: np.ndarray, keys: np.ndarray, values: np.ndarray) -> None:
        if not len(keys):
            return
        buckets, signs = self.family.buckets_signs(keys, self._width, self._depth)
        for p in range(self._depth):
            residual[p] -= np.bincount(buckets[p], weights=values * signs[p], minlength=self._width)

    def heavy_hitters(self) -> dict:
        """The dense keys found by SKIMDENSE with their estimated frequencies."""
        res = self.skim()
        return dict(zip(res.keys.tolist(), res.values.tolist()))

    # -- ESTSKIMJOINSIZE ----------------------------------------------------
    def join_size(self, other, confidence: float = 0.95) -> Estimate:
        """Estimated ``f·g`` by ESTSKIMJOINSIZE (see the module docstring)."""
        conf = self._check_join(other, confidence)
        a, b = self.skim(), other.skim()
        common, ia, ib = np.intersect1d(a.keys, b.keys, assume_unique=True, return_indices=True)
        dense_dense = float(np.dot(a.values[ia], b.values[ib]))
        terms = (
            row_dots(a.dense_sketch, b.residual),
            row_dots(a.residual, b.dense_sketch),
            row_dots(a.residual, b.residual),
        )
        meds = [float(np.median(t)) for t in terms]
        value = dense_dense + sum(meds)
        f2_dense_a, f2_dense_b = float(np.dot(a.values, a.values)), float(np.dot(b.values, b.values))
        f2_res_a, f2_res_b = f2_bound(row_dots(a.residual, a.residual)), f2_bound(row_dots(b.residual, b.residual))
        pairs = ((f2_dense_a, f2_res_b), (f2_res_a, f2_dense_b), (f2_res_a, f2_res_b))
        sigma = sum(math.sqrt((x * y + m * m) / self._width) for (x, y), m in zip(pairs, meds))
        half = chebyshev_k(self._depth, 1.0 - (1.0 - conf) / 3.0) * sigma
        return Estimate(
            value, value - half, value + half, conf, self.METHOD,
            {
                "dense_dense": dense_dense, "dense_f": len(a.keys), "dense_g": len(b.keys),
                "common_dense": len(common), "terms": meds, "threshold_f": a.threshold,
                "threshold_g": b.threshold,
            },
        )
