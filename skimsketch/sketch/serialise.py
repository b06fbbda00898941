"""The linear sketches' bytes (:class:`SketchBytes`, a part of :class:`~skimsketch.sketch.base.Sketch`):
``to_bytes`` in the format of :mod:`skimsketch.format.header` (extensions: :mod:`skimsketch.sketch.layout`),
building a sketch from decoded bytes (``from_bytes``), and the shapes for an error target or a byte budget.
"""

from __future__ import annotations

import numpy as np

from ..errors import CorruptSketchError, KeyDomainError
from ..format import header as fmt
from ..stats.exact_store import ExactStore
from . import layout
from .sizing import framed_budget, shape_for_bytes, shape_for_error
from .state import LinearState

__all__ = ["SketchBytes"]


class SketchBytes:
    """Serialisation and sizing of a linear sketch (kinds override the ``_kind_param``, ``_domain``,
    ``_extension``, ``_exact_layout`` and ``_from_header`` hooks)."""

    def _kind_param(self) -> float:
        return 0.0

    def _domain(self):
        return None

    def _extension(self, counter_width: int) -> bytes:
        return b""

    def _exact_layout(self) -> tuple[int, int, int]:
        """(hierarchy lg, hierarchy depth, virtual lg) the exact-mode bytes record; zeros for none."""
        return 0, 0, 0

    def to_bytes(self) -> bytes:
        """Serialise (format of :mod:`skimsketch.format.header`); ``ss.from_bytes`` reads it back."""
        exact = self._exact is not None
        head = fmt.Header(
            self.KIND, self._width, self._depth, self._seed, self._domain(), self.float_counters,
            self._kind_param(), self._total, self._null, self.is_empty,
            counter_width=self._exact.narrowest_width() if exact else self._state.narrowest_width(),
            key_domain=self._key_domain, exact=exact, version=fmt.VERSION, nonnegative=self._nonnegative,
        )
        width = head.counter_width
        if exact:
            ext = layout.encode_exact(self._exact_layout(), self._exact.keys, self._exact.weights, self.float_counters,
                                   width)
            return fmt.encode(head, np.zeros(0), ext, width)
        return fmt.encode(head, self._counters, self._extension(width), width)

    @classmethod
    def _from_header(cls, head: fmt.Header, ext: bytes):
        """An empty sketch with the decoded parameters (kinds with a domain, a kind
        parameter or extension state override this); in exact mode if the header says so."""
        if head.domain is not None:
            raise CorruptSketchError(f"a {cls.__name__} cannot have a domain")
        if head.param != 0.0:
            raise CorruptSketchError(f"a {cls.__name__} has no kind parameter")
        if head.version == fmt.VIRTUAL_VERSION:
            raise CorruptSketchError(f"format version {head.version} is only written for skimmed sketches in the "
                                     f"virtual layout, not for a {cls.__name__}")
        if ext and not head.exact:
            raise CorruptSketchError(f"a {cls.__name__} has no extension state ({len(ext)} bytes found)")
        return cls(head.width, head.depth, head.seed, dtype="float64" if head.float_counters else "int64",
                   exact=head.exact)

    @classmethod
    def _from_parts(cls, head: fmt.Header, counters: np.ndarray, ext: bytes):
        """The sketch whose decoded header, counters and extension are given (``from_bytes``)."""
        try:
            sk = cls._from_header(head, ext)
        except (ValueError, TypeError) as e:
            if isinstance(e, CorruptSketchError):
                raise
            raise CorruptSketchError(f"invalid sketch parameters: {e}") from None
        if head.exact:
            return sk._load_exact(head, ext)
        arrays = {name: sk._state.array(name) for name in sk._state.names}  # extension arrays, if any
        arrays["counters"] = counters
        sk._state = LinearState.of(arrays, head.total_weight, head.null_weight, head.float_counters)
        sk._key_domain = head.key_domain
        # the sign flag (version 4 on); before it, counters did not tell the frequencies' signs
        sk._nonnegative = head.nonnegative if head.version >= fmt.SIGN_VERSION else head.empty
        if head.version >= 2 and sk._state.narrowest_width() != head.counter_width:
            raise CorruptSketchError(
                f"non-canonical counter width: {head.counter_width}-byte counters whose values need "
                f"{sk._state.narrowest_width()} bytes (versions 2 on store the narrowest width)")
        return sk

    def _load_exact(self, head: fmt.Header, ext: bytes):
        """This empty exact-mode sketch given the decoded entries (``from_bytes``)."""
        keys, weights = layout.decode_exact(ext, head, self._exact_layout(), self.exact_capacity)
        try:
            self._validate_keys(keys)
        except KeyDomainError as e:
            raise CorruptSketchError(f"exact-mode entry outside the sketch's domain: {e}") from None
        self._exact = ExactStore(head.float_counters, keys, weights)
        self._state = LinearState.of({}, head.total_weight, head.null_weight, head.float_counters)
        self._key_domain = head.key_domain
        signs = all(w >= 0 for w in self._exact.items().values())  # the entries are the frequencies
        if head.version < fmt.SIGN_VERSION:  # no sign flag: the entries tell
            self._nonnegative = signs
        elif head.nonnegative and not signs:
            raise CorruptSketchError("the sign flag says every weight was >= 0, but an exact-mode entry is negative")
        else:
            self._nonnegative = head.nonnegative
        return self

    # -- sizing -----------------------------------------------------------
    @classmethod
    def for_error(cls, eps: float, delta: float = 0.05, seed: int = 0, **params):
        """A sketch whose join estimates are within ``eps * sqrt(F2(f) F2(g))`` w.p. ``1 - delta``."""
        width, depth = shape_for_error(eps, delta)
        return cls(width, depth, seed, **params)

    @classmethod
    def for_bytes(cls, nbytes: int, seed: int = 0, depth: int | None = None, **params):
        """The default-shaped sketch whose state (:attr:`nbytes`) and serialised form
        (``len(to_bytes())``) both fit in ``nbytes`` bytes: 4 per counter, after the format's frame.
        The only growth is the exact widening of counters past 32 bits (:attr:`counter_width`), and
        float counters (``dtype="float64"``, 8 bytes each): the same shape as the count sketch of
        the budget, so the two join, in up to twice the bytes (:mod:`skimsketch.sketch.sizing`)."""
        width, d = shape_for_bytes(framed_budget(nbytes, fmt.FRAME_BYTES, depth), depth)
        return cls(width, d, seed, **params)
