"""``HeavyKeySketch``: an append-only stream's join summary that keeps its heavy keys exactly.

A table of heavy keys (:mod:`skimsketch.heavy.table`: buckets of 8 slots, two bucket choices
per key, a newcomer replacing the smaller bucket minimum ``m`` with probability ``w / (m + w)``)
and a ``depth``-row Count-Sketch of everything the table did not absorb
(:mod:`skimsketch.heavy.residual`), so that ``f = table + residual`` holds exactly at every
moment. The join estimate (:mod:`skimsketch.heavy.estimator`) takes the tables' products exactly
and the three other terms from the Count-Sketches; it is **unbiased whatever the arrival order**,
since admission never reads the Count-Sketch's hashes, and its interval comes from the variance
given the tables (``docs/heavy.md``).

Guarantees, plainly. Counts are exact for a key from its admission on. The bytes depend on the
arrival order (admission is a seeded random process of the stream: the same seed and the same
order give the same bytes), so merged pieces are a valid sketch of the union but not
byte-identical to the sketch of one stream: that is why this is a kind of its own (kind 6). No
deletes: a negative weight is refused (the :class:`skimsketch.SkimmedSketch` handles deletes exactly).

>>> import skimsketch as ss
>>> a = ss.HeavyKeySketch.for_bytes(4096, seed=1).update([1, 1, 2, 3])
>>> b = ss.HeavyKeySketch.for_bytes(4096, seed=1).update([1, 3, 3])
>>> float(a.join_size(b))  # every key held clean: exact, 2*1 + 1*2
4.0
>>> ss.from_bytes(a.to_bytes()).join_size(b).value
4.0
"""

from __future__ import annotations

import math
import numbers

import numpy as np

from ..format import header as fmt
from ..stats.bounds import check_confidence
from ..errors import CounterOverflowError, IncompatibleSketchError, KeyTypeError, SketchError
from ..estimate import Estimate
from ..kernels import I64, weight_total
from ..keys.canonical import batch_scalar_weight, canonicalize
from ..format.kinds import register_kind
from ..format.serde import Serialisable
from . import codec
from .estimator import METHOD, Side, join_estimate
from .residual import Residual
from .table import FILTER_PER_BUCKET, HeavyTable, admit, merge_into

__all__ = ["HeavyKeySketch", "DEFAULT_DEPTH", "TABLE_SHARE", "shape_for_bytes"]

DEFAULT_DEPTH = 4
TABLE_SHARE = 0.5  # the table's share of the budget (docs/heavy.md: measured over the workloads)
MIN_NBYTES, MAX_NBYTES = 512, 1 << 30
MAX_WIDTH = fmt.MAX_ROW_COUNTERS
_KINDS = {"int": "integer", "str": "string/bytes"}


def _check_int(name: str, value, lo: int, hi: int) -> int:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an int, got {type(value).__name__}")
    if not lo <= int(value) <= hi:
        raise ValueError(f"{name} must be in [{lo}, {hi}], got {value}")
    return int(value)


def shape_for_bytes(nbytes: int, depth: int = DEFAULT_DEPTH, share: float = TABLE_SHARE,
                    filter_per_bucket: int = FILTER_PER_BUCKET) -> tuple[int, int]:
    """``(buckets, width)`` of the sketch of budget ``nbytes``: about ``share`` of the bytes past the
    fixed 92 to the table (97 bytes a bucket with 4-byte counts, and its ``F / 8`` bytes of spilled filter),
    the rest to ``depth`` rows of 4-byte counters; :func:`skimsketch.heavy.codec.serialised_size` is at
    most ``nbytes``.

    >>> shape_for_bytes(4096), shape_for_bytes(65536)
    ((19, 125), (311, 2049))
    """
    nbytes = _check_int("nbytes", nbytes, MIN_NBYTES, MAX_NBYTES)
    f = filter_per_bucket
    room = nbytes - codec.serialised_size(0, 0, depth, 4, f)
    buckets = max(2, int(share * room / (97 + f / 8)))
    while True:
        width = (nbytes - codec.serialised_size(buckets, 0, depth, 4, f)) // (4 * depth)
        if width >= 1 or buckets == 2:
            break
        buckets -= 1
    if width < 1:
        raise ValueError(f"nbytes={nbytes} is too small for a heavy-key sketch of depth {depth}")
    return min(buckets, codec.MAX_BUCKETS), min(width, MAX_WIDTH)


@register_kind
class HeavyKeySketch(Serialisable):
    """Heavy keys exactly in a table of ``buckets`` buckets of 8 slots, the rest in a ``depth x width``
    Count-Sketch (module docstring). ``seed`` chooses every hash and the admission draws: only sketches
    of equal seed, width and depth join. ``dtype``: ``"int64"`` (COUNT, integer SUM) or ``"float64"``."""

    KIND = codec.HEAVY_KIND
    METHOD = METHOD

    def __init__(self, buckets: int, width: int, depth: int = DEFAULT_DEPTH, seed: int = 0, dtype: str = "int64",
                 filter_per_bucket: int = FILTER_PER_BUCKET):
        buckets = _check_int("buckets", buckets, 2, codec.MAX_BUCKETS)
        width = _check_int("width", width, 1, MAX_WIDTH)
        depth = _check_int("depth", depth, 1, codec.MAX_DEPTH)
        self._seed = _check_int("seed", seed, 0, 2**64 - 1)
        if dtype not in ("int64", "float64"):
            raise ValueError(f"dtype must be 'int64' or 'float64', got {dtype!r}")
        self._float = dtype == "float64"
        per_bucket = _check_int("filter_per_bucket", filter_per_bucket, 1, codec.MAX_FILTER)
        self._table = HeavyTable(buckets, self._seed, self._float, per_bucket)
        self._residual = Residual(width, depth, self._seed, self._float)
        self._total = 0.0 if self._float else 0
        self._null = 0.0 if self._float else 0
        self._key_domain: str | None = None

    @classmethod
    def for_bytes(cls, nbytes: int = 16384, seed: int = 0, dtype: str = "int64",
                  depth: int = DEFAULT_DEPTH) -> HeavyKeySketch:
        """The sketch whose state and bytes fit in ``nbytes`` (512 to ``2**30``) while every count fits int32
        (:func:`shape_for_bytes`; counts past int32 widen every counter to 8 bytes, as in the sketches; float
        counts keep the shape, so a SUM sketch joins the count sketch of the same budget, in up to 1.9x the bytes)."""
        buckets, width = shape_for_bytes(nbytes, depth)
        return cls(buckets, width, depth, seed, dtype)

    # -- description ------------------------------------------------------------
    @property
    def params(self) -> dict:
        return {"buckets": self.buckets, "width": self.width, "depth": self.depth, "seed": self._seed,
                "dtype": self.dtype, "filter_per_bucket": self.filter_per_bucket}

    buckets = property(lambda self: self._table.buckets, doc="Buckets of the table (8 slots each).")
    width = property(lambda self: self._residual.width, doc="Counters per row of the residual Count-Sketch.")
    depth = property(lambda self: self._residual.depth, doc="Rows of the residual Count-Sketch.")
    filter_per_bucket = property(lambda self: self._table.filter_bits // self._table.buckets,
                                 doc="Bits of the spilled filter per bucket.")
    seed = property(lambda self: self._seed)
    dtype = property(lambda self: "float64" if self._float else "int64")
    float_counters = property(lambda self: self._float)
    total_weight = property(lambda self: self._total)
    null_weight = property(lambda self: self._null)
    key_domain = property(lambda self: self._key_domain)
    draws = property(lambda self: self._table.draws, doc="Admission draws so far (the seeded source's position).")

    @property
    def is_empty(self) -> bool:
        return self._total == 0 and self._null == 0 and not self._table.counts.any()

    @property
    def nbytes(self) -> int:
        """Serialised size (the state's arrays hold the same counts, 8 bytes each in memory)."""
        return len(self.to_bytes())

    def table_items(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(canonical keys, exact counts since admission, clean) of the held keys, in slot order: copies."""
        return self._table.entries()

    @property
    def residual(self) -> np.ndarray:
        """A copy of the residual Count-Sketch's counters, ``(depth, width)``."""
        return self._residual.counters.copy()

    def __repr__(self) -> str:
        return (f"HeavyKeySketch(buckets={self.buckets}, width={self.width}, depth={self.depth}, seed={self._seed}, "
                f"dtype={self.dtype!r})")

    def __eq__(self, other) -> bool:
        return isinstance(other, HeavyKeySketch) and self.to_bytes() == other.to_bytes()

    __hash__ = None

    def empty_like(self) -> HeavyKeySketch:
        return HeavyKeySketch(self.buckets, self.width, self.depth, self._seed, self.dtype, self.filter_per_bucket)

    def copy(self) -> HeavyKeySketch:
        out = self.empty_like()
        out._table, out._residual = self._table.copy(), self._residual.copy()
        out._total, out._null, out._key_domain = self._total, self._null, self._key_domain
        return out

    # -- building -----------------------------------------------------------------
    def update(self, keys, weights=None) -> HeavyKeySketch:
        """Add the rows ``(keys[i], weights[i])`` in their order (default weight 1); returns ``self``.

        Keys and weights follow the sketches' rules (:mod:`skimsketch.keys`): int, str and bytes keys, nulls
        skipped (their weight goes to :attr:`null_weight`), rows with a null weight skipped. Weights must be
        ``>= 0``: this summary is for append-only streams; a negative weight (a delete) raises :class:`SketchError`
        and the sketch is unchanged."""
        scalar = batch_scalar_weight(weights, self._float)
        batch = canonicalize(keys, None if scalar is not None else weights, allow_float_weights=self._float)
        w = batch.weights
        if scalar is not None:
            w = None if scalar == 1 else np.full(len(batch.keys), scalar, dtype=np.float64 if self._float else np.int64)
        null = batch.null_weight * (1 if scalar is None else scalar)
        _refuse_deletes(w, null, scalar)
        if None not in (batch.key_domain, self._key_domain) and batch.key_domain != self._key_domain:
            raise KeyTypeError(
                f"this sketch holds {_KINDS[self._key_domain]} keys, got {_KINDS[batch.key_domain]} keys: a sketch "
                "holds one key domain (integer and string keys never join); use another sketch or cast the keys")
        total = weight_total(w, len(batch.keys), self._float)
        new_total, new_null = self._total + total, self._null + null
        if not self._float and not (new_total <= I64.max and new_null <= I64.max):
            raise CounterOverflowError("update would overflow the int64 total weight; the sketch is unchanged")
        if self._float and not (math.isfinite(new_total) and math.isfinite(new_null)):
            raise CounterOverflowError("update would overflow a float64 weight to infinity; the sketch is unchanged")
        if w is not None and not self._float:
            w = np.ascontiguousarray(w, dtype=np.int64)
        sk, sw = admit(self._table, batch.keys, w)
        self._residual.add(sk, sw)  # |counters| <= the spilled mass <= the total: cannot overflow
        self._total, self._null = new_total, new_null
        if len(batch.keys) and (w is None or w.any()):
            self._key_domain = self._key_domain or batch.key_domain
        return self

    # -- combining ----------------------------------------------------------------
    def _check_compatible(self, other, operation: str) -> None:
        if not isinstance(other, HeavyKeySketch):
            raise IncompatibleSketchError("type", type(self).__name__, type(other).__name__, operation)
        fields = ("seed", "width", "depth") if operation == "join" else tuple(self.params)
        for field in fields:
            if self.params[field] != other.params[field]:
                raise IncompatibleSketchError(field, self.params[field], other.params[field], operation)
        if None not in (self._key_domain, other._key_domain) and self._key_domain != other._key_domain:
            raise IncompatibleSketchError("key_domain", self._key_domain, other._key_domain, operation)

    def merge(self, other: HeavyKeySketch) -> HeavyKeySketch:
        """Add ``other``'s stream to this one; returns ``self``. Common keys' counts add, ``other``'s other
        keys are re-admitted by the admission rule (in its slot order, with this sketch's draws), the evicted
        and the refused go to the residual, and the residuals add: valid (``f = table + residual``, the
        estimate unbiased) but not byte-identical to one sketch of both streams."""
        self._check_compatible(other, "merge")
        if other is self:
            other = other.copy()
        total, null = self._total + other._total, self._null + other._null
        if not self._float and not (total <= I64.max and null <= I64.max):
            raise CounterOverflowError("merge would overflow the int64 total weight; the sketch is unchanged")
        if self._float and not (math.isfinite(total) and math.isfinite(null)):
            raise CounterOverflowError("merge would overflow a float64 weight to infinity; the sketch is unchanged")
        residual = self._residual.copy()
        residual.merge(other._residual)
        table = self._table.copy()
        sk, sw = merge_into(table, other._table)
        residual.add(sk, sw)
        self._table, self._residual = table, residual
        self._total, self._null = total, null
        self._key_domain = self._key_domain or other._key_domain
        return self

    def __add__(self, other):
        return self.copy().merge(other)

    # -- queries ------------------------------------------------------------------
    def _side(self) -> Side:
        exact = not self._table.spilled.any()  # nothing ever spilled: the table is the frequency vector
        return Side(self._table, self._residual.as_float(), self._seed, exact)

    def join_size(self, other: HeavyKeySketch, confidence: float = 0.95, combine: str = "mean") -> Estimate:
        """Estimated ``sum_k f(k) g(k)`` (:mod:`skimsketch.heavy.estimator`): unbiased, exact when neither side
        spilled; at least the tables' exact products (every count is >= 0)."""
        self._check_compatible(other, "join")
        conf = check_confidence(confidence)
        e = join_estimate(self._side(), other._side(), conf, combine)
        return e.at_least(e.detail["table"])

    def self_join_size(self, confidence: float = 0.95, combine: str = "mean") -> Estimate:
        """Estimated ``F2 = sum_k f(k)^2``: the join with itself, at least the table's own F2."""
        conf = check_confidence(confidence)
        side = self._side()
        e = join_estimate(side, side, conf, combine)
        return e.at_least(e.detail["table"])

    # -- serialisation ----------------------------------------------------------------
    def _header(self) -> fmt.Header:
        return fmt.Header(self.KIND, self.width, self.depth, self._seed, None, self._float, 0.0, self._total,
                          self._null, self.is_empty, key_domain=self._key_domain)

    def to_bytes(self) -> bytes:
        """Kind 6 of the sketch format (:mod:`skimsketch.heavy.codec`, ``docs/heavy.md``)."""
        return codec.encode(self._header(), self._table, self._residual.counters)

    @classmethod
    def _from_parts(cls, head: fmt.Header, counters: np.ndarray, ext: bytes) -> HeavyKeySketch:
        table = codec.decode(head, counters, ext, head.seed)
        sk = cls(table.buckets, head.width, head.depth, head.seed, "float64" if head.float_counters else "int64",
                 table.filter_bits // table.buckets)
        sk._table = table
        sk._residual = Residual(head.width, head.depth, head.seed, head.float_counters, counters)
        sk._total, sk._null, sk._key_domain = head.total_weight, head.null_weight, head.key_domain
        return sk


def _refuse_deletes(w, null, scalar) -> None:
    neg = (scalar is not None and scalar < 0) or null < 0 or (w is not None and len(w) and w.min() < 0)
    if neg:
        raise SketchError(
            "HeavyKeySketch takes no deletes: got a negative weight. It summarises append-only streams (its table "
            "keeps counts that only grow); for streams with deletes or retractions use SkimmedSketch "
            "(ss.SkimmedSketch.for_bytes(nbytes)), which handles negative weights exactly")
