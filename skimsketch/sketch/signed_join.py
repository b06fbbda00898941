"""The rule every linear sketch kind's join estimate obeys (:func:`signed_join`, applied by
:class:`~skimsketch.sketch.base.Sketch` to each kind's ``join_size``).

* Float counters far from 1: the variance bound multiplies four counter magnitudes (``F2(f) F2(g)``), which
  would overflow or underflow; the estimate is taken on copies scaled by an exact power of two
  (:class:`FloatRescale` says which) and its value and interval scaled back, so the answer is unchanged.
* Signs: when both sketches know their frequencies are non-negative the estimate is clipped at 0; an
  interval wholly below 0 falls back to Cauchy-Schwarz, ``0 <= J <= sqrt(F2(f) F2(g))``.
"""

from __future__ import annotations

import functools
import math

from ..estimate import Estimate
from ..stats.bounds import RESCALE, far_exponent

__all__ = ["RESCALE", "FloatRescale", "rescale_exponent", "signed_join"]


class FloatRescale:
    """How far a linear sketch's float counters are from 1 (a part of :class:`~skimsketch.sketch.base.Sketch`,
    whose ``_rescaled(e)`` scales them by ``2^e``)."""

    def _rescale_exponent(self) -> int:
        """``-e`` with ``2^e`` the magnitude of float counters far from 1 (counter mode), else 0."""
        if not self.float_counters or self._exact is not None:
            return 0
        return far_exponent(self._state.magnitude())


def rescale_exponent(sketch) -> int:
    """``-e`` with ``2^e`` the magnitude of a float counter-mode sketch whose counters are far from 1, else 0."""
    return sketch._rescale_exponent() if isinstance(sketch, FloatRescale) else 0


def signed_join(join_size):
    """``join_size`` whose estimate is clipped at 0 when both sketches know their frequencies are
    non-negative (:attr:`Sketch.nonnegative`): the one place the rule is applied, for every kind."""

    @functools.wraps(join_size)
    def signed(self, other, *args, **kwargs):
        ea, eb = rescale_exponent(self), rescale_exponent(other)
        # float counters far from 1: estimate on exactly rescaled copies, scale the answer back
        a, b = (self._rescaled(ea), other._rescaled(eb)) if ea or eb else (self, other)
        est = join_size(a, b, *args, **kwargs)
        if ea or eb:
            est = Estimate(*(math.ldexp(x, -(ea + eb)) for x in (est.value, est.low, est.high)), est.confidence,
                           est.method, est.detail)
        if self.nonnegative and getattr(other, "nonnegative", False):
            if est.high < 0:  # the interval missed (J >= 0): fall back to Cauchy-Schwarz, J <= sqrt(F2(f) F2(g))
                conf = est.confidence
                top = math.sqrt(max(a.self_join_size(conf).high, 0.0)) * math.sqrt(
                    max(b.self_join_size(conf).high, 0.0))
                return Estimate(0.0, 0.0, math.ldexp(top, -(ea + eb)), conf, est.method,
                                dict(est.detail, bound="cauchy-schwarz"))
            return est.at_least(0.0)
        return est

    return signed
