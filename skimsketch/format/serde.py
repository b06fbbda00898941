"""``from_bytes``: load any registered sketch kind from the binary format.

The kind byte selects the class (:mod:`skimsketch.format.kinds`); the class builds
itself from the decoded parts. Bytes read before are not decoded again: :mod:`.reuse`
hands out a copy of the object they gave, sharing its prepared query state.
:class:`Serialisable` gives a sketch class its ``from_bytes``, pickling and copy
protocol, all through its bytes.
"""

from __future__ import annotations

from . import header as fmt
from . import reuse
from ..errors import IncompatibleSketchError
from .kinds import kind_class

__all__ = ["Serialisable", "from_bytes", "from_bytes_as"]


def from_bytes(blob):
    """Deserialise a sketch written by ``to_bytes`` (any kind).

    Raises :class:`CorruptSketchError` for every malformed input. Bytes equal to bytes read
    before give a copy of that object (:mod:`skimsketch.format.reuse`): decoded and prepared once.
    """
    if isinstance(blob, (bytearray, memoryview)):
        blob = bytes(blob)
    if isinstance(blob, bytes):
        hit = reuse.lookup(blob)
        if hit is not None:
            return hit
    head, counters, ext = fmt.decode(blob)
    return reuse.remember(blob, kind_class(head.kind)._from_parts(head, counters, ext))


def from_bytes_as(cls: type, blob):
    """``from_bytes(blob)``, which must be a ``cls`` (or a subclass): else :class:`IncompatibleSketchError`."""
    sk = from_bytes(blob)
    if not isinstance(sk, cls):
        raise IncompatibleSketchError("kind", cls.__name__, type(sk).__name__, "load")
    return sk


class Serialisable:
    """Mixin for a sketch class with ``to_bytes`` and ``copy``: ``cls.from_bytes``, pickling
    (the pickle holds the bytes, so it is as checked as ``from_bytes``), ``copy.copy``/``deepcopy``."""

    __slots__ = ()

    @classmethod
    def from_bytes(cls, blob):
        """Load a sketch written by ``to_bytes``; another kind is an :class:`IncompatibleSketchError`."""
        return from_bytes_as(cls, blob)

    def shared_copy(self):
        """A copy whose state is its own and whose prepared query state (caches that only ever depend on
        the bytes) is shared with this object: what :func:`from_bytes` hands out for bytes read before
        (:mod:`.reuse`). Kinds without such state: ``copy()``."""
        return self.copy()

    def __copy__(self):
        return self.copy()

    def __deepcopy__(self, memo):
        return self.copy()

    def __getstate__(self):
        return {"bytes": self.to_bytes()}

    def __setstate__(self, state):
        self.__dict__.update(type(self).from_bytes(state["bytes"]).__dict__)
