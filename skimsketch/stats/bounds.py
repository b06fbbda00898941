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

from ..estimate import Estimate

__all__ = ["biased_normal_z", "chebyshev_k", "median_estimate", "check_confidence", "normal_median_k", "BOUNDS",
           "RESCALE", "far_exponent"]

BOUNDS = ("normal", "chebyshev")

#: float counts whose largest magnitude is outside ``2^-RESCALE .. 2^RESCALE`` are rescaled for an estimate:
#: variance bounds multiply four of them (``F2(f) F2(g)``), which would overflow or underflow
RESCALE = 120


def far_exponent(top: float) -> int:
    """``-e`` with ``2^e`` the magnitude ``top`` (the largest float count or counter of a summary) when it is
    beyond ``2^+-RESCALE``, else 0: the exact power of two that brings it near 1 for an estimate.

    >>> far_exponent(1.0), far_exponent(1e100), far_exponent(0.0)
    (0, -333, 0)
    """
    if top == 0.0 or not math.isfinite(top):
        return 0
    e = math.frexp(top)[1]
    return -e if abs(e) > RESCALE else 0


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


def biased_normal_z(confidence: float, bias: float) -> float:
    """``z`` with ``P(|Z - bias| <= z) = confidence`` for ``Z ~ N(0, 1)`` (bisection on ``erf``; the
    normal quantile at ``(1 + confidence) / 2`` when ``bias`` is 0).

    >>> round(biased_normal_z(0.95, 0.0), 4), round(biased_normal_z(0.95, 0.5), 4)
    (1.96, 2.1815)
    """
    c, b = check_confidence(confidence), abs(float(bias))
    if b == 0.0:
        return math.sqrt(2.0) * _erfinv(c)
    lo, hi = 0.0, 40.0
    for _ in range(200):
        mid = (lo + hi) / 2
        if 0.5 * (math.erf((mid - b) / math.sqrt(2.0)) + math.erf((mid + b) / math.sqrt(2.0))) < c:
            lo = mid
        else:
            hi = mid
    return hi


@lru_cache(maxsize=4096)
def normal_median_k(depth: int, confidence: float, bias: float = 0.0) -> float:
    """``k`` such that ``median ± k * sd(one table)`` covers at ``confidence`` for normal table errors.

    The median of ``depth`` independent ``N(0, 1)`` has standard deviation
    ``s_d`` (computed here from the order statistics' density; ``s_1 = 1``,
    ``s_3 = 0.670``, ``s_5 = 0.536``); ``k = s_d * z`` with ``z`` the normal
    quantile at ``(1 + confidence) / 2``, or with ``bias`` (in units of ``s_d``) the
    :func:`biased_normal_z` that still covers when the median is off by that much.

    >>> round(normal_median_k(1, 0.95), 3), round(normal_median_k(3, 0.95), 3)
    (1.96, 1.313)
    """
    check_confidence(confidence)
    z = biased_normal_z(confidence, bias)
    x = np.linspace(-8.0, 8.0, 32001)
    pdf = np.exp(-x * x / 2) / math.sqrt(2 * math.pi)
    cdf = 0.5 * (1 + np.array([math.erf(v / math.sqrt(2)) for v in x]))
    lo, hi = (depth - 1) // 2, depth // 2  # the median averages order statistics lo+1 and hi+1
    if lo == hi:
        dens = math.comb(depth - 1, lo) * depth * cdf**lo * (1 - cdf) ** (depth - 1 - lo) * pdf
        var = float(np.trapezoid(x * x * dens, x))
    else:  # even depth: bound by the larger order statistic's second moment
        dens = math.comb(depth - 1, hi) * depth * cdf**hi * (1 - cdf) ** (depth - 1 - hi) * pdf
        var = float(np.trapezoid(x * x * dens, x))
    return math.sqrt(var) * z


def _erfinv(y: float) -> float:
    """Inverse error function by bisection (enough digits for interval widths)."""
    lo, hi = 0.0, 10.0
    for _ in range(200):
        mid = (lo + hi) / 2
        if math.erf(mid) < y:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


def median_estimate(rows, var: float, confidence: float, method: str, **detail) -> Estimate:
    """``Estimate`` = median of per-table values ± ``chebyshev_k * sqrt(var)``."""
    rows = np.asarray(rows, dtype=np.float64)
    value = float(np.median(rows))
    half = chebyshev_k(len(rows), check_confidence(confidence)) * math.sqrt(max(var, 0.0))
    return Estimate(value, value - half, value + half, confidence, method, dict(detail, tables=rows))
