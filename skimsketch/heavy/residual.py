"""The residual: a Count-Sketch (the library's hash sketch rows) of every count the table did not absorb.

``counters[p, bucket_p(k)] += sign_p(k) * w`` for every spilled ``(k, w)``, with the one hash
family of :mod:`skimsketch.hashing` under the sketch's seed (the table's hashes are other
functions of the seed: :mod:`skimsketch.heavy.table`). Linear: spills may be added in any order
and merged residuals add. Row ``p``'s inner product with another sketch's row ``p`` estimates
the inner product of the two residual vectors without bias; ``sum counters[p]**2`` estimates
their F2 without bias (the signs are 4-wise independent).
"""

from __future__ import annotations

import numpy as np

from ..errors import CounterOverflowError
from ..keys.hashing import family
from ..kernels import checked_add, hash_delta

__all__ = ["Residual", "table_rows"]

_DENSE_MIN = 1 << 16  # spills fewer than this are hashed as they are


class Residual:
    """``depth`` Count-Sketch rows of ``width`` counters (int64, or float64 for float weights)."""

    __slots__ = ("width", "depth", "seed", "float_counters", "counters")

    def __init__(self, width: int, depth: int, seed: int, float_counters: bool, counters: np.ndarray | None = None):
        self.width, self.depth, self.seed, self.float_counters = int(width), int(depth), int(seed), bool(float_counters)
        dt = np.float64 if float_counters else np.int64
        self.counters = np.zeros((self.depth, self.width), dtype=dt) if counters is None else counters.astype(dt)

    def copy(self) -> Residual:
        return Residual(self.width, self.depth, self.seed, self.float_counters, self.counters.copy())

    def add(self, keys: np.ndarray, weights: np.ndarray) -> None:
        """Add the spilled ``(keys, weights)``; integer counters never wrap (:class:`CounterOverflowError`)."""
        if len(keys) == 0:
            return
        keys, weights = _dense_totals(keys, weights, self.float_counters)
        delta = hash_delta(family(self.seed), np.ascontiguousarray(keys, dtype=np.int64), weights, self.width,
                           self.depth, self.float_counters)
        self.counters = self._plus(delta, "update")

    def merge(self, other: Residual) -> None:
        self.counters = self._plus(other.counters, "merge")

    def _plus(self, delta: np.ndarray, what: str) -> np.ndarray:
        if self.float_counters:
            out = self.counters + delta
            if not np.isfinite(out).all():
                raise CounterOverflowError(f"{what} would overflow a float64 counter to infinity")
            return out
        return checked_add(self.counters, delta, what)

    def as_float(self) -> np.ndarray:
        return self.counters.astype(np.float64)


def _dense_totals(keys: np.ndarray, weights: np.ndarray, float_counters: bool):
    """Integer spills of keys spanning fewer values than there are spills (ids, codes: most of a Zipf stream's
    spills are repeats of light keys) as (distinct keys, their totals): one ``bincount`` instead of hashing every
    spill; the counters are the same (the sketch is linear, the totals exact: below 2**53 in float64)."""
    n = len(keys)
    if float_counters or n < _DENSE_MIN:
        return keys, weights
    lo, hi = int(keys.min()), int(keys.max())
    if hi - lo >= n or float(np.abs(weights).sum()) >= 2.0**52:
        return keys, weights
    totals = np.bincount(keys - lo, weights=weights.astype(np.float64), minlength=hi - lo + 1)
    present = np.flatnonzero(totals)
    return present.astype(np.int64) + lo, np.rint(totals[present]).astype(np.int64)


def table_rows(seed: int, keys: np.ndarray, values: np.ndarray, width: int, depth: int) -> np.ndarray:
    """The Count-Sketch rows (float64, ``(depth, width)``) of the vector ``values`` on ``keys``: what the
    residual would hold had these counts been spilled (the estimator's ``CS(a)``)."""
    if len(keys) == 0:
        return np.zeros((depth, width))
    return np.asarray(hash_delta(family(seed), np.ascontiguousarray(keys, dtype=np.int64),
                                 np.ascontiguousarray(values, dtype=np.float64), width, depth, True), dtype=np.float64)
