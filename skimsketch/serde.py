"""``from_bytes``: load any registered sketch kind from the binary format.

The kind byte selects the class (:mod:`skimsketch.kinds`); the class builds
itself from the decoded parts.
"""

from __future__ import annotations

from . import format as fmt
from .errors import IncompatibleSketchError
from .kinds import kind_class

__all__ = ["from_bytes", "from_bytes_as"]


def from_bytes(blob):
    """Deserialise a sketch written by ``to_bytes`` (any kind).

    Raises :class:`CorruptSketchError` for every malformed input.
    """
    head, counters, ext = fmt.decode(blob)
    return kind_class(head.kind)._from_parts(head, counters, ext)


def from_bytes_as(cls: type, blob):
    """``from_bytes(blob)``, which must be a ``cls`` (or a subclass): else :class:`IncompatibleSketchError`."""
    sk = from_bytes(blob)
    if not isinstance(sk, cls):
        raise IncompatibleSketchError("kind", cls.__name__, type(sk).__name__, "load")
    return sk
