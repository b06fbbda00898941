"""SKIMDENSE: find the dense frequencies of a hash sketch and skim them off.

In the terms of Ganguly, Garofalakis and Rastogi (EDBT 2004): the sketch
``H`` of a frequency vector ``f`` (``depth`` tables of ``width`` signed
counters) is split as ``H = D + H'`` where ``D`` is the sketch of the *dense*
frequencies ``f̂_d`` (keys whose ``|f(v)|`` clears a threshold) and ``H'`` the
residual: exactly the sketch of ``f - f̂_d``, whose self-join size is small.

Candidates come from a *source* (:func:`.candidates.domain_candidates`: every key of
``[0, m)``; :func:`.candidates.prefix_candidates`: the prefix search of
:mod:`skimsketch.sketch.skim.hierarchy` for unbounded keys). Each candidate ``v`` has one
estimate per table, ``e_p(v) = H'[p][h_p(v)] * xi_p(v)``.

Peeling (:func:`skimdense`), in rounds on the current residual:

1. **Adaptive thresholds.** A key absent from the stream lands in a random
   bucket with a random sign, so it clears ``t`` with one sign in at least
   ``r`` tables with a Poisson-binomial probability of the shares
   ``pi_p(t)`` of buckets with ``|H'| >= t``. For every majority ``r`` the
   round's threshold ``t_r`` is the smallest ``t >= floor`` at which the
   candidates tested would let at most ``budget`` absent keys through by
   chance (:func:`pass_rules`). As the heavy keys are skimmed the counters
   shrink and the thresholds fall with them, so skimming works at any depth,
   3 included: the thresholds adapt, not only the number of tables that
   must agree.
2. **Pass rule.** A candidate passes when at least ``r`` of its table
   estimates clear ``t_r`` with one sign for some ``r`` (``r = depth`` for the
   lightest keys; fewer tables at a higher threshold when a collision spoils
   one). A key colliding with a heavy key in only some tables -- an
   impostor -- does not pass at the heavy key's level.
3. **Greedy peeling.** Among passing candidates only those with the largest
   ``|mean estimate|`` in each of their buckets are accepted in this round
   (the parallel form of "heaviest first"): an impostor sharing buckets with
   a heavier true key waits, and once that key is skimmed its estimates fall
   to noise. Accepted keys get the median of their table estimates and are
   subtracted from the residual; keys already dense are re-estimated on the
   new residual (one least-squares refinement step, :func:`_refine`) every
   round. After the last round the dense values are the least-squares fit of
   the counters (:func:`_least_squares`, conjugate gradients): unbiased given
   the dense set, and exact when the dense keys are all the keys there are
   (a skim that finds every key answers exactly, up to rounding).

Rounds stop when nothing passes. The result records the last threshold used
and the *resolution* -- the smallest threshold a further round could use
(:func:`round_threshold` with no floor), or a report of the dense keys
(:func:`reported`: chance passes controlled per query, not per round), if
higher: keys lighter than that cannot be told from chance by this sketch. Cost: one pass over the candidates per round,
at most ``MAX_ROUNDS`` rounds.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ...kernels import estimates, hot_candidates
from .candidates import Candidates

__all__ = [
    "BUDGET",
    "MAX_ROUNDS",
    "DenseResult",
    "explains",
    "justified",
    "pass_rules",
    "REPORT_BUDGET",
    "reported",
    "round_threshold",
    "skimdense",
]

BUDGET = 0.25  # expected absent keys passing one round by chance
REPORT_BUDGET = 1e-3  # expected absent keys a report of the dense keys may name, per query (all rounds together)
REPORT_FLOOR = 1e-9  # relative floor of the report threshold: float rounding of a residual explained exactly
MAX_ROUNDS = 64
COMPLETE = 1e-6  # residual F2 / counters' F2 of a skim that found every key (:func:`explains`)
#: Smallest share of the counters' F2 a skim's dense keys must hold to be kept (:func:`justified`).
MIN_DENSE_SHARE = 0.65
#: ... at depth 2, where each dense value is fitted to two tables and absorbs half of its colliders:
#: skims holding 0.73-0.80 of the F2 of flat correlated data were 1.39x worse than none (Zipf: >= 0.93).
MIN_DENSE_SHARE_DEPTH_2 = 0.9
LSQ_ITERATIONS = 50  # conjugate-gradient steps of the final least-squares fit of the dense values
GRADIENT_ROUNDING = 1e-12  # relative float rounding of a gradient entry (a sum over the tables of counters)


@dataclass
class DenseResult:
    """Dense keys (sorted), their values, the residual counters and how far peeling went."""

    keys: np.ndarray
    values: np.ndarray
    residual: np.ndarray
    threshold: float  # the last round's threshold (inf when nothing was skimmed)
    resolution: float  # smallest threshold a further round, or a report of the dense keys, could use
    rounds: int
    tested: int


def chance_passes(residual: np.ndarray, tested: int, budget: float = BUDGET, floor: float = 0.0,
                  extra: int = 0):
    """``(rules, thresholds, passes)`` of :func:`pass_rules`: the majorities ``r``, the candidate
    thresholds (``floor`` and the counter magnitudes above it, ascending; empty when no key is tested)
    and ``passes(at)`` -> booleans ``(len(at), len(rules))``: rule ``r`` keeps ``tested`` absent keys'
    chance passes within its share of ``budget`` at threshold ``thresholds[at]``."""
    d, w = residual.shape
    rs = list(range(d // 2 + 1, d + 1))
    mags = np.sort(np.abs(residual), axis=1)
    xs = np.unique(mags[mags > floor])
    xs = np.concatenate([[floor], xs]) if floor > 0 else xs
    if not tested:
        xs = xs[:0]
    limit = budget / len(rs)

    def passes(at: np.ndarray) -> np.ndarray:
        x = xs[at]
        q = np.stack([np.minimum(w, w - np.searchsorted(row, x, side="left") + extra) / w for row in mags]) / 2.0
        dist = np.zeros((len(x), d + 1))
        dist[:, 0] = 1.0
        for qp in q:
            dist[:, 1:] = dist[:, 1:] * (1 - qp)[:, None] + dist[:, :-1] * qp[:, None]
            dist[:, 0] *= 1 - qp
        tail = np.cumsum(dist[:, ::-1], axis=1)[:, ::-1]  # tail[i, r] = P[X >= r] at threshold x[i]
        return tested * 2.0 * tail[:, rs] <= limit

    return rs, xs, passes


def pass_rules(residual: np.ndarray, tested: int, budget: float = BUDGET, floor: float = 0.0,
               extra: int = 0) -> list:
    """Pass rules ``[(t_r, r)]``: "at least ``r`` tables clear ``t_r`` with one sign", for every majority ``r``.

    A key absent from the stream clears ``t`` in table ``p`` with one given
    sign with probability ``pi_p(t) / 2`` (``pi_p``: share of the table's
    buckets with ``|residual| >= t``), so it passes rule ``(t, r)`` with
    probability ``2 P[PoissonBinomial(pi(t) / 2) >= r]``. ``t_r`` is the
    smallest value ``>= floor`` (``floor`` or a counter magnitude) at which
    ``tested`` such keys pass by chance at most ``budget / (number of rules)``
    times (``inf`` if none). ``r = depth`` reaches the lightest keys; smaller
    ``r`` (at a higher threshold) tolerates tables spoilt by a collision.
    ``extra``: buckets per table counted as beyond every threshold (a key's own
    bucket, when the residual has had that key's value taken out)."""
    rs, xs, passes = chance_passes(residual, tested, budget, floor, extra)
    if not len(xs):
        return [(math.inf, r) for r in rs]
    # P[X >= r] does not increase with the threshold (every q_p falls), so each rule's first passing
    # threshold is found on a coarse grid of xs and then inside the one gap that brackets it: the
    # same values as evaluating every xs (each threshold's probabilities are computed alone), at a
    # fraction of the cost for deep sketches (the full evaluation is O(|xs| d^2) per round)
    grid = np.unique(np.linspace(0, len(xs) - 1, min(len(xs), 129)).astype(np.intp))
    coarse = passes(grid)
    first = np.where(coarse.any(axis=0), coarse.argmax(axis=0), len(grid))  # per rule: first grid index
    gaps = sorted({int(i) for i in first if 0 < i < len(grid)})
    fine = {}
    if gaps:
        at = np.concatenate([np.arange(grid[i - 1] + 1, grid[i]) for i in gaps])
        if len(at):
            fine = dict(zip(at.tolist(), passes(at)))
    out = []
    for j, r in enumerate(rs):
        i = int(first[j])
        if i == len(grid):
            out.append((math.inf, r))
            continue
        best = int(grid[i])
        if i > 0:  # an earlier threshold inside the gap may already pass
            inside = [a for a in range(grid[i - 1] + 1, grid[i]) if fine[a][j]]
            best = inside[0] if inside else best
        out.append((float(xs[best]), r))
    return out


def explains(residual: np.ndarray, counters: np.ndarray) -> bool:
    """Whether a skim left next to nothing: the residual's F2 at most ``COMPLETE`` of the counters'
    (means over tables of a table's squared norm). Its dense keys are all the keys there are, up to
    the final fit's convergence, and the residual terms' share of the error is ``sqrt(COMPLETE)``."""
    res = float(np.mean(np.einsum("pq,pq->p", residual, residual)))
    return res <= COMPLETE * float(np.mean(np.einsum("pq,pq->p", counters, counters)))


def justified(res: DenseResult, counters: np.ndarray) -> DenseResult:
    """``res``, or no skim at all when its dense keys hold less than ``MIN_DENSE_SHARE`` of the
    counters' F2 (``MIN_DENSE_SHARE_DEPTH_2`` at depth 2) (their sum of squares against the mean over tables of a table's squared norm).

    A join's sketched terms lose about the dense x dense part of their variance, ``F2(f_d) F2(g_d)``
    of ``F2(f) F2(g)`` (under 0.42 below this share on both sides), while the keys skimmed to get
    it carry their colliders' weight out of the residual (a bias the interval does not see).
    Measured: skims holding 0.51-0.62 of the F2 were 1.1-1.2x worse than none, those holding
    0.65-0.85 gained 0.67-0.77x (docs/defaults.md, "Construction paths and justified skims").
    The sketch is then its counters' hash sketch."""
    f2 = float(np.mean(np.einsum("pq,pq->p", counters, counters)))
    share = MIN_DENSE_SHARE_DEPTH_2 if len(counters) == 2 else MIN_DENSE_SHARE
    if not len(res.keys) or float(np.dot(res.values, res.values)) >= share * f2:
        return res
    return DenseResult(res.keys[:0], res.values[:0], counters.astype(np.float64, copy=True), math.inf,
                       res.resolution, 0, res.tested)


def round_threshold(residual: np.ndarray, tested: int, budget: float = BUDGET, floor: float = 0.0) -> float:
    """The lowest threshold of :func:`pass_rules` (``inf`` if no rule can pass a key by merit)."""
    return min(t for t, _ in pass_rules(residual, tested, budget, floor))


def reported(residual: np.ndarray, buckets: np.ndarray, signs: np.ndarray, values: np.ndarray, tested: int,
             budget: float = REPORT_BUDGET) -> tuple[np.ndarray, float]:
    """(mask of the dense keys a report may name, the smallest threshold such a report resolves).

    Peeling lets ``BUDGET`` absent keys through per round by chance: harmless
    for a join estimate (the counters stay exact: a false dense key mostly moves
    weight between the dense and the residual terms), but a report of those
    keys would name keys never inserted -- on data without heavy keys, the
    only keys skimmed are such chance passes. A dense key is therefore named
    only when its own table estimates (residual plus its value: the counters
    with the other dense keys removed) pass :func:`pass_rules` of the final
    residual for all ``tested`` candidates at ``budget`` expected chance
    keys per query (``REPORT_BUDGET``: one false key in a thousand queries).
    The residual has had each key's own value taken out -- a false key
    "explains" the counters that made it pass -- so the rules count the key's
    own bucket in every table as beyond the threshold (``extra=1``): the
    chance of a key with its value put back, bounded for all keys at once.
    The threshold is the lowest of those rules (at least ``REPORT_FLOOR``
    times the largest magnitude, above float rounding): a report at a lower
    threshold would be partial. ``buckets``, ``signs``: (depth, n) of the
    dense keys in the main tables."""
    rules = _report_rules(residual, values, tested, budget)
    est = _estimates(residual, buckets, signs) + values[None, :]
    return _passing(est, rules), min(t for t, _ in rules)


def _report_rules(residual: np.ndarray, values: np.ndarray, tested: int, budget: float = REPORT_BUDGET) -> list:
    scale = max(float(np.abs(residual).max(initial=0.0)), float(np.abs(values).max(initial=0.0)))
    return pass_rules(residual, tested, budget, REPORT_FLOOR * scale, extra=1)


def _passing(e: np.ndarray, rules) -> np.ndarray:
    """Keys (columns of ``e``) passing a rule ``(t, r)``: at least ``r`` tables ``>= t``, or ``<= -t``.

    "At least r values >= t" is "the r-th largest >= t": one sort per key serves every rule."""
    mask = np.zeros(e.shape[1], dtype=bool)
    if not e.shape[1]:
        return mask
    ranked = np.sort(e, axis=0)
    d = e.shape[0]
    for t, r in rules:
        if math.isfinite(t):
            mask |= (ranked[d - r] >= t) | (ranked[r - 1] <= -t)
    return mask


def _subtract(residual: np.ndarray, buckets: np.ndarray, signs: np.ndarray, values: np.ndarray) -> None:
    w = residual.shape[1]
    for p in range(residual.shape[0]):
        residual[p] -= np.bincount(buckets[p], weights=values * signs[p], minlength=w)


def _estimates(residual: np.ndarray, buckets: np.ndarray, signs: np.ndarray) -> np.ndarray:
    return np.take_along_axis(residual, buckets, axis=1) * signs


def _refine(residual, buckets, signs, values) -> None:
    """One least-squares step for the dense values (in place, residual kept equal to counters - D).

    Each value moves by the sum of its residual estimates divided by the
    number of dense keys in its buckets (a Jacobi step scaled by row sums of
    the normal matrix, hence convergent: keys sharing buckets split the
    correction instead of each taking all of it)."""
    if not len(values):
        return
    w = residual.shape[1]
    occ = np.stack([np.bincount(buckets[p], minlength=w)[buckets[p]] for p in range(len(buckets))])
    step = _estimates(residual, buckets, signs).sum(axis=0) / occ.sum(axis=0)
    values += step
    _subtract(residual, buckets, signs, step)


def _least_squares(residual, buckets, signs, values, iterations: int) -> None:
    """Move the dense values to the least-squares fit of the counters (in place; the residual
    stays ``counters - D``): conjugate gradients on the normal equations (CGLS), at most
    ``iterations`` steps, stopping once the gradient has shrunk by 10**-6 or is down to float
    rounding (relative ``GRADIENT_ROUNDING`` of the counters: steps driven by rounding alone
    diverge, e.g. when the fit is already exact)."""
    if not len(values) or iterations <= 0:
        return
    step = np.zeros_like(values)
    r = residual.copy()
    g = _estimates(r, buckets, signs).sum(axis=0)  # A^T r
    d = g.copy()
    gamma = gamma0 = float(g @ g)
    w = residual.shape[1]
    scale = max(float(np.abs(residual).max(initial=0.0)), float(np.abs(values).max(initial=0.0)))
    noise = (GRADIENT_ROUNDING * scale) ** 2 * len(buckets) * len(values)
    for _ in range(iterations):
        if gamma <= 1e-12 * gamma0 or gamma <= noise:
            break
        q = np.stack([np.bincount(buckets[p], weights=d * signs[p], minlength=w) for p in range(len(buckets))])
        qq = float((q * q).sum())
        if qq == 0.0:
            break
        alpha = gamma / qq
        step += alpha * d
        r -= alpha * q
        g = _estimates(r, buckets, signs).sum(axis=0)
        new = float(g @ g)
        d = g + (new / gamma) * d
        gamma = new
    values += step
    _subtract(residual, buckets, signs, step)


def skimdense(counters: np.ndarray, cand: Candidates, floor, budget: float = BUDGET,
              max_rounds: int = MAX_ROUNDS) -> DenseResult:
    """Peel the dense keys of ``counters`` (depth, width) among ``cand`` (see the module docstring).

    ``floor``: a number (the lowest threshold to use), or a function of the
    current residual giving it (re-evaluated every round)."""
    residual = counters.astype(np.float64, copy=True)
    d, w = residual.shape
    n = len(cand)
    dense = np.zeros(n, dtype=bool)
    values = np.zeros(n)
    last_t, rounds = math.inf, 0
    for _ in range(max_rounds):
        fl = floor(residual) if callable(floor) else floor
        rules = pass_rules(residual, n - int(dense.sum()), budget, fl)
        t = min(x for x, _ in rules)
        if not math.isfinite(t) or not n:
            break
        # a key can pass only if at least d//2 + 1 of its buckets hold |counter| >= t: find those
        # with one byte-sized gather per table, and estimate only them
        hot = np.abs(residual) >= t
        pre = hot_candidates(*cand.bucket_index(w), hot, dense, d // 2 + 1)  # compiled (skimsketch.kernels)
        e = estimates(residual, cand.buckets, cand.signs, pre)
        keep = _passing(e, rules)
        idx, e = pre[keep], e[:, keep]
        if not len(idx):
            break
        rounds += 1
        last_t = t
        mean = np.median(e, axis=0)  # robust to a table spoilt by a collision
        # rank by |mean estimate| (a true key is consistent over its tables, an impostor is not),
        # ties by key position; a key is accepted when it ranks first in each of its buckets
        rank = np.empty(len(idx), dtype=np.int64)
        rank[np.lexsort((idx, -np.abs(e.mean(axis=0))))] = np.arange(len(idx))
        ok = np.ones(len(idx), dtype=bool)
        for p in range(d):
            first = np.full(w, len(idx), dtype=np.int64)
            np.minimum.at(first, cand.buckets[p, idx], rank)
            ok &= rank == first[cand.buckets[p, idx]]
        acc = idx[ok]
        values[acc] = mean[ok]
        _subtract(residual, cand.buckets[:, acc], cand.signs[:, acc], mean[ok])
        dense[acc] = True
        old = np.flatnonzero(dense)
        old = old[~np.isin(old, acc, assume_unique=True)]
        sub_values = values[old]
        _refine(residual, cand.buckets[:, old], cand.signs[:, old], sub_values)
        values[old] = sub_values
    sel = np.flatnonzero(dense)
    vals = values[sel]
    _least_squares(residual, cand.buckets[:, sel], cand.signs[:, sel], vals, LSQ_ITERATIONS)
    keys = cand.keys[sel]
    order = np.argsort(keys, kind="stable")
    # keys lighter than peeling's next threshold, or than the report's (:func:`reported`), are not resolved
    resolution = max(round_threshold(residual, n - len(sel), budget, 0.0),
                     min(t for t, _ in _report_rules(residual, vals, n)))
    return DenseResult(keys[order], vals[order], residual, last_t, resolution, rounds, n)
