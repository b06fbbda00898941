"""The keys SKIMDENSE tests (:class:`Candidates`: keys, their buckets and signs in the main tables, and a
bucket index): a domain or key-range scan (at most ``MAX_SCAN_DOMAIN`` keys, cached), the prefix
search's keys, or none."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np

from ...kernels import bucket_members
from ...keys.hashing import family

__all__ = ["MAX_SCAN_DOMAIN", "RANGE_ALIGN", "Candidates", "domain_candidates", "no_candidates",
           "prefix_candidates", "range_candidates"]

MAX_SCAN_DOMAIN = 1 << 22  # largest domain a query scans (docs/defaults.md: cost)


@dataclass
class Candidates:
    """Keys to test, with their buckets (depth, n) and signs (depth, n) in the main tables."""

    keys: np.ndarray
    buckets: np.ndarray
    signs: np.ndarray
    stats: dict | None = field(default=None, compare=False)  # prefix-search statistics, if any
    _csr: tuple | None = field(default=None, compare=False, repr=False)

    def __len__(self) -> int:
        return len(self.keys)

    def bucket_index(self, width: int) -> tuple[np.ndarray, np.ndarray]:
        """``(order, starts)``, built once: the candidates in bucket ``b`` of table ``p`` are
        ``order[p, starts[p, b]:starts[p, b + 1]]``."""
        if self._csr is None:
            # a stable sort of bucket numbers below 2**16 is a radix sort in NumPy
            b = self.buckets.astype(np.uint16) if width <= 1 << 16 else self.buckets
            order = np.argsort(b, axis=1, kind="stable")
            starts = np.stack([np.searchsorted(self.buckets[q][order[q]], np.arange(width + 1))
                               for q in range(len(order))])
            self._csr = (order, starts)
        return self._csr

    def in_buckets(self, p: int, mask: np.ndarray) -> np.ndarray:
        """Positions of the candidates whose table-``p`` bucket is set in ``mask`` (width,)."""
        order, starts = self.bucket_index(len(mask))
        return bucket_members(order[p], starts[p], mask)


@lru_cache(maxsize=8)
def _range_hashes(seed: int, width: int, depth: int, low: int, high: int) -> Candidates:
    keys = np.arange(low, high + 1, dtype=np.int64)
    buckets, signs = family(seed).buckets_signs(keys, width, depth)
    out = Candidates(keys, buckets.astype(np.intp), signs.astype(np.float64))
    out.in_buckets(0, np.zeros(width, dtype=bool))  # build the bucket index once, with the cached hashes
    for a in (out.keys, out.buckets, out.signs):
        a.flags.writeable = False
    return out


def domain_candidates(seed: int, width: int, depth: int, domain: int) -> Candidates:
    """Every key of ``[0, domain)`` (cached: a join skims two sketches of one shape)."""
    if domain > MAX_SCAN_DOMAIN:
        raise ValueError(f"a domain scan is limited to {MAX_SCAN_DOMAIN} keys, got domain={domain}")
    return _range_hashes(seed, width, depth, 0, domain - 1)


RANGE_ALIGN = 1 << 10  # key-range scans are widened to multiples of this: the two sides of a join share a cache entry


def range_candidates(seed: int, width: int, depth: int, low: int, high: int) -> Candidates:
    """Every key of ``[low, high]``, widened outwards to multiples of ``RANGE_ALIGN`` within int64
    (at most ``MAX_SCAN_DOMAIN`` keys; cached like the domain scan)."""
    lo = max(low - low % RANGE_ALIGN, -(2**63))
    hi = min(high - high % RANGE_ALIGN + RANGE_ALIGN - 1, 2**63 - 1)
    if hi - lo >= MAX_SCAN_DOMAIN:
        lo, hi = low, high
    if not 0 <= hi - lo < MAX_SCAN_DOMAIN:
        raise ValueError(f"a key-range scan is limited to {MAX_SCAN_DOMAIN} keys, got [{low}, {high}]")
    return _range_hashes(seed, width, depth, lo, hi)


def no_candidates(depth: int) -> Candidates:
    """No key to test (skimming unavailable: the estimate is the hash sketch's)."""
    return Candidates(np.zeros(0, dtype=np.int64), np.zeros((depth, 0), dtype=np.intp), np.zeros((depth, 0)))


def prefix_candidates(seed: int, width: int, depth: int, search, hier_counters: np.ndarray, t: float) -> Candidates:
    """Keys returned by the prefix search ``search(hier_counters, t)`` -> (keys, stats)."""
    keys, stats = search(hier_counters, t)
    buckets, signs = family(seed).buckets_signs(keys, width, depth)
    return Candidates(keys, buckets.astype(np.intp), signs.astype(np.float64), stats)
