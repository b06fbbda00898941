"""``Sketch``: what every linear sketch here shares.

Counters form a ``depth x width`` array; the sketch of a multiset is a linear
function of its frequency vector, so ``update`` adds, deletes are negative
weights, and ``merge``/``subtract`` are counter-wise sums. The state (counters,
any extra arrays of a kind, total and null weights) is a
:class:`~skimsketch.sketch.state.LinearState`: integer counters are exact (int32,
widened to int64 when a value needs it), float counters stay finite, and every
operation that would overflow raises :class:`CounterOverflowError` and leaves
the sketch unchanged. Kinds register themselves by their ``KIND`` byte
(:mod:`skimsketch.format.kinds`) and build themselves from decoded bytes
(``_from_parts``); ``docs/format.md`` describes the bytes.

Exact mode (``exact=True``; the default of ``SkimmedSketch.for_bytes``): while
the distinct non-null keys fit :attr:`Sketch.exact_capacity`, the sketch keeps
their exact weights (:class:`~skimsketch.stats.exact_store.ExactStore`) instead of
counters and answers exactly; the first operation whose result would hold more
keys converts it, for good, to the counters a counter-mode sketch of the same
data holds (docs/format.md, "Exact mode"). Estimators that need counters of an
exact sketch read the counters it would convert to (:attr:`counters`).

This module holds the state, update, merge and subtract; the queries are :mod:`.query`'s
(:class:`~.query.SketchQueries`), the bytes :mod:`.serialise`'s (:class:`~.serialise.SketchBytes`), and the
rule every join estimate obeys (float rescaling, the sign) :mod:`.signed_join`'s.
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from ..errors import CounterOverflowError, IncompatibleSketchError, KeyTypeError, check_int
from ..stats.exact_store import ExactStore, aggregate
from .exact_mode import converted_delta, exact_capacity
from ..keys.hashing import MAX_DEPTH, MAX_WIDTH, family
from ..kernels import I64, scale_batch, weight_total
from ..keys.canonical import CanonicalBatch, batch_scalar_weight, canonicalize
from ..format.kinds import register_kind
from ..format.serde import Serialisable
from .query import SketchQueries
from .serialise import SketchBytes
from .signed_join import FloatRescale, signed_join
from .state import LinearState

__all__ = ["DTYPES", "Sketch"]

DTYPES = ("int64", "float64")


class Sketch(SketchQueries, SketchBytes, FloatRescale, Serialisable):
    """Base class of the linear sketches (not instantiated directly)."""

    KIND: ClassVar[int]
    METHOD: ClassVar[str]

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if "KIND" in cls.__dict__:  # a serialisable kind: from_bytes finds it by its KIND byte
            register_kind(cls)
        if "join_size" in cls.__dict__:  # every kind's join estimate obeys the sign rule (see nonnegative)
            cls.join_size = signed_join(cls.__dict__["join_size"])

    def __init__(self, width: int, depth: int, seed: int = 0, dtype: str = "int64", exact: bool = False):
        self._width = check_int("width", width, 1, MAX_WIDTH)
        self._depth = check_int("depth", depth, 1, MAX_DEPTH)
        self._seed = check_int("seed", seed, 0, 2**64 - 1)
        if dtype not in DTYPES:
            raise ValueError(f"dtype must be one of {DTYPES}, got {dtype!r}")
        if not isinstance(exact, (bool, np.bool_)):
            raise TypeError(f"exact must be True or False, got {exact!r}")
        self._dtype = dtype
        # exact mode: the entries, and a state holding only the total and null weights (no counters);
        # counter mode: no entries, the state holds the counters (kinds with more arrays: _state_shapes)
        self._exact = ExactStore(dtype == "float64") if exact else None
        self._state = LinearState({} if exact else {"counters": (self._depth, self._width)}, dtype)
        self._key_domain = None  # "int" / "str" once a non-null key is seen (see key_domain)
        self._nonnegative = True  # every weight added so far was >= 0 (see nonnegative)
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
        """Constructor arguments: together with the counters (or exact entries) they define the
        sketch. ``exact=True`` is listed while the sketch is in exact mode."""
        p = {"width": self._width, "depth": self._depth, "seed": self._seed, "dtype": self._dtype}
        if self._exact is not None:
            p["exact"] = True
        return p

    @property
    def counters(self) -> np.ndarray:
        """A read-only view of the ``depth x width`` counters (in exact mode: the counters it
        would convert to, computed on demand and not part of :attr:`nbytes`; like a conversion,
        :class:`CounterOverflowError` if one would not fit in int64)."""
        return self._counter_state().view("counters")

    # -- exact mode -----------------------------------------------------------
    @property
    def exact_mode(self) -> bool:
        """True while the sketch keeps exact frequencies instead of counters (module docstring)."""
        return self._exact is not None

    @property
    def exact_capacity(self) -> int:
        """Most distinct non-null keys kept in exact mode: ``(S - 12) // 16`` with ``S`` the
        counter-mode state's bytes at 4 bytes per integer counter, 8 per float counter
        (:func:`skimsketch.sketch.exact_mode.exact_capacity`; docs/format.md)."""
        n = sum(int(np.prod(shape)) for shape in self._state_shapes().values())
        return exact_capacity(n, self.float_counters)

    @property
    def exact_entries(self) -> dict | None:
        """``{canonical key: exact weight}`` in exact mode, else None."""
        return None if self._exact is None else self._exact.items()

    def _state_shapes(self) -> dict:
        """``{array name: shape}`` of the counter-mode state (kinds with more arrays extend it)."""
        return {"counters": (self._depth, self._width)}

    def _converted(self, store: ExactStore, total, null) -> LinearState:
        """The counter-mode state of ``store``'s entries with these weights (a new state)."""
        st = LinearState(self._state_shapes(), self._dtype)
        delta = converted_delta(self._delta, store.keys, store.wide_weights(), self.float_counters)
        st.add(delta, total, null, "conversion to counters")
        return st

    def _counter_state(self) -> LinearState:
        """The counter-mode state: the sketch's own, or in exact mode the converted one (cached)."""
        if self._exact is None:
            return self._state
        st = self._cache.get("converted")
        if st is None:
            st = self._cache["converted"] = self._converted(self._exact, self._total, self._null)
        return st

    def _set_exact(self, store: ExactStore, d_total, d_null, what: str) -> None:
        """Adopt ``store`` and add the weights, or convert to counters if ``store`` exceeds the
        capacity (all or nothing)."""
        weights = self._state.copy()
        weights.add({}, d_total, d_null, what)
        if len(store) > self.exact_capacity:
            converted = self._converted(store, weights.total, weights.null)
            self._leaving_exact(store)
            self._state, self._exact = converted, None
        else:
            self._state, self._exact = weights, store
        self._changed()

    # the state as the kinds' estimators read it (never assigned: the state changes only via _apply)
    @property
    def _counters(self) -> np.ndarray:
        return self._counter_state().array("counters")

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
        return self._state.is_empty and (self._exact is None or len(self._exact) == 0)

    @property
    def nbytes(self) -> int:
        """Memory of the sketch's state: its counters plus any other structure it keeps (in exact
        mode: the keys, 8 bytes each, and their weights)."""
        return self._state.nbytes if self._exact is None else self._exact.nbytes

    @property
    def key_domain(self) -> str | None:
        """"int" (integer keys), "str" (str/bytes keys) or None (no non-null key seen yet).

        Sketches of different key domains never merge, subtract or join (their keys
        cannot be equal): :class:`IncompatibleSketchError` names ``key_domain``."""
        return self._key_domain

    @property
    def nonnegative(self) -> bool:
        """Whether the sketch *knows* every frequency it holds is >= 0 (a count, or a sum of
        non-negative weights), so that every join size and frequency is >= 0.

        The rule: a new sketch knows it; an ``update`` keeps it when none of its weights of
        non-null keys is negative (no deletes); ``merge`` keeps it when both sketches know it;
        ``subtract`` of a non-empty sketch loses it (a difference may be negative), as does any
        negative weight, even one a later insert cancels. The bytes record it (format version 4, the
        sign flag), so a sketch read back knows what it knew when written; bytes of versions 1 to 3
        did not record it: read from them, an exact-mode sketch knows it when all its entries are
        >= 0, a counter-mode sketch only when it is empty. When both sketches of a join know it, the join estimate's interval (and value)
        are clipped at 0 (:meth:`skimsketch.estimate.Estimate.at_least`); a frequency likewise; a
        self-join size (a sum of squares) is always clipped."""
        return self._nonnegative

    def note_nonnegative(self):
        """Record that every frequency of this sketch is >= 0 (:attr:`nonnegative`); returns ``self``.

        For a builder that knows what the bytes do not record: a sketch of row counts (no weight
        column) or of weights it checked, merged from serialised partials. A wrong note makes
        join intervals wrong; an exact-mode sketch holding a negative entry is refused."""
        if self._exact is not None and any(w < 0 for w in self._exact.items().values()):
            raise ValueError("this sketch holds a negative frequency: it cannot be noted non-negative")
        self._nonnegative = True
        return self

    @property
    def counter_width(self) -> int:
        """Bytes per counter in memory: integer counters are 4 (int32) until a value needs
        more, then 8 (widened exactly to int64, reported here); float counters are 8. In exact
        mode: the bytes per weight, by the same rule."""
        return self._state.counter_width if self._exact is None else self._exact.width

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
            and other._exact == self._exact
            and other._key_domain == self._key_domain
            and other._nonnegative == self._nonnegative
        )

    __hash__ = None  # mutable

    # -- construction helpers -------------------------------------------
    def empty_like(self):
        """An empty sketch with the same kind, shape, seed and parameters (in exact mode if this
        sketch is in it)."""
        return type(self)(**self.params)

    def _rescaled(self, e: int):
        """This sketch with its float counters times ``2^e`` (a copy; itself when ``e`` is 0)."""
        if e == 0:
            return self
        out = self.copy()
        out._state = self._state.scaled(e)
        return out

    def copy(self):
        out = self.empty_like()
        out._state = self._state.copy()
        out._exact = None if self._exact is None else self._exact.copy()
        out._key_domain = self._key_domain
        out._nonnegative = self._nonnegative
        return out

    def shared_copy(self):
        """:meth:`copy` sharing the query cache (skims, self-join tables, ...: functions of the state, which
        are equal): :mod:`skimsketch.format.reuse`. A change gives the copy a cache of its own (:meth:`_changed`)."""
        out = self.copy()
        out._cache = self._cache
        return out

    # -- updates ----------------------------------------------------------
    def _validate_keys(self, keys: np.ndarray) -> None:
        """Hook for kinds that restrict keys (a declared domain)."""

    def update(self, keys, weights=None):
        """Add ``weights`` (default 1 each; negative = delete) for ``keys``; returns ``self``.

        Keys: numpy array, list, pandas Series or pyarrow array of int / str /
        bytes (see :mod:`skimsketch.keys.canonical`); nulls are skipped and their weight
        goes to :attr:`null_weight`. Weights: a scalar or an aligned array;
        integer sketches need integral weights.
        """
        scalar = batch_scalar_weight(weights, self.float_counters)
        if scalar is not None:
            weights = None
        batch = canonicalize(keys, weights, allow_float_weights=self.float_counters)
        if None not in (batch.key_domain, self._key_domain) and batch.key_domain != self._key_domain:
            have = {"int": "integer", "str": "string/bytes"}
            raise KeyTypeError(
                f"this sketch holds {have[self._key_domain]} keys, got {have[batch.key_domain]} keys: a sketch "
                "holds one key domain (integer and string keys never join); use another sketch or cast the keys"
            )
        self._validate_keys(batch.keys)
        total = self._batch_total(batch)
        # exact mode: the batch's net weight per key, unless the batch surely outgrows the capacity (then
        # the entries convert and the batch is applied to the counters: the same counters, found faster)
        exact = self._exact is not None and not self._exact.surely_outgrows(
            batch.keys, batch.weights, scalar, self.exact_capacity)
        if exact:
            ukeys, agg = aggregate(batch.keys, batch.weights, self.float_counters)
            delta = {"entries": agg}
        else:
            with np.errstate(over="ignore", invalid="ignore"):  # float overflow (inf, NaN) is refused by the state
                delta = self._delta(batch.keys, batch.weights)
        null = batch.null_weight
        if scalar is not None:
            delta, total, null = scale_batch(delta, total, null, scalar, self.float_counters)
        self._key_domain, before = self._key_domain or batch.key_domain, self._key_domain
        try:
            if exact:
                self._set_exact(self._exact.plus(ukeys, delta["entries"], "update"), total, null, "update")
            elif self._exact is not None:
                st = self._converted(self._exact, self._total, self._null)
                st.add(delta, total, null, "update")
                self._leaving_exact(self._exact)
                self._state, self._exact = st, None
                self._changed()
            else:
                self._apply(delta, total, null, "update")
        except Exception:
            self._key_domain = before
            raise
        if len(batch.keys) and ((scalar is not None and scalar < 0)
                                or (batch.weights is not None and np.min(batch.weights) < 0)):
            self._nonnegative = False  # a delete (or negative weight): frequencies may be negative
        self._observed(batch, scalar)
        return self

    def _observed(self, batch: CanonicalBatch, scalar) -> None:
        """Hook run after a batch was applied (``scalar``: its scalar weight, or None): kinds
        that keep state beyond the linear arrays (a key range) record it here."""

    def _leaving_exact(self, store: ExactStore) -> None:
        """Hook run when exact mode converts to counters (``store``: the entries converted)."""

    def _batch_total(self, batch: CanonicalBatch):
        """Total weight of one canonical batch (:func:`skimsketch.kernels.weight_total`)."""
        return weight_total(batch.weights, len(batch.keys), self.float_counters)

    def _delta(self, keys: np.ndarray, weights: np.ndarray | None) -> dict:
        """``{state array name: delta}`` of a batch of canonical keys."""
        raise NotImplementedError

    def _apply(self, delta: dict, total, null, what: str) -> None:
        """Add ``{array name: delta}`` and the weights atomically (all or nothing)."""
        self._state.add(delta, total, null, what)
        self._changed()

    def _changed(self) -> None:
        self._version += 1
        self._cache = {}  # a new dict: the old one may be shared by copies read from the same bytes (format.reuse)
        if self._exact is not None:
            nothing = len(self._exact) == 0
        else:
            nothing = not any(self._state.array(n).any() for n in self._state.names)
        if self._key_domain is not None and self._total == 0 and nothing:
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
            if (field == "dtype" and not same_dtype) or field == "exact":  # modes combine (module docstring)
                continue
            if mine[field] != theirs.get(field):
                raise IncompatibleSketchError(field, mine[field], theirs[field], operation)
        if None not in (self._key_domain, other._key_domain) and self._key_domain != other._key_domain:
            raise IncompatibleSketchError("key_domain", self._key_domain, other._key_domain, operation)

    def merge(self, other):
        """Add ``other``'s counters into this sketch (the sketch of the union); returns ``self``.

        Exact mode: both exact, the entries add (converting if they outgrow the
        capacity); otherwise the result is in counter mode."""
        self.check_compatible(other, "merge")
        self._combine(other, "merge")
        return self

    def subtract(self, other):
        """Subtract ``other``'s counters (the sketch of the difference); returns ``self``."""
        self.check_compatible(other, "subtract")
        self._combine(other, "subtract")
        return self

    def _combine(self, other, what: str) -> None:
        """Add (``what == "merge"``) or subtract ``other``'s state, all or nothing."""
        sign = 1 if what == "merge" else -1
        if self._exact is not None and other._exact is not None:
            if sign < 0 and not self.float_counters and I64.min in (other._total, other._null):
                raise CounterOverflowError(f"{what} would overflow the int64 total weight; the sketch is unchanged")
            store = self._exact.plus(other._exact.keys, other._exact.wide_weights(), what) if sign > 0 \
                else self._exact.minus(other._exact, what)
            self._set_exact(store, sign * other._total, sign * other._null, what)
        else:
            st = self._counter_state() if self._exact is None else self._counter_state().copy()
            (st.merge if sign > 0 else st.subtract)(other._counter_state(), what)
            if self._exact is not None:
                self._leaving_exact(self._exact)
            self._state, self._exact = st, None
        self._key_domain = self._key_domain or other._key_domain
        self._nonnegative = self._nonnegative and other._nonnegative and (sign > 0 or other.is_empty)
        self._changed()

    def __add__(self, other):
        return self.copy().merge(other)

    def __sub__(self, other):
        return self.copy().subtract(other)


Sketch.join_size = signed_join(Sketch.join_size)
