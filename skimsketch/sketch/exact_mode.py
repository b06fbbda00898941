"""Exact mode of a linear sketch: while its distinct non-null keys fit its *capacity*, a sketch keeps,
instead of counters, each key's exact net weight (an :class:`~skimsketch.stats.exact_store.ExactStore`);
past it, the entries become counters exactly (:func:`converted_delta`).

Capacity (:func:`exact_capacity`) is a function of the sketch's shape only,
chosen so that exact mode never takes more memory, nor more serialised bytes,
than the same sketch in counter mode (docs/format.md, "Exact mode").
"""

from __future__ import annotations

import numpy as np

from ..errors import CounterOverflowError
from ..kernels import I64
from .layout import EXACT_HEADER_BYTES

__all__ = ["ENTRY_BYTES", "converted_delta", "exact_capacity"]

ENTRY_BYTES = 16  # an int64 key and the widest weight (int64 or float64)
_SMALL = float(1 << 60)  # conversion: integer entries whose absolute weights sum below this go in one batch


def exact_capacity(n_counters: int, float_counters: bool) -> int:
    """Most distinct keys a sketch of ``n_counters`` counters keeps exactly.

    ``S = b * n_counters`` is its counter-mode state in bytes (``b`` = 4 for
    integer counters, 8 for float); the entries, 16 bytes each at their widest,
    plus their 12-byte header must fit in it: ``(S - 12) // 16``.

    >>> exact_capacity(5 * 800, False), exact_capacity(5 * 800, True)
    (999, 1999)
    """
    s = (8 if float_counters else 4) * int(n_counters)
    return max(0, (s - EXACT_HEADER_BYTES) // ENTRY_BYTES)


def converted_delta(delta_of, keys: np.ndarray, weights: np.ndarray, float_weights: bool) -> dict:
    """``delta_of(keys, weights)`` (a sketch's linear update delta) of the entries, exactly.

    Float weights, and integer weights whose absolute sum stays below ``2**60``,
    go in one batch. Larger integer weights are split as ``w = hi * 2**32 + lo``
    (``0 <= lo < 2**32``): both deltas are small enough for exact int64
    accumulation, and they are combined in Python integers, so the result is
    exact and :class:`CounterOverflowError` is raised only if a final counter
    does not fit in int64 (whatever the order of the entries)."""
    if float_weights or float(np.abs(weights.astype(np.float64)).sum()) < _SMALL:
        return delta_of(keys, weights)
    hi, lo = weights >> np.int64(32), weights & np.int64(0xFFFFFFFF)
    d_hi, d_lo = delta_of(keys, hi), delta_of(keys, lo)
    out = {}
    for name, h in d_hi.items():
        full = np.asarray(h).astype(object) * (1 << 32) + np.asarray(d_lo[name]).astype(object)
        if full.size and not (I64.min <= min(full.flat) and max(full.flat) <= I64.max):
            raise CounterOverflowError("conversion to counters would overflow the int64 counters; the sketch "
                                       "is unchanged")
        out[name] = full.astype(np.int64)
    return out
