"""The linear sketches' queries (:class:`SketchQueries`, a part of :class:`~skimsketch.sketch.base.Sketch`):
the median over tables of unbiased per-table estimates, with the interval of :mod:`skimsketch.stats.bounds`.

Join size: each table's estimate has variance at most ``(F2(f) F2(g) + (f·g)^2) / width``; self-join size
``2 F2^2 / width``; a frequency ``F2 / width`` (F2 from the sketches' own self-join estimates, :func:`f2_bound`).
Sketches in exact mode answer exactly (:func:`exact_estimate`).
"""

from __future__ import annotations

import math

import numpy as np

from ..errors import IncompatibleSketchError
from ..estimate import Estimate
from ..keys.canonical import canonical_key
from ..stats.bounds import check_confidence, median_estimate
from .signed_join import rescale_exponent

__all__ = ["SketchQueries", "exact_estimate", "f2_bound"]


def f2_bound(table_estimates: np.ndarray) -> float:
    """A self-join size to plug into variance bounds: the larger of the tables' mean and median."""
    return float(max(np.mean(table_estimates), np.median(table_estimates), 0.0))


def exact_estimate(value) -> Estimate:
    """An exact answer: zero-width interval, confidence 1, method "exact"; ``detail["exact"]``
    keeps the value itself (a Python int for integer sketches, beyond float precision)."""
    v = float(value)
    return Estimate(v, v, v, 1.0, "exact", {"exact": value})


class SketchQueries:
    """Join size, self-join size and frequency of a linear sketch (its kinds supply the per-table estimates)."""

    def _join_tables(self, other) -> np.ndarray:
        """Per-table unbiased estimates of ``f·g`` (one per table/row)."""
        raise NotImplementedError

    def _point_tables(self, key: int) -> np.ndarray:
        """Per-table unbiased estimates of ``f(key)`` for a canonical key."""
        raise NotImplementedError

    def self_join_tables(self) -> np.ndarray:
        """Per-table unbiased estimates of ``F2`` (cached until the sketch changes); read-only."""
        rows = self._cache.get("self_tables")
        if rows is None:
            if self._exact is not None:  # exact F2 is an unbiased estimate of every table
                f2 = self._exact.dot(self._exact)
                rows = np.full(self._depth, float(f2))
            else:
                rows = self._join_tables(self)
            self._cache["self_tables"] = rows
            rows.flags.writeable = False
        return rows

    def _exact_join(self, other) -> Estimate | None:
        """The exact join size when both sketches are in exact mode, else None."""
        if self._exact is None or other._exact is None:
            return None
        return exact_estimate(self._exact.dot(other._exact))

    def join_size(self, other, confidence: float = 0.95) -> Estimate:
        """Estimated ``sum_v f(v) g(v)``: ``COUNT(*)`` of the equi-join (``SUM`` with weights).

        Median over tables; each table's estimate has variance at most
        ``(F2(f) F2(g) + (f·g)^2) / width`` (F2 from the sketches' own
        self-join estimates), hence the interval of :mod:`skimsketch.stats.bounds`.
        """
        conf = self._check_join(other, confidence)
        exact = self._exact_join(other)
        if exact is not None:
            return exact
        rows = self._join_tables(other)
        j = float(np.median(rows))
        var = (f2_bound(self.self_join_tables()) * f2_bound(other.self_join_tables()) + j * j) / self._width
        return median_estimate(rows, var, conf, self.METHOD)

    def self_join_size(self, confidence: float = 0.95) -> Estimate:
        """Estimated ``F2 = sum_v f(v)^2``; each table's variance is at most ``2 F2^2 / width``."""
        conf = check_confidence(confidence)
        if self._exact is not None:
            return exact_estimate(self._exact.dot(self._exact))
        e = rescale_exponent(self)
        if e:  # float counters far from 1: F2^2 would overflow; estimate on an exactly rescaled copy
            est = self._rescaled(e).self_join_size(conf)
            return Estimate(*(math.ldexp(x, -2 * e) for x in (est.value, est.low, est.high)), est.confidence,
                            est.method, est.detail)
        rows = self.self_join_tables()
        # a sum of squares is >= 0 whatever the signs of the frequencies
        return median_estimate(rows, 2.0 * f2_bound(rows) ** 2 / self._width, conf, self.METHOD).at_least(0.0)

    def frequency(self, key, confidence: float = 0.95) -> Estimate:
        """Estimated ``f(key)``; each table's variance is at most ``F2 / width``.

        A key of the other key domain (a str/bytes key for a sketch of integer keys,
        or the reverse) raises :class:`IncompatibleSketchError` on ``key_domain``, as a
        join of such sketches does (such keys are never equal: 0 would look like an answer)."""
        conf = check_confidence(confidence)
        k = canonical_key(key)
        if k is None:
            raise ValueError("the frequency of a null key is not tracked: see null_weight")
        domain = "str" if isinstance(key, (str, bytes, bytearray, memoryview)) else "int"
        if self._key_domain not in (None, domain):  # a key of the other domain never equals a key here
            kinds = {"int": "integer", "str": "string/bytes"}
            err = IncompatibleSketchError("key_domain", self._key_domain, domain, "query")
            err.args = (f"cannot query frequency({key!r}): key_domain differs ({self._key_domain!r} != {domain!r}); "
                        f"this sketch holds {kinds[self._key_domain]} keys, which a {kinds[domain]} key never "
                        f"equals: query with {'an' if self._key_domain == 'int' else 'a'} {kinds[self._key_domain]} key",)
            raise err
        if self._exact is not None:
            return exact_estimate(self._exact.weight_of(k))
        est = median_estimate(self._point_tables(k), self._point_variance(), conf, self.METHOD)
        return est.at_least(0.0) if self._nonnegative else est

    def _point_variance(self) -> float:
        """Variance bound of one table's point estimate: ``F2 / width``."""
        return f2_bound(self.self_join_tables()) / self._width

    def _check_join(self, other, confidence) -> float:
        self.check_compatible(other, "join", same_dtype=False)
        return check_confidence(confidence)
