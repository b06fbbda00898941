"""The join estimate of two heavy-key sketches and its interval (``docs/heavy.md`` states the argument).

With ``f = T_A + r_A`` and ``g = T_B + r_B`` (tables plus residuals, exactly),
``J = <f, g> = <T_A, T_B> + <T_A, r_B> + <r_A, T_B> + <r_A, r_B>``:

* ``<T_A, T_B>`` exactly, from the two tables;
* ``<a, r_B>`` with ``a`` = ``T_A`` without the keys whose residual in ``B`` is provably 0
  (:meth:`skimsketch.heavy.table.HeavyTable.no_residual`: skipping them drops only zero terms,
  and their collision noise), per row ``p`` as ``<CS_p(a), R_{B,p}>``; ``<r_A, b>`` likewise;
* ``<r_A, r_B>`` per row as ``<R_{A,p}, R_{B,p}>``.

Given the tables, each row ``X_p`` is unbiased (the tables never read the Count-Sketch's hashes),
and so is their mean, the estimate. Its variance given the tables is
``Var X_p <= (S1 + S2) / W`` with ``M = a r_B' + r_A v'`` (``v = b + r_B``),
``S1 = sum M_il^2 = |a|^2 |r_B|^2 + |r_A|^2 |v|^2 + 2 <a, r_A> <r_B, v>`` and
``S2 = sum M_il M_li = <a, r_B>^2 + 2 <a, v> <r_A, r_B> + <r_A, v>^2``; the norms of the tables
are exact, the others are estimated from the rows (each unbiased). The interval is the estimate
``-+ sqrt(Var / depth / (1 - confidence))`` (Chebyshev: the error of a few rows is dominated by rare
large collisions, far from normal; a normal quantile under-covered, docs/heavy.md). Self-join: the
join with itself.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..estimate import Estimate
from ..stats.bounds import far_exponent
from .residual import table_rows
from .table import HeavyTable

__all__ = ["METHOD", "Side", "join_estimate"]

METHOD = "heavy"


@dataclass
class Side:
    """What the estimator reads of one sketch."""

    table: HeavyTable
    rows: np.ndarray  # the residual's counters as float64, (depth, width)
    seed: int
    exact: bool  # no residual at all: the table is the whole frequency vector


def _dot(x: np.ndarray, y: np.ndarray) -> float:
    """The mean over rows of the row inner products."""
    return float(np.mean(np.einsum("pw,pw->p", x, y)))


def _scaled(x: float, e: int) -> float:
    """``x * 2^e``, infinite (not an OverflowError) past the doubles."""
    return float(np.ldexp(x, e))


def _rescale_exponent(counts: np.ndarray, rows: np.ndarray) -> int:
    """:func:`~skimsketch.stats.bounds.far_exponent` of a side's largest count or counter."""
    return far_exponent(max(float(np.max(np.abs(counts), initial=0.0)), float(np.max(np.abs(rows), initial=0.0))))


def _scale_rows(x: np.ndarray, e: int) -> np.ndarray:
    """``x * 2^e`` (``x`` itself when ``e`` is 0: no copy on the common path)."""
    return np.ldexp(x, e) if e else x


def join_estimate(A: Side, B: Side, confidence: float, combine: str = "mean") -> Estimate:
    """``J = <f, g>`` of the two sides (module docstring); ``combine`` is ``"mean"`` (unbiased, the interval's
    basis) or ``"median"`` of the rows (kept for the measurements of docs/heavy.md)."""
    ka, ta, _ = A.table.entries()
    kb, tb, _ = B.table.entries()
    # float counts far from 1: the variance multiplies four magnitudes, so work on copies scaled by exact
    # powers of two (as the linear sketches do, skimsketch/sketch/signed_join.py) and scale the answer back
    ea, eb = _rescale_exponent(ta, A.rows), _rescale_exponent(tb, B.rows)
    ta, tb = _scale_rows(ta.astype(np.float64), ea), _scale_rows(tb.astype(np.float64), eb)
    back = -(ea + eb)
    common, ia, ib = np.intersect1d(ka, kb, assume_unique=True, return_indices=True)
    exact = float(np.dot(ta[ia], tb[ib]))
    keep_a = ~B.table.no_residual(ka)  # a: A's keys that may have a residual in B
    keep_b = ~A.table.no_residual(kb)
    depth, width = A.rows.shape
    ca = table_rows(A.seed, ka[keep_a], ta[keep_a], width, depth)
    cb = table_rows(A.seed, kb[keep_b], tb[keep_b], width, depth)
    ra, rb = _scale_rows(A.rows, ea), _scale_rows(B.rows, eb)
    x = np.einsum("pw,pw->p", ca, rb) + np.einsum("pw,pw->p", ra, cb) + np.einsum("pw,pw->p", ra, rb)
    if combine == "mean":
        rest = float(np.mean(x))
    elif combine == "median":
        rest = float(np.median(x))
    else:
        raise ValueError(f"combine must be 'mean' or 'median', got {combine!r}")
    value = _scaled(exact + rest, back)
    detail = {"table": _scaled(exact, back), "rows": _scale_rows(x, back).tolist(), "kept_a": int(keep_a.sum()),
              "kept_b": int(keep_b.sum()), "held_a": len(ka), "held_b": len(kb), "common": len(common)}
    if A.exact and B.exact:
        return Estimate(value, value, value, 1.0, METHOD, detail)
    # the pieces of the variance (module docstring): exact for the tables, row means for the rest
    a, b = np.zeros(len(ka)), np.zeros(len(kb))
    a[keep_a], b[keep_b] = ta[keep_a], tb[keep_b]
    na2, nb2 = float(np.dot(a, a)), float(np.dot(b, b))
    ab = float(np.dot(a[ia], b[ib]))
    ra2, rb2 = _dot(ra, ra), _dot(rb, rb)
    a_rb, b_ra, ra_rb = _dot(ca, rb), _dot(cb, ra), _dot(ra, rb)
    a_ra, b_rb = _dot(ca, ra), _dot(cb, rb)
    v2 = max(nb2 + 2.0 * b_rb + rb2, 0.0)
    a_v, rb_v, ra_v = ab + a_rb, b_rb + rb2, b_ra + ra_rb
    s1 = na2 * max(rb2, 0.0) + max(ra2, 0.0) * v2 + 2.0 * a_ra * rb_v
    s2 = a_rb * a_rb + 2.0 * a_v * ra_rb + ra_v * ra_v
    var = max(s1 + s2, 0.0) / width / depth
    # Chebyshev: the error is heavy-tailed (rare big collisions)
    half = _scaled(math.sqrt(var / (1.0 - confidence)), back)
    detail["se"] = _scaled(math.sqrt(var), back)
    return Estimate(value, value - half, value + half, confidence, METHOD, detail)
