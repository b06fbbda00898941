"""``Estimate``: a point estimate with an interval at a stated confidence."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

__all__ = ["Estimate"]


@dataclass(frozen=True)
class Estimate:
    """An estimated quantity with a two-sided interval.

    ``low <= value <= high`` holds, and the true value lies in ``[low, high]``
    with probability at least ``confidence`` (for exact answers ``low == high
    == value`` and ``confidence == 1``). ``method`` names the estimator that
    produced it; ``detail`` keeps estimator-specific diagnostics (per-table
    estimates, dense-key counts, ...).

    >>> e = Estimate(100.0, 90.0, 115.0, 0.95, "hash")
    >>> float(e), e.contains(110), e.relative_error(125)
    (100.0, True, 0.2)
    """

    value: float
    low: float
    high: float
    confidence: float
    method: str
    detail: dict = field(default_factory=dict, compare=False, repr=False)

    def __post_init__(self):
        if not (self.low <= self.value <= self.high) and not any(
            math.isnan(x) for x in (self.low, self.value, self.high)
        ):
            raise ValueError(f"interval [{self.low}, {self.high}] does not contain {self.value}")

    def __float__(self) -> float:
        return float(self.value)

    @property
    def width(self) -> float:
        return self.high - self.low

    def contains(self, x: float) -> bool:
        return self.low <= x <= self.high

    def relative_error(self, exact: float) -> float:
        """``|value - exact| / |exact|`` (``inf`` when exact is 0 and value is not)."""
        if exact == 0:
            return 0.0 if self.value == 0 else math.inf
        return abs(self.value - exact) / abs(exact)

    def at_least(self, bound: float) -> "Estimate":
        """This estimate given that the true value is known to be ``>= bound``.

        The interval becomes its intersection with ``[bound, inf)`` and the value
        its projection onto it (never further from the truth); ``high`` is raised
        to ``bound`` if it was below (then the interval had missed and
        ``[bound, bound]`` is all that is left). The confidence stays: the truth
        lies in the new interval whenever it lay in the old one.
        ``detail["unclipped"]`` keeps ``(value, low, high)`` when anything changed.
        Used for the sign rule of :attr:`skimsketch.Sketch.nonnegative`.

        >>> Estimate(-3.0, -10.0, 4.0, 0.95, "hash").at_least(0)
        Estimate(value=0.0, low=0.0, high=4.0, confidence=0.95, method='hash')
        """
        b = float(bound)
        if not self.low < b:  # already inside (NaN bounds stay as they are)
            return self
        detail = dict(self.detail, unclipped=(self.value, self.low, self.high))
        return Estimate(max(self.value, b), b, max(self.high, b), self.confidence, self.method, detail)

    @classmethod
    def exact(cls, value: float, method: str = "exact") -> "Estimate":
        v = float(value)
        return cls(v, v, v, 1.0, method)
