"""``Sketch``: what every linear sketch here shares.

Counters form a ``depth x width`` array; the sketch of a multiset is a linear
function of its frequency vector, so ``update`` adds, deletes are negative
weights, and ``merge``/``subtract`` are counter-wise sums. Integer counters
are int64 and exact; every operation that would overflow raises
:class:`CounterOverflowError` and leaves the sketch unchanged.
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from . import format as fmt
from .bounds import check_confidence, median_estimate
from .errors import CounterOverflowError, IncompatibleSketchError
from .estimate import Estimate
from .hashing import MAX_DEPTH, MAX_WIDTH, family
from .keys import CanonicalBatch, canonical_key, canonicalize, scalar_weight

__all__ = ["Sketch"]

_I64 = np.iinfo(np.int64)
_CHUNK = 1 << 15  # keys hashed per step: keeps temporaries in cache
# bincount accumulates in float64: exact while every partial sum stays below 2**53
_FLOAT_EXACT = float(2**52)
DTYPES = ("int64", "float64")


def _check_int(name: str, value, lo: int, hi: int) -> int:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{name} must be an int, got {type(value).__name__}")
    if not lo <= int(value) <= hi:
        raise ValueError(f"{name} must be in [{lo}, {hi}], got {value}")
    return int(value)


def f2_bound(table_estimates: np.ndarray) -> float:
    """A self-join size to plug into variance bounds: the larger of the tables' mean and median."""
    return float(max(np.mean(table_estimates), np.median(table_estimates), 0.0))


def _checked_add(a: np.ndarray, b: np.ndarray, what: str) -> np.ndarray:
    """``a + b`` for int64 arrays, raising instead of wrapping."""
    with np.errstate(over="ignore"):
        out = a + b
    if ((a ^ out) & (b ^ out) < 0).any():
        raise CounterOverflowError(f"{what} would overflow the int64 counters; the sketch is unchanged")
    return out


def accumulate_cells(n: int, cells_of, weights, n_cells: int, per_key: int, key_major: bool,
                     float_counters: bool) -> np.ndarray:
    """Sum of the weights (1 each when ``weights`` is None) landing in each of ``n_cells`` cells.

    ``cells_of(start, stop)`` gives the ``per_key`` cell ids of keys ``start..stop``,
    shaped (keys, per_key) when ``key_major`` else (per_key, keys). Counts are
    int64; weights accumulate in float64 while that is exact (total |weight| <
    2**52) and by an exact int64 scatter-add beyond.
    """
    exact_float = weights is None or float_counters or float(np.abs(weights).sum(dtype=np.float64)) < _FLOAT_EXACT
    acc = np.zeros(n_cells, dtype=np.int64 if (weights is None or not exact_float) else np.float64)
    spread = np.repeat if key_major else np.tile
    for s in range(0, n, _CHUNK):
        cells = cells_of(s, min(s + _CHUNK, n)).ravel()
        if weights is None:
            acc += np.bincount(cells, minlength=n_cells)
            continue
        w = spread(weights[s : s + _CHUNK], per_key)
        if exact_float:
            acc += np.bincount(cells, weights=w, minlength=n_cells)
        else:  # huge integer weights
            np.add.at(acc, cells, w)
    return acc


def as_counter_delta(delta: np.ndarray, float_counters: bool) -> np.ndarray:
    """A float delta rounded to int64 for integer counters (it holds whole numbers)."""
    if not float_counters and delta.dtype != np.int64:
        return np.rint(delta).astype(np.int64)
    return delta


def added_state(counters, total, null, delta, d_total, d_null, float_counters: bool, what: str):
    """``(counters + delta, total + d_total, null + d_null)``; for int64 state it raises
    :class:`CounterOverflowError` instead of wrapping (the inputs are never modified)."""
    if float_counters:
        return counters + delta, float(total + d_total), float(null + d_null)
    new = _checked_add(counters, delta.astype(np.int64, copy=False), what)
    new_total, new_null = int(total) + int(d_total), int(null) + int(d_null)
    if not (_I64.min <= new_total <= _I64.max and _I64.min <= new_null <= _I64.max):
        raise CounterOverflowError(f"{what} would overflow the int64 total weight; the sketch is unchanged")
    return new, new_total, new_null


class Sketch:
    """Base class of the linear sketches (not instantiated directly)."""

    KIND: ClassVar[int]
    METHOD: ClassVar[str]

    def __init__(self, width: int, depth: int, seed: int = 0, dtype: str = "int64"):
        self._width = _check_int("width", width, 1, MAX_WIDTH)
        self._depth = _check_int("depth", depth, 1, MAX_DEPTH)
        self._seed = _check_int("seed", seed, 0, 2**64 - 1)
        if dtype not in DTYPES:
            raise ValueError(f"dtype must be one of {DTYPES}, got {dtype!r}")
        self._dtype = dtype
        self._counters = np.zeros((self._depth, self._width), dtype=dtype)
        self._total = 0.0 if self.float_counters else 0
        self._null = 0.0 if self.float_counters else 0
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
        v = self._counters.view()
        v.flags.writeable = False
        return v

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
        return self._total == 0 and self._null == 0 and not self._counters.any()

    @property
    def nbytes(self) -> int:
        """Memory of the sketch's state: its counters plus any other structure it keeps."""
        return int(self._counters.nbytes)

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
            and other._total == self._total
            and other._null == self._null
            and np.array_equal(other._counters, self._counters)
        )

    __hash__ = None  # mutable

    # -- construction helpers -------------------------------------------
    def empty_like(self):
        """An empty sketch with the same kind, shape, seed and parameters."""
        return type(self)(**self.params)

    def copy(self):
        out = self.empty_like()
        out._counters = self._counters.copy()
        out._total, out._null = self._total, self._null
        return out

    __copy__ = copy

    def __deepcopy__(self, memo):
        return self.copy()

    def __getstate__(self):
        return {"bytes": self.to_bytes()}

    def __setstate__(self, state):
        from .serde import from_bytes

        other = from_bytes(state["bytes"])
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
            if not self.float_counters and not _I64.min <= scalar <= _I64.max:
                raise CounterOverflowError(f"weight {scalar} does not fit in int64")
            weights = None
        batch = canonicalize(keys, weights, allow_float_weights=self.float_counters)
        self._validate_keys(batch.keys)
        delta, total = self._batch_delta(batch)
        null = batch.null_weight
        if scalar is not None:
            if self.float_counters:
                delta, total, null = delta * scalar, total * scalar, null * scalar
            else:
                if scalar != 1:
                    peak = int(np.abs(delta).max(initial=0))
                    if peak * abs(scalar) > _I64.max or abs(total * scalar) > _I64.max:
                        raise CounterOverflowError("update would overflow the int64 counters; the sketch is unchanged")
                    delta = delta * scalar
                total, null = total * scalar, null * scalar
        self._apply(delta, total, null, "update")
        return self

    def _batch_delta(self, batch: CanonicalBatch):
        """(counter delta, total weight) of one canonical batch."""
        w = batch.weights
        if w is None:
            total = len(batch.keys)
        elif self.float_counters:
            total = float(w.sum())
        else:
            if float(np.abs(w).sum(dtype=np.float64)) >= _I64.max:
                raise CounterOverflowError("the batch's weights sum beyond int64; the sketch is unchanged")
            total = int(w.sum())
        return self._delta(batch.keys, w), total

    def _delta(self, keys: np.ndarray, weights: np.ndarray | None) -> np.ndarray:
        raise NotImplementedError

    def _apply(self, delta: np.ndarray, total, null, what: str) -> None:
        """Add a counter delta and weights atomically (all or nothing)."""
        self._counters, self._total, self._null = added_state(
            self._counters, self._total, self._null, delta, total, null, self.float_counters, what
        )
        self._version += 1
        self._cache.clear()

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

    def merge(self, other):
        """Add ``other``'s counters into this sketch (the sketch of the union); returns ``self``."""
        self.check_compatible(other, "merge")
        self._apply(other._counters, other._total, other._null, "merge")
        return self

    def subtract(self, other):
        """Subtract ``other``'s counters (the sketch of the difference); returns ``self``."""
        self.check_compatible(other, "subtract")
        if not self.float_counters and (other._counters == _I64.min).any():
            raise CounterOverflowError("subtract would overflow the int64 counters; the sketch is unchanged")
        self._apply(-other._counters, -other._total, -other._null, "subtract")
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

    def _self_tables(self) -> np.ndarray:
        rows = self._cache.get("self_tables")
        if rows is None:
            rows = self._cache["self_tables"] = self._join_tables(self)
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
        var = (f2_bound(self._self_tables()) * f2_bound(other._self_tables()) + j * j) / self._width
        return median_estimate(rows, var, conf, self.METHOD)

    def self_join_size(self, confidence: float = 0.95) -> Estimate:
        """Estimated ``F2 = sum_v f(v)^2``; each table's variance is at most ``2 F2^2 / width``."""
        conf = check_confidence(confidence)
        rows = self._self_tables()
        return median_estimate(rows, 2.0 * f2_bound(rows) ** 2 / self._width, conf, self.METHOD)

    def frequency(self, key, confidence: float = 0.95) -> Estimate:
        """Estimated ``f(key)``; each table's variance is at most ``F2 / width``."""
        conf = check_confidence(confidence)
        k = canonical_key(key)
        if k is None:
            raise ValueError("the frequency of a null key is not tracked: see null_weight")
        return median_estimate(self._point_tables(k), f2_bound(self._self_tables()) / self._width, conf, self.METHOD)

    def _check_join(self, other, confidence) -> float:
        self.check_compatible(other, "join", same_dtype=False)
        return check_confidence(confidence)

    # -- serialisation ------------------------------------------------------
    def _kind_param(self) -> float:
        return 0.0

    def _domain(self):
        return None

    def _extension(self) -> bytes:
        return b""

    def to_bytes(self) -> bytes:
        """Serialise (format of :mod:`skimsketch.format`); ``ss.from_bytes`` reads it back."""
        head = fmt.Header(
            self.KIND, self._width, self._depth, self._seed, self._domain(), self.float_counters,
            self._kind_param(), self._total, self._null, self.is_empty,
        )
        return fmt.encode(head, self._counters, self._extension())

    @classmethod
    def _from_header(cls, head: fmt.Header, ext: bytes):
        return cls(head.width, head.depth, head.seed, dtype="float64" if head.float_counters else "int64")

    # -- sizing -----------------------------------------------------------
    @classmethod
    def for_error(cls, eps: float, delta: float = 0.05, seed: int = 0, **params):
        """A sketch whose join estimates are within ``eps * sqrt(F2(f) F2(g))`` w.p. ``1 - delta``."""
        from .sizing import shape_for_error

        width, depth = shape_for_error(eps, delta)
        return cls(width, depth, seed, **params)

    @classmethod
    def for_bytes(cls, nbytes: int, seed: int = 0, depth: int | None = None, **params):
        """The default-shaped sketch whose counters fit in ``nbytes`` bytes."""
        from .sizing import shape_for_bytes

        width, d = shape_for_bytes(nbytes, depth)
        return cls(width, d, seed, **params)

    @classmethod
    def from_bytes(cls, blob):
        from .serde import from_bytes

        sk = from_bytes(blob)
        if not isinstance(sk, cls):
            raise IncompatibleSketchError("kind", cls.__name__, type(sk).__name__, "load")
        return sk
