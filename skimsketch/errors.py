"""The library's exceptions, and :func:`check_int`, the argument check every family's constructor shares.
Every exception is a ``ValueError`` (or ``TypeError`` / ``OverflowError``) subclass so that generic
handlers keep working."""

import numpy as np

__all__ = [
    "SketchError",
    "IncompatibleSketchError",
    "CorruptSketchError",
    "CounterOverflowError",
    "KeyTypeError",
    "KeyDomainError",
    "check_int",
]


class SketchError(ValueError):
    """Base class of every error raised by skimsketch."""


class IncompatibleSketchError(SketchError):
    """Two sketches cannot be merged or joined: ``field`` names what differs."""

    def __init__(self, field: str, mine, theirs, operation: str = "combine"):
        self.field = field
        self.mine = mine
        self.theirs = theirs
        super().__init__(
            f"cannot {operation} sketches: {field} differs ({mine!r} != {theirs!r})"
        )


class CorruptSketchError(SketchError):
    """Bytes handed to ``from_bytes`` are not a valid serialised sketch."""


class CounterOverflowError(SketchError, OverflowError):
    """An update or merge would overflow the counters (int64, or float64 to infinity); the sketch is unchanged."""


class KeyTypeError(SketchError, TypeError):
    """Keys (or weights) of a type the sketch cannot canonicalise."""


class KeyDomainError(SketchError):
    """A key lies outside the sketch's declared domain ``[0, domain)``."""


def check_int(name: str, value, lo: int, hi: int) -> int:
    """``value`` as an int in ``[lo, hi]``, or a TypeError/ValueError naming ``name``."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{name} must be an int, got {type(value).__name__}")
    if not lo <= int(value) <= hi:
        raise ValueError(f"{name} must be in [{lo}, {hi}], got {value}")
    return int(value)
