"""Shared keys of two join samples: which side's keys a join covers.

Two coordinated samples (:mod:`.join_sample`) keep a key ``k`` both exactly when
``u(k) < min(tau_f f(k)^2, tau_g g(k)^2)`` given the other keys' ranks (the priority-sampling
argument of :mod:`.estimator`), so with ``p(k) = min(1, tau_f f^2, tau_g g^2)`` the
Horvitz-Thompson sum over the fingerprints both samples kept::

    S^ = sum over kept-by-both of 1 / p(k)

is unbiased for ``S``, the number of keys both tables hold (fingerprints with a non-zero total on
each side). Divided by a table's key count (its header's ``n_keys``, exact), it is the share of that
table's keys that find a partner in the other: about 1 for a foreign key into a table that holds
every key it references, whatever the other side's share.

The interval is ``S^ -+ z sqrt(V^ + V0)`` with ``V^ = sum (1 - p) / p^2`` (the Horvitz-Thompson
variance estimate) and ``V0`` the variance of one shared key at the smallest inclusion probability
a shared key can have, ``p0 = min(tau_f, tau_g)`` with integer totals (each at least 1 in absolute
value; 0 with float totals): a few shared keys of light totals are mostly missed by both samples,
and then ``V^`` is about 0 (measured: without ``V0`` a dimension of 30 keys, all in a table whose
sample kept 1 key in 28, answered ``[0, 0]``). It is clipped to what holds surely: at least the
keys both kept, and at most, with integer totals, the keys of a complete side that the other's
sample did not rule out (a key with ``u(k) < tau`` that a table holds has rank below ``tau``, so its
sample kept it), else the smaller key count. Both samples complete: exact.
"""

from __future__ import annotations

import math
from statistics import NormalDist

import numpy as np

from ..estimate import Estimate
from ..stats.bounds import check_confidence
from .estimator import inclusion
from .join_sample import JoinSample
from .rank import units

__all__ = ["METHOD", "coverage", "shared_keys"]

METHOD = "sample-overlap"


def shared_keys(a: JoinSample, b: JoinSample, confidence: float = 0.95) -> Estimate:
    """Estimated number of keys both tables hold (module docstring): unbiased, exact when both samples
    kept every key. ``a`` and ``b`` must be join samples of one seed (as for ``join_size``)."""
    if not isinstance(a, JoinSample):
        raise TypeError(f"shared_keys needs JoinSample objects, got {type(a).__name__} for a")
    a._check_compatible(b, "join")  # the join's rules: one seed, key domain and rank hash
    conf = check_confidence(confidence)
    fa, ta = a.sample_items()
    fb, tb = b.sample_items()
    _, i, j = np.intersect1d(fa, fb, assume_unique=True, return_indices=True)
    matched = len(i)
    hi = min(a.n_keys, b.n_keys)
    if math.isinf(a.tau) and math.isinf(b.tau):
        return Estimate.exact(float(matched), METHOD)
    p = inclusion(np.ldexp(ta[i].astype(np.float64), a.scale), np.ldexp(tb[j].astype(np.float64), b.scale), a.tau,
                  b.tau)  # tau at each sample's scale exponent (skimsketch.sample.scale)
    value = float((1.0 / p).sum())
    integer = a.dtype == "int64" and b.dtype == "int64"
    p0 = min(1.0, a.tau, b.tau) if integer else 0.0
    v0 = (1.0 - p0) / (p0 * p0) if p0 > 0 else math.inf
    half = NormalDist().inv_cdf(0.5 + conf / 2.0) * math.sqrt(float(((1.0 - p) / (p * p)).sum()) + v0)
    for side, fps, other in ((a, fa, b), (b, fb, a)):
        if integer and math.isinf(side.tau):  # its keys the other's sample did not rule out
            hi = min(hi, int((units(fps) >= other.tau).sum()) + int((units(fps[i if side is a else j]) < other.tau).sum()))
    low, high = max(float(matched), value - half), min(float(hi), value + half)
    return Estimate(value, min(low, value), max(high, value), conf, METHOD, {"matched": matched})


def coverage(a: JoinSample, b: JoinSample, confidence: float = 0.95) -> tuple[tuple, tuple]:
    """``((share, low, high) of a's keys that b holds, the same of b's keys that a holds)``: :func:`shared_keys`
    and its interval over each table's key count (exact), within ``[0, 1]`` (0 for a table without keys)."""
    s = shared_keys(a, b, confidence)
    return tuple(tuple(min(1.0, x / n) if n else 0.0 for x in (s.value, s.low, s.high)) for n in (a.n_keys, b.n_keys))
