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

This module holds the window (panes kept, queries, bytes); batches enter through
:mod:`skimsketch.stream.ingest` (:class:`~skimsketch.stream.ingest.PaneIngest`).
"""

from __future__ import annotations

import json
import math

from ..sketch import Sketch
from ..errors import CorruptSketchError
from ..format.framing import Reader, frame, length_prefixed, unframe
from .ingest import PaneBatch, PaneIngest
from .panes import EventClock, check_number, check_on_late, n_panes, pane_of

__all__ = ["PaneBatch", "WindowedSketch"]  # PaneBatch: from .ingest


class WindowedSketch(PaneIngest):
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
