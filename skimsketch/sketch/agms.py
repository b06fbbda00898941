"""Basic AGMS sketch (Alon, Gibbons, Matias, Szegedy, PODS 1999; Alon, Matias, Szegedy 1996).

``depth x width`` counters ``X[p][q] = sum_v f(v) * xi_pq(v)`` with 4-wise
independent signs. Each product ``Xf[p][q] * Xg[p][q]`` is an unbiased estimate
of ``f·g`` with variance at most ``F2(f) F2(g) + (f·g)^2``; a row averages
``width`` of them and the answer is the median of the ``depth`` row means
(median of means), with the Chebyshev-median interval of
:mod:`skimsketch.stats.bounds`. Every counter sees every key, so an update costs
``width * depth`` work per distinct key of the batch (vectorised: one
matrix product per chunk of distinct keys).

Counters do not depend on the shape: the sketch with ``(width, depth, seed)``
equals the sub-grid ``[:depth, :width]`` of any larger one with the same seed.
"""

from __future__ import annotations

import numpy as np

from .base import Sketch
from .hash_sketch import row_dots
from ..kernels import FLOAT_EXACT
from .state import LinearState

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
                if float(np.abs(weights).sum(dtype=np.float64)) >= FLOAT_EXACT:
                    f = np.zeros(len(uniq), dtype=np.int64)
                    np.add.at(f, inv, weights)
                else:
                    f = np.rint(f).astype(np.int64)
        exact_int = not self.float_counters and float(np.abs(f).sum(dtype=np.float64)) >= FLOAT_EXACT
        acc = np.zeros(self._depth * self._width, dtype=np.int64 if exact_int else np.float64)
        total = f.sum()
        for s in range(0, len(uniq), _KEY_CHUNK):
            bits = self._signs_bits(uniq[s : s + _KEY_CHUNK])
            fc = f[s : s + _KEY_CHUNK]
            acc += fc @ bits.astype(np.int64) if exact_int else fc.astype(np.float64) @ bits.astype(np.float64)
        with np.errstate(over="ignore", invalid="ignore"):  # float overflow: refused (unchanged) by the state
            delta = (total - 2 * acc).reshape(self._depth, self._width)
        if not self.float_counters:
            delta = np.rint(delta).astype(np.int64) if delta.dtype != np.int64 else delta
        return {"counters": delta}

    def subsketch(self, width: int, depth: int) -> AGMSSketch:
        """The sketch with shape ``(width, depth)`` and the same seed, without re-reading the
        stream: AGMS counters do not depend on the shape, so it is the sub-grid
        ``[:depth, :width]`` of this one (exactly what updating it would give)."""
        if not (isinstance(width, int) and isinstance(depth, int) and 1 <= width <= self._width
                and 1 <= depth <= self._depth):
            raise ValueError(f"subsketch shape must be within {self._depth}x{self._width}, got {depth}x{width}")
        out = AGMSSketch(width, depth, self._seed, self._dtype)
        out._state = LinearState.of({"counters": self._counters[:depth, :width].copy()}, self._total, self._null,
                                    self.float_counters)
        out._key_domain = self._key_domain
        out._nonnegative = self._nonnegative
        return out

    # -- per-table estimates (queries live in Sketch) ----------------------
    def _join_tables(self, other) -> np.ndarray:
        """Row means of ``Xf[p][q] * Xg[p][q]``."""
        return row_dots(self._counters, other._counters) / self._width

    def _point_tables(self, key: int) -> np.ndarray:
        """Row means of ``X[p][q] * xi_pq(key)``."""
        signs = 1.0 - 2.0 * self._signs_bits(np.array([key], dtype=np.int64)).reshape(self._depth, self._width)
        return (self._counters.astype(np.float64) * signs).mean(axis=1)
