"""Which entries a join sample keeps (:func:`select`): the first ``n`` of its ``(rank, fp)`` order, ``n`` the
longest prefix whose bytes fit the budget (a whole sample) or ``min(K, C)`` (a partial piece), and ``tau``,
the ``(n+1)``-th smallest rank (inf when every fingerprint is kept). :class:`Finished` holds the result."""

from __future__ import annotations

import math

import numpy as np

from ..errors import CounterOverflowError
from . import layout
from .codec import rice_size, varint_sizes
from .rank import order, ranks

__all__ = ["OVERHEAD", "Finished", "select"]

OVERHEAD = layout.SAMPLE_OVERHEAD  # 105: header and CRC (68), the extension's head (32), Rice parameter and length (5)


class Finished:
    """The sample proper: fingerprints in sample order, their totals, ``tau`` and the table's fingerprint count."""

    __slots__ = ("fps", "totals", "tau", "n_keys")

    def __init__(self, fps: np.ndarray, totals: np.ndarray, tau: float, n_keys: int):
        self.fps, self.totals, self.tau, self.n_keys = fps, totals, float(tau), int(n_keys)

    @property
    def complete(self) -> bool:
        return math.isinf(self.tau)


def _size(fps: np.ndarray, tsizes: np.ndarray, n: int, float_totals: bool) -> int:
    """Serialised bytes of a whole sample of the first ``n`` entries (``tsizes``: cumulative varint bytes)."""
    totals = 8 * n if float_totals else (int(tsizes[n - 1]) if n else 0)
    return OVERHEAD + rice_size(np.sort(fps[:n])) + totals


def _longest_prefix(fps: np.ndarray, totals: np.ndarray, budget: int, float_totals: bool) -> int:
    """The largest ``n`` whose first ``n`` entries serialise in ``budget`` bytes (the size grows with ``n``)."""
    tsizes = None if float_totals else np.cumsum(varint_sizes(totals))
    lo, hi = 0, len(fps)  # size(lo) <= budget (lo = 0: the overhead)
    if _size(fps, tsizes, hi, float_totals) <= budget:
        return hi
    while hi - lo > 1:  # size(hi) > budget
        mid = (lo + hi) // 2
        if _size(fps, tsizes, mid, float_totals) <= budget:
            lo = mid
        else:
            hi = mid
    return lo


def select(fps: np.ndarray, totals: np.ndarray, budget: int, partial: bool, float_totals: bool, extra_taus=(),
            n_keys=None) -> Finished:
    """The sample of ``fps``: its first ``n`` entries in ``(rank, fp)`` order (``n``: the longest prefix that fits
    ``budget`` for a whole sample, ``min(K, C)`` for a partial piece) and ``tau``, the ``(n+1)``-th smallest value
    among their ranks and ``extra_taus`` (the thresholds of disjoint finished pieces), inf if none."""
    if float_totals:
        _check_rankable(totals)
    r = ranks(fps, totals)
    n_keys = len(fps) if n_keys is None else n_keys
    cap = layout.sample_max_entries(budget, float_totals)
    first = _smallest(fps, r, min(cap, len(fps)))
    if partial:
        n = min(n_keys, cap, len(first))
    else:
        n = _longest_prefix(fps[first], totals[first], budget, float_totals)
    sel = first[:n]
    cand = np.concatenate([r, np.asarray([t for t in extra_taus if not math.isinf(t)], dtype=np.float64)])
    tau = float(np.partition(cand, n)[n]) if n < n_keys else math.inf
    return Finished(fps[sel].copy(), totals[sel].copy(), tau, n_keys)


#: the float totals whose square is a normal double (the rank ``u / w^2`` is exact and finite): ``2^-511 .. 2^511``
RANKABLE = (math.ldexp(1.0, -511), math.ldexp(1.0, 511))


def _check_rankable(totals: np.ndarray) -> None:
    """Refuse float totals whose rank ``u / w^2`` would underflow or overflow (``docs/sample.md``)."""
    w = np.abs(totals)
    bad = (w < RANKABLE[0]) | (w >= RANKABLE[1])
    if bad.any():
        raise CounterOverflowError(
            f"a JoinSample float total must lie within 2**-511 .. 2**511 in magnitude (about 1.5e-154 .. 6.7e153), "
            f"got {float(totals[bad][0])!r}: its rank u / total^2 would leave the doubles; scale the weights by a "
            "power of two 2**k and the join answer by 2**-2k (the sample is unchanged)")


def _smallest(fps: np.ndarray, r: np.ndarray, k: int) -> np.ndarray:
    """Indices of the ``k`` smallest ``(rank, fp)`` in order (a partition, then a sort of the few)."""
    if k == 0:
        return np.zeros(0, dtype=np.intp)
    if k < len(r):
        few = np.flatnonzero(r <= np.partition(r, k - 1)[k - 1])  # every entry tied with the k-th too
    else:
        few = np.arange(len(r))
    return few[order(fps[few], r[few])][:k]
