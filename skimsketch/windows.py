"""Time-windowed sketches: sliding and tumbling windows over event time.

Semantics (one rule, shared with :mod:`skimsketch.exact_windows`)
-----------------------------------------------------------------
Every element carries an event timestamp ``ts`` (int or float). Time is cut
into *panes* of length ``slide``: pane ``k`` holds ``k*slide <= ts <
(k+1)*slide`` (``k = ts // slide`` for integer timestamps and slide,
``floor(ts / slide)`` otherwise). A window of length ``window`` (a multiple
of ``slide``; ``n = window / slide`` panes) is, at query time ``t``, the ``n``
panes ending with ``t``'s pane: an element of pane ``k`` is *valid* at ``t``
iff ``k <= pane(t) <= k + n - 1``. With ``slide`` equal to the time unit
(``slide=1`` on integer seconds) this is exactly the moving window of Kang,
Naughton and Viglas (ICDE 2003, seed 003): the elements that arrived in the
last ``window`` time units, valid on ``[ts, ts + window)`` (the interval
semantics of seed 000). ``slide == window`` gives tumbling windows.

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
import numbers
import struct
import zlib

import numpy as np

from .errors import CorruptSketchError, SketchError
from .keys import canonicalize, numeric_vector

__all__ = [
    "EventClock",
    "LateElementError",
    "WindowedSketch",
    "WindowedJoin",
    "pane_index",
]


class LateElementError(SketchError):
    """A batch holds elements older than the watermark and ``on_late="raise"`` (a ``ValueError``)."""


# -- parameter checks ---------------------------------------------------------
def _check_number(name: str, x, *, positive: bool = False, nonneg: bool = False):
    if isinstance(x, (bool, np.bool_)) or not isinstance(x, numbers.Real):
        raise TypeError(f"{name} must be an int or float, got {type(x).__name__}")
    if not math.isfinite(float(x)):
        raise ValueError(f"{name} must be finite, got {x!r}")
    if positive and not x > 0:
        raise ValueError(f"{name} must be > 0, got {x!r}")
    if nonneg and not x >= 0:
        raise ValueError(f"{name} must be >= 0, got {x!r}")
    return int(x) if isinstance(x, numbers.Integral) else float(x)


def _n_panes(window, slide) -> int:
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


def _pane_of(t, slide) -> int:
    return int(pane_index(np.array([t]), slide)[0])


def _timestamps(timestamps, n: int) -> np.ndarray:
    """Timestamps as an int64 or float64 array of length ``n`` (a scalar is broadcast)."""
    if getattr(getattr(timestamps, "dtype", None), "kind", None) == "M":
        raise TypeError("datetime64 timestamps are not supported: pass epoch numbers (e.g. ts.astype('int64'))")
    return numeric_vector(timestamps, n, "timestamps")


def _weights(weights, n: int) -> np.ndarray | None:
    """Weights as an array of length ``n`` or ``None`` (all 1); the sketch checks integrality."""
    return None if weights is None else numeric_vector(weights, n, "weights")


def _as_sequence(keys):
    """Keys as a sized sequence: a scalar becomes a 1-element list, an iterator a list."""
    if keys is None or isinstance(keys, (str, bytes, bytearray, numbers.Number)):
        return [keys]
    if not hasattr(keys, "__len__"):
        if not hasattr(keys, "__iter__"):
            raise TypeError(f"keys must be a sequence or array, got {type(keys).__name__}")
        return list(keys)
    return keys


class _Batch:
    """One update's elements, canonicalised and aligned with timestamps and weights.

    ``pos`` holds the positions of the non-null keys (``None``: no nulls, the
    fast path for integer numpy keys), aligned with ``keys``.
    """

    def __init__(self, keys, timestamps, weights):
        keys = _as_sequence(keys)
        n = len(keys)
        self.n = n
        self.ts = _timestamps(timestamps, n)
        self.w = _weights(weights, n)
        if isinstance(keys, np.ndarray) and keys.ndim == 1 and keys.dtype.kind == "i":
            self.keys, self.pos, self.null = keys.astype(np.int64, copy=False), None, None
            return
        # canonicalise with the element positions as weights: the survivors' weights
        # are the positions of the non-null keys, aligned with the canonical keys.
        cb = canonicalize(keys, np.arange(n, dtype=np.int64))
        self.keys = cb.keys
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


def _groups(pane_ids: np.ndarray):
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
        self.allowed_lateness = _check_number("allowed_lateness", allowed_lateness, nonneg=True)
        self.now = None

    @property
    def watermark(self):
        return None if self.now is None else self.now - self.allowed_lateness

    def advance_to(self, t) -> None:
        """Move ``now`` forward to ``t`` (a ``t`` in the past is ignored: time never goes back)."""
        t = _check_number("t", t)
        if self.now is None or t > self.now:
            self.now = t

    def __repr__(self) -> str:
        return f"EventClock(allowed_lateness={self.allowed_lateness!r}, now={self.now!r})"


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
        self.window = _check_number("window", window, positive=True)
        self.slide = self.window if slide is None else _check_number("slide", slide, positive=True)
        self.n_panes = _n_panes(self.window, self.slide)
        if on_late not in ("count", "raise"):
            raise ValueError(f"on_late must be 'count' or 'raise', got {on_late!r}")
        self.on_late = on_late
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
        return None if wm is None else _pane_of(wm, self.slide) - self.n_panes + 1

    def _sync(self) -> None:
        """Move the running total to the window of ``now`` and drop panes no window needs."""
        now = self._clock.now
        if now is None or now == self._synced_now:
            return
        cur = _pane_of(now, self.slide)
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

    # -- updates ------------------------------------------------------------------
    def update(self, keys, timestamps, weights=None):
        """Add elements with event ``timestamps`` (scalar or aligned); returns ``self``.

        Late elements (``ts < watermark``) are counted in ``late_count`` /
        ``late_weight`` or, with ``on_late="raise"``, refuse the batch. The
        update is atomic: on any error nothing changes.
        """
        self._update(keys, timestamps, weights)
        return self

    def _update(self, keys, timestamps, weights):
        """:meth:`update`, returning the committed ``(pane, delta sketch)`` pairs."""
        self._sync()
        batch = _Batch(keys, timestamps, weights)
        deltas, accepted_max, late = self._deltas(batch)
        n_late = int(late.sum())
        self._commit(deltas, accepted_max, n_late, batch.weight_sum(late) if n_late else 0, batch.n - n_late)
        return deltas

    def merge_panes(self, panes: dict, max_timestamp, late_count: int = 0, late_weight=0, events: int = 0):
        """Commit per-pane sketches of one batch built elsewhere (e.g. on Spark executors).

        ``panes`` maps pane index (``pane_index(ts, slide)``) to the sketch of
        that pane's *accepted* elements (``ts >= watermark`` as of this call);
        ``max_timestamp`` is their largest timestamp; the late elements the
        caller set aside are reported through ``late_count`` / ``late_weight``.
        Equivalent to :meth:`update` with the same elements. Returns ``self``.
        """
        self._sync()
        bound = None if self.watermark is None else _pane_of(self.watermark, self.slide)
        deltas = []
        for k, sk in sorted(panes.items()):
            if isinstance(k, bool) or not isinstance(k, (int, np.integer)):
                raise TypeError(f"pane indices must be ints, got {type(k).__name__}")
            if bound is not None and k < bound:
                raise ValueError(f"pane {k} is before the watermark's pane {bound}: its elements are late")
            self._proto.check_compatible(sk, "merge")
            deltas.append((int(k), sk.copy()))
        if deltas and max_timestamp is None:
            raise ValueError("max_timestamp is required when panes are given")
        if max_timestamp is not None:
            max_timestamp = _check_number("max_timestamp", max_timestamp)
            if deltas and _pane_of(max_timestamp, self.slide) != deltas[-1][0]:
                raise ValueError(f"max_timestamp {max_timestamp!r} is not in the last pane {deltas[-1][0]}")
        self._commit(deltas, max_timestamp, int(late_count), late_weight, int(events))
        return self

    def _commit(self, deltas, accepted_max, n_late: int, late_weight, events: int) -> None:
        """Add per-pane deltas to the panes (and to the total when in the window), then move time."""
        in_window = None if self._cur is None else self._range(self._cur)
        done = []  # (sketch, delta) merged so far, or (None, pane index) added: undone on failure
        try:
            for k, d in deltas:
                pane = self._panes.get(k)
                if pane is None:
                    self._panes[k] = d
                    done.append((None, k))
                else:
                    pane.merge(d)
                    done.append((pane, d))
                if in_window is not None and in_window[0] <= k <= in_window[1]:
                    self._total.merge(d)
                    done.append((self._total, d))
        except Exception:  # e.g. CounterOverflowError: undo what was merged (exact in int64)
            for target, d in reversed(done):
                if target is None:
                    del self._panes[d]
                else:
                    target.subtract(d)
            raise
        if n_late:
            self.late_count += n_late
            self.late_weight += late_weight
        self.events += events
        if accepted_max is not None:
            self._clock.advance_to(accepted_max)
        self._sync()

    def _deltas(self, batch: _Batch):
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
        for k, sel in _groups(pane_index(ts, self.slide)):
            d = self._proto.empty_like()
            d.update(keys[sel], None if wk is None else wk[sel])
            by_pane[k] = d
        for k, sel in _groups(pane_index(batch.ts[nulls], self.slide)):
            d = by_pane.get(k)
            if d is None:
                d = by_pane[k] = self._proto.empty_like()
            idx = nulls[sel]
            d.update(np.full(len(idx), None, dtype=object), None if w is None else w[idx])
        return sorted(by_pane.items()), accepted_max, late

    # -- queries --------------------------------------------------------------------
    def sketch_at(self, t=None):
        """A new sketch of the elements valid at ``t`` (default: ``now``).

        Raises ``ValueError`` when the window of ``t`` has expired (its panes
        were dropped once the watermark passed them).
        """
        self._sync()
        if t is None or self._cur is None:
            if t is not None:
                _check_number("t", t)
            return self._total.copy()
        t = _check_number("t", t)
        cur = _pane_of(t, self.slide)
        if cur == self._cur:
            return self._total.copy()
        lo, hi = self._range(cur)
        bound = self._retention_bound()
        if lo < bound:
            raise ValueError(
                f"the window at t={t!r} (panes {lo}..{hi}) has expired: panes before {bound} were dropped "
                f"(watermark {self.watermark!r})"
            )
        out = self._proto.empty_like()
        for k in sorted(self._panes):
            if lo <= k <= hi:
                out.merge(self._panes[k])
        return out

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
    _MAGIC = b"SKWN"
    _VERSION = 1

    def to_bytes(self) -> bytes:
        """Serialise the whole window state (parameters, clock, counters, panes).

        Layout (little-endian): magic ``b"SKWN"``, version u16, JSON header
        length u32, UTF-8 JSON header, then length-prefixed (u32) sketch blobs
        — the template, the running total, each stored pane in header order —
        and a CRC-32 of everything before it.
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
        parts = [self._MAGIC, struct.pack("<HI", self._VERSION, len(hj)), hj]
        for sk in [self._proto, self._total] + [self._panes[k] for k in keys]:
            b = sk.to_bytes()
            parts += [struct.pack("<I", len(b)), b]
        body = b"".join(parts)
        return body + struct.pack("<I", zlib.crc32(body))

    @classmethod
    def from_bytes(cls, blob) -> "WindowedSketch":
        """Load a state written by :meth:`to_bytes`; ``CorruptSketchError`` on any malformed input."""
        from .serde import from_bytes as sketch_from_bytes

        blob = bytes(blob)
        if len(blob) < 14 or blob[:4] != cls._MAGIC:
            raise CorruptSketchError("not a windowed sketch state (bad magic or too short)")
        if struct.unpack("<I", blob[-4:])[0] != zlib.crc32(blob[:-4]):
            raise CorruptSketchError("windowed sketch state: checksum mismatch")
        version, hlen = struct.unpack("<HI", blob[4:10])
        if version != cls._VERSION:
            raise CorruptSketchError(f"windowed sketch state: unknown version {version}")
        try:
            head = json.loads(blob[10 : 10 + hlen].decode("utf-8"))
            off, sketches = 10 + hlen, []
            while off < len(blob) - 4:
                (n,) = struct.unpack("<I", blob[off : off + 4])
                sketches.append(sketch_from_bytes(blob[off + 4 : off + 4 + n]))
                off += 4 + n
            if off != len(blob) - 4 or len(sketches) != 2 + len(head["panes"]):
                raise CorruptSketchError("windowed sketch state: size mismatch")
            out = cls(sketches[0], head["window"], head["slide"], head["allowed_lateness"], head["on_late"])
        except CorruptSketchError:
            raise
        except (ValueError, TypeError, KeyError, struct.error, UnicodeDecodeError) as e:
            raise CorruptSketchError(f"windowed sketch state: {e}") from None
        out._clock.now = head["now"]
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


class WindowedJoin:
    """Estimated join size of two streams over per-stream sliding windows (seed 003).

    Stream A keeps a window of ``window_a``, stream B of ``window_b`` (both
    multiples of the common ``slide``; by default ``slide = window`` when the
    windows are equal, i.e. tumbling). One event-time clock and watermark are
    shared by the two sides. At time ``t`` the estimate is the underlying
    sketch's ``join_size`` of the two window sketches, whose interval holds
    with the stated confidence.

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

    def _side(self, side):
        if side in ("a", "A", 0):
            return self.a, self.b
        if side in ("b", "B", 1):
            return self.b, self.a
        raise ValueError(f"side must be 'a' or 'b', got {side!r}")

    def update(self, side, keys, timestamps, weights=None):
        """Add elements to stream ``side`` ('a' or 'b'); returns ``self``."""
        mine, theirs = self._side(side)
        deltas = mine._update(keys, timestamps, weights)
        self._count_results(deltas, mine, theirs)
        theirs._sync()
        return self

    def _count_results(self, deltas, x: "WindowedSketch", y: "WindowedSketch") -> None:
        """Add each delta's per-table inner product with the other side's overlapping panes.

        A delta in pane ``k`` of stream X joins the Y elements whose validity
        overlaps its own: Y panes ``k - n_Y + 1 .. k + n_X - 1`` (as in
        :class:`~skimsketch.exact_windows.ExactWindowedJoin`), read before Y
        moves to the new time. For the usual in-order batch that range is
        exactly Y's current window, i.e. its running total.
        """
        if y._cur is None:
            return
        for k, d in deltas:
            lo, hi = k - y.n_panes + 1, k + x.n_panes - 1
            if lo == y._cur - y.n_panes + 1 and hi >= y._cur:  # no Y pane is after y._cur
                other = y._total.counters.astype(np.float64)
            else:
                other = None
                for kb, pane in y._panes.items():
                    if lo <= kb <= hi:
                        c = pane.counters.astype(np.float64)
                        other = c if other is None else other + c
                if other is None:
                    continue
            rows = np.einsum("pq,pq->p", d.counters.astype(np.float64), other)
            if self._agms:
                rows /= x._proto.width
            self._results_rows += rows

    @property
    def _agms(self) -> bool:
        from .agms import AGMSSketch

        return isinstance(self.a._proto, AGMSSketch)

    @property
    def total_results_estimate(self) -> float:
        """Estimated number of results a moving-window join has produced so far (seed 003).

        Each batch adds, per table, the inner product of its sketch with the
        other stream's sketch over the panes whose elements it joins; the
        estimate is the median over tables of these running sums (for AGMS,
        of the running row means) — the sketch's join estimator applied to
        the sum of the per-batch joins, so unbiased per table like
        ``join_size``. A point estimate: no interval is attached (the exact
        value is ``ExactWindowedJoin.total_results``).
        """
        return float(np.median(self._results_rows))

    def update_a(self, keys, timestamps, weights=None):
        return self.update("a", keys, timestamps, weights)

    def update_b(self, keys, timestamps, weights=None):
        return self.update("b", keys, timestamps, weights)

    def advance_to(self, t):
        self.clock.advance_to(t)
        self.a._sync()
        self.b._sync()
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

    _MAGIC = b"SKWJ"

    def to_bytes(self) -> bytes:
        """Serialise: magic ``b"SKWJ"``, version u16, two u32 lengths, the sides' states,
        the per-table result sums (``depth`` f64), CRC-32."""
        a, b = self.a.to_bytes(), self.b.to_bytes()
        rows = self._results_rows.astype("<f8").tobytes()
        body = self._MAGIC + struct.pack("<HII", 1, len(a), len(b)) + a + b + rows
        return body + struct.pack("<I", zlib.crc32(body))

    @classmethod
    def from_bytes(cls, blob) -> "WindowedJoin":
        """Load a join written by :meth:`to_bytes` (the sides share one clock again)."""
        blob = bytes(blob)
        if len(blob) < 18 or blob[:4] != cls._MAGIC:
            raise CorruptSketchError("not a windowed join state (bad magic or too short)")
        if struct.unpack("<I", blob[-4:])[0] != zlib.crc32(blob[:-4]):
            raise CorruptSketchError("windowed join state: checksum mismatch")
        version, la, lb = struct.unpack("<HII", blob[4:14])
        if version != 1:
            raise CorruptSketchError(f"windowed join state: unknown version {version}")
        if 14 + la + lb + 4 > len(blob):
            raise CorruptSketchError("windowed join state: size mismatch")
        a = WindowedSketch.from_bytes(blob[14 : 14 + la])
        b = WindowedSketch.from_bytes(blob[14 + la : 14 + la + lb])
        if 14 + la + lb + 8 * a._proto.depth + 4 != len(blob):
            raise CorruptSketchError("windowed join state: size mismatch")
        if (a.slide, a.allowed_lateness, a.now) != (b.slide, b.allowed_lateness, b.now):
            raise CorruptSketchError("windowed join state: the two sides disagree on slide, lateness or clock")
        out = cls.__new__(cls)
        out.clock = a._clock
        b._clock = a._clock
        out.a, out.b = a, b
        out._results_rows = np.frombuffer(blob[14 + la + lb : -4], dtype="<f8").astype(np.float64)
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
            f"WindowedJoin({self.a._proto!r}, window_a={self.a.window!r}, window_b={self.b.window!r}, "
            f"slide={self.a.slide!r}, allowed_lateness={self.clock.allowed_lateness!r}, now={self.now!r})"
        )
