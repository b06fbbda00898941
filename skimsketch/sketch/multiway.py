"""Multi-way joins: the chain join ``F(a) ⋈ S(a, b) ⋈ G(b)`` from three sketches.

The extension of AGMS sketches to join graphs (Dobra, Garofalakis, Gehrke,
Rastogi, SIGMOD 2002) gives every join attribute its own independent family
of ±1 variables and sketches a relation with two join attributes by the
product of its attributes' variables. :class:`PairSketch` is the hash-sketch
(Fast-AGMS) form of that idea: table ``p`` has ``width_a x width_b`` counters::

    S[p][h_p^a(a)][h_p^b(b)] += w * xi_p^a(a) * xi_p^b(b)

where ``(h^a, xi^a)`` is the hash family of ``seed_a`` — the *same* one the
hash sketch of ``F`` on ``a`` uses — and ``(h^b, xi^b)`` that of ``seed_b``
(the one of ``G``'s sketch on ``b``). A sketch is bound to its attribute by
its seed: ``seed_a != seed_b`` is required, so the two families are
independent.

Estimator (:func:`chain_join_size`): per table
``Y_p = sum_{i,j} F[p][i] * S[p][i][j] * G[p][j]``; the answer is the median
over tables. ``E[Y_p] = sum_{a,b} f(a) s(a,b) g(b)`` (the chain join size, or
a SUM aggregate when any of the three carries weights), and conditioning on
one family at a time (each step is a hash-sketch inner product, whose
variance is at most ``2 F2 F2' / width``, with
``sum_b (sum_a f(a) s(a,b))^2 <= F2(f) F2(s)`` by Cauchy-Schwarz) gives::

    Var(Y_p) <= 2 F2(f) F2(s) F2(g) * (1/width_a + 1/width_b + 2/(width_a width_b))

The interval is the Chebyshev-median one of :mod:`skimsketch.stats.bounds` with the
three self-join sizes estimated from the sketches themselves. The error is
relative to ``sqrt(F2(f) F2(s) F2(g))``, so — as for two-way joins — small
join sizes need wide sketches; ``S``'s counters grow as ``width_a * width_b``.

``F`` and ``G`` may be hash sketches or skimmed sketches (their main
counters are hash-sketch counters); any other kind, or a shape, depth or seed
that does not match ``S``'s side, raises :class:`IncompatibleSketchError`
naming the field.
"""

from __future__ import annotations

import numpy as np

from ..format import header as fmt
from . import layout
from .base import DTYPES
from .query import f2_bound
from ..stats.bounds import check_confidence, median_estimate
from ..errors import CorruptSketchError, IncompatibleSketchError, check_int
from ..estimate import Estimate
from ..exact import exact_frequencies
from .hash_sketch import HashSketch
from ..keys.hashing import MAX_DEPTH, MAX_WIDTH, family
from ..kernels import accumulate_cells, as_counter_delta, scale_batch, weight_total
from ..keys.canonical import batch_scalar_weight, canonical_rows
from ..format.kinds import register_kind
from ..format.serde import Serialisable
from .state import LinearState

__all__ = ["PairSketch", "chain_join_size", "exact_chain_join_size"]

MAX_PAIR_COUNTERS = 1 << 26  # width_a * width_b * depth (so one table fits format.MAX_ROW_COUNTERS)


@register_kind
class PairSketch(Serialisable):
    """Sketch of a relation ``S(a, b)`` for chain joins ``F(a) ⋈ S(a, b) ⋈ G(b)``.

    Its state is one :class:`~skimsketch.sketch.state.LinearState` (the ``depth x width_a x
    width_b`` counters, total and null weights): updates, merges and subtractions follow
    the exact-counter and all-or-nothing rules of every sketch here. Serialised as kind 4
    of the sketch format (``docs/format.md``), so it pickles and ships as bytes.

    >>> import skimsketch as ss
    >>> f = ss.HashSketch(64, 5, seed=1).update([1, 1, 2])
    >>> g = ss.HashSketch(64, 5, seed=2).update(["x", "y", "y"])
    >>> s = ss.PairSketch.for_chain(f, g).update([1, 2, 2], ["x", "y", "z"])
    >>> round(float(ss.chain_join_size(f, s, g)))  # f(1) g(x) + f(2) g(y) = 2*1 + 1*2
    4
    >>> ss.from_bytes(s.to_bytes()) == s
    True
    """

    KIND = 4
    METHOD = "chain"

    def __init__(self, width_a: int, width_b: int, depth: int, seed_a: int, seed_b: int, dtype: str = "int64"):
        self._width_a = check_int("width_a", width_a, 1, MAX_WIDTH)
        self._width_b = check_int("width_b", width_b, 1, MAX_WIDTH)
        self._depth = check_int("depth", depth, 1, MAX_DEPTH)
        self._seed_a = check_int("seed_a", seed_a, 0, 2**64 - 1)
        self._seed_b = check_int("seed_b", seed_b, 0, 2**64 - 1)
        if self._seed_a == self._seed_b:
            raise ValueError(
                f"seed_a and seed_b must differ (got {seed_a} for both): each join attribute needs its own "
                "independent hash family, and the seed is what binds a sketch to its attribute"
            )
        if self._width_a * self._width_b * self._depth > MAX_PAIR_COUNTERS:
            raise ValueError(
                f"width_a * width_b * depth = {self._width_a * self._width_b * self._depth} counters exceeds "
                f"{MAX_PAIR_COUNTERS}"
            )
        if dtype not in DTYPES:
            raise ValueError(f"dtype must be one of {DTYPES}, got {dtype!r}")
        self._dtype = dtype
        self._state = LinearState({"counters": (self._depth, self._width_a, self._width_b)}, dtype)

    @classmethod
    def for_chain(cls, f_sketch, g_sketch, dtype: str = "int64") -> PairSketch:
        """The pair sketch that joins with ``f_sketch`` on ``a`` and ``g_sketch`` on ``b``."""
        for name, sk in (("f_sketch", f_sketch), ("g_sketch", g_sketch)):
            if not isinstance(sk, HashSketch):
                raise IncompatibleSketchError("kind", "HashSketch or SkimmedSketch", type(sk).__name__, f"chain with {name}")
            _check_keyed(sk, f"chain {name}")
        if f_sketch.depth != g_sketch.depth:
            raise IncompatibleSketchError("depth", f_sketch.depth, g_sketch.depth, "chain")
        return cls(f_sketch.width, g_sketch.width, f_sketch.depth, f_sketch.seed, g_sketch.seed, dtype)

    # -- description ------------------------------------------------------
    @property
    def params(self) -> dict:
        return {"width_a": self._width_a, "width_b": self._width_b, "depth": self._depth,
                "seed_a": self._seed_a, "seed_b": self._seed_b, "dtype": self._dtype}

    width_a = property(lambda self: self._width_a)
    width_b = property(lambda self: self._width_b)
    depth = property(lambda self: self._depth)
    seed_a = property(lambda self: self._seed_a)
    seed_b = property(lambda self: self._seed_b)
    dtype = property(lambda self: self._dtype)
    total_weight = property(lambda self: self._state.total)
    null_weight = property(lambda self: self._state.null)

    @property
    def float_counters(self) -> bool:
        return self._dtype == "float64"

    @property
    def counters(self) -> np.ndarray:
        """A read-only view of the ``depth x width_a x width_b`` counters."""
        return self._state.view("counters")

    @property
    def counter_width(self) -> int:
        """Bytes per counter in memory: 4 (int32) until a value needs more, then 8; float counters 8."""
        return self._state.counter_width

    @property
    def nbytes(self) -> int:
        return self._state.nbytes

    @property
    def is_empty(self) -> bool:
        return self._state.is_empty

    def __repr__(self) -> str:
        return "PairSketch(" + ", ".join(f"{k}={v!r}" for k, v in self.params.items()) + ")"

    def __eq__(self, other) -> bool:
        return isinstance(other, PairSketch) and other.params == self.params and other._state == self._state

    __hash__ = None

    def copy(self) -> PairSketch:
        out = PairSketch(**self.params)
        out._state = self._state.copy()
        return out

    # -- serialisation ------------------------------------------------------
    def to_bytes(self) -> bytes:
        """Serialise (kind 4 of :mod:`skimsketch.format.header`); ``ss.from_bytes`` reads it back."""
        width = self._state.narrowest_width()
        head = fmt.Header(
            self.KIND, self._width_a * self._width_b, self._depth, self._seed_a, None, self.float_counters, 0.0,
            self._state.total, self._state.null, self.is_empty, counter_width=width,
        )
        ext = layout.encode_pair(self._width_a, self._width_b, self._seed_b)
        return fmt.encode(head, self._state.array("counters").reshape(self._depth, -1), ext, width)

    @classmethod
    def _from_parts(cls, head: fmt.Header, counters: np.ndarray, ext: bytes) -> PairSketch:
        """The pair sketch of a decoded header, counters and extension (``from_bytes``)."""
        width_a, width_b, seed_b = layout.decode_pair(ext)
        if head.version < 2:
            raise CorruptSketchError(f"a PairSketch is written by format version 2 or later, not {head.version}")
        if head.domain is not None or head.param != 0.0 or head.key_domain is not None or head.nonnegative:
            raise CorruptSketchError("a PairSketch has no domain, kind parameter, key domain or sign flag")
        if width_a * width_b != head.width:
            raise CorruptSketchError(
                f"pair extension widths {width_a} x {width_b} disagree with the header's {head.width} counters per table")
        try:
            sk = cls(width_a, width_b, head.depth, head.seed, seed_b, "float64" if head.float_counters else "int64")
        except (ValueError, TypeError) as e:
            raise CorruptSketchError(f"invalid pair sketch parameters: {e}") from None
        state = LinearState.of({"counters": counters.reshape(head.depth, width_a, width_b)}, head.total_weight,
                               head.null_weight, head.float_counters)
        if state.narrowest_width() != head.counter_width:
            raise CorruptSketchError(
                f"non-canonical counter width: {head.counter_width}-byte counters whose values need "
                f"{state.narrowest_width()} bytes (version 2 stores the narrowest width)")
        if state.is_empty != head.empty:
            raise CorruptSketchError("the empty flag disagrees with the state")
        sk._state = state
        return sk

    # -- updates ------------------------------------------------------------
    def update(self, keys_a, keys_b, weights=None) -> PairSketch:
        """Add rows ``(keys_a[i], keys_b[i])`` with ``weights`` (default 1; negative = delete); returns ``self``.

        Rows with a null in either column never join: they are skipped and
        their weight goes to :attr:`null_weight`. Keys and weights follow the
        rules of every sketch (``docs/inputs.md``): a null weight skips its row."""
        scalar = batch_scalar_weight(weights, self.float_counters)  # as every sketch: unit rows, then scaled
        (ka, kb), w, null_weight, _ = canonical_rows(
            {"keys_a": keys_a, "keys_b": keys_b}, None if scalar is not None else weights, self.float_counters)
        delta = {"counters": self._delta(ka, kb, w)}
        total = weight_total(w, len(ka), self.float_counters)
        if scalar is not None:
            delta, total, null_weight = scale_batch(delta, total, null_weight, scalar, self.float_counters)
        self._state.add(delta, total, null_weight, "update")
        return self

    def _delta(self, ka, kb, w) -> np.ndarray:
        d, wa, wb = self._depth, self._width_a, self._width_b
        size = d * wa * wb
        offsets = (np.arange(d, dtype=np.int64) * (wa * wb))[:, None]

        def cells_of(a, b):
            ba, sa = family(self._seed_a).buckets_signs(ka[a:b], wa, d)
            bb, sb = family(self._seed_b).buckets_signs(kb[a:b], wb, d)
            return 2 * (offsets + ba * wb + bb) + ((sa * sb) < 0)

        acc = accumulate_cells(len(ka), cells_of, w, 2 * size, d, False, self.float_counters)
        return as_counter_delta((acc[0::2] - acc[1::2]).reshape(d, wa, wb), self.float_counters)

    def check_compatible(self, other, operation: str = "combine") -> None:
        if not isinstance(other, PairSketch):
            raise IncompatibleSketchError("kind", "PairSketch", type(other).__name__, operation)
        for field, mine in self.params.items():
            if other.params[field] != mine:
                raise IncompatibleSketchError(field, mine, other.params[field], operation)

    def merge(self, other) -> PairSketch:
        """Add ``other``'s counters (the sketch of the union of the rows); returns ``self``."""
        self.check_compatible(other, "merge")
        self._state.merge(other._state, "merge")
        return self

    def subtract(self, other) -> PairSketch:
        """Subtract ``other``'s counters (the sketch of the difference); returns ``self``."""
        self.check_compatible(other, "subtract")
        self._state.subtract(other._state, "subtract")
        return self

    def __add__(self, other):
        return self.copy().merge(other)

    def __sub__(self, other):
        return self.copy().subtract(other)

    def self_join_tables(self) -> np.ndarray:
        """Per-table unbiased estimates of ``F2(s) = sum_{a,b} s(a,b)^2``."""
        c = self._state.array("counters").astype(np.float64)
        return np.einsum("pij,pij->p", c, c)


def _check_keyed(sk, operation: str) -> None:
    """A skimmed sketch in the virtual layout counts signed virtual ids, not keys: its counters
    cannot meet a pair sketch's (the answer would be noise), so it is refused by name."""
    if getattr(sk, "search", None) == "virtual":
        raise IncompatibleSketchError(
            "search", "prefix", "virtual", f"{operation} (its counters hold virtual ids, not keys: build it with "
            "search='prefix', search='range' or a domain) with the pair")


def _check_side(sk, s: PairSketch, side: str) -> None:
    name = "f_sketch" if side == "a" else "g_sketch"
    if not isinstance(sk, HashSketch):
        raise IncompatibleSketchError("kind", "HashSketch or SkimmedSketch", type(sk).__name__, f"chain-join ({name})")
    _check_keyed(sk, f"chain-join {name}")
    want_w = s.width_a if side == "a" else s.width_b
    want_seed = s.seed_a if side == "a" else s.seed_b
    if sk.depth != s.depth:
        raise IncompatibleSketchError("depth", s.depth, sk.depth, f"chain-join ({name})")
    if sk.seed != want_seed:
        other = s.seed_b if side == "a" else s.seed_a
        hint = ", which has the other attribute's family: f and g swapped?" if sk.seed == other else ""
        raise IncompatibleSketchError(f"seed_{side}", want_seed, sk.seed, f"chain-join ({name}{hint})")
    if sk.width != want_w:
        raise IncompatibleSketchError(f"width_{side}", want_w, sk.width, f"chain-join ({name})")


def chain_join_size(f_sketch, s_sketch: PairSketch, g_sketch, confidence: float = 0.95) -> Estimate:
    """Estimated ``sum_{a,b} f(a) s(a,b) g(b)``: the size of ``F(a) ⋈ S(a, b) ⋈ G(b)``.

    ``f_sketch`` must use ``s_sketch``'s a-side family and width, ``g_sketch``
    its b-side ones (see :meth:`PairSketch.for_chain`); otherwise
    :class:`IncompatibleSketchError` names the field. Weighted sketches give
    SUM aggregates. See the module docstring for the estimator and its variance.
    """
    conf = check_confidence(confidence)
    if not isinstance(s_sketch, PairSketch):
        raise IncompatibleSketchError("kind", "PairSketch", type(s_sketch).__name__, "chain-join (s_sketch)")
    _check_side(f_sketch, s_sketch, "a")
    _check_side(g_sketch, s_sketch, "b")
    fc = f_sketch.counters.astype(np.float64)
    gc = g_sketch.counters.astype(np.float64)
    sc = s_sketch.counters.astype(np.float64)
    rows = np.einsum("pi,pij,pj->p", fc, sc, gc)
    wa, wb = s_sketch.width_a, s_sketch.width_b
    f2f = f2_bound(np.einsum("pi,pi->p", fc, fc))
    f2g = f2_bound(np.einsum("pj,pj->p", gc, gc))
    f2s = f2_bound(s_sketch.self_join_tables())
    var = 2.0 * f2f * f2s * f2g * (1.0 / wa + 1.0 / wb + 2.0 / (wa * wb))
    return median_estimate(rows, var, conf, PairSketch.METHOD, f2_f=f2f, f2_s=f2s, f2_g=f2g)


def exact_chain_join_size(keys_f, pairs_a, pairs_b, keys_g, weights_f=None, weights_s=None, weights_g=None):
    """Exact ``sum_{a,b} f(a) s(a,b) g(b)`` in memory (nulls never join).

    >>> exact_chain_join_size([1, 1, 2], [1, 2, 2], ["x", "y", "z"], ["x", "y", "y"])
    4
    """
    kf, ff = exact_frequencies(keys_f, weights_f)
    kg, fg = exact_frequencies(keys_g, weights_g)
    (ka, kb), w, _, _ = canonical_rows({"pairs_a": pairs_a, "pairs_b": pairs_b}, weights_s, True)

    def lookup(keys, uniq, freq):
        pos = np.minimum(np.searchsorted(uniq, keys), max(len(uniq) - 1, 0))
        hit = (uniq[pos] == keys) if len(uniq) else np.zeros(len(keys), dtype=bool)
        out = np.zeros(len(keys), dtype=freq.dtype)
        out[hit] = freq[pos[hit]]
        return out

    fa, gb = lookup(ka, kf, ff), lookup(kb, kg, fg)
    if w is not None and w.dtype.kind == "f" or fa.dtype.kind == "f" or gb.dtype.kind == "f":
        ws = np.ones(len(ka)) if w is None else w.astype(np.float64)
        return float(np.sum(ws * fa.astype(np.float64) * gb.astype(np.float64)))
    ws = [1] * len(ka) if w is None else w.tolist()  # Python ints: exact whatever the sizes
    return sum(int(x) * int(y) * int(z) for x, y, z in zip(ws, fa.tolist(), gb.tolist()))
