"""Continuous sketch maintenance in process, and stream-versus-table joins.

* :class:`SketchStream` keeps a sketch current as micro-batches of inserts
  and deletes (negative weights) arrive, in constant memory (the sketch's
  counters). Batches may carry increasing batch ids: a batch whose id is not
  above the last applied one is a *replay* and is skipped (and counted), so
  replaying after a failure never counts a batch twice. With a
  ``checkpoint`` path, every applied batch is committed to disk atomically
  (sketch bytes and batch id in one file, written then renamed); a restarted
  stream resumes from it exactly.
* :class:`StreamTableJoin` is seed 002's setting (a stream joined with a large,
  mostly static table): the table's sketch is built once (in memory, or on
  Spark with ``spark_udaf.build.sketch_column``), the stream's sketch — whole
  stream or a :class:`~skimsketch.windows.WindowedSketch` — is updated
  continuously, and the join-size estimate (with its interval) is available at
  any time.
* :class:`StateFile` is the atomic single-file state store used by both and by
  ``spark_udaf.streaming``.

Because the sketches are linear, the sketch after any sequence of batches is
exactly (byte for byte, with integer weights) the sketch of their union: the
estimate's guarantee is that of the underlying sketch.
"""

from __future__ import annotations

import os
import struct
import tempfile
import zlib

from .errors import CorruptSketchError, IncompatibleSketchError
from .windows import _as_sequence

__all__ = ["StateFile", "SketchStream", "StreamTableJoin"]


class StateFile:
    """One file holding ``(batch_id, payload bytes)``, replaced atomically.

    Layout (little-endian): magic ``b"SKST"``, version u16, flags u16 (bit 0:
    batch id present), batch id i64, payload length u64, payload, CRC-32 of
    everything before it. :meth:`save` writes a temporary file in the same
    directory, fsyncs it and renames it over the old one, so a crash leaves
    either the old or the new state, never a mix.

    >>> import tempfile, os
    >>> d = tempfile.mkdtemp()
    >>> f = StateFile(os.path.join(d, "state.bin"))
    >>> f.load() is None
    True
    >>> f.save(3, b"abc"); f.load()
    (3, b'abc')
    """

    MAGIC = b"SKST"
    VERSION = 1
    _HEAD = struct.Struct("<4sHHqQ")

    def __init__(self, path):
        self.path = os.fspath(path)

    def exists(self) -> bool:
        return os.path.exists(self.path)

    def save(self, batch_id, payload: bytes) -> None:
        flags = 0 if batch_id is None else 1
        head = self._HEAD.pack(self.MAGIC, self.VERSION, flags, 0 if batch_id is None else int(batch_id), len(payload))
        body = head + bytes(payload)
        data = body + struct.pack("<I", zlib.crc32(body))
        d = os.path.dirname(os.path.abspath(self.path))
        os.makedirs(d, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".state-", dir=d)
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(data)
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, self.path)
        except BaseException:
            if os.path.exists(tmp):
                os.unlink(tmp)
            raise
        try:  # make the rename durable
            dfd = os.open(d, os.O_RDONLY)
            try:
                os.fsync(dfd)
            finally:
                os.close(dfd)
        except OSError:
            pass

    def load(self):
        """``(batch_id, payload)`` or ``None`` when no state was saved; ``CorruptSketchError`` if damaged."""
        try:
            with open(self.path, "rb") as f:
                data = f.read()
        except FileNotFoundError:
            return None
        n = self._HEAD.size
        if len(data) < n + 4:
            raise CorruptSketchError(f"state file {self.path}: truncated ({len(data)} bytes)")
        magic, version, flags, batch_id, length = self._HEAD.unpack(data[:n])
        if magic != self.MAGIC:
            raise CorruptSketchError(f"state file {self.path}: bad magic {magic!r}")
        if version != self.VERSION:
            raise CorruptSketchError(f"state file {self.path}: unknown version {version}")
        if len(data) != n + length + 4:
            raise CorruptSketchError(f"state file {self.path}: size mismatch (payload {length}, file {len(data)})")
        if struct.unpack("<I", data[-4:])[0] != zlib.crc32(data[:-4]):
            raise CorruptSketchError(f"state file {self.path}: checksum mismatch")
        return (batch_id if flags & 1 else None), data[n:-4]


def _load_state(blob: bytes):
    """A sketch or windowed sketch from its bytes."""
    from .serde import from_bytes
    from .windows import WindowedSketch

    if blob[:4] == WindowedSketch._MAGIC:
        return WindowedSketch.from_bytes(blob)
    return from_bytes(blob)


class SketchStream:
    """A sketch maintained over a stream of micro-batches, exactly once per batch id.

    ``sketch`` is the initial state (usually empty; its kind/shape/seed are
    kept). ``apply(keys, weights, batch_id)`` adds a batch (negative weights
    delete); batch ids must increase, and a batch whose id is at or below the
    last applied one is skipped and counted in ``skipped_batches``. With
    ``checkpoint`` (a file path) each applied batch is committed atomically and
    an existing checkpoint is resumed (it must hold a compatible sketch).

    >>> import skimsketch as ss
    >>> s = SketchStream(ss.HashSketch(width=64, depth=3, seed=1))
    >>> s.apply([1, 2, 2], batch_id=0), s.apply([2], weights=-1, batch_id=1), s.apply([9], batch_id=1)
    (True, True, False)
    >>> s.sketch == ss.HashSketch(width=64, depth=3, seed=1).update([1, 2]), s.skipped_batches
    (True, 1)
    """

    def __init__(self, sketch, checkpoint=None):
        for attr in ("update", "merge", "to_bytes", "join_size"):
            if not hasattr(sketch, attr):
                raise TypeError(f"sketch must be a sketch object, got {type(sketch).__name__}")
        self._sketch = sketch
        self.last_batch_id = None
        self.batches = 0
        self.skipped_batches = 0
        self.events = 0
        self.inserted_weight = 0
        self.deleted_weight = 0
        self._state = None if checkpoint is None else StateFile(checkpoint)
        if self._state is not None:
            saved = self._state.load()
            if saved is not None:
                batch_id, blob = saved
                restored = _load_state(blob)
                if type(restored) is not type(sketch) or restored.params != sketch.params:
                    raise IncompatibleSketchError(
                        "checkpoint", repr(sketch), repr(restored), "resume from checkpoint with"
                    )
                self._sketch = restored
                self.last_batch_id = batch_id

    @property
    def sketch(self):
        """The live sketch (do not modify it; use :meth:`snapshot` for a copy)."""
        return self._sketch

    def snapshot(self):
        return self._sketch.copy()

    def _is_replay(self, batch_id) -> bool:
        if batch_id is None:
            return False
        if isinstance(batch_id, bool) or not isinstance(batch_id, int):
            raise TypeError(f"batch_id must be an int, got {type(batch_id).__name__}")
        return self.last_batch_id is not None and batch_id <= self.last_batch_id

    def apply(self, keys, weights=None, batch_id=None) -> bool:
        """Add one batch; ``False`` if ``batch_id`` was already applied (skipped)."""
        if self._is_replay(batch_id):
            self.skipped_batches += 1
            return False
        keys = _as_sequence(keys)
        delta = self._sketch.empty_like().update(keys, weights)
        new = self._sketch.copy().merge(delta) if self._state is not None else None
        if self._state is not None:
            self._state.save(batch_id, new.to_bytes())  # commit first: memory follows disk
            self._sketch = new
        else:
            self._sketch.merge(delta)
        self._count(delta, keys, weights)
        if batch_id is not None:
            self.last_batch_id = batch_id
        self.batches += 1
        return True

    def _count(self, delta, keys, weights) -> None:
        import numpy as np

        n = len(keys)
        self.events += n
        if weights is None:
            self.inserted_weight += n
        else:
            w = np.broadcast_to(np.asarray(weights), (n,))
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
    """Join-size estimate of a stream against a static table (seed 002's setting).

    ``table`` is the table's sketch, built once. The stream side is the whole
    stream so far (``window=None``) or a sliding/tumbling event-time window
    (``window``, ``slide``, ``allowed_lateness``: see
    :mod:`skimsketch.windows`); it is an empty sketch like ``table``, so the two
    always share the hash family. ``join_size()`` returns the underlying
    sketch's estimate and interval of ``|stream join table|``.

    >>> import skimsketch as ss
    >>> table = ss.HashSketch(width=256, depth=5, seed=2).update([1, 2, 3, 3])
    >>> j = StreamTableJoin(table)
    >>> _ = j.update([3, 3, 1]); float(j.join_size())
    5.0
    """

    def __init__(self, table, window=None, slide=None, allowed_lateness=0, on_late: str = "count"):
        from .windows import WindowedSketch

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
