"""Join aggregates beyond ``COUNT(*)``: SUM, AVG (and pointers to F2 and point queries).

For ``F ⋈ G`` on key ``k`` (docs/algorithms.md):

* ``SUM(F.x)`` is ``sum_v X(v) g(v)`` with ``X(v) = sum_{r in F, r.k = v} r.x``:
  update F's sketch with weights ``x`` (``dtype="float64"`` for fractional
  values; integer counters stay exact for integral ones) and join it with G's
  ordinary COUNT sketch — :func:`join_sum` (the same estimator as
  ``join_size``; its interval is the join interval). Weighting both sides
  gives ``SUM(F.x * G.y)``.
* ``AVG(F.x)`` over the join is ``SUM / COUNT``: :func:`join_avg` estimates
  both from two sketches of F (weights ``x`` and weights 1, same kind, shape
  and seed) joined with G's. Interval: each of the two estimates gets
  confidence ``1 - delta/2`` (``delta = 1 - confidence``), so by a union bound
  both intervals hold together with probability ``>= confidence``; on that
  event the ratio lies between the smallest and largest of
  ``S_lo/C_lo, S_lo/C_hi, S_hi/C_lo, S_hi/C_hi`` provided ``C_lo > 0``. When
  the COUNT interval reaches 0 the join may be empty and no finite interval is
  honest: the answer's interval is ``(-inf, inf)``.
* Self-join size ``F2`` and point frequencies: ``sketch.self_join_size()``,
  ``sketch.frequency(key)`` on every sketch.

>>> import skimsketch as ss
>>> keys, x = [1, 1, 2, 3], [10.0, 20.0, 5.0, 7.0]
>>> s = ss.HashSketch(256, 5, seed=1, dtype="float64").update(keys, weights=x)
>>> c = ss.HashSketch(256, 5, seed=1).update(keys)
>>> g = ss.HashSketch(256, 5, seed=1).update([1, 2, 2])
>>> float(ss.join_sum(s, g)), round(float(ss.join_avg(s, c, g)), 3)   # (10+20+2*5), 40/4
(40.0, 10.0)
"""

from __future__ import annotations

import math

from .base import Sketch
from ..stats.bounds import check_confidence
from ..errors import IncompatibleSketchError
from ..estimate import Estimate

__all__ = ["join_sum", "join_avg"]


def _check_sketch(x, name):
    if not isinstance(x, Sketch):
        raise IncompatibleSketchError("type", "Sketch", type(x).__name__, f"aggregate ({name})")


def join_sum(f_sum, g, confidence: float = 0.95) -> Estimate:
    """``SUM(F.x)`` over ``F ⋈ G``: ``f_sum`` is F's sketch updated with weights ``x``."""
    _check_sketch(f_sum, "f_sum")
    _check_sketch(g, "g")
    e = f_sum.join_size(g, confidence)
    method = e.method if e.method == "exact" else f"{e.method}-sum"  # exact mode: an exact SUM
    return Estimate(e.value, e.low, e.high, e.confidence, method, dict(e.detail))


def join_avg(f_sum, f_count, g, confidence: float = 0.95) -> Estimate:
    """``AVG(F.x)`` over ``F ⋈ G`` as ``SUM / COUNT`` with a union-bound interval (module docstring).

    ``f_sum``: F's sketch with weights ``x``; ``f_count``: F's sketch with
    weight 1 per row — same kind, shape and seed (counter types may differ).
    ``detail`` holds the two underlying estimates."""
    conf = check_confidence(confidence)
    for x, name in ((f_sum, "f_sum"), (f_count, "f_count"), (g, "g")):
        _check_sketch(x, name)
    f_sum.check_compatible(f_count, "average (f_sum with f_count)", same_dtype=False)
    half = 1.0 - (1.0 - conf) / 2.0
    s = f_sum.join_size(g, half)
    c = f_count.join_size(g, half)
    detail = {"sum": s, "count": c}
    if c.value == 0:
        return Estimate(math.nan, -math.inf, math.inf, conf, "avg", detail)
    value = s.value / c.value
    if c.low > 0:
        corners = [s.low / c.low, s.low / c.high, s.high / c.low, s.high / c.high]
        low, high = min(corners), max(corners)
        low, high = min(low, value), max(high, value)  # guards rounding at the corners
    else:
        low, high = -math.inf, math.inf
    return Estimate(value, low, high, conf, "avg", detail)
