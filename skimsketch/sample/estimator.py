"""Join-size estimates from two coordinated priority samples (:mod:`skimsketch.sample.join_sample`).

A sample of a table keeps the key fingerprints of the ``n`` smallest ranks ``u(k) / f(k)^2``
(:mod:`skimsketch.sample.rank`, one shared uniform ``u`` read from the fingerprint) with their
exact totals, and ``tau``, the ``(n+1)``-th smallest rank (``inf`` when it kept every key); two
samples meet on equal fingerprints.
Given the other keys' ranks, key ``k`` is kept by both samples exactly when
``u(k) < min(tau_f f^2, tau_g g^2)`` (each ``tau`` is then the ``m``-th smallest rank
among the *other* keys, fixed by them: the priority-sampling argument of Duffield, Lund
and Thorup), so with ``p(k) = min(1, tau_f f(k)^2, tau_g g(k)^2)``::

    J^ = sum over keys kept by both of f(k) g(k) / p(k)

is unbiased for ``J = sum_k f(k) g(k)`` (Daliri et al., VLDB 2024, "Sampling Methods for
Inner Product Sketching", their priority-sampling estimator). Keys with negative totals
rank by ``|f|``; the estimate stays unbiased.

The interval (:mod:`skimsketch.sample.interval`) joins sure bounds, from what the two samples know for
certain, with a Chernoff bound on the random rest; the value is ``J^`` clamped into the sure bounds (so a
join the samples resolve completely is answered exactly, with width 0).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..estimate import Estimate
from .interval import interval, scaled
from .rank import units

__all__ = ["METHOD", "Side", "inclusion", "join_estimate"]

METHOD = "sample"


def inclusion(f: np.ndarray, g: np.ndarray, tau_f: float, tau_g: float) -> np.ndarray:
    """``p = min(1, tau_f f^2, tau_g g^2)`` (``tau = inf`` keeps every key)."""
    with np.errstate(over="ignore", invalid="ignore"):
        pf = np.where(np.isinf(tau_f), 1.0, tau_f * f * f)
        pg = np.where(np.isinf(tau_g), 1.0, tau_g * g * g)
    return np.minimum(1.0, np.minimum(pf, pg))


@dataclass(frozen=True)
class Side:
    """One sample as the estimator sees it: fingerprints and totals in sample order, ``tau``, the table's
    fingerprint count and total weight, whether the totals are integers, and whether every key's total is
    known to be non-negative (``None``: unknown, a sample written before the flag), and the scale exponent of
    ``tau`` (the rank at totals times ``2^scale``: :mod:`skimsketch.sample.scale`)."""

    fps: np.ndarray
    totals: np.ndarray
    tau: float
    n_keys: int
    total_weight: float
    integer: bool
    nonnegative: bool | None = None
    scale: int = 0

    def facts(self):
        """The interval's view (:func:`skimsketch.sample.interval.scaled`) and its scale exponent."""
        return scaled(units(self.fps), self.totals, self.tau, self.n_keys, self.total_weight, self.nonnegative,
                      self.integer, self.scale)


def join_estimate(a: Side, b: Side, confidence: float) -> Estimate:
    """The estimate of the module docstring with its interval at ``confidence``."""
    _, i, j = np.intersect1d(a.fps, b.fps, assume_unique=True, return_indices=True)
    if math.isinf(a.tau) and math.isinf(b.tau):  # both samples kept every key: exact
        value = float(np.dot(a.totals[i].astype(np.float64), b.totals[j].astype(np.float64)))
        return Estimate(value, value, value, 1.0, METHOD, {"matched": len(i)})
    (fa, ea), (fb, eb) = a.facts(), b.facts()
    r = interval(fa, fb, i, j, confidence)
    e = ea + eb
    detail = {k: (_unscaled(v, e) if isinstance(v, float) else v) for k, v in r.detail.items()}
    return Estimate(_unscaled(r.value, e), _unscaled(r.low, e), _unscaled(r.high, e), confidence, METHOD, detail)


def _unscaled(v: float, e: int) -> float:
    """``v 2^e``; an answer beyond float64 is infinite (as the JVM's ``Math.scalb``), never an error."""
    try:
        return math.ldexp(v, e)
    except OverflowError:
        return math.copysign(math.inf, v)
