"""The library's exceptions. Every one is a ``ValueError`` (or ``TypeError`` /
``OverflowError``) subclass so that generic handlers keep working."""

__all__ = [
    "SketchError",
    "IncompatibleSketchError",
    "CorruptSketchError",
    "CounterOverflowError",
    "KeyTypeError",
    "KeyDomainError",
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
