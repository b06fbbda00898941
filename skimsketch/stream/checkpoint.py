"""Exactly-once checkpoints: a state, its last batch id and its query identity, committed atomically.

:class:`StateFile` is one file replaced atomically (write a temporary file
in the same directory, fsync, rename, fsync the directory): a crash leaves
the old commit or the new one, never a mix. :class:`ExactlyOnce` applies the
batch-id rules on top of it, for :class:`~skimsketch.stream.sketch_stream.SketchStream`
and for ``spark_udaf.streaming.StreamingSketch`` alike:

* the batch id equal to the last committed one is a *replay* (a source
  re-sends the last batch after a failure, with the same data): skipped;
* a larger id is new (with ``consecutive=True``, as Spark numbers its
  micro-batches: exactly the next id, and ``0`` on an empty state): applied,
  then committed with the state;
* anything else raises :class:`ExactlyOnceError` naming both ids and the
  remedy: an id below the last (a new checkpoint restarting at 0, or an older
  checkpoint with newer state), a gap (state older than the checkpoint), a
  first id above 0 on an empty state (an existing checkpoint with a new or
  lost state directory);
* a commit records the query identity (Spark's query id, persisted in the
  checkpoint location and stable across restarts; or the caller's
  ``query_id``), and a batch from another query raises, even when the ids
  happen to fit (a new checkpoint at batch 0 against state whose last batch
  is 0);
* a replay must carry the data of the batch it replays: a commit records a
  digest of the batch (the caller's, e.g. of the batch's sketch), and a
  replay whose digest differs raises (an older checkpoint copy that planned
  its batch differently);
* every commit carries a random token, and a commit first checks (under a
  lock on the directory) that the file still holds this writer's last
  commit, so two queries sharing one state file are detected at the first
  commit of the second writer instead of silently overwriting each other.

The file layout is in ``docs/streaming.md`` ("Binary layouts").
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import struct
import tempfile
from typing import NamedTuple

from ..sketch import Sketch
from ..errors import CorruptSketchError, SketchError
from ..format.framing import Reader, frame, length_prefixed, unframe
from .windows import WindowedSketch

try:
    import fcntl
except ImportError:  # pragma: no cover - not on POSIX: the token check still runs, without the lock
    fcntl = None

__all__ = ["Commit", "ExactlyOnce", "ExactlyOnceError", "StateFile", "load_state", "sketch_digest"]


class ExactlyOnceError(SketchError):
    """A batch cannot be applied exactly once: wrong batch id, another query's state, or a concurrent writer."""


class Commit(NamedTuple):
    """One committed record: batch id and query id (or ``None``), commit token, batch digest, state bytes."""

    batch_id: int | None
    query_id: str | None
    token: bytes
    payload: bytes
    digest: bytes = b""


def load_state(blob: bytes):
    """A sketch or a :class:`WindowedSketch` from the bytes either wrote."""
    if bytes(blob[:4]) == WindowedSketch.MAGIC:
        return WindowedSketch.from_bytes(blob)
    return Sketch.from_bytes(blob)


def sketch_digest(delta) -> bytes:
    """A batch digest for :meth:`ExactlyOnce.commit`: 16 bytes of BLAKE2b over the batch sketch's bytes.

    ``b""`` (no check) for float counters, whose sums may differ in the last
    bits when a replay delivers the same rows in another order.
    """
    if delta.float_counters:
        return b""
    return hashlib.blake2b(delta.to_bytes(), digest_size=16).digest()


@contextlib.contextmanager
def _locked(directory: str):
    """An exclusive lock on ``directory`` (POSIX ``flock``), held for the block."""
    fd = os.open(directory, os.O_RDONLY)
    try:
        if fcntl is not None:
            fcntl.flock(fd, fcntl.LOCK_EX)
        yield fd
    finally:
        os.close(fd)  # closing releases the lock


class StateFile:
    """One file holding a :class:`Commit`, replaced atomically.

    >>> import tempfile, os
    >>> d = tempfile.mkdtemp()
    >>> f = StateFile(os.path.join(d, "state.bin"))
    >>> f.load() is None
    True
    >>> f.save(3, b"abc"); f.load()
    (3, b'abc')
    """

    MAGIC = b"SKST"
    VERSION = 2  # version 1 (before the common framing; no query id, no token) is still read
    _FIXED = struct.Struct("<Hq8s")  # flags, batch id, token

    def __init__(self, path):
        self.path = os.fspath(path)

    @property
    def directory(self) -> str:
        return os.path.dirname(os.path.abspath(self.path))

    def exists(self) -> bool:
        return os.path.exists(self.path)

    def save(self, batch_id, payload: bytes, query_id: str | None = None, token: bytes = b"\0" * 8,
             digest: bytes = b"") -> None:
        """Replace the file's contents by one commit (atomically)."""
        if query_id is not None and not isinstance(query_id, str):
            raise TypeError(f"query_id must be a str, got {type(query_id).__name__}")
        qid = b"" if query_id is None else query_id.encode("utf-8")
        flags = (batch_id is not None) | ((query_id is not None) << 1)
        body = self._FIXED.pack(flags, 0 if batch_id is None else int(batch_id), bytes(token))
        data = frame(self.MAGIC, self.VERSION, body + length_prefixed(qid, digest) + bytes(payload))
        d = self.directory
        os.makedirs(d, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{os.path.basename(self.path)}-", dir=d)
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

    def load_commit(self) -> Commit | None:
        """The committed record, ``None`` when nothing was saved; ``CorruptSketchError`` if damaged."""
        try:
            with open(self.path, "rb") as f:
                data = f.read()
        except FileNotFoundError:
            return None
        what = f"state file {self.path}"
        version, payload = unframe(data, self.MAGIC, what, versions=(self.VERSION,), legacy=(1,))
        r = Reader(payload, what)
        if version == 1:
            flags, batch_id, length = r.unpack("<HqQ")
            state = r.take(length)
            r.done()
            return Commit(batch_id if flags & 1 else None, None, b"\0" * 8, state)
        flags, batch_id, token = r.unpack(self._FIXED.format)
        qid, digest = r.blob(), r.blob()
        try:
            query_id = qid.decode("utf-8") if flags & 2 else None
        except UnicodeDecodeError:
            raise CorruptSketchError(f"{what}: the query id is not UTF-8") from None
        return Commit(batch_id if flags & 1 else None, query_id, token, r.take(r.remaining), digest)

    def load(self):
        """``(batch_id, payload)`` or ``None`` when no state was saved; ``CorruptSketchError`` if damaged."""
        c = self.load_commit()
        return None if c is None else (c.batch_id, c.payload)


def _check_batch_id(batch_id) -> int:
    if isinstance(batch_id, bool) or not isinstance(batch_id, int):
        raise TypeError(f"batch_id must be an int, got {type(batch_id).__name__}")
    if batch_id < 0:
        raise ValueError(f"batch_id must be >= 0, got {batch_id}")
    return batch_id


class ExactlyOnce:
    """The batch-id and query-identity rules of exactly-once processing (module docstring).

    ``path``: the state file (``None``: in memory, the rules without
    durability). ``query_id``: this stream's identity (``None``: unknown; a
    batch may also name its query in :meth:`admit`). ``consecutive``: batch
    ids are ``0, 1, 2, ...`` (Spark's numbering); otherwise any increasing
    ids. :attr:`saved` holds the committed state bytes to resume from.

    >>> x = ExactlyOnce(consecutive=True)
    >>> x.admit(0), x.commit(0, b"s0"), x.admit(0), x.admit(1)
    (True, None, False, True)
    """

    def __init__(self, path=None, query_id: str | None = None, consecutive: bool = False):
        if query_id is not None and not isinstance(query_id, str):
            raise TypeError(f"query_id must be a str, got {type(query_id).__name__}")
        self.file = None if path is None else StateFile(path)
        self.consecutive = bool(consecutive)
        self.query_id = query_id
        rec = None if self.file is None else self.file.load_commit()
        self.saved = None if rec is None else rec.payload
        self.last_batch_id = None if rec is None else rec.batch_id
        self.committed_query_id = None if rec is None else rec.query_id
        self._token = None if rec is None else rec.token
        self.last_digest = b"" if rec is None else rec.digest

    @property
    def _where(self) -> str:
        return "the in-memory state" if self.file is None else f"state file {self.file.path}"

    def admit(self, batch_id, query_id: str | None = None) -> bool:
        """``True``: a new batch, apply it then :meth:`commit`; ``False``: the replay of the last batch.

        Raises :class:`ExactlyOnceError` for a batch that cannot be applied
        exactly once (nothing is changed). A replay should then be checked
        with :meth:`verify_replay`.
        """
        if batch_id is None:
            return True
        batch_id = _check_batch_id(batch_id)
        qid = self.query_id if query_id is None else query_id
        mine = self.committed_query_id
        if qid is not None and mine is not None and qid != mine:
            raise ExactlyOnceError(
                f"{self._where} belongs to query {mine!r} (last batch {self.last_batch_id}), but batch {batch_id} "
                f"comes from query {qid!r}: a new checkpoint or another query needs its own state path "
                f"(move or delete this one to start over; to resume, use the checkpoint of query {mine!r})"
            )
        last = self.last_batch_id
        if last is None:
            if self.consecutive and batch_id != 0:
                raise ExactlyOnceError(
                    f"{self._where} has no committed batch, but batch {batch_id} arrived: batches 0..{batch_id - 1} "
                    f"of this checkpoint are not in the state (a new or lost state path with an existing "
                    f"checkpoint). Restore the state that goes with the checkpoint, or start over with a new "
                    f"checkpoint location and an empty state path"
                )
            return True
        if batch_id == last:
            return False
        if batch_id < last:
            raise ExactlyOnceError(
                f"batch {batch_id} is before the last committed batch {last} of {self._where}: only batch {last} "
                f"may be replayed. A new checkpoint restarts at batch 0 and needs a new (empty) state path; an "
                f"older copy of the checkpoint cannot resume newer state: use the checkpoint that committed "
                f"batch {last}"
            )
        if self.consecutive and batch_id != last + 1:
            raise ExactlyOnceError(
                f"batch {batch_id} does not follow the last committed batch {last} of {self._where}: batches "
                f"{last + 1}..{batch_id - 1} are missing from the state (the state is older than the checkpoint). "
                f"Restore the state that goes with the checkpoint, or start over with a new checkpoint "
                f"location and an empty state path"
            )
        return True

    def verify_replay(self, digest: bytes | None) -> None:
        """Raise unless a replay's ``digest`` matches the committed batch's (unknown digests pass)."""
        if digest and self.last_digest and digest != self.last_digest:
            raise ExactlyOnceError(
                f"batch {self.last_batch_id} replays the last committed batch of {self._where} with other data "
                f"(digest {digest.hex()} != {self.last_digest.hex()}): the checkpoint is not the one that "
                f"committed it (an older copy that planned the batch differently?). Use the checkpoint that "
                f"committed batch {self.last_batch_id}, or start over with a new checkpoint and an empty state path"
            )

    def commit(self, batch_id, payload: bytes, query_id: str | None = None, digest: bytes = b"") -> None:
        """Record an applied batch (and, with a path, its state bytes, atomically).

        ``digest`` identifies the batch's data (any bytes, ``b""``: none), so
        that a replay can be verified. ``batch_id=None`` (an unnumbered
        batch) keeps the last batch id and its digest.
        Raises :class:`ExactlyOnceError`, committing nothing, when the file
        no longer holds this object's last commit (another writer).
        """
        qid = self.query_id if query_id is None else query_id
        qid = self.committed_query_id if qid is None else qid
        bid = self.last_batch_id if batch_id is None else _check_batch_id(batch_id)
        digest = self.last_digest if batch_id is None else bytes(digest)  # the last numbered batch's
        if self.file is not None:
            token = os.urandom(8)
            os.makedirs(self.file.directory, exist_ok=True)
            with _locked(self.file.directory):
                self._check_unchanged()
                self.file.save(bid, payload, qid, token, digest)
            self._token = token
        self.last_batch_id, self.committed_query_id, self.last_digest = bid, qid, bytes(digest)

    def _check_unchanged(self) -> None:
        rec = self.file.load_commit()
        token = None if rec is None else rec.token
        if token != self._token:
            now = "deleted" if rec is None else f"at batch {rec.batch_id} of query {rec.query_id!r}"
            raise ExactlyOnceError(
                f"{self._where} changed since this stream last loaded or committed it (now {now}; this stream "
                f"was at batch {self.last_batch_id}): another query or process writes the same state. Give "
                f"every query its own state path"
            )
