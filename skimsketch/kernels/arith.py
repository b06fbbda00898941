"""Exact arithmetic and cell accumulation under every sketch's update: int32/int64 range checks,
:func:`checked_add` (raises :class:`CounterOverflowError` instead of wrapping), :func:`exact_int_sum`,
batch totals and scalar weights, key counts, and :func:`accumulate_cells` (each key's weight, times a
sign, into one cell per table, for any cell layout)."""

from __future__ import annotations

import numpy as np

from ..errors import CounterOverflowError

__all__ = ["CHUNK", "FLOAT_EXACT", "I64", "accumulate_cells", "as_counter_delta", "checked_add", "exact_int_sum",
           "fits_int32", "key_counts", "scale_batch", "weight_total"]

I64 = np.iinfo(np.int64)
_I32 = np.iinfo(np.int32)


def fits_int32(a: np.ndarray) -> bool:
    """Whether every value of the integer array ``a`` fits in int32 (the compact counter width)."""
    return a.dtype.itemsize <= 4 or a.size == 0 or (_I32.min <= int(a.min()) and int(a.max()) <= _I32.max)
CHUNK = 1 << 15  # keys hashed per step: keeps temporaries in cache
# bincount accumulates in float64: exact while every partial sum stays below 2**53
FLOAT_EXACT = float(2**52)


def checked_add(a: np.ndarray, b: np.ndarray, what: str) -> np.ndarray:
    """``a + b`` for int64 arrays, raising instead of wrapping."""
    with np.errstate(over="ignore"):
        out = a + b
    if ((a ^ out) & (b ^ out) < 0).any():
        raise CounterOverflowError(f"{what} would overflow the int64 counters; the sketch is unchanged")
    return out


def exact_int_sum(values: np.ndarray) -> int:
    """The exact sum of an int64 or uint64 array as a Python int (never wrapped, whatever its size).

    >>> exact_int_sum(np.array([2**62, 2**62, 2**62], dtype=np.int64)) == 3 * 2**62
    True
    """
    v = np.asarray(values).ravel()
    if v.size == 0:
        return 0
    if float(np.abs(v.astype(np.float64)).sum()) < 2.0**62:  # no partial sum can wrap
        return int(v.sum(dtype=v.dtype))
    shift, low = v.dtype.type(32), v.dtype.type(0xFFFFFFFF)
    total = 0
    for s in range(0, len(v), 1 << 30):  # the high and low 32-bit halves: each half's sum fits 64 bits
        part = v[s : s + (1 << 30)]
        total += (int((part >> shift).sum(dtype=v.dtype)) << 32) + int((part & low).sum(dtype=v.dtype))
    return total


def weight_total(weights, n: int, float_counters: bool):
    """Net weight of a batch of ``n`` rows (``weights`` None: 1 each), as the counters' type.

    Integer weights sum exactly. Into integer counters, a batch whose weights could carry a
    counter past int64 (``sum |w| > 2**63 - 1``) raises :class:`CounterOverflowError`; into
    float counters the exact integer total is rounded once (exact whenever float64 holds it)."""
    if weights is None:
        return n
    if weights.dtype.kind == "f":
        with np.errstate(over="ignore"):  # an infinite total is refused by the state, naming the overflow
            return float(weights.sum())
    total = exact_int_sum(weights)
    if float_counters:
        return float(total)
    if exact_int_sum(np.abs(weights).view(np.uint64)) > I64.max:  # |-2**63| is 2**63 as uint64
        raise CounterOverflowError("the batch's weights sum beyond int64; the sketch is unchanged")
    return total


def scale_batch(deltas: dict, total, null, scalar, float_counters: bool):
    """A unit-weight batch's ``({name: delta}, total, null)`` times a scalar weight.

    Integer results beyond int64 raise :class:`CounterOverflowError`; float results
    that overflow are left to the state, which refuses them."""
    if float_counters:
        with np.errstate(over="ignore", invalid="ignore"):
            deltas = {k: d * scalar for k, d in deltas.items()}
        return deltas, total * scalar, null * scalar
    if scalar != 1:
        peak = max((int(np.abs(d).max(initial=0)) for d in deltas.values()), default=0)
        if peak * abs(scalar) > I64.max or abs(total * scalar) > I64.max:
            raise CounterOverflowError("update would overflow the int64 counters; the sketch is unchanged")
        deltas = {k: d * scalar for k, d in deltas.items()}
    return deltas, total * scalar, null * scalar


_DENSE_MIN = 1 << 16  # batches shorter than this are hashed as they are


def key_counts(keys: np.ndarray, weights):
    """An unweighted batch of int64 keys as (distinct keys, their counts) when that is cheaper to hash.

    When the keys span at most as many values as there are keys (ids, codes, a bounded
    domain), one ``bincount`` over the span gives each key's count, and hashing the
    distinct keys weighted by their counts yields the same counters (the sketches are
    linear, and integer counts are exact). Otherwise, or with weights, the batch is
    returned unchanged.
    """
    n = len(keys)
    if weights is not None or n < _DENSE_MIN:
        return keys, weights
    lo, hi = int(keys.min()), int(keys.max())
    if hi - lo >= n:
        return keys, weights
    counts = np.bincount(keys - lo, minlength=hi - lo + 1)
    present = np.flatnonzero(counts)
    return present.astype(np.int64) + lo, counts[present]


def accumulate_cells(n: int, cells_of, weights, n_cells: int, per_key: int, key_major: bool,
                     float_counters: bool) -> np.ndarray:
    """Sum of the weights (1 each when ``weights`` is None) landing in each of ``n_cells`` cells.

    ``cells_of(start, stop)`` gives the ``per_key`` cell ids of keys ``start..stop``,
    shaped (keys, per_key) when ``key_major`` else (per_key, keys). Counts are
    int64; weights accumulate in float64 while that is exact (total |weight| <
    2**52) and by an exact int64 scatter-add beyond.
    """
    exact_float = weights is None or float_counters or \
        float(np.abs(weights.astype(np.float64, copy=False)).sum()) < FLOAT_EXACT
    acc = np.zeros(n_cells, dtype=np.int64 if (weights is None or not exact_float) else np.float64)
    spread = np.repeat if key_major else np.tile
    for s in range(0, n, CHUNK):
        cells = cells_of(s, min(s + CHUNK, n)).ravel()
        if weights is None:
            acc += np.bincount(cells, minlength=n_cells)
            continue
        w = spread(weights[s : s + CHUNK], per_key)
        if exact_float:
            acc += np.bincount(cells, weights=w, minlength=n_cells)
        else:  # huge integer weights
            np.add.at(acc, cells, w)
    return acc


def as_counter_delta(delta: np.ndarray, float_counters: bool) -> np.ndarray:
    """A float delta rounded to int64 for integer counters (it holds whole numbers)."""
    if not float_counters and delta.dtype != np.int64:
        return np.rint(delta).astype(np.int64)
    return delta
