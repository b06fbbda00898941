"""``from_bytes``: load any registered sketch kind from the binary format.

The kind byte selects the class (:mod:`skimsketch.kinds`); the class builds
itself from the decoded parts.
"""

from __future__ import annotations

from . import format as fmt
from .kinds import kind_class

__all__ = ["from_bytes"]


def from_bytes(blob):
    """Deserialise a sketch written by ``to_bytes`` (any kind).

    Raises :class:`CorruptSketchError` for every malformed input.
    """
    head, counters, ext = fmt.decode(blob)
    return kind_class(head.kind)._from_parts(head, counters, ext)
