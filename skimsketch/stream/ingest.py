"""How batches enter a :class:`~skimsketch.stream.windows.WindowedSketch` (:class:`PaneIngest`, a part of
it): split by pane (:meth:`PaneIngest.pane_deltas`, a :class:`PaneBatch`), late elements counted or
refused, then committed all or nothing (:meth:`PaneIngest.commit`); the window moves with the clock and
expired panes are subtracted from the running total (the semantics: :mod:`skimsketch.stream.windows`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..keys.canonical import CanonicalBatch
from ..sketch import Sketch
from .panes import Batch, LateElementError, check_number, pane_groups, pane_index, pane_of

__all__ = ["PaneBatch", "PaneIngest", "restore_signs", "signs_known"]


def signs_known(sk):
    """Whether ``sk`` knows its frequencies are >= 0 (:attr:`skimsketch.Sketch.nonnegative`; None for a kind
    without the rule)."""
    return getattr(sk, "nonnegative", None)


def restore_signs(sk, known) -> None:
    """Give back to ``sk`` the knowledge that its frequencies are >= 0 when ``known``: the window's running
    total is kept by subtracting expired panes (and a failed commit undone by subtracting), which forgets
    it, although the total's data are exactly its panes'. A subtract never makes it known, so only
    known=True needs telling (None: a kind without the rule)."""
    if known and isinstance(sk, Sketch):
        sk.note_nonnegative()


@dataclass
class PaneBatch:
    """One batch split by pane, not yet committed (:meth:`WindowedSketch.pane_deltas`, :meth:`WindowedSketch.commit`).

    ``panes`` maps pane index to the sketch of that pane's accepted elements;
    ``max_timestamp`` is their largest timestamp (``None`` when none was
    accepted); late elements are only counted.
    """

    panes: dict = field(default_factory=dict)
    max_timestamp: int | float | None = None
    late_count: int = 0
    late_weight: int | float = 0
    events: int = 0


class PaneIngest:
    """The ingesting half of a windowed sketch: its methods change the panes, the running total and the clock."""

    def _sync(self) -> None:
        """Move the running total to the window of ``now`` and drop panes no window needs."""
        now = self._clock.now
        if now is None or now == self._synced_now:
            return
        cur = pane_of(now, self.slide)
        if cur != self._cur:
            lo, hi = self._range(cur)
            if self._cur is None or lo > self._cur:
                total = self._proto.empty_like()  # disjoint windows: rebuild from the panes
                for k in sorted(self._panes):
                    if lo <= k <= hi:
                        total.merge(self._panes[k])
                self._total = total
            else:
                old_lo, old_hi = self._range(self._cur)
                for k in sorted(self._panes):
                    if old_lo <= k < lo:
                        self._total.subtract(self._panes[k])
                    elif old_hi < k <= hi:
                        self._total.merge(self._panes[k])
                # a subtract forgets the sign rule (Sketch.nonnegative); the window is the union of its panes
                restore_signs(self._total, all(signs_known(self._panes[k]) for k in self._panes if lo <= k <= hi))
            self._cur = cur
        bound = self._retention_bound()
        for k in [k for k in self._panes if k < bound]:
            del self._panes[k]
            self.expired_panes += 1
        self._synced_now = now

    def advance_to(self, t):
        """Advance event time to ``t`` without data (expires panes); returns ``self``."""
        self._clock.advance_to(t)
        self._sync()
        return self

    def refresh(self):
        """Catch up with a shared clock moved by another window (drops expired panes); returns ``self``.

        Queries do this themselves; it only frees memory earlier.
        """
        self._sync()
        return self

    # -- updates ------------------------------------------------------------------
    def update(self, keys, timestamps, weights=None):
        """Add elements with event ``timestamps`` (scalar or aligned); returns ``self``.

        Late elements (``ts < watermark``) are counted in ``late_count`` /
        ``late_weight`` or, with ``on_late="raise"``, refuse the batch. The
        update is atomic: on any error nothing changes.
        """
        b = self.pane_deltas(keys, timestamps, weights)
        self._commit(sorted(b.panes.items()), b.max_timestamp, b.late_count, b.late_weight, b.events)
        return self

    def pane_deltas(self, keys, timestamps, weights=None) -> PaneBatch:
        """The batch split by pane against the current watermark, without committing it.

        Raises :class:`LateElementError` (``on_late="raise"``) or a key,
        weight or timestamp error exactly as :meth:`update` would; the window
        is not changed. :meth:`commit` applies the result.
        """
        self._sync()
        batch = Batch(keys, timestamps, weights)
        deltas, accepted_max, late = self._deltas(batch)
        n_late = int(late.sum())
        return PaneBatch(dict(deltas), accepted_max, n_late, batch.weight_sum(late) if n_late else 0,
                         batch.n - n_late)

    def commit(self, batch: PaneBatch):
        """Apply a :class:`PaneBatch` (from :meth:`pane_deltas` or built elsewhere); returns ``self``.

        Checked like :meth:`merge_panes`; the batch's sketches become part of
        the window (not copied): do not use them afterwards.
        """
        deltas, max_ts = self._checked_panes(batch.panes, batch.max_timestamp, copy=False)
        self._commit(deltas, max_ts, int(batch.late_count), batch.late_weight, int(batch.events))
        return self

    def merge_panes(self, panes: dict, max_timestamp, late_count: int = 0, late_weight=0, events: int = 0):
        """Commit per-pane sketches of one batch built elsewhere (e.g. on Spark executors).

        ``panes`` maps pane index (``pane_index(ts, slide)``) to the sketch of
        that pane's *accepted* elements (``ts >= watermark`` as of this call);
        ``max_timestamp`` is their largest timestamp; the late elements the
        caller set aside are reported through ``late_count`` / ``late_weight``.
        Equivalent to :meth:`update` with the same elements. Returns ``self``.
        """
        deltas, max_ts = self._checked_panes(panes, max_timestamp, copy=True)
        self._commit(deltas, max_ts, int(late_count), late_weight, int(events))
        return self

    def _checked_panes(self, panes: dict, max_timestamp, copy: bool):
        """``([(pane, sketch)] sorted, max_timestamp)`` after checking indices, compatibility and time."""
        self._sync()
        bound = None if self.watermark is None else pane_of(self.watermark, self.slide)
        deltas = []
        for k, sk in sorted(panes.items()):
            if isinstance(k, bool) or not isinstance(k, (int, np.integer)):
                raise TypeError(f"pane indices must be ints, got {type(k).__name__}")
            if bound is not None and k < bound:
                raise ValueError(f"pane {k} is before the watermark's pane {bound}: its elements are late")
            self._proto.check_compatible(sk, "merge")
            deltas.append((int(k), sk.copy() if copy else sk))
        if deltas and max_timestamp is None:
            raise ValueError("max_timestamp is required when panes are given")
        if max_timestamp is not None:
            max_timestamp = check_number("max_timestamp", max_timestamp)
            if deltas and pane_of(max_timestamp, self.slide) != deltas[-1][0]:
                raise ValueError(f"max_timestamp {max_timestamp!r} is not in the last pane {deltas[-1][0]}")
        return deltas, max_timestamp

    def _commit(self, deltas, accepted_max, n_late: int, late_weight, events: int) -> None:
        """Add per-pane deltas to the panes (and to the total when in the window), then move time."""
        in_window = None if self._cur is None else self._range(self._cur)
        done = []  # (sketch, delta, its sign rule before) merged so far, or (None, pane index, None) added
        try:
            for k, d in deltas:
                pane = self._panes.get(k)
                if pane is None:
                    self._panes[k] = d
                    done.append((None, k, None))
                else:
                    before = signs_known(pane)
                    pane.merge(d)
                    done.append((pane, d, before))
                if in_window is not None and in_window[0] <= k <= in_window[1]:
                    before = signs_known(self._total)
                    self._total.merge(d)
                    done.append((self._total, d, before))
        except Exception:  # e.g. CounterOverflowError: undo what was merged (exact in int64), sign rule included
            for target, d, before in reversed(done):
                if target is None:
                    del self._panes[d]
                else:
                    target.subtract(d)
                    restore_signs(target, before)
            raise
        if n_late:
            self.late_count += n_late
            self.late_weight += late_weight
        self.events += events
        if accepted_max is not None:
            self._clock.advance_to(accepted_max)
        self._sync()

    def _deltas(self, batch: Batch):
        """Per-pane delta sketches of the accepted elements, their max timestamp, the late mask."""
        wm = self._clock.watermark
        late = np.zeros(batch.n, dtype=bool) if wm is None else batch.ts < wm
        if late.any() and self.on_late == "raise":
            first = batch.ts[late].min().item()
            raise LateElementError(
                f"{int(late.sum())} element(s) older than the watermark {wm!r} "
                f"(now {self.now!r} - allowed_lateness {self.allowed_lateness!r}); earliest timestamp {first!r}"
            )
        acc = ~late
        any_late = bool(late.any())
        accepted_max = batch.ts[acc].max().item() if acc.any() else None
        w = batch.w
        if batch.pos is None:  # no null keys
            keys, ts = (batch.keys[acc], batch.ts[acc]) if any_late else (batch.keys, batch.ts)
            wk = None if w is None else (w[acc] if any_late else w)
            nulls = np.empty(0, dtype=np.int64)
        else:
            keep = acc[batch.pos]
            pos = batch.pos[keep]
            keys, ts = batch.keys[keep], batch.ts[pos]
            wk = None if w is None else w[pos]
            nulls = np.flatnonzero(batch.null & acc)
        by_pane: dict = {}
        for k, sel in pane_groups(pane_index(ts, self.slide)):
            d = self._proto.empty_like()
            d.update(CanonicalBatch(keys[sel], None, 0, False, batch.key_domain), None if wk is None else wk[sel])
            by_pane[k] = d
        for k, sel in pane_groups(pane_index(batch.ts[nulls], self.slide)):
            d = by_pane.get(k)
            if d is None:
                d = by_pane[k] = self._proto.empty_like()
            idx = nulls[sel]
            d.update(np.full(len(idx), None, dtype=object), None if w is None else w[idx])
        return sorted(by_pane.items()), accepted_max, late

    # -- queries --------------------------------------------------------------------
