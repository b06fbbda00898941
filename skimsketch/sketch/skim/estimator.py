"""ESTSKIMJOINSIZE: the skimmed sketch's join estimate and its interval (:class:`SkimEstimator`, a part
of :class:`~skimsketch.sketch.skim.skimmed.SkimmedSketch`).

Maintained exactly like a :class:`~skimsketch.HashSketch` (same update, same
memory). At query time SKIMDENSE (:mod:`skimsketch.sketch.skim.skimdense`) finds the
*dense* keys and subtracts their estimated frequencies ``f̂_d`` from the
counters; the residual sketch ``H'`` is exactly the sketch of ``f - f̂_d``,
whose self-join size -- and with it the error -- is small. ESTSKIMJOINSIZE
takes the median over tables ``p`` of::

    f̂_d·ĝ_d                                   (no sketch error)
  + sum_q D_f[p][q] * H'_g[p][q]               (dense f  x residual g)
  + sum_q H'_f[p][q] * D_g[p][q]               (residual f x dense g)
  + sum_q H'_f[p][q] * H'_g[p][q]              (residual x residual)

where ``D = H - H'`` is the hash sketch of the dense frequencies. Each
sketched term of a table has variance at most ``(F2(a) F2(b) + (a·b)^2) /
width`` for its two vectors, and two terms a covariance at most
``(|a·c| |b·d| + |a·d| |b·c|) / width``; the interval is ``median ± k * sigma``
with ``sigma`` one table's deviation of the three terms together (:func:`_table_sd`)
and ``k`` from Chebyshev and a binomial bound on the median (``bound="chebyshev"``, the default:
distribution-free) or from the median of ``depth`` normal errors allowing a bias of ``MEDIAN_BIAS`` of
its deviations (``bound="normal"``, an approximation), :mod:`skimsketch.stats.bounds`.
"""

from __future__ import annotations

import math

import numpy as np

from ...estimate import Estimate
from ...stats.bounds import BOUNDS, chebyshev_k, normal_median_k
from ..query import f2_bound
from ..hash_sketch import row_dots
from .search import SkimResult

__all__ = ["MEDIAN_BIAS", "ROUNDING", "SKETCHED", "JoinSide", "SkimEstimator"]

MAX_PAIR_SIDE = 2048  # dense entries per side whose pairwise products the virtual interval term weighs
#: Bias the normal interval allows, in deviations of the median of the tables. The skimmed
#: estimate is slightly biased (low, by the dense set's selection and the median of skewed table
#: errors): over 26 workloads x 3 budgets x 2 key types, 20 seeds each, the standardised errors
#: averaged -0.36 to +0.05 (docs/defaults.md, "Interval"); 0.5 covers that with a margin.
MEDIAN_BIAS = 0.5
ROUNDING = 1e-9  # relative floor of interval half-widths (float64 sums of the dense terms)


def _heaviest_squares(values: np.ndarray) -> np.ndarray:
    """Squares of the ``MAX_PAIR_SIDE`` largest ``|values|``."""
    sq = np.square(values)
    return sq if len(sq) <= MAX_PAIR_SIDE else np.partition(sq, len(sq) - MAX_PAIR_SIDE)[-MAX_PAIR_SIDE:]


#: the sketched terms of ESTSKIMJOINSIZE: (part of f, part of g), part 0 dense, 1 residual
SKETCHED = ((0, 1), (1, 0), (1, 1))


def _table_sd(ff, gg, fg, width: int) -> float:
    """Deviation of one table's sum of the sketched terms ``Z(f_i, g_j)``, (i, j) in SKETCHED.

    ``ff``, ``gg``: inner products of the parts of f (of g); ``fg[i][j] = f_i . g_j`` (part 0
    dense, 1 residual; the sketch's estimates). For hash-sketch inner products
    ``|Cov(Z(a, b), Z(c, d))| <= (|a.c| |b.d| + |a.d| |b.c|) / width`` (up to diagonal terms), so
    the terms' deviations add on a self-join (the two cross terms are one draw) and in
    quadrature when f and g share little; never more than the sum of the terms' deviations."""
    var = 0.0
    for i, j in SKETCHED:
        for k, m in SKETCHED:
            var += abs(ff[i][k] * gg[j][m]) + abs(fg[i][m] * fg[k][j])
    return math.sqrt(max(var, 0.0) / width)


class JoinSide:
    """One sketch's share of ESTSKIMJOINSIZE: everything the estimate reads from that sketch alone (its
    skim, the dense keys a report would not name and their sketch, ``F2`` of its dense values and of its
    residual, their per-table product, its heaviest squares and self-join ``F2`` bound). Built once per
    sketch (:meth:`SkimEstimator._join_side`, cached until the sketch changes, and shared by copies read
    from the same bytes: :mod:`skimsketch.format.reuse`), so a sketch joined with ``n`` others skims and
    prepares once; a pair then costs only its own terms. Its arrays are read-only."""

    __slots__ = ("skim", "doubtful", "doubt_sketch", "f2_dense", "f2_res", "own", "heaviest", "f2")

    def __init__(self, skim: SkimResult, doubtful: np.ndarray, doubt_sketch: np.ndarray, f2: float, virtual: bool):
        self.skim, self.doubtful, self.doubt_sketch, self.f2 = skim, doubtful, doubt_sketch, f2
        self.f2_dense = float(np.dot(skim.values, skim.values))
        self.f2_res = float(np.mean(row_dots(skim.residual, skim.residual)))
        self.own = float(np.mean(row_dots(skim.dense_sketch, skim.residual)))
        self.heaviest = _heaviest_squares(skim.values) if virtual else None
        for arr in (doubtful, doubt_sketch, skim.keys, skim.values, skim.residual, skim.dense_sketch):
            arr.flags.writeable = False


class SkimEstimator:
    """The estimating half of a skimmed sketch (the skims come from :class:`~.search.SkimSearch`)."""

    def _join_side(self) -> JoinSide:
        """This sketch's :class:`JoinSide` (cached until the sketch changes)."""
        side = self._cache.get("join_side")
        if side is None:
            res = self.skim()
            mask, sketch = self._doubtful(res)
            side = self._cache["join_side"] = JoinSide(res, mask, sketch, f2_bound(self.self_join_tables()),
                                                       self._search == "virtual")
        return side

    def _doubtful(self, res: SkimResult):
        """(mask of the dense keys a report would not name, (depth, width) sketch of those keys)."""
        if self._exact is not None:  # exact mode: every key is known, none is in doubt
            return np.zeros(len(res.keys), dtype=bool), np.zeros((self._depth, self._width))
        ok, _, b, s = self._report(res)
        vals = np.where(ok, 0.0, res.values)
        return ~ok, np.stack([np.bincount(b[p], weights=vals * s[p], minlength=self._width)
                              for p in range(self._depth)])

    def _skim_join(self, other, confidence: float, bound: str) -> Estimate:
        """:meth:`SkimmedSketch.join_size`'s estimate and interval (the sign rule is the class's)."""
        conf = self._check_join(other, confidence)
        if bound not in BOUNDS:
            raise ValueError(f"bound must be one of {BOUNDS}, got {bound!r}")
        exact = self._exact_join(other)
        if exact is not None:
            return exact
        sa, sb = self._join_side(), other._join_side()
        a, b = sa.skim, sb.skim
        common, ia, ib = np.intersect1d(a.keys, b.keys, assume_unique=True, return_indices=True)
        dense_dense = float(np.dot(a.values[ia], b.values[ib]))
        terms = np.stack([
            row_dots(a.dense_sketch, b.residual),
            row_dots(a.residual, b.dense_sketch),
            row_dots(a.residual, b.residual),
        ])
        tables = dense_dense + terms.sum(axis=0)
        value = float(np.median(tables))
        means = terms.mean(axis=1)
        # one table's deviation: the sketched terms' variances and covariances (_table_sd)
        sd = _table_sd(((sa.f2_dense, sa.own), (sa.own, sa.f2_res)), ((sb.f2_dense, sb.own), (sb.own, sb.f2_res)),
                       ((dense_dense, means[0]), (means[1], means[2])), self._width)
        k = (normal_median_k(self._depth, conf, MEDIAN_BIAS) if bound == "normal"
             else chebyshev_k(self._depth, conf))
        # floating-point floor: a skim that explains every counter leaves sd ~ 0, and the value
        # still carries the rounding of sums over thousands of dense keys
        # the virtual layout's id collisions: one draw shared by every table (the median does not
        # shrink it), added in quadrature with the normal (or Chebyshev) factor of a single table
        k1 = normal_median_k(1, conf) if bound == "normal" else chebyshev_k(1, conf)
        virt = 0.0 if self._search != "virtual" else _virtual_sd(sa, sb, value, dense_dense, self._virtual_lg, conf)
        half = math.hypot(k * sd, k1 * virt) + ROUNDING * (abs(dense_dense) + float(np.abs(terms).sum(axis=0).max()))
        half += _doubt(sa, sb, ia, ib) + _incomplete(sa, sb)
        return Estimate(
            value, value - half, value + half, conf, self.METHOD,
            {
                "dense_dense": dense_dense, "dense_f": len(a.keys), "dense_g": len(b.keys),
                "common_dense": len(common), "terms": [float(x) for x in np.median(terms, axis=1)],
                "threshold_f": a.threshold, "threshold_g": b.threshold, "bound": bound, "tables": tables,
            },
        )


def _virtual_sd(sa: JoinSide, sb: JoinSide, value: float, dense_dense: float, lg: int, confidence: float) -> float:
    """Deviation of the virtual ids' collision terms ``F.G - f.g`` (:mod:`skimsketch.sketch.skim.virtual`):
    at most ``(F2(f) F2(g) + (f.g)^2) / 2**lg`` in variance. Every pair with a residual key is
    in. A pair of dense entries ``(u, v)`` collides with probability ``2**-lg`` and then adds
    about ``f(u) g(v)``: the largest such products, as many as ``0.1 (1 - confidence) 2**lg``
    (a tenth of the interval's miss rate in expected collisions), are rare events the interval
    may miss; the other pairs are a spread, and their squares are in."""
    f2_dense_a, f2_dense_b = sa.f2_dense, sb.f2_dense
    var = max(sa.f2 * sb.f2 - f2_dense_a * f2_dense_b, 0.0) + max(value * value - dense_dense * dense_dense, 0.0)
    rare = int(0.1 * (1.0 - confidence) * (1 << lg))
    ha, hb = sa.heaviest, sb.heaviest
    # entries beyond the heaviest MAX_PAIR_SIDE per side: their pairs are a spread, all of them in
    var += max(f2_dense_a * f2_dense_b - float(ha.sum()) * float(hb.sum()), 0.0)
    pairs = np.outer(ha, hb).ravel()
    if rare < len(pairs):
        var += float(np.partition(pairs, len(pairs) - rare - 1)[: len(pairs) - rare].sum())
    return math.sqrt(max(var, 0.0) / (1 << lg))


def _incomplete(sa: JoinSide, sb: JoinSide) -> float:
    """For each side whose skim was taken as complete, ``sqrt(F2(residual) F2(other side))``
    (Cauchy-Schwarz on what that skim left unexplained): such a skim may have missed a light
    key that the fit absorbed, so the residual terms no longer show it (errors ~1e-5 of the
    join missed intervals of that width); 0 for a skim that is not complete."""
    out = 0.0
    for side, other in ((sa, sb), (sb, sa)):
        if side.skim.complete:
            out += math.sqrt(side.f2_res * other.f2)
    return out


def _doubt(sa: JoinSide, sb: JoinSide, ia, ib) -> float:
    """Largest change of a table's estimate if the dense keys a report would not name were
    chance passes: the estimate subtracts the collisions of distinct dense keys
    (sketch(dense_f) . sketch(dense_g) - f_d . g_d); for such a key those "collisions" are
    the weight it took from a real key, so that part of the correction is in doubt."""
    a, b = sa.skim, sb.skim
    ma, ua, mb, ub = sa.doubtful, sa.doubt_sketch, sb.doubtful, sb.doubt_sketch
    if not (ma.any() or mb.any()):
        return 0.0
    corr = row_dots(ua, b.dense_sketch) + row_dots(a.dense_sketch, ub) - row_dots(ua, ub)
    either = ma[ia] | mb[ib]
    corr = corr - float(np.dot(a.values[ia][either], b.values[ib][either]))
    return float(np.median(np.abs(corr)))
