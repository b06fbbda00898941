"""Continuous sketch maintenance in process, and stream-versus-table joins.

* :class:`SketchStream` keeps a sketch current as micro-batches of inserts
  and deletes (negative weights) arrive, in constant memory (the sketch's
  counters). Numbered batches are applied exactly once by the rules of
  :class:`~skimsketch.stream.checkpoint.ExactlyOnce`: the last batch id again
  is a replay and is skipped (and counted), an earlier id raises. With a
  ``checkpoint`` path, every applied batch is committed to disk atomically
  (sketch bytes, batch id and query id in one file, written then renamed);
  a restarted stream resumes from it exactly.
* :class:`StreamTableJoin` joins a stream with a large, mostly static table:
  the table's sketch is built once (in memory, or on Spark with
  ``spark_udaf.build.sketch_column``), the stream's sketch — whole stream or
  a :class:`~skimsketch.stream.windows.WindowedSketch` — is updated
  continuously, and the join-size estimate (with its interval) is available
  at any time.

Because the sketches are linear, the sketch after any sequence of batches is
exactly (byte for byte, with integer weights) the sketch of their union: the
estimate's guarantee is that of the underlying sketch.
"""

from __future__ import annotations

from ..errors import IncompatibleSketchError
from ..keys.canonical import drop_null_weights, numeric_vector
from .checkpoint import ExactlyOnce, load_state, sketch_digest
from .panes import as_sequence
from .windows import WindowedSketch

__all__ = ["SketchStream", "StreamTableJoin"]


class SketchStream:
    """A sketch maintained over a stream of micro-batches, exactly once per batch id.

    ``sketch`` is the initial state (usually empty; its kind/shape/seed are
    kept). ``apply(keys, weights, batch_id)`` adds a batch (negative weights
    delete). Batch ids increase (gaps allowed; ``consecutive=True`` demands
    ``0, 1, 2, ...``); the last applied id again is a replay, skipped and
    counted in ``skipped_batches`` (it must hold the same data: with integer
    counters a replay whose sketch differs raises); an earlier id raises
    :class:`~skimsketch.stream.checkpoint.ExactlyOnceError`. With
    ``checkpoint`` (a file path) each applied batch is committed atomically
    and an existing checkpoint is resumed (it must hold a compatible sketch).
    ``query_id`` names the source (e.g. a consumer group): a checkpoint
    committed under another id is refused, so a source that restarts its
    numbering cannot be mistaken for a replay. Without ``query_id`` that case
    is detected only when the new ids are below the last committed one.

    >>> import skimsketch as ss
    >>> s = SketchStream(ss.HashSketch(width=64, depth=3, seed=1))
    >>> s.apply([1, 2, 2], batch_id=0), s.apply([2], weights=-1, batch_id=1), s.apply([2], weights=-1, batch_id=1)
    (True, True, False)
    >>> bool((s.sketch.counters == ss.HashSketch(width=64, depth=3, seed=1).update([1, 2]).counters).all())
    True
    >>> s.sketch.nonnegative, s.skipped_batches  # it saw a delete (the sign rule, Sketch.nonnegative)
    (False, 1)
    """

    def __init__(self, sketch, checkpoint=None, query_id: str | None = None, consecutive: bool = False):
        for attr in ("update", "merge", "to_bytes", "join_size"):
            if not hasattr(sketch, attr):
                raise TypeError(f"sketch must be a sketch object, got {type(sketch).__name__}")
        self._sketch = sketch
        self.batches = 0
        self.skipped_batches = 0
        self.events = 0
        self.inserted_weight = 0
        self.deleted_weight = 0
        self._once = ExactlyOnce(checkpoint, query_id, consecutive)
        self._durable = checkpoint is not None
        if self._once.saved is not None:
            restored = load_state(self._once.saved)
            if type(restored) is not type(sketch) or restored.params != sketch.params:
                raise IncompatibleSketchError(
                    "checkpoint", repr(sketch), repr(restored), "resume from checkpoint with"
                )
            self._sketch = restored

    @property
    def last_batch_id(self):
        """The last applied (committed) batch id, ``None`` before any numbered batch."""
        return self._once.last_batch_id

    @property
    def sketch(self):
        """The live sketch (do not modify it; use :meth:`snapshot` for a copy)."""
        return self._sketch

    def snapshot(self):
        return self._sketch.copy()

    def apply(self, keys, weights=None, batch_id=None) -> bool:
        """Add one batch; ``False`` if it replays the last applied ``batch_id`` (skipped).

        Raises ``ExactlyOnceError`` (nothing applied) for a batch id that
        cannot be applied exactly once.
        """
        is_new = self._once.admit(batch_id)
        keys = as_sequence(keys)
        delta = self._sketch.empty_like().update(keys, weights)
        digest = b"" if batch_id is None else sketch_digest(delta)  # unnumbered batches are never replays
        if not is_new:
            self._once.verify_replay(digest)
            self.skipped_batches += 1
            return False
        if self._durable:
            new = self._sketch.copy().merge(delta)
            self._once.commit(batch_id, new.to_bytes(), digest=digest)  # commit first: memory follows disk
            self._sketch = new
        else:
            self._sketch.merge(delta)
            self._once.commit(batch_id, b"", digest=digest)
        self._count(delta, keys, weights)
        self.batches += 1
        return True

    def _count(self, delta, keys, weights) -> None:
        n = len(keys)
        if weights is None:
            self.events += n
            self.inserted_weight += n
        else:
            weights, keep = drop_null_weights(weights, n)  # null-weight rows were skipped by the update
            n = n if keep is None else int(keep.sum())
            self.events += n
            w = numeric_vector(weights, n, "weights")
            self.inserted_weight += w[w > 0].sum().item()
            self.deleted_weight += -w[w < 0].sum().item()

    def insert(self, keys, batch_id=None) -> bool:
        return self.apply(keys, None, batch_id)

    def delete(self, keys, batch_id=None) -> bool:
        """Delete one occurrence of each key (weight -1; deleting an absent key makes it negative)."""
        return self.apply(keys, -1, batch_id)

    def join_size(self, other, confidence: float = 0.95):
        """Estimated join size with ``other`` (a sketch or a ``SketchStream``) now."""
        other = other.sketch if isinstance(other, SketchStream) else other
        return self._sketch.join_size(other, confidence=confidence)

    @property
    def nbytes(self) -> int:
        return self._sketch.nbytes

    def stats(self) -> dict:
        return {
            "batches": self.batches,
            "skipped_batches": self.skipped_batches,
            "last_batch_id": self.last_batch_id,
            "events": self.events,
            "inserted_weight": self.inserted_weight,
            "deleted_weight": self.deleted_weight,
            "nbytes": self.nbytes,
        }


class StreamTableJoin:
    """Join-size estimate of a stream against a large, mostly static table.

    ``table`` is the table's sketch, built once. The stream side is the whole
    stream so far (``window=None``) or a sliding/tumbling event-time window
    (``window``, ``slide``, ``allowed_lateness``: see
    :mod:`skimsketch.stream.windows`); it is an empty sketch like ``table``, so the two
    always share the hash family. ``join_size()`` returns the underlying
    sketch's estimate and interval of ``|stream join table|``.

    >>> import skimsketch as ss
    >>> table = ss.HashSketch(width=256, depth=5, seed=2).update([1, 2, 3, 3])
    >>> j = StreamTableJoin(table)
    >>> _ = j.update([3, 3, 1]); float(j.join_size())
    5.0
    """

    def __init__(self, table, window=None, slide=None, allowed_lateness=0, on_late: str = "count"):
        for attr in ("empty_like", "join_size"):
            if not hasattr(table, attr):
                raise TypeError(f"table must be a sketch, got {type(table).__name__}")
        self.table = table
        if window is None:
            if slide is not None or allowed_lateness:
                raise ValueError("slide and allowed_lateness need a window")
            self.stream = SketchStream(table.empty_like())
        else:
            self.stream = WindowedSketch(table, window, slide, allowed_lateness, on_late)
        self.windowed = window is not None

    def update(self, keys, weights=None, timestamps=None, batch_id=None):
        """Add stream elements (``timestamps`` required iff windowed); returns ``self``."""
        if self.windowed:
            if timestamps is None:
                raise ValueError("a windowed stream needs timestamps")
            if batch_id is not None:
                raise ValueError("batch ids are supported on unwindowed streams only")
            self.stream.update(keys, timestamps, weights)
        else:
            if timestamps is not None:
                raise ValueError("timestamps given but the stream has no window")
            self.stream.apply(keys, weights, batch_id)
        return self

    def advance_to(self, t):
        if not self.windowed:
            raise ValueError("advance_to needs a windowed stream")
        self.stream.advance_to(t)
        return self

    def update_table(self, keys, weights=None):
        """Apply a change to the (mostly static) table; returns ``self``."""
        self.table.update(keys, weights)
        return self

    def stream_sketch(self, t=None):
        if self.windowed:
            return self.stream.sketch_at(t)
        if t is not None:
            raise ValueError("t is only meaningful for a windowed stream")
        return self.stream.snapshot()

    def join_size(self, t=None, confidence: float = 0.95):
        """Estimated ``|stream(t) join table|`` (an ``Estimate``)."""
        if self.windowed:
            return self.stream.sketch_at(t).join_size(self.table, confidence=confidence)
        if t is not None:
            raise ValueError("t is only meaningful for a windowed stream")
        return self.stream.sketch.join_size(self.table, confidence=confidence)

    @property
    def nbytes(self) -> int:
        return self.table.nbytes + self.stream.nbytes
