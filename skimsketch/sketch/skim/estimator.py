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
and ``k`` from the median of ``depth`` normal errors allowing a bias of
``MEDIAN_BIAS`` of its deviations (``bound="normal"``) or Chebyshev
(``bound="chebyshev"``, distribution-free), :mod:`skimsketch.stats.bounds`.
"""

from __future__ import annotations

import math

import numpy as np

from ...estimate import Estimate
from ...stats.bounds import BOUNDS, chebyshev_k, normal_median_k
from ..query import f2_bound
from ..hash_sketch import row_dots
from .search import SkimResult

__all__ = ["MEDIAN_BIAS", "ROUNDING", "SKETCHED", "SkimEstimator"]

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


class SkimEstimator:
    """The estimating half of a skimmed sketch (the skims come from :class:`~.search.SkimSearch`)."""

    def _virtual_sd(self, other, value: float, a: SkimResult, b: SkimResult, dense_dense: float,
                    f2_dense_a: float, f2_dense_b: float, confidence: float) -> float:
        """Deviation of the virtual ids' collision terms ``F.G - f.g`` (:mod:`skimsketch.sketch.skim.virtual`):
        at most ``(F2(f) F2(g) + (f.g)^2) / 2**lg`` in variance. Every pair with a residual key is
        in. A pair of dense entries ``(u, v)`` collides with probability ``2**-lg`` and then adds
        about ``f(u) g(v)``: the largest such products, as many as ``0.1 (1 - confidence) 2**lg``
        (a tenth of the interval's miss rate in expected collisions), are rare events the interval
        may miss; the other pairs are a spread, and their squares are in. 0 outside the virtual layout."""
        if self._search != "virtual":
            return 0.0
        f2f, f2g = f2_bound(self.self_join_tables()), f2_bound(other.self_join_tables())
        var = max(f2f * f2g - f2_dense_a * f2_dense_b, 0.0) + max(value * value - dense_dense * dense_dense, 0.0)
        rare = int(0.1 * (1.0 - confidence) * (1 << self._virtual_lg))
        sa, sb = _heaviest_squares(a.values), _heaviest_squares(b.values)
        # entries beyond the heaviest MAX_PAIR_SIDE per side: their pairs are a spread, all of them in
        var += max(f2_dense_a * f2_dense_b - float(sa.sum()) * float(sb.sum()), 0.0)
        pairs = np.outer(sa, sb).ravel()
        if rare < len(pairs):
            var += float(np.partition(pairs, len(pairs) - rare - 1)[: len(pairs) - rare].sum())
        return math.sqrt(max(var, 0.0) / (1 << self._virtual_lg))

    def _incomplete(self, other, a: SkimResult, b: SkimResult) -> float:
        """For each side whose skim was taken as complete, ``sqrt(F2(residual) F2(other side))``
        (Cauchy-Schwarz on what that skim left unexplained): such a skim may have missed a light
        key that the fit absorbed, so the residual terms no longer show it (errors ~1e-5 of the
        join missed intervals of that width); 0 for a skim that is not complete."""
        out = 0.0
        for res, side in ((a, other), (b, self)):
            if res.complete:
                out += math.sqrt(float(np.mean(row_dots(res.residual, res.residual)))
                                 * f2_bound(side.self_join_tables()))
        return out

    def _doubtful(self, res: SkimResult):
        """(mask of the dense keys a report would not name, (depth, width) sketch of those keys)."""
        if self._exact is not None:  # exact mode: every key is known, none is in doubt
            return np.zeros(len(res.keys), dtype=bool), np.zeros((self._depth, self._width))
        ok, _, b, s = self._report(res)
        vals = np.where(ok, 0.0, res.values)
        return ~ok, np.stack([np.bincount(b[p], weights=vals * s[p], minlength=self._width)
                              for p in range(self._depth)])

    def _doubt(self, a: SkimResult, other, b: SkimResult, ia, ib) -> float:
        """Largest change of a table's estimate if the dense keys a report would not name were
        chance passes: the estimate subtracts the collisions of distinct dense keys
        (sketch(dense_f) . sketch(dense_g) - f_d . g_d); for such a key those "collisions" are
        the weight it took from a real key, so that part of the correction is in doubt."""
        ma, ua = self._doubtful(a)
        mb, ub = other._doubtful(b)
        if not (ma.any() or mb.any()):
            return 0.0
        corr = row_dots(ua, b.dense_sketch) + row_dots(a.dense_sketch, ub) - row_dots(ua, ub)
        either = ma[ia] | mb[ib]
        corr = corr - float(np.dot(a.values[ia][either], b.values[ib][either]))
        return float(np.median(np.abs(corr)))

    def _skim_join(self, other, confidence: float, bound: str) -> Estimate:
        """:meth:`SkimmedSketch.join_size`'s estimate and interval (the sign rule is the class's)."""
        conf = self._check_join(other, confidence)
        if bound not in BOUNDS:
            raise ValueError(f"bound must be one of {BOUNDS}, got {bound!r}")
        exact = self._exact_join(other)
        if exact is not None:
            return exact
        a, b = self.skim(), other.skim()
        common, ia, ib = np.intersect1d(a.keys, b.keys, assume_unique=True, return_indices=True)
        dense_dense = float(np.dot(a.values[ia], b.values[ib]))
        terms = np.stack([
            row_dots(a.dense_sketch, b.residual),
            row_dots(a.residual, b.dense_sketch),
            row_dots(a.residual, b.residual),
        ])
        tables = dense_dense + terms.sum(axis=0)
        value = float(np.median(tables))
        f2_dense_a, f2_dense_b = float(np.dot(a.values, a.values)), float(np.dot(b.values, b.values))
        f2_res_a = float(np.mean(row_dots(a.residual, a.residual)))
        f2_res_b = float(np.mean(row_dots(b.residual, b.residual)))
        means = terms.mean(axis=1)
        # one table's deviation: the sketched terms' variances and covariances (_table_sd)
        own_a = float(np.mean(row_dots(a.dense_sketch, a.residual)))
        own_b = float(np.mean(row_dots(b.dense_sketch, b.residual)))
        sd = _table_sd(((f2_dense_a, own_a), (own_a, f2_res_a)), ((f2_dense_b, own_b), (own_b, f2_res_b)),
                       ((dense_dense, means[0]), (means[1], means[2])), self._width)
        k = (normal_median_k(self._depth, conf, MEDIAN_BIAS) if bound == "normal"
             else chebyshev_k(self._depth, conf))
        # floating-point floor: a skim that explains every counter leaves sd ~ 0, and the value
        # still carries the rounding of sums over thousands of dense keys
        # the virtual layout's id collisions: one draw shared by every table (the median does not
        # shrink it), added in quadrature with the normal (or Chebyshev) factor of a single table
        k1 = normal_median_k(1, conf) if bound == "normal" else chebyshev_k(1, conf)
        virt = self._virtual_sd(other, value, a, b, dense_dense, f2_dense_a, f2_dense_b, conf)
        half = math.hypot(k * sd, k1 * virt) + ROUNDING * (abs(dense_dense) + float(np.abs(terms).sum(axis=0).max()))
        half += self._doubt(a, other, b, ia, ib) + self._incomplete(other, a, b)
        return Estimate(
            value, value - half, value + half, conf, self.METHOD,
            {
                "dense_dense": dense_dense, "dense_f": len(a.keys), "dense_g": len(b.keys),
                "common_dense": len(common), "terms": [float(x) for x in np.median(terms, axis=1)],
                "threshold_f": a.threshold, "threshold_g": b.threshold, "bound": bound, "tables": tables,
            },
        )
