"""Windowed join of two streams: ``|A(t) join B(t)|`` and the total results of a moving-window join.

Each stream has its own :class:`~skimsketch.stream.windows.WindowedSketch`
(its own window length); the two share one :class:`EventClock` and one pane
size. The windows' semantics are those of :mod:`skimsketch.stream.panes`
(``docs/streaming.md``).
"""

from __future__ import annotations

import numpy as np

from ..sketch import Sketch
from ..errors import CorruptSketchError
from ..format.framing import Reader, frame, unframe
from .panes import EventClock
from .windows import WindowedSketch

__all__ = ["WindowedJoin"]


def table_scale(template) -> np.ndarray:
    """Per-table factor ``c`` of the sketch's linear join estimator ``c * <X_f[p], X_g[p]>``.

    Every sketch inherits from :class:`~skimsketch.sketch.base.Sketch` a
    median-of-tables join estimator whose table ``p`` is a bilinear form of
    the two sketches' counter rows (a hash sketch's inner product; an AGMS
    sketch's row mean, i.e. the inner product over ``width``). The factor is
    read off that estimator once, on a sketch of a single key, so no kind is
    special-cased here. (A skimmed sketch's counters are a hash sketch's; its
    skimming estimator is not linear in the stream and is bypassed.) An exact-mode
    template's pane sums convert to the same counters, so the factor is read on the
    counter-mode sketch of its kind and shape (exact mode answers exactly, with no tables).
    """
    counter_mode = {k: v for k, v in template.params.items() if k != "exact"}
    one = type(template)(**counter_mode).update([0])
    rows = Sketch.join_size(one, one).detail["tables"]
    dots = np.einsum("pq,pq->p", one.counters.astype(np.float64), one.counters.astype(np.float64))
    return np.asarray(rows, dtype=np.float64) / dots


class WindowedJoin:
    """Estimated join size of two streams over per-stream sliding windows.

    Stream A keeps a window of ``window_a``, stream B of ``window_b`` (both
    multiples of the common ``slide``; by default ``slide = window`` when the
    windows are equal, i.e. tumbling). One event-time clock and watermark are
    shared by the two sides (the moving-window join of Kang, Naughton and
    Viglas, ICDE 2003). At time ``t`` the estimate is the underlying sketch's
    ``join_size`` of the two window sketches, whose interval holds with the
    stated confidence.

    >>> import skimsketch as ss
    >>> j = WindowedJoin(ss.HashSketch(width=256, depth=5, seed=3), window_a=4, window_b=2, slide=1)
    >>> _ = j.update_a([7, 7, 8], [0, 1, 2]).update_b([7, 8], [3, 3])
    >>> float(j.join_size())  # A keeps 0..3, B keeps 2..3: 2*1 + 1*1
    3.0
    """

    def __init__(self, template, window_a, window_b=None, slide=None, allowed_lateness=0, on_late: str = "count"):
        window_b = window_a if window_b is None else window_b
        if slide is None:
            if window_a != window_b:
                raise ValueError("windows of different lengths need an explicit common slide (pane size)")
            slide = window_a
        self.clock = EventClock(allowed_lateness)
        self.a = WindowedSketch(template, window_a, slide, on_late=on_late, clock=self.clock)
        self.b = WindowedSketch(template, window_b, slide, on_late=on_late, clock=self.clock)
        self._results_rows = np.zeros(template.depth, dtype=np.float64)
        self._scale = table_scale(template)

    def _side(self, side):
        if side in ("a", "A", 0):
            return self.a, self.b
        if side in ("b", "B", 1):
            return self.b, self.a
        raise ValueError(f"side must be 'a' or 'b', got {side!r}")

    def update(self, side, keys, timestamps, weights=None):
        """Add elements to stream ``side`` ('a' or 'b'); returns ``self`` (atomic, like a window update)."""
        mine, theirs = self._side(side)
        batch = mine.pane_deltas(keys, timestamps, weights)
        rows = self._results_of(batch.panes, mine, theirs)
        mine.commit(batch)
        self._results_rows += rows
        theirs.refresh()
        return self

    def _results_of(self, deltas: dict, x: WindowedSketch, y: WindowedSketch) -> np.ndarray:
        """Per-table join estimates of each delta with the other side's overlapping panes.

        A delta in pane ``k`` of stream X joins the Y elements whose validity
        overlaps its own: Y panes ``k - n_Y + 1 .. k + n_X - 1`` (as in
        :class:`~skimsketch.stream.exact.ExactWindowedJoin`), read before the
        batch moves time. For the usual in-order batch that range is exactly
        Y's current window, i.e. its running total.
        """
        rows = np.zeros_like(self._results_rows)
        if y.current_pane is None:
            return rows
        for k, d in sorted(deltas.items()):
            other = y.panes_sum(k - y.n_panes + 1, k + x.n_panes - 1)
            rows += np.einsum("pq,pq->p", d.counters.astype(np.float64), other.counters.astype(np.float64))
        return rows * self._scale

    @property
    def total_results_estimate(self) -> float:
        """Estimated number of results a moving-window join has produced so far.

        Each batch adds, per table, the estimate of the inner product of its
        sketch with the other stream's sketch over the panes whose elements it
        joins; the estimate is the median over tables of these running sums
        — the sketch's per-table join estimator applied to the sum of the
        per-batch joins, so unbiased per table like ``join_size``. A point
        estimate: no interval is attached (the exact value is
        ``ExactWindowedJoin.total_results``).
        """
        return float(np.median(self._results_rows))

    def update_a(self, keys, timestamps, weights=None):
        return self.update("a", keys, timestamps, weights)

    def update_b(self, keys, timestamps, weights=None):
        return self.update("b", keys, timestamps, weights)

    def advance_to(self, t):
        self.clock.advance_to(t)
        self.a.refresh()
        self.b.refresh()
        return self

    @property
    def now(self):
        return self.clock.now

    @property
    def watermark(self):
        return self.clock.watermark

    def join_size(self, t=None, confidence: float = 0.95):
        """Estimated ``|A(t) join B(t)|`` with its interval (an ``Estimate``)."""
        return self.a.join_size(self.b, t=t, confidence=confidence)

    MAGIC = b"SKWJ"
    VERSION = 2  # version 1: the same payload before the common framing (still read)

    def to_bytes(self) -> bytes:
        """Serialise: a :mod:`skimsketch.format.framing` frame (``b"SKWJ"``, version 2) holding the
        two sides' states and the per-table result sums (``docs/streaming.md``)."""
        a, b = self.a.to_bytes(), self.b.to_bytes()
        rows = self._results_rows.astype("<f8").tobytes()
        return frame(self.MAGIC, self.VERSION, np.array([len(a), len(b)], "<u4").tobytes() + a + b + rows)

    @classmethod
    def from_bytes(cls, blob) -> WindowedJoin:
        """Load a join written by :meth:`to_bytes` (the sides share one clock again)."""
        what = "windowed join state"
        _, payload = unframe(blob, cls.MAGIC, what, versions=(cls.VERSION,), legacy=(1,))
        r = Reader(payload, what)
        la, lb = r.unpack("<II")
        blob_a, blob_b = r.take(la), r.take(lb)
        a = WindowedSketch.from_bytes(blob_a)
        b = WindowedSketch.from_bytes(blob_b, clock=a.clock)
        if a.slide != b.slide:
            raise CorruptSketchError(f"{what}: the two sides disagree on the slide ({a.slide!r} != {b.slide!r})")
        if a.on_late != b.on_late:
            raise CorruptSketchError(f"{what}: the two sides disagree on on_late ({a.on_late!r} != {b.on_late!r})")
        try:
            a.template.check_compatible(b.template, "join")
        except ValueError as e:
            raise CorruptSketchError(f"{what}: {e}") from None
        depth = a.template.depth
        rows = np.frombuffer(r.take(8 * depth), dtype="<f8").astype(np.float64)
        r.done()
        return cls._from_sides(a, b, rows)

    @classmethod
    def _from_sides(cls, a: WindowedSketch, b: WindowedSketch, rows: np.ndarray) -> WindowedJoin:
        out = cls.__new__(cls)
        out.clock, out.a, out.b, out._results_rows = a.clock, a, b, rows
        out._scale = table_scale(a.template)
        return out

    def __eq__(self, other) -> bool:
        return isinstance(other, WindowedJoin) and self.to_bytes() == other.to_bytes()

    __hash__ = None

    @property
    def nbytes(self) -> int:
        return self.a.nbytes + self.b.nbytes

    def stats(self) -> dict:
        return {"a": self.a.stats(), "b": self.b.stats(), "total_results_estimate": self.total_results_estimate}

    def __repr__(self) -> str:
        return (
            f"WindowedJoin({self.a.template!r}, window_a={self.a.window!r}, window_b={self.b.window!r}, "
            f"slide={self.a.slide!r}, allowed_lateness={self.clock.allowed_lateness!r}, now={self.now!r})"
        )
