"""Which entries a join sample keeps (:func:`select`): the first ``n`` of its ``(rank, fp)`` order, ``n`` the
longest prefix whose bytes fit the budget (a whole sample) or ``min(K, C)`` (a partial piece), and ``tau``,
the ``(n+1)``-th smallest rank (inf when every fingerprint is kept). :class:`Finished` holds the result."""

from __future__ import annotations

import math

import numpy as np

from . import layout, scale
from .codec import rice_size, varint_sizes
from .rank import order, ranks

__all__ = ["OVERHEAD", "Finished", "select"]

OVERHEAD = layout.SAMPLE_OVERHEAD  # 105: header and CRC (68), the extension's head (32), Rice parameter and length (5)


class Finished:
    """The sample proper: fingerprints in sample order, their totals, ``tau`` (stored at the scale exponent
    ``scale``: the rank at totals times ``2^scale``, :mod:`.scale`) and the table's fingerprint count."""

    __slots__ = ("fps", "totals", "tau", "n_keys", "scale")

    def __init__(self, fps: np.ndarray, totals: np.ndarray, tau: float, n_keys: int, scale: int = 0):
        self.fps, self.totals, self.tau, self.n_keys, self.scale = fps, totals, float(tau), int(n_keys), int(scale)

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
    among their ranks and ``extra_taus`` (``(tau, scale)`` of disjoint finished pieces), inf if none. Ranks are
    exact (:mod:`.scale`): double ranks when every total is within ``scale.FAST`` and every piece's scale is 0,
    else the pairs of :func:`.scale.ext_ranks`."""
    n_keys = len(fps) if n_keys is None else n_keys
    cap = layout.sample_max_entries(budget, float_totals)
    taus = [(t, s) for t, s in extra_taus if not math.isinf(t)]
    w = np.abs(totals) if float_totals else None
    if w is None or ((not len(w) or (w.min() >= scale.FAST[0] and w.max() < scale.FAST[1]))
                     and all(s == 0 for _, s in taus)):
        r = ranks(fps, totals)
        first = _smallest(fps, r, min(cap, len(fps)))
        n = _count(fps, totals, first, n_keys, cap, budget, partial, float_totals)
        cand = np.concatenate([r, np.asarray([t for t, _ in taus], dtype=np.float64)])
        tau = float(np.partition(cand, n)[n]) if n < n_keys else math.inf
        return Finished(fps[first[:n]].copy(), totals[first[:n]].copy(), tau, n_keys)
    x, q = scale.ext_ranks(fps, totals)
    first = np.lexsort((fps, q, x))[:min(cap, len(fps))]
    n = _count(fps, totals, first, n_keys, cap, budget, partial, float_totals)
    tau_ext = None
    if n < n_keys:
        tx, tq = zip(*[scale.ext_of(t, s) for t, s in taus]) if taus else ((), ())
        cx = np.concatenate([x, np.asarray(tx, dtype=np.int64)])
        cq = np.concatenate([q, np.asarray(tq, dtype=np.float64)])
        pick = np.lexsort((cq, cx))[n]
        tau_ext = (int(cx[pick]), float(cq[pick]))
    sel = first[:n]
    sigma, tau = scale.storage(totals[sel], tau_ext)
    return Finished(fps[sel].copy(), totals[sel].copy(), tau, n_keys, sigma)


def _count(fps, totals, first, n_keys, cap, budget, partial, float_totals) -> int:
    """``n``: ``min(K, C)`` entries of a partial piece, the longest prefix that fits ``budget`` of a whole one."""
    if partial:
        return min(n_keys, cap, len(first))
    return _longest_prefix(fps[first], totals[first], budget, float_totals)


def _smallest(fps: np.ndarray, r: np.ndarray, k: int) -> np.ndarray:
    """Indices of the ``k`` smallest ``(rank, fp)`` in order (a partition, then a sort of the few)."""
    if k == 0:
        return np.zeros(0, dtype=np.intp)
    if k < len(r):
        few = np.flatnonzero(r <= np.partition(r, k - 1)[k - 1])  # every entry tied with the k-th too
    else:
        few = np.arange(len(r))
    return few[order(fps[few], r[few])][:k]
