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

The interval is ``[J^ - z s, J^ + min(z s + A, z sqrt(s^2 + r^2 + r0^2))]`` with ``z`` the
normal quantile of the confidence and:

* ``s^2 = V^ + V0``: ``V^ = sum over kept-by-both of (f g)^2 (1 - p) / p^2`` is the
  Horvitz-Thompson estimate of the variance ``sum_k (f g)^2 (1 - p) / p``; ``V0`` is the
  largest of its terms, so that a sample that kept few of the random terms (then ``V^``
  is small too) still gets a width;
* the upper allowance ``A`` covers the keys that only one side kept. The estimate's
  error distribution is skewed: most draws miss those keys (and come out low), a few keep
  one and jump high, so the variance alone under-covers (measured: ``docs/sample.md``).
  A key ``k`` that ``f``'s sample kept and ``g``'s did not has ``g(k)^2 <= u(k) / tau_g``
  (its rank was at least ``tau_g``); with integer totals, ``u(k) < tau_g`` means
  ``g(k) = 0``, so such keys are left out. Over the other such keys (and symmetrically):
  - ``M^``, their *missing mass*: each counted at ``|f(k)|`` times ``E(k)``, an estimate of its
    ``|g(k)| <= sqrt(u(k) / tau_g)`` from the keys both samples saw (:mod:`skimsketch.sample.partner`),
    at least the mean ``|g|`` of the keys ``g``'s sample dropped (``(|W_g| - sum of kept |g|) /
    (keys - kept)``, from the header's total weight and key count);
  - ``r^2 = sum f(k)^2 / tau_g``, their variance had each ``g(k) != 0``: a key matched with
    probability ``p = tau_g g^2`` adds ``f g / p`` and has variance
    ``f^2 g^2 (1 - p) / p <= f^2 / tau_g``.
  The smaller of the two bounds the shortfall: few such keys with small mass (``M^``), or
  many, whose randomness averages (``z r``). Measured over every workload of
  ``benchmarks/sample_interval_rules.py``, the minimum keeps the coverage of ``M^`` alone in
  every cell and narrows the real-table intervals 1.1-3.2x (``docs/sample.md``);
* and an allowance for the keys *neither* sample kept, of which the samples know only the
  count and mean of each side's dropped keys. With ``n0`` the smaller dropped-key count
  (at most that many keys can be dropped by both) and ``d_f``, ``d_g`` the dropped means:
  - ``M0 = n0 d_f d_g``, their mass were the two sides' dropped totals unrelated;
  - ``r0^2 = n0 max(d_g^2 / tau_f, d_f^2 / tau_g)``, their variance (a key kept by both
    with probability ``p = min(tau_f f^2, tau_g g^2)`` has variance at most
    ``f^2 g^2 / p = max(g^2 / tau_f, f^2 / tau_g)``), at the dropped means.
  Without it, joins whose heavy keys differ between the sides (the mass sits on keys
  neither sample kept) covered 0.88 at 4 KB.
  The upper allowance is the smaller of ``min(M^, z r) + min(M0, z r0)`` (each kind of
  missed key bounded by its own mass or spread) and ``min(M^ + M0, z sqrt(r^2 + r0^2))``
  (both together): measured, the first is narrower on skewed joins, the second on flat ones.

The upper end is the smaller of ``J^ + z s + A`` and ``J^ + z sqrt(s^2 + r^2 + r0^2)``: when the
missed keys are many, their contributions are random terms independent of the matched ones, so
their variance bounds add to the estimate's variance rather than their spreads to its spread
(measured: 0.8x the half-width on the flat and real joins at equal coverage, ``docs/sample.md``);
when they are few, the mass term of ``A`` is the smaller.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from statistics import NormalDist

import numpy as np

from ..estimate import Estimate
from .partner import partner_means
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
    fingerprint count and total weight, and whether the totals are integers."""

    fps: np.ndarray
    totals: np.ndarray
    tau: float
    n_keys: int
    total_weight: float
    integer: bool

    def dropped_mean(self) -> float:
        """Mean ``|total|`` of the keys the sample dropped (0 when it kept every key)."""
        rest = self.n_keys - len(self.fps)
        if rest <= 0:
            return 0.0
        return max(0.0, abs(float(self.total_weight)) - float(np.abs(self.totals.astype(np.float64)).sum())) / rest


def join_estimate(a: Side, b: Side, confidence: float) -> Estimate:
    """The estimate of the module docstring with its interval at ``confidence``."""
    _, i, j = np.intersect1d(a.fps, b.fps, assume_unique=True, return_indices=True)
    f, g = a.totals[i].astype(np.float64), b.totals[j].astype(np.float64)
    if math.isinf(a.tau) and math.isinf(b.tau):  # both samples kept every key: exact
        value = float(np.dot(f, g))
        return Estimate(value, value, value, 1.0, METHOD, {"matched": len(f)})
    p = inclusion(f, g, a.tau, b.tau)
    terms = f * g / p
    value = float(terms.sum())
    var = terms * terms * (1.0 - p)
    rnd = p < 1
    v0 = float(var[rnd].max()) if rnd.any() else 0.0
    variance = float(var.sum())
    da, db = a.dropped_mean(), b.dropped_mean()
    mass_a, var_a = _missing(a, b, i, j, db)
    mass_b, var_b = _missing(b, a, j, i, da)
    missing, missing_var = mass_a + mass_b, var_a + var_b
    unseen, unseen_var = _neither(a, b, da, db)
    z = NormalDist().inv_cdf(0.5 + confidence / 2.0)
    spread = z * math.sqrt(variance + v0)
    allowance = min(min(missing, z * math.sqrt(missing_var)) + min(unseen, z * math.sqrt(unseen_var)),
                    min(missing + unseen, z * math.sqrt(missing_var + unseen_var)))
    upper = min(spread + allowance, z * math.sqrt(variance + v0 + missing_var + unseen_var))
    detail = {"matched": len(f), "random": int(rnd.sum()), "variance": variance, "missing": missing,
              "missing_variance": missing_var, "unseen": unseen, "unseen_variance": unseen_var}
    return Estimate(value, value - spread, value + upper, confidence, METHOD, detail)


def _missing(a: Side, b: Side, mine: np.ndarray, theirs: np.ndarray, db: float) -> tuple[float, float]:
    """``(M^, r^2)``'s parts on the keys ``a`` kept and ``b`` did not (module docstring): ``a``'s entries
    ``mine`` are ``b``'s ``theirs``; ``db`` is ``b``'s dropped mean."""
    if math.isinf(b.tau):
        return 0.0, 0.0  # b kept every key: a key it did not keep is not in its table
    partner = np.full(len(a.fps), np.nan)
    partner[mine] = np.abs(b.totals[theirs].astype(np.float64))
    u = units(a.fps)
    only = np.isnan(partner)
    if b.integer:  # u(k) < tau_b: |g(k)| < 1, so g(k) = 0
        only &= u >= b.tau
    f = a.totals.astype(np.float64)
    bound = np.sqrt(u / b.tau)
    certain = np.ones(len(f), dtype=bool) if math.isinf(a.tau) else a.tau * f * f >= 1.0
    means = partner_means(bound[certain], partner[certain], bound[only], db)
    fo = f[only]
    return float(np.dot(np.abs(fo), means)), float(np.dot(fo, fo)) / b.tau


def _neither(a: Side, b: Side, da: float, db: float) -> tuple[float, float]:
    """``(M0, r0^2)`` of the keys neither sample kept (module docstring), from the dropped means ``da``, ``db``."""
    if math.isinf(a.tau) or math.isinf(b.tau):
        return 0.0, 0.0  # a complete side: every key the other dropped is known absent or kept
    n0 = min(a.n_keys - len(a.fps), b.n_keys - len(b.fps))
    if n0 <= 0:
        return 0.0, 0.0
    return n0 * da * db, n0 * max(db * db / a.tau, da * da / b.tau)
