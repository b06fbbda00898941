"""``Sketch``: what every linear sketch here shares.

Counters form a ``depth x width`` array; the sketch of a multiset is a linear
function of its frequency vector, so ``update`` adds, deletes are negative
weights, and ``merge``/``subtract`` are counter-wise sums. The state (counters,
any extra arrays of a kind, total and null weights) is a
:class:`~skimsketch.state.LinearState`: integer counters are exact (int32,
widened to int64 when a value needs it), float counters stay finite, and every
operation that would overflow raises :class:`CounterOverflowError` and leaves
the sketch unchanged. Kinds register themselves by their ``KIND`` byte
(:mod:`skimsketch.kinds`) and build themselves from decoded bytes
(``_from_parts``); ``docs/format.md`` describes the bytes.
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from . import format as fmt
from .bounds import check_confidence, median_estimate
from .errors import (
    CorruptSketchError,
    CounterOverflowError,
    IncompatibleSketchError,
    KeyTypeError,
)
from .estimate import Estimate
from .hashing import MAX_DEPTH, MAX_WIDTH, family
from .kernels import I64
from .keys import CanonicalBatch, canonical_key, canonicalize, scalar_weight
from .kinds import register_kind
from .serde import from_bytes as _any_from_bytes
from .sizing import counter_bytes, framed_budget, shape_for_bytes, shape_for_error
from .state import LinearState

__all__ = ["DTYPES", "Sketch", "check_int", "f2_bound"]

DTYPES = ("int64", "float64")


def check_int(name: str, value, lo: int, hi: int) -> int:
    """``value`` as an int in ``[lo, hi]``, or a TypeError/ValueError naming ``name``."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{name} must be an int, got {type(value).__name__}")
    if not lo <= int(value) <= hi:
        raise ValueError(f"{name} must be in [{lo}, {hi}], got {value}")
    return int(value)


def f2_bound(table_estimates: np.ndarray) -> float:
    """A self-join size to plug into variance bounds: the larger of the tables' mean and median."""
    return float(max(np.mean(table_estimates), np.median(table_estimates), 0.0))


class Sketch:
    """Base class of the linear sketches (not instantiated directly)."""

    KIND: ClassVar[int]
    METHOD: ClassVar[str]

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if "KIND" in cls.__dict__:  # a serialisable kind: from_bytes finds it by its KIND byte
            register_kind(cls)

    def __init__(self, width: int, depth: int, seed: int = 0, dtype: str = "int64"):
        self._width = check_int("width", width, 1, MAX_WIDTH)
        self._depth = check_int("depth", depth, 1, MAX_DEPTH)
        self._seed = check_int("seed", seed, 0, 2**64 - 1)
        if dtype not in DTYPES:
            raise ValueError(f"dtype must be one of {DTYPES}, got {dtype!r}")
        self._dtype = dtype
        self._state = LinearState({"counters": (self._depth, self._width)}, dtype)
        self._key_domain = None  # "int" / "str" once a non-null key is seen (see key_domain)
        self._version = 0  # bumped on every change; invalidates query caches
        self._cache: dict = {}

    # -- description ----------------------------------------------------
    @property
    def width(self) -> int:
        return self._width

    @property
    def depth(self) -> int:
        return self._depth

    @property
    def seed(self) -> int:
        return self._seed

    @property
    def dtype(self) -> str:
        return self._dtype

    @property
    def float_counters(self) -> bool:
        return self._dtype == "float64"

    @property
    def params(self) -> dict:
        """Constructor arguments: together with the counters they define the sketch."""
        return {"width": self._width, "depth": self._depth, "seed": self._seed, "dtype": self._dtype}

    @property
    def counters(self) -> np.ndarray:
        """A read-only view of the ``depth x width`` counters."""
        return self._state.view("counters")

    # the state as the kinds' estimators read it (never assigned: the state changes only via _apply)
    @property
    def _counters(self) -> np.ndarray:
        return self._state.array("counters")

    @property
    def _total(self):
        return self._state.total

    @property
    def _null(self):
        return self._state.null

    @property
    def total_weight(self):
        """Net weight of all non-null keys (``n``, the stream's L1 norm when frequencies are >= 0)."""
        return self._total

    @property
    def null_weight(self):
        """Net weight of the null keys seen (they never join)."""
        return self._null

    @property
    def is_empty(self) -> bool:
        return self._state.is_empty

    @property
    def nbytes(self) -> int:
        """Memory of the sketch's state: its counters plus any other structure it keeps."""
        return self._state.nbytes

    @property
    def key_domain(self) -> str | None:
        """"int" (integer keys), "str" (str/bytes keys) or None (no non-null key seen yet).

        Sketches of different key domains never merge, subtract or join (their keys
        cannot be equal): :class:`IncompatibleSketchError` names ``key_domain``."""
        return self._key_domain

    @property
    def counter_width(self) -> int:
        """Bytes per counter in memory: integer counters are 4 (int32) until a value needs
        more, then 8 (widened exactly to int64, reported here); float counters are 8."""
        return self._state.counter_width

    @property
    def family(self):
        return family(self._seed)

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.params.items())
        return f"{type(self).__name__}({args})"

    def __eq__(self, other) -> bool:
        return (
            type(other) is type(self)
            and other.params == self.params
            and other._state == self._state
            and other._key_domain == self._key_domain
        )

    __hash__ = None  # mutable

    # -- construction helpers -------------------------------------------
    def empty_like(self):
        """An empty sketch with the same kind, shape, seed and parameters."""
        return type(self)(**self.params)

    def copy(self):
        out = self.empty_like()
        out._state = self._state.copy()
        out._key_domain = self._key_domain
        return out

    __copy__ = copy

    def __deepcopy__(self, memo):
        return self.copy()

    def __getstate__(self):
        return {"bytes": self.to_bytes()}

    def __setstate__(self, state):
        other = type(self).from_bytes(state["bytes"])
        self.__dict__.update(other.__dict__)

    # -- updates ----------------------------------------------------------
    def _validate_keys(self, keys: np.ndarray) -> None:
        """Hook for kinds that restrict keys (a declared domain)."""

    def update(self, keys, weights=None):
        """Add ``weights`` (default 1 each; negative = delete) for ``keys``; returns ``self``.

        Keys: numpy array, list, pandas Series or pyarrow array of int / str /
        bytes (see :mod:`skimsketch.keys`); nulls are skipped and their weight
        goes to :attr:`null_weight`. Weights: a scalar or an aligned array;
        integer sketches need integral weights.
        """
        scalar = None
        if weights is not None and np.ndim(weights) == 0 and not hasattr(weights, "__len__"):
            scalar = scalar_weight(weights, self.float_counters)
            if not self.float_counters and not I64.min <= scalar <= I64.max:
                raise CounterOverflowError(f"weight {scalar} does not fit in int64")
            weights = None
        batch = canonicalize(keys, weights, allow_float_weights=self.float_counters)
        if None not in (batch.key_domain, self._key_domain) and batch.key_domain != self._key_domain:
            have = {"int": "integer", "str": "string/bytes"}
            raise KeyTypeError(
                f"this sketch holds {have[self._key_domain]} keys, got {have[batch.key_domain]} keys: a sketch "
                "holds one key domain (integer and string keys never join); use another sketch or cast the keys"
            )
        self._validate_keys(batch.keys)
        delta, total = self._batch_delta(batch)
        null = batch.null_weight
        if scalar is not None:
            if self.float_counters:
                with np.errstate(over="ignore", invalid="ignore"):  # inf is refused by the state, unchanged
                    delta = {k: d * scalar for k, d in delta.items()}
                total, null = total * scalar, null * scalar
            else:
                if scalar != 1:
                    peak = max((int(np.abs(d).max(initial=0)) for d in delta.values()), default=0)
                    if peak * abs(scalar) > I64.max or abs(total * scalar) > I64.max:
                        raise CounterOverflowError("update would overflow the int64 counters; the sketch is unchanged")
                    delta = {k: d * scalar for k, d in delta.items()}
                total, null = total * scalar, null * scalar
        self._key_domain, before = self._key_domain or batch.key_domain, self._key_domain
        try:
            self._apply(delta, total, null, "update")
        except Exception:
            self._key_domain = before
            raise
        self._observed(batch, scalar)
        return self

    def _observed(self, batch: CanonicalBatch, scalar) -> None:
        """Hook run after a batch was applied (``scalar``: its scalar weight, or None): kinds
        that keep state beyond the linear arrays (a key range) record it here."""

    def _batch_delta(self, batch: CanonicalBatch):
        """({array name: delta}, total weight) of one canonical batch."""
        w = batch.weights
        if w is None:
            total = len(batch.keys)
        elif self.float_counters:
            with np.errstate(over="ignore"):  # an infinite total is refused by the state, naming the overflow
                total = float(w.sum())
        else:
            if float(np.abs(w).sum(dtype=np.float64)) >= I64.max:
                raise CounterOverflowError("the batch's weights sum beyond int64; the sketch is unchanged")
            total = int(w.sum())
        with np.errstate(over="ignore", invalid="ignore"):  # float overflow (inf, NaN) is refused by the state
            return self._delta(batch.keys, w), total

    def _delta(self, keys: np.ndarray, weights: np.ndarray | None) -> dict:
        """``{state array name: delta}`` of a batch of canonical keys."""
        raise NotImplementedError

    def _apply(self, delta: dict, total, null, what: str) -> None:
        """Add ``{array name: delta}`` and the weights atomically (all or nothing)."""
        self._state.add(delta, total, null, what)
        self._changed()

    def _changed(self) -> None:
        self._version += 1
        self._cache.clear()
        if self._key_domain is not None and self._total == 0 and not any(
                self._state.array(n).any() for n in self._state.names):
            self._key_domain = None  # no non-null key left: no key domain (a function of the state)

    # -- combining ------------------------------------------------------
    def check_compatible(self, other, operation: str = "combine", same_dtype: bool = True) -> None:
        """Raise :class:`IncompatibleSketchError` naming the first field that differs."""
        if not isinstance(other, Sketch):
            raise IncompatibleSketchError("type", type(self).__name__, type(other).__name__, operation)
        if type(other) is not type(self):
            raise IncompatibleSketchError("kind", type(self).__name__, type(other).__name__, operation)
        mine, theirs = self.params, other.params
        for field in mine:
            if field == "dtype" and not same_dtype:
                continue
            if mine[field] != theirs[field]:
                raise IncompatibleSketchError(field, mine[field], theirs[field], operation)
        if None not in (self._key_domain, other._key_domain) and self._key_domain != other._key_domain:
            raise IncompatibleSketchError("key_domain", self._key_domain, other._key_domain, operation)

    def merge(self, other):
        """Add ``other``'s counters into this sketch (the sketch of the union); returns ``self``."""
        self.check_compatible(other, "merge")
        self._state.merge(other._state, "merge")
        self._key_domain = self._key_domain or other._key_domain
        self._changed()
        return self

    def subtract(self, other):
        """Subtract ``other``'s counters (the sketch of the difference); returns ``self``."""
        self.check_compatible(other, "subtract")
        self._state.subtract(other._state, "subtract")
        self._key_domain = self._key_domain or other._key_domain
        self._changed()
        return self

    def __add__(self, other):
        return self.copy().merge(other)

    def __sub__(self, other):
        return self.copy().subtract(other)

    # -- queries: median over tables of unbiased per-table estimates ---------
    def _join_tables(self, other) -> np.ndarray:
        """Per-table unbiased estimates of ``f·g`` (one per table/row)."""
        raise NotImplementedError

    def _point_tables(self, key: int) -> np.ndarray:
        """Per-table unbiased estimates of ``f(key)`` for a canonical key."""
        raise NotImplementedError

    def self_join_tables(self) -> np.ndarray:
        """Per-table unbiased estimates of ``F2`` (cached until the sketch changes); read-only."""
        rows = self._cache.get("self_tables")
        if rows is None:
            rows = self._cache["self_tables"] = self._join_tables(self)
            rows.flags.writeable = False
        return rows

    def join_size(self, other, confidence: float = 0.95) -> Estimate:
        """Estimated ``sum_v f(v) g(v)``: ``COUNT(*)`` of the equi-join (``SUM`` with weights).

        Median over tables; each table's estimate has variance at most
        ``(F2(f) F2(g) + (f·g)^2) / width`` (F2 from the sketches' own
        self-join estimates), hence the interval of :mod:`skimsketch.bounds`.
        """
        conf = self._check_join(other, confidence)
        rows = self._join_tables(other)
        j = float(np.median(rows))
        var = (f2_bound(self.self_join_tables()) * f2_bound(other.self_join_tables()) + j * j) / self._width
        return median_estimate(rows, var, conf, self.METHOD)

    def self_join_size(self, confidence: float = 0.95) -> Estimate:
        """Estimated ``F2 = sum_v f(v)^2``; each table's variance is at most ``2 F2^2 / width``."""
        conf = check_confidence(confidence)
        rows = self.self_join_tables()
        return median_estimate(rows, 2.0 * f2_bound(rows) ** 2 / self._width, conf, self.METHOD)

    def frequency(self, key, confidence: float = 0.95) -> Estimate:
        """Estimated ``f(key)``; each table's variance is at most ``F2 / width``."""
        conf = check_confidence(confidence)
        k = canonical_key(key)
        if k is None:
            raise ValueError("the frequency of a null key is not tracked: see null_weight")
        return median_estimate(self._point_tables(k), f2_bound(self.self_join_tables()) / self._width, conf, self.METHOD)

    def _check_join(self, other, confidence) -> float:
        self.check_compatible(other, "join", same_dtype=False)
        return check_confidence(confidence)

    # -- serialisation ------------------------------------------------------
    def _kind_param(self) -> float:
        return 0.0

    def _domain(self):
        return None

    def _extension(self, counter_width: int) -> bytes:
        return b""

    def to_bytes(self) -> bytes:
        """Serialise (format of :mod:`skimsketch.format`); ``ss.from_bytes`` reads it back."""
        head = fmt.Header(
            self.KIND, self._width, self._depth, self._seed, self._domain(), self.float_counters,
            self._kind_param(), self._total, self._null, self.is_empty,
            counter_width=self._state.narrowest_width(), key_domain=self._key_domain,
        )
        width = head.counter_width
        return fmt.encode(head, self._counters, self._extension(width), width)

    @classmethod
    def _from_header(cls, head: fmt.Header, ext: bytes):
        """An empty sketch with the decoded parameters (kinds with a domain, a kind
        parameter or extension state override this)."""
        if head.domain is not None:
            raise CorruptSketchError(f"a {cls.__name__} cannot have a domain")
        if head.param != 0.0:
            raise CorruptSketchError(f"a {cls.__name__} has no kind parameter")
        if ext:
            raise CorruptSketchError(f"a {cls.__name__} has no extension state ({len(ext)} bytes found)")
        return cls(head.width, head.depth, head.seed, dtype="float64" if head.float_counters else "int64")

    @classmethod
    def _from_parts(cls, head: fmt.Header, counters: np.ndarray, ext: bytes):
        """The sketch whose decoded header, counters and extension are given (``from_bytes``)."""
        try:
            sk = cls._from_header(head, ext)
        except (ValueError, TypeError) as e:
            if isinstance(e, CorruptSketchError):
                raise
            raise CorruptSketchError(f"invalid sketch parameters: {e}") from None
        arrays = {name: sk._state.array(name) for name in sk._state.names}  # extension arrays, if any
        arrays["counters"] = counters
        sk._state = LinearState.of(arrays, head.total_weight, head.null_weight, head.float_counters)
        sk._key_domain = head.key_domain
        if head.version >= 2 and sk._state.narrowest_width() != head.counter_width:
            raise CorruptSketchError(
                f"non-canonical counter width: {head.counter_width}-byte counters whose values need "
                f"{sk._state.narrowest_width()} bytes (version 2 stores the narrowest width)")
        return sk

    # -- sizing -----------------------------------------------------------
    @classmethod
    def for_error(cls, eps: float, delta: float = 0.05, seed: int = 0, **params):
        """A sketch whose join estimates are within ``eps * sqrt(F2(f) F2(g))`` w.p. ``1 - delta``."""
        width, depth = shape_for_error(eps, delta)
        return cls(width, depth, seed, **params)

    @classmethod
    def for_bytes(cls, nbytes: int, seed: int = 0, depth: int | None = None, **params):
        """The default-shaped sketch whose state (:attr:`nbytes`) and serialised form
        (``len(to_bytes())``) both fit in ``nbytes`` bytes: 4 per integer counter, 8 per
        float counter (:func:`skimsketch.sizing.counter_bytes`), after the format's frame.
        The only growth is the exact widening of counters past 32 bits (:attr:`counter_width`)."""
        width, d = shape_for_bytes(framed_budget(nbytes, fmt.FRAME_BYTES), depth, counter_bytes(params.get("dtype")))
        return cls(width, d, seed, **params)

    @classmethod
    def from_bytes(cls, blob):
        """Load a sketch written by ``to_bytes``; it must be of this class (or a subclass)."""
        sk = _any_from_bytes(blob)
        if not isinstance(sk, cls):
            raise IncompatibleSketchError("kind", cls.__name__, type(sk).__name__, "load")
        return sk
