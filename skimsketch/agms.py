"""Basic AGMS sketch (Alon, Gibbons, Matias, Szegedy, PODS 1999; Alon, Matias, Szegedy 1996).

``depth x width`` counters ``X[p][q] = sum_v f(v) * xi_pq(v)`` with 4-wise
independent signs. Each product ``Xf[p][q] * Xg[p][q]`` is an unbiased estimate
of ``f·g`` with variance at most ``F2(f) F2(g) + (f·g)^2``; a row averages
``width`` of them and the answer is the median of the ``depth`` row means
(median of means), with the Chebyshev-median interval of
:mod:`skimsketch.bounds`. Every counter sees every key, so an update costs
``width * depth`` work per distinct key of the batch (vectorised: one
matrix product per chunk of distinct keys).

Counters do not depend on the shape: the sketch with ``(width, depth, seed)``
equals the sub-grid ``[:depth, :width]`` of any larger one with the same seed.
"""

from __future__ import annotations

import numpy as np

from .base import _FLOAT_EXACT, Sketch
from .bounds import check_confidence, median_estimate
from .estimate import Estimate
from .hash_sketch import f2_bound
from .keys import canonical_key

__all__ = ["AGMSSketch"]

_KEY_CHUNK = 4096


class AGMSSketch(Sketch):
    """Basic AGMS sketch with median-of-means estimation.

    >>> import skimsketch as ss
    >>> a = ss.AGMSSketch(width=64, depth=5, seed=3).update([7, 7, 8])
    >>> a.counters.shape
    (5, 64)
    """

    KIND = 1
    METHOD = "agms"

    def _signs_bits(self, keys: np.ndarray) -> np.ndarray:
        """(n, depth*width) uint8 bits b with sign 1 - 2b, for all counters."""
        return np.concatenate(
            [self.family.agms_sign_bits(keys, p, self._width) for p in range(self._depth)], axis=1
        )

    def _delta(self, keys, weights):
        uniq, inv = np.unique(keys, return_inverse=True)
        if weights is None:
            f = np.bincount(inv, minlength=len(uniq)).astype(np.int64)
        else:
            f = np.bincount(inv, weights=weights.astype(np.float64), minlength=len(uniq))
            if not self.float_counters:
                if float(np.abs(weights).sum(dtype=np.float64)) >= _FLOAT_EXACT:
                    f = np.zeros(len(uniq), dtype=np.int64)
                    np.add.at(f, inv, weights)
                else:
                    f = np.rint(f).astype(np.int64)
        exact_int = not self.float_counters and float(np.abs(f).sum(dtype=np.float64)) >= _FLOAT_EXACT
        acc = np.zeros(self._depth * self._width, dtype=np.int64 if exact_int else np.float64)
        total = f.sum()
        for s in range(0, len(uniq), _KEY_CHUNK):
            bits = self._signs_bits(uniq[s : s + _KEY_CHUNK])
            fc = f[s : s + _KEY_CHUNK]
            acc += fc @ bits.astype(np.int64) if exact_int else fc.astype(np.float64) @ bits.astype(np.float64)
        delta = (total - 2 * acc).reshape(self._depth, self._width)
        if not self.float_counters:
            delta = np.rint(delta).astype(np.int64) if delta.dtype != np.int64 else delta
        return delta

    def _row_means(self, other) -> np.ndarray:
        a = self._counters.astype(np.float64)
        b = other._counters.astype(np.float64)
        return np.einsum("pq,pq->p", a, b) / self._width

    def _self_rows(self) -> np.ndarray:
        rows = self._cache.get("self_rows")
        if rows is None:
            rows = self._cache["self_rows"] = self._row_means(self)
        return rows

    def join_size(self, other, confidence: float = 0.95) -> Estimate:
        """Estimated ``f·g``: median over rows of the mean of ``Xf * Xg``."""
        conf = self._check_join(other, confidence)
        rows = self._row_means(other)
        j = float(np.median(rows))
        var = (f2_bound(self._self_rows()) * f2_bound(other._self_rows()) + j * j) / self._width
        return median_estimate(rows, var, conf, self.METHOD)

    def self_join_size(self, confidence: float = 0.95) -> Estimate:
        conf = check_confidence(confidence)
        rows = self._self_rows()
        return median_estimate(rows, 2.0 * f2_bound(rows) ** 2 / self._width, conf, self.METHOD)

    def frequency(self, key, confidence: float = 0.95) -> Estimate:
        """Estimated ``f(key)``: median over rows of the mean of ``X[p][q] * xi_pq(key)``."""
        conf = check_confidence(confidence)
        k = canonical_key(key)
        if k is None:
            raise ValueError("the frequency of a null key is not tracked: see null_weight")
        signs = 1.0 - 2.0 * self._signs_bits(np.array([k], dtype=np.int64)).reshape(self._depth, self._width)
        rows = (self._counters.astype(np.float64) * signs).mean(axis=1)
        return median_estimate(rows, f2_bound(self._self_rows()) / self._width, conf, self.METHOD)
