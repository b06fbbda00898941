"""The window rules shared by every stream operator: panes, the event clock, lateness, batches.

Time is cut into panes of length ``slide``: pane ``k`` holds ``k*slide <= ts
< (k+1)*slide`` (:func:`pane_index`). A window of ``n`` panes is, at time
``t``, the ``n`` panes ending with ``pane(t)``. The :class:`EventClock` holds
``now`` (the largest accepted timestamp) and the watermark ``now -
allowed_lateness``; elements older than the watermark are late. The full
semantics are in ``docs/streaming.md``.
"""

from __future__ import annotations

import math
import numbers

import numpy as np

from ..errors import SketchError
from ..keys.canonical import canonicalize, drop_null_weights, numeric_vector, select_rows

__all__ = [
    "Batch",
    "EventClock",
    "LateElementError",
    "as_sequence",
    "check_number",
    "check_on_late",
    "n_panes",
    "pane_groups",
    "pane_index",
    "pane_of",
]


class LateElementError(SketchError):
    """A batch holds elements older than the watermark and ``on_late="raise"`` (a ``ValueError``)."""


# -- parameter checks ---------------------------------------------------------
def check_number(name: str, x, *, positive: bool = False, nonneg: bool = False):
    if isinstance(x, (bool, np.bool_)) or not isinstance(x, numbers.Real):
        raise TypeError(f"{name} must be an int or float, got {type(x).__name__}")
    if not math.isfinite(float(x)):
        raise ValueError(f"{name} must be finite, got {x!r}")
    if positive and not x > 0:
        raise ValueError(f"{name} must be > 0, got {x!r}")
    if nonneg and not x >= 0:
        raise ValueError(f"{name} must be >= 0, got {x!r}")
    return int(x) if isinstance(x, numbers.Integral) else float(x)


def n_panes(window, slide) -> int:
    """Number of panes in a window; ``window`` must be a whole multiple of ``slide``."""
    if isinstance(window, int) and isinstance(slide, int):
        if window % slide:
            raise ValueError(f"window {window} is not a multiple of slide {slide}")
        return window // slide
    q = window / slide
    n = round(q)
    if n < 1 or abs(q - n) > 1e-9 * max(1.0, q):
        raise ValueError(f"window {window} is not a multiple of slide {slide} (ratio {q!r})")
    return int(n)


def pane_index(ts, slide) -> np.ndarray:
    """Pane of each timestamp: ``ts // slide`` (integers) or ``floor(ts / slide)``.

    >>> pane_index(np.array([-1, 0, 9, 10]), 10).tolist()
    [-1, 0, 0, 1]
    >>> pane_index(np.array([0.5, 2.5]), 1.0).tolist()
    [0, 2]
    """
    ts = np.asarray(ts)
    if ts.dtype.kind in "iu" and isinstance(slide, int):
        return ts.astype(np.int64, copy=False) // slide
    return np.floor(ts.astype(np.float64) / float(slide)).astype(np.int64)


def pane_of(t, slide) -> int:
    return int(pane_index(np.array([t]), slide)[0])


def timestamps_of(timestamps, n: int) -> np.ndarray:
    """Timestamps as an int64 or float64 array of length ``n`` (a scalar is broadcast)."""
    if getattr(getattr(timestamps, "dtype", None), "kind", None) == "M":
        raise TypeError("datetime64 timestamps are not supported: pass epoch numbers (e.g. ts.astype('int64'))")
    return numeric_vector(timestamps, n, "timestamps")


def weights_of(weights, n: int) -> np.ndarray | None:
    """Weights as an array of length ``n`` or ``None`` (all 1); the sketch checks integrality."""
    return None if weights is None else numeric_vector(weights, n, "weights")


def as_sequence(keys):
    """Keys as a sized sequence: a scalar becomes a 1-element list, an iterator a list."""
    if keys is None or isinstance(keys, (str, bytes, bytearray, numbers.Number)):
        return [keys]
    if not hasattr(keys, "__len__"):
        if not hasattr(keys, "__iter__"):
            raise TypeError(f"keys must be a sequence or array, got {type(keys).__name__}")
        return list(keys)
    return keys


class Batch:
    """One update's elements, canonicalised and aligned with timestamps and weights.

    ``pos`` holds the positions of the non-null keys (``None``: no nulls, the
    fast path for integer numpy keys), aligned with ``keys``; ``key_domain`` is
    the batch's ("int", "str" or ``None``), which pane sketches must record.
    """


    def __init__(self, keys, timestamps, weights):
        keys = as_sequence(keys)
        n = len(keys)
        ts = timestamps_of(timestamps, n)
        weights, keep = drop_null_weights(weights, n)
        if keep is not None:  # rows with a null weight are skipped (as SQL SUM skips them): never seen
            keys, ts, n = select_rows(keys, keep), ts[keep], int(keep.sum())
        self.n = n
        self.ts = ts
        self.w = weights_of(weights, n)
        if isinstance(keys, np.ndarray) and keys.ndim == 1 and keys.dtype.kind == "i":
            self.keys, self.pos, self.null = keys.astype(np.int64, copy=False), None, None
            self.key_domain = "int" if n else None
            return
        # canonicalise with the element positions as weights: the survivors' weights
        # are the positions of the non-null keys, aligned with the canonical keys.
        cb = canonicalize(keys, np.arange(n, dtype=np.int64))
        self.keys, self.key_domain = cb.keys, cb.key_domain
        if cb.weights is None or len(cb.weights) == n:
            self.pos, self.null = None, None
        else:
            self.pos = cb.weights
            self.null = np.ones(n, dtype=bool)
            self.null[self.pos] = False

    def positions(self) -> np.ndarray:
        return np.arange(self.n, dtype=np.int64) if self.pos is None else self.pos

    def null_mask(self) -> np.ndarray:
        return np.zeros(self.n, dtype=bool) if self.null is None else self.null

    def weight_sum(self, mask: np.ndarray):
        if self.w is None:
            return int(mask.sum())
        return self.w[mask].sum().item()


def pane_groups(pane_ids: np.ndarray):
    """``(pane, selector)`` for each distinct pane id, in increasing pane order."""
    if len(pane_ids) == 0:
        return []
    lo, hi = int(pane_ids.min()), int(pane_ids.max())
    if lo == hi:
        return [(lo, slice(None))]
    if hi - lo < 8:  # a few panes (the usual micro-batch): boolean masks beat a sort
        out = []
        for k in range(lo, hi + 1):
            m = pane_ids == k
            if m.any():
                out.append((k, m))
        return out
    order = np.argsort(pane_ids, kind="stable")
    cuts = np.flatnonzero(np.diff(pane_ids[order])) + 1
    return [(int(pane_ids[part[0]]), part) for part in np.split(order, cuts)]


class EventClock:
    """Event-time clock shared by the sides of a join.

    ``now`` is the largest timestamp seen (``None`` before any); the
    watermark is ``now - allowed_lateness``; elements older than the watermark
    are late.

    >>> c = EventClock(allowed_lateness=5)
    >>> c.advance_to(20); c.advance_to(12); (c.now, c.watermark)
    (20, 15)
    """

    def __init__(self, allowed_lateness=0):
        self.allowed_lateness = check_number("allowed_lateness", allowed_lateness, nonneg=True)
        self.now = None

    @property
    def watermark(self):
        return None if self.now is None else self.now - self.allowed_lateness

    def advance_to(self, t) -> None:
        """Move ``now`` forward to ``t`` (a ``t`` in the past is ignored: time never goes back)."""
        t = check_number("t", t)
        if self.now is None or t > self.now:
            self.now = t

    def __repr__(self) -> str:
        return f"EventClock(allowed_lateness={self.allowed_lateness!r}, now={self.now!r})"


def check_on_late(on_late: str) -> str:
    if on_late not in ("count", "raise"):
        raise ValueError(f"on_late must be 'count' or 'raise', got {on_late!r}")
    return on_late
