"""The hash sketch (Fast-AGMS; Charikar-Chen-Farach-Colton's Count sketch used for joins).

Each of ``depth`` tables has ``width`` counters, a pairwise independent bucket
hash ``h_p`` and a 4-wise independent sign ``xi_p`` (:mod:`skimsketch.keys.hashing`).
Update: ``H[p][h_p(v)] += w * xi_p(v)`` — ``depth`` counter updates per key.

Join size ``f·g``: each table gives ``Y_p = sum_q Hf[p][q] * Hg[p][q]``, unbiased
with ``Var(Y_p) <= (F2(f) F2(g) + (f·g)^2) / width``; the answer is the median
over tables, with a Chebyshev-median interval (:mod:`skimsketch.stats.bounds`) whose
variance uses the sketches' own self-join estimates. At ``width = 8/eps^2`` and
``depth = O(log 1/delta)`` the error is at most ``eps*sqrt(F2(f) F2(g))`` with
probability ``1 - delta``.
"""

from __future__ import annotations

import numpy as np

from .base import Sketch
from ..kernels import hash_delta, key_counts

__all__ = ["HashSketch"]


def row_dots(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Per-table inner products ``sum_q a[p, q] * b[p, q]`` in float64."""
    return np.einsum("pq,pq->p", a.astype(np.float64, copy=False), b.astype(np.float64, copy=False))


class HashSketch(Sketch):
    """Hash sketch: ``depth`` tables of ``width`` signed counters.

    >>> import skimsketch as ss
    >>> a = ss.HashSketch(width=256, depth=5, seed=1).update([1, 1, 2, 3])
    >>> b = ss.HashSketch(width=256, depth=5, seed=1).update([1, 3, 3])
    >>> round(float(a.join_size(b)))  # exact: 2*1 + 1*2
    4
    """

    KIND = 2
    METHOD = "hash"

    def _delta(self, keys, weights):
        d, w = self._depth, self._width
        fam = self.family
        keys, weights = key_counts(keys, weights)
        return {"counters": hash_delta(fam, keys, weights, w, d, self.float_counters)}

    # -- per-table estimates (queries live in Sketch) ----------------------
    def _join_tables(self, other) -> np.ndarray:
        return row_dots(self._counters, other._counters)

    def _point_tables(self, key: int) -> np.ndarray:
        buckets, signs = self.family.buckets_signs(np.array([key], dtype=np.int64), self._width, self._depth)
        return self._counters[np.arange(self._depth), buckets[:, 0]].astype(np.float64) * signs[:, 0]
