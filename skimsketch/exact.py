"""Exact answers in memory, for validation and small inputs."""

from __future__ import annotations

import numpy as np

from .keys.canonical import canonicalize

__all__ = ["exact_frequencies", "exact_join_size", "exact_self_join_size"]


def exact_frequencies(keys, weights=None):
    """(distinct canonical keys, their net weights) of a batch; nulls are dropped."""
    b = canonicalize(keys, weights, allow_float_weights=True)
    uniq, inv = np.unique(b.keys, return_inverse=True)
    if b.weights is None:
        return uniq, np.bincount(inv, minlength=len(uniq)).astype(np.int64)
    if b.float_weights:
        return uniq, np.bincount(inv, weights=b.weights, minlength=len(uniq))
    f = np.zeros(len(uniq), dtype=object)  # Python ints: exact whatever the weights
    np.add.at(f, inv, b.weights.astype(object))
    return uniq, f


def _dot(a, b):
    if a.dtype == object or b.dtype == object:
        return sum(int(x) * int(y) for x, y in zip(a, b))
    if a.dtype.kind == "f" or b.dtype.kind == "f":
        return float(np.dot(a.astype(np.float64), b.astype(np.float64)))
    return sum(int(x) * int(y) for x, y in zip(a.tolist(), b.tolist()))


def exact_join_size(keys_f, keys_g, weights_f=None, weights_g=None):
    """``sum_v f(v) g(v)``: the exact equi-join size (or SUM aggregate with weights).

    >>> exact_join_size([1, 1, 2, None], [1, 2, 2, None])
    4
    """
    kf, ff = exact_frequencies(keys_f, weights_f)
    kg, fg = exact_frequencies(keys_g, weights_g)
    _, i, j = np.intersect1d(kf, kg, assume_unique=True, return_indices=True)
    return _dot(ff[i], fg[j])


def exact_self_join_size(keys, weights=None):
    """``sum_v f(v)^2`` (the second frequency moment)."""
    _, f = exact_frequencies(keys, weights)
    return _dot(f, f)
