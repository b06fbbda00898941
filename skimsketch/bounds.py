"""Median-of-tables intervals.

Every sketch here answers with the median of ``d`` independent per-table
estimates ``Y_1..Y_d``, each unbiased with variance at most ``var``. By
Chebyshev a table is off by more than ``k*sqrt(var)`` with probability at most
``q = 1/k**2``; the median is off only if at least ``ceil(d/2)`` tables are,
which has probability ``P[Binomial(d, q) >= ceil(d/2)]``. :func:`chebyshev_k`
picks the smallest ``k`` that makes this at most ``1 - confidence``, so
``median ± k*sqrt(var)`` is an interval whose coverage does not depend on the
data's distribution (it is conservative: the realised coverage is higher).
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np

from .estimate import Estimate

__all__ = ["chebyshev_k", "median_estimate", "check_confidence"]


def check_confidence(confidence: float) -> float:
    c = float(confidence)
    if not 0.0 < c < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence!r}")
    return c


def _median_failure(d: int, q: float) -> float:
    m = (d + 1) // 2
    return sum(math.comb(d, i) * q**i * (1 - q) ** (d - i) for i in range(m, d + 1))


@lru_cache(maxsize=4096)
def chebyshev_k(depth: int, confidence: float) -> float:
    """Smallest ``k`` with ``P[Bin(depth, 1/k^2) >= ceil(depth/2)] <= 1 - confidence``.

    >>> round(chebyshev_k(1, 0.95), 3), round(chebyshev_k(5, 0.95), 3)
    (4.472, 2.299)
    """
    delta = 1.0 - check_confidence(confidence)
    lo, hi = 0.0, 1.0  # bisection on q: failure probability increases with q
    for _ in range(100):
        mid = (lo + hi) / 2
        if _median_failure(depth, mid) <= delta:
            lo = mid
        else:
            hi = mid
    return 1.0 / math.sqrt(lo)


def median_estimate(rows, var: float, confidence: float, method: str, **detail) -> Estimate:
    """``Estimate`` = median of per-table values ± ``chebyshev_k * sqrt(var)``."""
    rows = np.asarray(rows, dtype=np.float64)
    value = float(np.median(rows))
    half = chebyshev_k(len(rows), check_confidence(confidence)) * math.sqrt(max(var, 0.0))
    return Estimate(value, value - half, value + half, confidence, method, dict(detail, tables=rows))
