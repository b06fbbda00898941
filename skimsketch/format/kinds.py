"""The registry of serialisable sketch kinds: kind byte -> class.

A class registers itself when it is defined (``Sketch`` subclasses through
``__init_subclass__``, other classes with :func:`register_kind`); ``from_bytes``
looks the kind byte up here, and the class builds itself from the decoded parts
(its ``_from_parts`` classmethod). Adding a kind: one module, one registration.
"""

from __future__ import annotations

from ..errors import CorruptSketchError

__all__ = ["kind_class", "register_kind", "registered_kinds"]

_KINDS: dict[int, type] = {}


def register_kind(cls: type) -> type:
    """Register ``cls`` under its ``KIND`` byte (1..255); usable as a class decorator."""
    kind = cls.KIND
    if not isinstance(kind, int) or not 1 <= kind <= 255:
        raise ValueError(f"{cls.__name__}.KIND must be an int in [1, 255], got {kind!r}")
    known = _KINDS.get(kind)
    if known is not None and known.__qualname__ != cls.__qualname__:
        raise ValueError(f"kind {kind} is already registered by {known.__name__}, cannot register {cls.__name__}")
    _KINDS[kind] = cls
    return cls


def kind_class(kind: int) -> type:
    """The class registered for ``kind``; :class:`CorruptSketchError` if none is."""
    cls = _KINDS.get(kind)
    if cls is None:
        raise CorruptSketchError(f"unknown sketch kind {kind} (known: {sorted(_KINDS)})")
    return cls


def registered_kinds() -> dict[int, type]:
    """A copy of the registry."""
    return dict(_KINDS)
