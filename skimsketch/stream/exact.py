"""Exact windowed join sizes, to validate windowed sketches over time.

:class:`ExactWindowedJoin` keeps, per stream and per pane, the exact count
(signed weight sum) of every key, and per stream the counts of the current
window. It follows exactly the window, pane and lateness rules of
:mod:`skimsketch.stream.panes` (see there), so at every time ``t`` its
``join_size`` is the true value that :class:`~skimsketch.stream.joins.WindowedJoin`
estimates.

* Windowed join size ``J(t) = sum_v f_t(v) * g_t(v)`` is maintained
  incrementally: an insert of weight ``w`` for key ``v`` into A's window adds
  ``w * g_t(v)``; a pane leaving A's window subtracts ``c * g_t(v)`` for each
  of its keys (and symmetrically for B).
* ``total_results`` is the number of join results a moving-window join
  produces (the quantity Kang, Naughton and Viglas maximise, ICDE 2003):
  pairs ``(a, b)`` with equal keys whose validity intervals intersect, i.e.
  ``b`` was in B's window when ``a`` arrived or vice versa (the interval
  semantics of a join). Each pair is counted once, when its later
  element arrives; weighted pairs count ``w_a * w_b``. It only grows with
  inserts (deletes subtract their pairs).

Counts are signed: a delete of a key never inserted makes its count negative
and contributes negatively to both quantities, which is what the linear
sketches estimate. Null keys never join; they are counted in ``null_weight``.
Memory is one dict entry per distinct key per retained pane — exact, hence
not small; this is a reference, not an estimator.
"""

from __future__ import annotations

import numpy as np

from .panes import (
    Batch,
    EventClock,
    LateElementError,
    check_number,
    check_on_late,
    n_panes,
    pane_index,
    pane_of,
)

__all__ = ["ExactWindowedJoin"]


class _Side:
    def __init__(self, window, slide):
        self.window = check_number("window", window, positive=True)
        self.n_panes = n_panes(self.window, slide)
        self.panes: dict[int, dict[int, int | float]] = {}
        self.win: dict[int, int | float] = {}  # counts in the current window
        self.late_count = 0
        self.late_weight = 0
        self.null_weight = 0
        self.events = 0


def _add(d: dict, key, c) -> None:
    v = d.get(key, 0) + c
    if v == 0:
        d.pop(key, None)
    else:
        d[key] = v


class ExactWindowedJoin:
    """Exact ``|A(t) join B(t)|`` over per-stream windows, and total moving-window join results.

    >>> x = ExactWindowedJoin(window_a=4, window_b=2, slide=1)
    >>> _ = x.update_a([7, 7, 8], [0, 1, 2]).update_b([7, 8], [3, 3])
    >>> x.join_size, x.total_results  # A keeps 0..3, B keeps 2..3; pairs (7@0,7@3) (7@1,7@3) (8@2,8@3)
    (3, 3)
    >>> _ = x.advance_to(5); x.join_size  # A keeps 2..5, B keeps 4..5 (empty)
    0
    """

    def __init__(self, window_a, window_b=None, slide=None, allowed_lateness=0, on_late: str = "count"):
        window_b = window_a if window_b is None else window_b
        if slide is None:
            if window_a != window_b:
                raise ValueError("windows of different lengths need an explicit common slide (pane size)")
            slide = window_a
        self.slide = check_number("slide", slide, positive=True)
        self.on_late = check_on_late(on_late)
        self.clock = EventClock(allowed_lateness)
        self.a = _Side(window_a, self.slide)
        self.b = _Side(window_b, self.slide)
        self._cur = None
        self._join = 0
        self.total_results = 0

    def __repr__(self) -> str:
        return (
            f"ExactWindowedJoin(window_a={self.a.window!r}, window_b={self.b.window!r}, slide={self.slide!r}, "
            f"allowed_lateness={self.clock.allowed_lateness!r}, now={self.now!r}, join_size={self._join!r})"
        )

    @property
    def now(self):
        return self.clock.now

    @property
    def watermark(self):
        return self.clock.watermark

    @property
    def join_size(self):
        """Exact join size of the two windows at ``now`` (0 before any data)."""
        return self._join

    def _side(self, side):
        if side in ("a", "A", 0):
            return self.a, self.b
        if side in ("b", "B", 1):
            return self.b, self.a
        raise ValueError(f"side must be 'a' or 'b', got {side!r}")

    def update(self, side, keys, timestamps, weights=None):
        """Add elements (with event ``timestamps``) to stream ``side``; returns ``self``."""
        x, y = self._side(side)
        self._sync()
        batch = Batch(keys, timestamps, weights)
        wm = self.clock.watermark
        late = np.zeros(batch.n, dtype=bool) if wm is None else batch.ts < wm
        if late.any() and self.on_late == "raise":
            raise LateElementError(
                f"{int(late.sum())} element(s) older than the watermark {wm!r}; earliest timestamp {batch.ts[late].min().item()!r}"
            )
        acc = ~late
        all_pos = batch.positions()
        keep = acc[all_pos]
        pos = all_pos[keep]
        keys = batch.keys[keep]
        panes = pane_index(batch.ts[pos], self.slide)
        if batch.w is None:
            w = np.ones(len(pos), dtype=np.int64)
        else:
            w = batch.w[pos]
        # aggregate by (pane, key)
        if len(pos):
            pairs = np.stack([panes, keys], axis=1)
            uniq, inv = np.unique(pairs, axis=0, return_inverse=True)
            sums = np.zeros(len(uniq), dtype=w.dtype)
            np.add.at(sums, inv.reshape(-1), w)
        else:
            uniq, sums = np.empty((0, 2), dtype=np.int64), np.empty(0, dtype=np.int64)
        lo, hi = (None, None) if self._cur is None else (self._cur - x.n_panes + 1, self._cur)
        y_lo_off, y_hi_off = y.n_panes - 1, x.n_panes - 1
        for (k, v), c in zip(uniq.tolist(), sums.tolist()):
            # results: pairs with B elements whose validity overlaps this element's
            r = 0
            for kb, counts in y.panes.items():
                if k - y_lo_off <= kb <= k + y_hi_off:
                    r += counts.get(v, 0)
            self.total_results += c * r
            _add(x.panes.setdefault(k, {}), v, c)
            if lo is not None and lo <= k <= hi:
                self._join += c * y.win.get(v, 0)
                _add(x.win, v, c)
        n_late = int(late.sum())
        x.late_count += n_late
        if n_late:
            x.late_weight += batch.weight_sum(late)
        null_acc = batch.null_mask() & acc
        x.null_weight += batch.weight_sum(null_acc) if null_acc.any() else 0
        x.events += batch.n - n_late
        if acc.any():
            self.clock.advance_to(batch.ts[acc].max().item())
        self._sync()
        return self

    def update_a(self, keys, timestamps, weights=None):
        return self.update("a", keys, timestamps, weights)

    def update_b(self, keys, timestamps, weights=None):
        return self.update("b", keys, timestamps, weights)

    def advance_to(self, t):
        """Advance event time without data; returns ``self``."""
        self.clock.advance_to(t)
        self._sync()
        return self

    def _move(self, x, y, old_cur, cur) -> None:
        """Move side ``x``'s window from ``old_cur`` to ``cur`` (y's window fixed)."""
        if old_cur is None:
            lo, hi = cur - x.n_panes + 1, cur
            leaving, entering = [], [k for k in x.panes if lo <= k <= hi]
        else:
            old_lo, old_hi = old_cur - x.n_panes + 1, old_cur
            lo, hi = cur - x.n_panes + 1, cur
            leaving = [k for k in x.panes if old_lo <= k <= old_hi and not lo <= k <= hi]
            entering = [k for k in x.panes if lo <= k <= hi and not old_lo <= k <= old_hi]
        for k in leaving:
            for v, c in x.panes[k].items():
                self._join -= c * y.win.get(v, 0)
                _add(x.win, v, -c)
        for k in entering:
            for v, c in x.panes[k].items():
                self._join += c * y.win.get(v, 0)
                _add(x.win, v, c)

    def _sync(self) -> None:
        now = self.clock.now
        if now is None:
            return
        cur = pane_of(now, self.slide)
        if cur != self._cur:
            self._move(self.a, self.b, self._cur, cur)
            self._move(self.b, self.a, self._cur, cur)
            self._cur = cur
        wm_pane = pane_of(self.clock.watermark, self.slide)
        for s in (self.a, self.b):
            bound = wm_pane - s.n_panes + 1
            for k in [k for k in s.panes if k < bound]:
                del s.panes[k]

    def window_counts(self, side, t=None) -> dict:
        """Exact ``{canonical key: count}`` of stream ``side``'s window at ``t`` (default ``now``)."""
        x, _ = self._side(side)
        self._sync()
        if self._cur is None:
            return {}
        cur = self._cur if t is None else pane_of(check_number("t", t), self.slide)
        lo, hi = cur - x.n_panes + 1, cur
        bound = pane_of(self.clock.watermark, self.slide) - x.n_panes + 1
        if lo < bound:
            raise ValueError(f"the window at t={t!r} has expired: panes before {bound} were dropped")
        out: dict = {}
        for k, counts in x.panes.items():
            if lo <= k <= hi:
                for v, c in counts.items():
                    _add(out, v, c)
        return out

    def join_size_at(self, t=None):
        """Exact join size of the two windows at ``t``, recomputed from the panes."""
        fa, fb = self.window_counts("a", t), self.window_counts("b", t)
        if len(fb) < len(fa):
            fa, fb = fb, fa
        return sum(c * fb.get(v, 0) for v, c in fa.items())

    @property
    def nbytes_estimate(self) -> int:
        """Rough memory: ~100 bytes per stored (pane, key) entry."""
        return 100 * sum(len(c) for s in (self.a, self.b) for c in s.panes.values())

    def stats(self) -> dict:
        return {
            side: {
                "events": s.events,
                "late_count": s.late_count,
                "late_weight": s.late_weight,
                "null_weight": s.null_weight,
                "panes": len(s.panes),
            }
            for side, s in (("a", self.a), ("b", self.b))
        }
