"""The join sample's interval: sure bounds from what the two samples know, and a Chernoff bound on the rest.

Notation of :mod:`skimsketch.sample.estimator`: key ``k`` has totals ``f``, ``g``, the shared uniform ``u``;
sample ``F`` keeps ``k`` iff ``u < tau_f f^2``, ``G`` iff ``u < tau_g g^2``; ``p = min(1, tau_f f^2, tau_g g^2)``;
``J^ = sum over kept-by-both of f g / p``; ``J = sum f g``. Every key falls in one of four classes of the
outcome: kept by both (``B``: ``f``, ``g`` exact), kept by ``F`` only, by ``G`` only, by neither.

**Sure bounds** (hold for every outcome, no probability):

* a key kept by ``F`` only has ``|g| <= c = sqrt(u / tau_g)`` (its ``G`` rank ``u / g^2`` was at least
  ``tau_g``), and ``g = 0`` when the totals are integers and ``u < tau_g``;
* a key neither kept has ``|f| < 1 / sqrt(tau_f)`` and ``|g| < 1 / sqrt(tau_g)``; there are at most
  ``n0 = min(K_f - n_f, K_g - n_g)`` of them (the headers' key counts);
* when a table's weights are known non-negative, its dropped keys' totals sum to its dropped mass ``D``.

So ``|J - J_B| <= S = sum_F-only |f| c + sum_G-only |g| c + S0``, ``S0`` the neither-kept bound; with
both tables non-negative, ``J >= J_B``. The estimate is clamped into the sure interval.

**Chernoff part** (threshold sampling: each ``tau`` taken as fixed, each key kept independently). Split
``J^ - J = X+ - X-`` by the sign of ``f g``; ``X+ = sum_{fg > 0} |fg| (1[kept] / p - 1)``. Its lower tail
bounds the upper end of ``J``: for any ``lambda > 0``, ``P(-X+ >= t) <= exp(Psi(lambda) - lambda t)`` with
``Psi = sum_k phi_k``, ``phi = lambda a + log(1 - p + p exp(-lambda a / p))``, ``a = |fg|``, summed over the
random keys (``p < 1``). ``Psi`` is bounded from what is known, key class by key class:

* ``R1``: certain in ``F`` (``tau_f f^2 >= 1``: in ``F``'s sample whatever ``u``), light in ``G``. Kept by
  ``G``: ``phi`` exact. Not kept and not proven absent: ``g`` unknown, but ``a^2 / p = f^2 / tau_g`` and
  ``p = tau_g g^2 <= 1``: with ``x = sqrt(p)`` and ``y = lambda a / p``, ``log(1 - v) <= -v`` gives
  ``phi <= x^2 (y - 1 + e^-y)``, ``x y = s = lambda |f| / sqrt(tau_g)``; ``(y - 1 + e^-y) / y^2`` decreases and
  ``y >= s``, so ``phi <= s - 1 + e^-s`` whatever ``g``. ``R2``: the mirror.
* ``R3``: light in both. ``a^2 / p = W q`` with ``W = 1 / (tau_f tau_g)`` and ``q = max(tau_f f^2, tau_g g^2)``,
  the probability that *either* sample keeps ``k`` (the samples are coordinated). So
  ``sum_R3 phi <= lambda^2 W mu / 2``, ``mu = E[N3]`` the expected number of ``R3`` keys either sample keeps.
  ``N3 <= N``, the light entries of either sample not proven absent, and ``mu <= mu+(N)``, the Poisson-binomial
  Chernoff bound at ``DELTA_COUNT``.

``T+ = min over lambda of (Psi(lambda) + log(1 / DELTA_TAIL)) / lambda`` (a fixed grid of ``lambda``). Then
``U = min(J_B + S, J^ + T+ + z s-)`` and ``L = max(sure lower end, J^ - z s+ - T-)``, ``s+^2`` the observed
variance of the positive terms (``sum a^2 (1 - p) / p^2`` over ``B`` plus its largest term: the estimate's
upper tail, seen when it happens), ``T-`` and ``s-`` their negative-sign mirrors. A key whose partner's sign
is unknown (a signed table) counts in both signs. Probability enters only through the Chernoff bounds and
``mu+``: ``DELTA_TAIL + DELTA_COUNT`` is the upper end's share ``(1 - confidence) / 2``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from statistics import NormalDist

import numpy as np

__all__ = ["GRID", "SideFacts", "Interval", "count_upper", "interval", "scaled", "tail_bound"]

#: the grid of ``lambda / lambda0`` searched for the Chernoff bound: ``2^(i/8)``, ``i`` in ``[-48, 48]``
GRID = np.exp2(np.arange(-48, 49) / 8.0)
#: the share of the count bound ``mu+`` in each end's failure probability
COUNT_SHARE = 0.2
_MAX = float(np.finfo(np.float64).max)


@dataclass(frozen=True)
class SideFacts:
    """What one sample knows: its entries' ``u`` and totals, ``tau``, the table's key count and total weight,
    whether every row weight was non-negative (``None``: unknown, as in samples written before the flag), and
    ``unit``, the smallest non-zero ``|total|`` the table can hold (1 for integer totals, scaled with them; 0 for
    float totals)."""

    units: np.ndarray
    totals: np.ndarray
    tau: float
    n_keys: int
    total_weight: float
    nonnegative: bool | None
    unit: float

    @property
    def complete(self) -> bool:
        return math.isinf(self.tau)

    def dropped_mass(self) -> float | None:
        """``sum f`` over the keys the sample dropped when every total is non-negative (then it bounds their
        ``sum |f|``), else ``None``."""
        if not self.nonnegative:
            return None
        return max(0.0, float(self.total_weight) - float(self.totals.sum()))


@dataclass(frozen=True)
class Interval:
    value: float
    low: float
    high: float
    detail: dict


def count_upper(n: int, delta: float) -> float:
    """``mu+``: the largest mean ``mu`` of a sum of independent Bernoulli variables with
    ``P(N <= n) >= delta`` by Chernoff's bound ``P(N <= n) <= exp(-mu) (e mu / n)^n`` (``n < mu``)."""
    log_d = math.log(delta)
    if n == 0:
        return -log_d

    def excess(mu):  # log of the bound minus log delta; decreasing in mu for mu > n
        return n * math.log(math.e * mu / n) - mu - log_d

    lo, hi = float(n), float(n) + 2.0 * (-log_d) + 2.0 * math.sqrt(-2.0 * n * log_d) + 1.0
    while excess(hi) > 0:
        hi *= 2.0
    for _ in range(100):
        mid = 0.5 * (lo + hi)
        if excess(mid) > 0:
            lo = mid
        else:
            hi = mid
    return hi


def tail_bound(a_exact, p_exact, unknown, w_mu: float, delta: float) -> float:
    """``T``: the Chernoff bound at ``delta`` on the shortfall ``-X`` (module docstring) from the random kept
    keys' ``a``, ``p`` (exact ``phi``), the unresolved one-side keys' ``|f| / sqrt(tau_other)`` and the
    light-light term ``W mu+``; ``lambda`` searched on :data:`GRID` around the sub-Gaussian optimum."""
    a_exact, p_exact, su = (np.asarray(x, dtype=np.float64) for x in (a_exact, p_exact, unknown))
    v2 = float(np.sum(a_exact * a_exact / p_exact)) + float(np.dot(su, su)) + float(w_mu)
    if v2 <= 0.0:
        return 0.0
    log_inv = -math.log(delta)
    lam = math.sqrt(2.0 * log_inv / v2) * GRID
    col = lam[:, None]
    x = col * a_exact
    psi = np.sum(x + np.log1p(p_exact * np.expm1(-x / p_exact)), axis=1)
    s = col * su
    psi = psi + np.sum(s + np.expm1(-s), axis=1) + 0.5 * lam * lam * w_mu
    return float(np.min((psi + log_inv) / lam))


def _neither_bound(a: SideFacts, b: SideFacts) -> float:
    """``S0``: a sure bound on ``|sum fg|`` over keys neither sample kept."""
    if a.complete or b.complete:
        return 0.0
    n0 = min(a.n_keys - len(a.totals), b.n_keys - len(b.totals))
    if n0 <= 0:
        return 0.0
    ma, mb = 1.0 / math.sqrt(a.tau), 1.0 / math.sqrt(b.tau)
    bound = n0 * ma * mb
    da, db = a.dropped_mass(), b.dropped_mass()
    if da is not None:
        bound = min(bound, da * mb)
    if db is not None:
        bound = min(bound, db * ma)
    return bound


def _one_side(a: SideFacts, b: SideFacts, matched: np.ndarray):
    """``a``'s entries ``b`` did not keep and could not prove absent: ``(|f|, c)`` with ``c = sqrt(u / tau_b)``,
    and whether each is certain in ``a``."""
    if b.complete:
        empty = np.zeros(0)
        return empty, empty, np.zeros(0, dtype=bool)
    only = ~matched
    if b.unit > 0:  # u < tau_b unit^2: b would have kept a non-zero total, so the partner is 0
        only &= a.units >= b.tau * (b.unit * b.unit)
    f = np.abs(a.totals[only].astype(np.float64))
    c = np.sqrt(a.units[only] / b.tau)
    certain = np.ones(len(f), dtype=bool) if a.complete else a.tau * f * f >= 1.0
    return f, c, certain


def _knapsack(f: np.ndarray, c: np.ndarray, budget: float | None) -> float:
    """``max sum f x`` over ``0 <= x <= c``, ``sum x <= budget`` (greedy by ``f``): the sure one-side bound."""
    if budget is None:
        return float(np.dot(f, c))
    order = np.argsort(-f, kind="stable")
    cum = np.cumsum(c[order])
    take = np.minimum(c[order], np.maximum(0.0, budget - (cum - c[order])))
    return float(np.dot(f[order], take))


def scaled(fps_units: np.ndarray, totals: np.ndarray, tau: float, n_keys: int, total_weight: float,
           nonnegative: bool | None, integer: bool, scale: int = 0) -> tuple[SideFacts, int]:
    """A sample's facts with its totals scaled by ``2^-e`` (``tau``, stored at scale exponent ``scale``, by
    ``2^2(e + scale)``: the same inclusion probabilities) so that the largest ``|total|`` is in ``[0.5, 1)``: no
    overflow or underflow in the bounds for totals anywhere in float64's range. A threshold beyond the doubles
    there (every kept entry but those ``2^512`` below the largest is certain) is the largest double: smaller,
    so the bounds only widen. Returns the facts and ``e``."""
    t = totals.astype(np.float64)
    top = float(np.abs(t).max()) if len(t) else 0.0
    e = math.frexp(top)[1] if top > 0 and math.isfinite(top) else 0
    t = np.ldexp(t, -e)
    k = 2 * (e + scale)
    tau = tau if math.isinf(tau) else _MAX if math.frexp(tau)[1] + k > 1024 else math.ldexp(tau, k)
    return SideFacts(fps_units, t, tau, n_keys, math.ldexp(float(total_weight), -e), nonnegative,
                     math.ldexp(1.0, -e) if integer else 0.0), e


def interval(a: SideFacts, b: SideFacts, ia: np.ndarray, ib: np.ndarray, confidence: float) -> Interval:
    """The estimate and interval of the module docstring, in the facts' (scaled) units; ``ia``, ``ib`` index
    the entries both samples kept."""
    fa, gb = a.totals[ia], b.totals[ib]
    with np.errstate(over="ignore", invalid="ignore", under="ignore"):
        pa = np.full(len(fa), 1.0) if a.complete else a.tau * fa * fa
        pb = np.full(len(gb), 1.0) if b.complete else b.tau * gb * gb
    p = np.minimum(1.0, np.minimum(pa, pb))
    prod = fa * gb
    j_b = float(prod.sum())
    terms = prod / p
    estimate = float(terms.sum())
    matched_a = np.zeros(len(a.totals), dtype=bool)
    matched_a[ia] = True
    matched_b = np.zeros(len(b.totals), dtype=bool)
    matched_b[ib] = True
    fa_u, ca, cert_a = _one_side(a, b, matched_a)
    gb_u, cb, cert_b = _one_side(b, a, matched_b)
    # sure bounds
    s_a = _knapsack(fa_u, ca, b.dropped_mass())
    s_b = _knapsack(gb_u, cb, a.dropped_mass())
    s_0 = _neither_bound(a, b)
    sure = s_a + s_b + s_0
    nonneg = bool(a.nonnegative and b.nonnegative)
    sure_low = j_b if nonneg else j_b - sure
    sure_high = j_b + sure
    # the Chernoff part
    side = (1.0 - confidence) / 2.0
    d_tail, d_count = side * (1.0 - COUNT_SHARE), side * COUNT_SHARE
    rnd = p < 1.0
    both_light = rnd & (pa < 1.0) & (pb < 1.0)
    exact = rnd & ~both_light
    w_mu = 0.0
    if not (a.complete or b.complete):
        n3 = int(both_light.sum()) + int((~cert_a).sum()) + int((~cert_b).sum())
        w_mu = count_upper(n3, d_count) / (a.tau * b.tau)
    # certain keys of one side whose partner is unresolved: |partner| < 1 / sqrt(tau) of the other side
    unk = np.concatenate([fa_u[cert_a] * _inv_sqrt(b.tau), gb_u[cert_b] * _inv_sqrt(a.tau)])
    pos, neg = exact & (prod > 0), exact & (prod < 0)
    t_pos = tail_bound(np.abs(prod[pos]), p[pos], unk, w_mu, d_tail)
    seen_pos = tail_bound(np.abs(prod[pos]), p[pos], unk, 0.0, d_tail) if w_mu else t_pos
    # a partner of unknown sign may make a negative product: unresolved keys count in both tails
    t_neg = 0.0 if nonneg else tail_bound(np.abs(prod[neg]), p[neg], unk, w_mu, d_tail)
    z = NormalDist().inv_cdf(1.0 - side)
    var = terms * terms * (1.0 - p)
    s_pos = _observed_spread(var[rnd & (prod > 0)])
    s_neg = _observed_spread(var[rnd & (prod < 0)])
    high = min(sure_high, estimate + t_pos + z * s_neg)
    low = max(sure_low, estimate - z * s_pos - t_neg)
    value = min(max(estimate, sure_low), sure_high)
    low, high = min(low, value), max(high, value)
    detail = {"matched": int(len(fa)), "random": int(rnd.sum()), "exact_part": j_b, "sure_low": sure_low,
              "sure_high": sure_high, "neither_bound": s_0, "one_side_bound": s_a + s_b, "tail_up": t_pos,
              "tail_down": t_neg, "unseen_share": max(0.0, t_pos - seen_pos), "nonnegative": nonneg}
    return Interval(value, low, high, detail)


def _inv_sqrt(tau: float) -> float:
    return 0.0 if math.isinf(tau) else 1.0 / math.sqrt(tau)


def _observed_spread(var: np.ndarray) -> float:
    """``sqrt(sum of the observed variance terms + the largest of them)``."""
    if len(var) == 0:
        return 0.0
    return math.sqrt(float(var.sum()) + float(var.max()))
