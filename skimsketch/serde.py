"""``from_bytes``: load any sketch kind from the binary format."""

from __future__ import annotations

from . import format as fmt
from .agms import AGMSSketch
from .errors import CorruptSketchError
from .hash_sketch import HashSketch
from .skimmed import SkimmedSketch

__all__ = ["from_bytes", "SKETCH_CLASSES"]

SKETCH_CLASSES = {cls.KIND: cls for cls in (AGMSSketch, HashSketch, SkimmedSketch)}


def from_bytes(blob):
    """Deserialise a sketch written by ``to_bytes`` (any kind).

    Raises :class:`CorruptSketchError` for every malformed input.
    """
    head, counters, ext = fmt.decode(blob)
    cls = SKETCH_CLASSES[head.kind]
    if head.domain is not None and cls is not SkimmedSketch:
        raise CorruptSketchError(f"a {cls.__name__} cannot have a domain")
    if cls is not SkimmedSketch and head.param != 0.0:
        raise CorruptSketchError(f"a {cls.__name__} has no kind parameter")
    if cls is not SkimmedSketch and ext:
        raise CorruptSketchError(f"a {cls.__name__} has no extension state ({len(ext)} bytes found)")
    try:
        sk = cls._from_header(head, ext)
    except (ValueError, TypeError) as e:
        raise CorruptSketchError(f"invalid sketch parameters: {e}") from None
    sk._counters = counters
    sk._total, sk._null = head.total_weight, head.null_weight
    return sk
