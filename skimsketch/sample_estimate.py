"""Join-size estimates from two coordinated priority samples (:mod:`skimsketch.sample`).

A sample of a table keeps the keys of the ``m`` smallest ranks ``u(k) / f(k)^2``
(:mod:`skimsketch.sample_rank`, one shared uniform ``u``) with their exact totals, and
``tau``, the ``(m+1)``-th smallest rank (``inf`` when the table has at most ``m`` keys).
Given the other keys' ranks, key ``k`` is kept by both samples exactly when
``u(k) < min(tau_f f^2, tau_g g^2)`` (each ``tau`` is then the ``m``-th smallest rank
among the *other* keys, fixed by them: the priority-sampling argument of Duffield, Lund
and Thorup), so with ``p(k) = min(1, tau_f f(k)^2, tau_g g(k)^2)``::

    J^ = sum over keys kept by both of f(k) g(k) / p(k)

is unbiased for ``J = sum_k f(k) g(k)`` (Daliri et al., VLDB 2024, "Sampling Methods for
Inner Product Sketching", their priority-sampling estimator). Keys with negative totals
rank by ``|f|``; the estimate stays unbiased. Its variance is
``sum_k (f g)^2 (1 - p) / p`` and the Horvitz-Thompson estimate of it is
``V^ = sum over kept-by-both of (f g)^2 (1 - p) / p^2``. The interval is
``J^ -+ z * sqrt(V^ + V0)`` (:func:`interval_half_width`): ``V0`` is the variance of one
more kept-by-both key at the sample's threshold, so that a sample that happened to keep
few of the random terms (then ``V^`` is small too, and the naive interval under-covers)
still gets an honest width.
"""

from __future__ import annotations

import math
from statistics import NormalDist

import numpy as np

from .estimate import Estimate

__all__ = ["METHOD", "inclusion", "join_estimate", "matched_totals"]

METHOD = "sample"


def matched_totals(a_keys, a_tot, b_keys, b_tot) -> tuple[np.ndarray, np.ndarray]:
    """The totals (float64) of the keys both samples kept, aligned."""
    _, i, j = np.intersect1d(a_keys, b_keys, assume_unique=True, return_indices=True)
    return np.asarray(a_tot)[i].astype(np.float64), np.asarray(b_tot)[j].astype(np.float64)


def inclusion(f: np.ndarray, g: np.ndarray, tau_f: float, tau_g: float) -> np.ndarray:
    """``p = min(1, tau_f f^2, tau_g g^2)`` (``tau = inf`` keeps every key)."""
    with np.errstate(over="ignore", invalid="ignore"):
        pf = np.where(np.isinf(tau_f), 1.0, tau_f * f * f)
        pg = np.where(np.isinf(tau_g), 1.0, tau_g * g * g)
    return np.minimum(1.0, np.minimum(pf, pg))


def join_estimate(a_keys, a_tot, tau_a: float, b_keys, b_tot, tau_b: float, confidence: float) -> Estimate:
    """The estimate of the module docstring with its interval at ``confidence``."""
    f, g = matched_totals(a_keys, a_tot, b_keys, b_tot)
    if math.isinf(tau_a) and math.isinf(tau_b):  # both samples kept every key: exact
        value = float(np.dot(f, g))
        return Estimate(value, value, value, 1.0, METHOD, {"matched": len(f)})
    p = inclusion(f, g, tau_a, tau_b)
    terms = f * g / p
    value = float(terms.sum())
    v_ht = float((terms * terms * (1.0 - p)).sum())
    half = interval_half_width(v_ht, terms, p, confidence)
    detail = {"matched": len(f), "random": int((p < 1).sum()), "variance": v_ht}
    return Estimate(value, value - half, value + half, confidence, METHOD, detail)


def interval_half_width(v_ht: float, terms: np.ndarray, p: np.ndarray, confidence: float) -> float:
    """``z * sqrt(V^ + V0)`` with ``z`` the normal quantile of ``confidence`` (module docstring);
    ``V0`` is the largest ``term^2 (1 - p)`` among the random terms (0 when there is none)."""
    z = NormalDist().inv_cdf(0.5 + confidence / 2.0)
    rnd = p < 1
    v0 = float((terms[rnd] ** 2 * (1.0 - p[rnd])).max()) if rnd.any() else 0.0
    return z * math.sqrt(v_ht + v0)
