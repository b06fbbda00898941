"""Time-windowed sketches: sliding and tumbling windows over event time.

Semantics (one rule, :mod:`skimsketch.stream.panes`, shared with :mod:`skimsketch.stream.exact`)
-----------------------------------------------------------------------------------------------
Every element carries an event timestamp ``ts`` (int or float). Time is cut
into *panes* of length ``slide``: pane ``k`` holds ``k*slide <= ts <
(k+1)*slide`` (``k = ts // slide`` for integer timestamps and slide,
``floor(ts / slide)`` otherwise). A window of length ``window`` (a multiple
of ``slide``; ``n = window / slide`` panes) is, at query time ``t``, the ``n``
panes ending with ``t``'s pane: an element of pane ``k`` is *valid* at ``t``
iff ``k <= pane(t) <= k + n - 1``. With ``slide`` equal to the time unit
(``slide=1`` on integer seconds) this is exactly the moving window of Kang,
Naughton and Viglas (ICDE 2003): the elements that arrived in the
last ``window`` time units, valid on ``[ts, ts + window)`` (interval
semantics). ``slide == window`` gives tumbling windows.

Linearity makes expiry a subtraction. A :class:`WindowedSketch` keeps one
sketch per retained pane and a running total equal to the sum of the panes of
the current window; when the window moves, panes that leave are subtracted and
dropped, so memory is bounded by the number of panes (``n`` plus
``allowed_lateness / slide`` + 1), never by the number of elements. With
integer weights the window sketch is byte-identical (``to_bytes()``) to a
fresh sketch of exactly the elements valid at ``t``.

Out-of-order data and lateness
------------------------------
``now`` is the largest timestamp seen (or passed to :meth:`advance_to`) and
the *watermark* is ``now - allowed_lateness``. An element with ``ts <
watermark`` is *late*: it is rejected — counted in ``late_count`` /
``late_weight`` (``on_late="count"``, the default) or the whole batch is
refused with :class:`LateElementError` (``on_late="raise"``) — never silently
dropped. Elements at or after the watermark are accepted in any order. As in
Spark Structured Streaming, the watermark used for a batch is the one in force
when the batch arrives; it then advances to ``max(ts) - allowed_lateness``.
Queries are answered for any ``t`` whose window has not expired
(``pane(t) - n + 1 >= pane(watermark) - n + 1``, i.e. ``t`` at or after the
watermark's pane), including future ``t`` (panes not yet seen are empty).

Deletes are negative weights (the turnstile model): a delete of a key never
inserted gives it a negative frequency in the window, which a linear sketch
represents exactly; nothing is rejected.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field

import numpy as np

from ..sketch import Sketch
from ..keys.canonical import CanonicalBatch
from ..errors import CorruptSketchError
from ..format.framing import Reader, frame, length_prefixed, unframe
from .panes import (
    Batch,
    EventClock,
    LateElementError,
    check_number,
    check_on_late,
    n_panes,
    pane_groups,
    pane_index,
    pane_of,
)

__all__ = ["PaneBatch", "WindowedSketch"]


def _signs(sk):
    """Whether ``sk`` knows its frequencies are >= 0 (:attr:`skimsketch.Sketch.nonnegative`; None for a kind
    without the rule)."""
    return getattr(sk, "nonnegative", None)


def _set_signs(sk, known) -> None:
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


class WindowedSketch:
    """A sketch of the elements valid in a sliding (or tumbling) event-time window.

    ``template`` gives the kind, shape and seed (its contents are ignored). The
    window sketch at time ``t`` equals — counter for counter, with integer
    weights — a fresh sketch of the elements valid at ``t`` (module docstring),
    so every estimator and guarantee of the underlying sketch applies to the
    window unchanged. Per element the cost is one sketch update plus, per batch
    and pane touched, two counter-array merges; per expired pane one subtract.

    >>> import skimsketch as ss
    >>> w = WindowedSketch(ss.HashSketch(width=64, depth=3, seed=1), window=10, slide=5)
    >>> _ = w.update([1, 2, 3], timestamps=[0, 4, 7]).update([4], timestamps=12)
    >>> w.sketch_at() == ss.HashSketch(width=64, depth=3, seed=1).update([3, 4])
    True
    """

    def __init__(self, template, window, slide=None, allowed_lateness=0, on_late: str = "count", clock=None):
        for attr in ("empty_like", "update", "merge", "subtract", "to_bytes"):
            if not hasattr(template, attr):
                raise TypeError(f"template must be a sketch (HashSketch, SkimmedSketch, AGMSSketch), got {type(template).__name__}")
        self.window = check_number("window", window, positive=True)
        self.slide = self.window if slide is None else check_number("slide", slide, positive=True)
        self.n_panes = n_panes(self.window, self.slide)
        self.on_late = check_on_late(on_late)
        if clock is None:
            clock = EventClock(allowed_lateness)
        elif allowed_lateness not in (0, clock.allowed_lateness):
            raise ValueError("allowed_lateness is set by the shared clock; do not pass both")
        self._clock = clock
        self._proto = template.empty_like()
        self._panes: dict = {}
        self._total = self._proto.empty_like()
        self._cur = None  # pane index that ends the window the running total covers
        self._synced_now = None  # clock time the total and the retained panes reflect
        self.events = 0  # accepted elements (nulls included)
        self.late_count = 0
        self.late_weight = 0
        self.expired_panes = 0

    # -- description ----------------------------------------------------------
    @classmethod
    def tumbling(cls, template, size, allowed_lateness=0, on_late: str = "count"):
        """Tumbling windows of length ``size`` (one pane per window)."""
        return cls(template, size, size, allowed_lateness, on_late)

    @classmethod
    def sliding(cls, template, window, slide, allowed_lateness=0, on_late: str = "count"):
        """Sliding windows of length ``window`` advancing by ``slide``."""
        return cls(template, window, slide, allowed_lateness, on_late)

    @property
    def template(self):
        """An empty sketch of the window's kind, shape and seed."""
        return self._proto.empty_like()

    @property
    def clock(self) -> EventClock:
        """The event clock (shared with the other side of a join)."""
        return self._clock

    @property
    def current_pane(self):
        """Pane index of ``now`` (the last pane of the current window); ``None`` before any time."""
        self._sync()
        return self._cur

    @property
    def allowed_lateness(self):
        return self._clock.allowed_lateness

    @property
    def now(self):
        return self._clock.now

    @property
    def watermark(self):
        return self._clock.watermark

    @property
    def retained_panes(self) -> list:
        """Pane indices currently stored (sorted)."""
        self._sync()
        return sorted(self._panes)

    @property
    def max_panes(self) -> int:
        """Upper bound on the number of stored panes: ``n + ceil(allowed_lateness / slide) + 1``."""
        return self.n_panes + math.ceil(self.allowed_lateness / self.slide) + 1

    @property
    def nbytes(self) -> int:
        """Memory of the state: running total plus one sketch per stored pane."""
        self._sync()
        return self._total.nbytes + sum(p.nbytes for p in self._panes.values())

    def stats(self) -> dict:
        self._sync()
        return {
            "now": self.now,
            "watermark": self.watermark,
            "events": self.events,
            "late_count": self.late_count,
            "late_weight": self.late_weight,
            "panes": len(self._panes),
            "expired_panes": self.expired_panes,
            "nbytes": self.nbytes,
        }

    def __repr__(self) -> str:
        return (
            f"WindowedSketch({self._proto!r}, window={self.window!r}, slide={self.slide!r}, "
            f"allowed_lateness={self.allowed_lateness!r}, now={self.now!r}, late_count={self.late_count})"
        )

    # -- window bookkeeping -------------------------------------------------------
    def _range(self, cur):
        return cur - self.n_panes + 1, cur

    def _retention_bound(self):
        """Smallest pane index still needed: ``pane(watermark) - n + 1``."""
        wm = self._clock.watermark
        return None if wm is None else pane_of(wm, self.slide) - self.n_panes + 1

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
                _set_signs(self._total, all(_signs(self._panes[k]) for k in self._panes if lo <= k <= hi))
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
                    before = _signs(pane)
                    pane.merge(d)
                    done.append((pane, d, before))
                if in_window is not None and in_window[0] <= k <= in_window[1]:
                    before = _signs(self._total)
                    self._total.merge(d)
                    done.append((self._total, d, before))
        except Exception:  # e.g. CounterOverflowError: undo what was merged (exact in int64), sign rule included
            for target, d, before in reversed(done):
                if target is None:
                    del self._panes[d]
                else:
                    target.subtract(d)
                    _set_signs(target, before)
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
    def panes_sum(self, lo: int, hi: int):
        """A new sketch: the sum of the retained panes ``lo..hi`` (those that exist).

        When the range covers the current window (no pane lies after
        :attr:`current_pane`), this is the running total, at the cost of a copy.
        """
        self._sync()
        if self._cur is not None and lo == self._cur - self.n_panes + 1 and hi >= self._cur:
            return self._total.copy()
        out = self._proto.empty_like()
        for k in sorted(self._panes):
            if lo <= k <= hi:
                out.merge(self._panes[k])
        return out

    def sketch_at(self, t=None):
        """A new sketch of the elements valid at ``t`` (default: ``now``).

        Raises ``ValueError`` when the window of ``t`` has expired (its panes
        were dropped once the watermark passed them).
        """
        self._sync()
        if t is None or self._cur is None:
            if t is not None:
                check_number("t", t)
            return self._total.copy()
        t = check_number("t", t)
        cur = pane_of(t, self.slide)
        if cur == self._cur:
            return self._total.copy()
        lo, hi = self._range(cur)
        bound = self._retention_bound()
        if lo < bound:
            raise ValueError(
                f"the window at t={t!r} (panes {lo}..{hi}) has expired: panes before {bound} were dropped "
                f"(watermark {self.watermark!r})"
            )
        return self.panes_sum(lo, hi)

    def join_size(self, other, t=None, confidence: float = 0.95):
        """Estimated join size of this window with ``other`` at ``t``: an ``Estimate``.

        ``other`` is another :class:`WindowedSketch` (its window at the same
        ``t``) or a plain sketch (a static table). The estimator, its interval
        and confidence are those of the underlying sketch's ``join_size``.
        """
        mine = self.sketch_at(t)
        theirs = other.sketch_at(t) if isinstance(other, WindowedSketch) else other
        return mine.join_size(theirs, confidence=confidence)

    def self_join_size(self, t=None, confidence: float = 0.95):
        return self.sketch_at(t).self_join_size(confidence=confidence)

    # -- checkpointing ------------------------------------------------------------
    MAGIC = b"SKWN"
    VERSION = 2  # version 1: the same payload before the common framing (still read)

    def to_bytes(self) -> bytes:
        """Serialise the whole window state (parameters, clock, counters, panes).

        A :mod:`skimsketch.format.framing` frame (magic ``b"SKWN"``, version 2) whose
        payload is a JSON header and the sketches (template, running total,
        each stored pane in header order), laid out in ``docs/streaming.md``.
        """
        self._sync()
        keys = sorted(self._panes)
        head = {
            "window": self.window, "slide": self.slide, "allowed_lateness": self.allowed_lateness,
            "on_late": self.on_late, "now": self.now, "cur": self._cur, "events": self.events,
            "late_count": self.late_count, "late_weight": self.late_weight,
            "expired_panes": self.expired_panes, "panes": keys,
        }
        hj = json.dumps(head, sort_keys=True).encode("utf-8")
        blobs = [sk.to_bytes() for sk in [self._proto, self._total] + [self._panes[k] for k in keys]]
        return frame(self.MAGIC, self.VERSION, length_prefixed(hj, *blobs))

    @classmethod
    def from_bytes(cls, blob, clock: EventClock | None = None) -> WindowedSketch:
        """Load a state written by :meth:`to_bytes`; ``CorruptSketchError`` on any malformed input.

        ``clock``: share this clock (a join's sides); it must be at the
        state's ``now`` or not started, and have the state's lateness.
        """
        what = "windowed sketch state"
        _, payload = unframe(blob, cls.MAGIC, what, versions=(cls.VERSION,), legacy=(1,))
        r = Reader(payload, what)
        try:
            head = json.loads(r.blob().decode("utf-8"))
            sketches = []
            while r.remaining:
                sketches.append(Sketch.from_bytes(r.blob()))
            if len(sketches) != 2 + len(head["panes"]):
                raise CorruptSketchError(f"{what}: size mismatch ({len(sketches)} sketches for {len(head['panes'])} panes)")
            lateness = head["allowed_lateness"]
            if clock is not None and clock.allowed_lateness != lateness:
                raise CorruptSketchError(f"{what}: allowed_lateness {lateness!r} differs from the clock's "
                                         f"{clock.allowed_lateness!r}")
            out = cls(sketches[0], head["window"], head["slide"], 0 if clock else lateness, head["on_late"], clock)
            now = None if head["now"] is None else check_number("now", head["now"])
            for sk in sketches[1:]:
                out._proto.check_compatible(sk, "load")
        except CorruptSketchError:
            raise
        except (ValueError, TypeError, KeyError, AttributeError, UnicodeDecodeError) as e:
            raise CorruptSketchError(f"{what}: {e}") from None
        if now is not None:
            out._clock.advance_to(now)
        if out._clock.now != now:
            raise CorruptSketchError(f"{what}: its clock is at {now!r}, the shared clock at {out._clock.now!r}")
        out._cur = head["cur"]
        out._total = sketches[1]
        out._panes = dict(zip(head["panes"], sketches[2:]))
        for f in ("events", "late_count", "late_weight", "expired_panes"):
            setattr(out, f, head[f])
        return out

    def __eq__(self, other) -> bool:
        return isinstance(other, WindowedSketch) and self.to_bytes() == other.to_bytes()

    __hash__ = None

    def _check_invariant(self) -> None:
        """Testing aid: the running total equals the sum of the current window's panes."""
        self._sync()
        if self._cur is None:
            return
        lo, hi = self._range(self._cur)
        ref = self._proto.empty_like()
        for k in sorted(self._panes):
            if lo <= k <= hi:
                ref.merge(self._panes[k])
        assert ref.to_bytes() == self._total.to_bytes(), "running total differs from the sum of its panes"
