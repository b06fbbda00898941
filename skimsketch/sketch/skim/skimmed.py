"""The skimmed sketch (Ganguly, Garofalakis, Rastogi, EDBT 2004).

Maintained exactly like a :class:`~skimsketch.HashSketch` (same update, same
memory). At query time SKIMDENSE (:mod:`skimsketch.sketch.skim.skimdense`) finds the
*dense* keys and subtracts their estimated frequencies ``f̂_d`` from the
counters; the residual sketch ``H'`` is exactly the sketch of ``f - f̂_d``,
whose self-join size -- and with it the error -- is small. ESTSKIMJOINSIZE
takes the median over tables ``p`` of::

    f̂_d·ĝ_d                                   (no sketch error)
  + sum_q D_f[p][q] * H'_g[p][q]               (dense f  x residual g)
  + sum_q H'_f[p][q] * D_g[p][q]               (residual f x dense g)
  + sum_q H'_f[p][q] * H'_g[p][q]              (residual x residual)

where ``D = H - H'`` is the hash sketch of the dense frequencies. Each
sketched term of a table has variance at most ``(F2(a) F2(b) + (a·b)^2) /
width`` for its two vectors, and two terms a covariance at most
``(|a·c| |b·d| + |a·d| |b·c|) / width``; the interval is ``median ± k * sigma``
with ``sigma`` one table's deviation of the three terms together (:func:`_table_sd`)
and ``k`` from the median of ``depth`` normal errors allowing a bias of
``MEDIAN_BIAS`` of its deviations (``bound="normal"``) or Chebyshev
(``bound="chebyshev"``, distribution-free), :mod:`skimsketch.stats.bounds`.

Candidates: with ``domain=m`` every key of ``[0, m)`` (``m <= 2**22``, the
bounded cost of a scan). Without a domain, ``search="virtual"`` (the default of
the constructor and of ``for_bytes``) maps every key to a signed id of ``[0,
2**virtual_lg)`` and scans those ids (:mod:`skimsketch.sketch.skim.virtual`);
``search="range"`` keeps the smallest and largest integer key ever inserted and
scans that range when it spans at most ``2**22`` keys (string keys, or integers
spread wider, get the hash sketch's estimate); ``search="prefix"`` (asked for
by name or by ``hier_width`` / ``hier_depth``; the explicit constructor's
default before issue 25, so older blobs hold it) keeps a prefix hierarchy
(:mod:`skimsketch.sketch.skim.hierarchy`) whose top-down search supplies candidates for any
key, at the price of a share of the counters (docs/unbounded.md). Thresholds
adapt per round to what the residual can tell from chance (docs/defaults.md).
The default skim is *justified* by the sketch's own variance estimates: a key is
skimmed only at ``JUSTIFY_Z`` standard errors of its mean over the tables, and
the skim is kept only when its dense keys hold at least half of the counters'
F2 (:func:`skimsketch.sketch.skim.skimdense.justified`), unless it explains every counter
(then it is exact); otherwise the sketch answers as its counters' hash sketch.
:meth:`SkimmedSketch.heavy_hitters` refuses
thresholds below the sketch's resolution instead of answering partially.
See docs/unbounded.md for unbounded keys.
"""

from __future__ import annotations

import math

import numpy as np

from ...format import header as fmt
from ..base import f2_bound
from ...stats.bounds import BOUNDS, chebyshev_k, normal_median_k
from ...errors import CorruptSketchError, KeyDomainError, KeyTypeError
from ...estimate import Estimate
from ... import kernels
from ..hash_sketch import HashSketch, row_dots
from ...kernels import as_counter_delta
from ...keys.hashing import family
from ...keys.canonical import canonicalize
from .hierarchy import LEVELS, MAX_HIER_DEPTH, MAX_LG, MIN_HIER_DEPTH, MIN_LG, hierarchy
from .skimdense import (
    BUDGET,
    MAX_SCAN_DOMAIN,
    Candidates,
    DenseResult,
    domain_candidates,
    explains,
    justified,
    no_candidates,
    prefix_candidates,
    range_candidates,
    reported,
    skimdense,
)
from ..sizing import COUNTER_BYTES, DEFAULT_DEPTH, framed_budget, shape_for_bytes
from ..state import LinearState
from .virtual import DEFAULT_VIRTUAL_LG, MAX_VIRTUAL_LG, MIN_VIRTUAL_LG, virtual_ids, virtual_salt

__all__ = ["DEFAULT_HIER_DEPTH", "DEFAULT_SKIM_FACTOR", "SkimResult", "SkimmedSketch", "default_hier_width"]

DEFAULT_SKIM_FACTOR = 1.0
SEARCHES = ("range", "prefix", "virtual")
MAX_PAIR_SIDE = 2048  # dense entries per side whose pairwise products the virtual interval term weighs
#: Bias the normal interval allows, in deviations of the median of the tables. The skimmed
#: estimate is slightly biased (low, by the dense set's selection and the median of skewed table
#: errors): over 26 workloads x 3 budgets x 2 key types, 20 seeds each, the standardised errors
#: averaged -0.36 to +0.05 (docs/defaults.md, "Interval"); 0.5 covers that with a margin.
MEDIAN_BIAS = 0.5
ROUNDING = 1e-9  # relative floor of interval half-widths (float64 sums of the dense terms)
#: A key is skimmed only when its estimate is at least JUSTIFY_Z standard errors of the mean of
#: its ``depth`` table estimates, ``sqrt(F2(residual) / width / depth)`` (docs/defaults.md,
#: "Justified skims"): a lighter key's value is mostly its colliders', and skimming it moves their
#: weight out of the residual (the residual terms then fall short, the interval with them).
JUSTIFY_Z = 6.0
# unbounded keys: prefix hierarchy shape (see skimsketch.sketch.skim.hierarchy and docs/unbounded.md)
DEFAULT_HIER_DEPTH = 4
HIER_WIDTH_DIVISOR = 8  # default hierarchy width: the power of two <= width / HIER_WIDTH_DIVISOR
HIER_BYTES_SHARE = 0.4  # for_bytes: share of the budget given to the hierarchy (docs/unbounded.md)


def default_hier_width(width: int) -> int:
    """Default hierarchy width for main width ``width``: a power of two, at least 16.

    >>> default_hier_width(1638), default_hier_width(64)
    (128, 16)
    """
    return 1 << max(MIN_LG, min(MAX_LG, (max(1, width // HIER_WIDTH_DIVISOR)).bit_length() - 1))


def justified_factor(depth: int) -> float:
    """Lowest skim threshold, in deviations of one table estimate, that the sketch can justify:
    ``JUSTIFY_Z / sqrt(depth)`` (a key's mean over ``depth`` tables at ``JUSTIFY_Z`` standard errors).

    >>> round(justified_factor(3), 3), round(justified_factor(5), 3)
    (3.464, 2.683)
    """
    return JUSTIFY_Z / math.sqrt(depth)


def _heaviest_squares(values: np.ndarray) -> np.ndarray:
    """Squares of the ``MAX_PAIR_SIDE`` largest ``|values|``."""
    sq = np.square(values)
    return sq if len(sq) <= MAX_PAIR_SIDE else np.partition(sq, len(sq) - MAX_PAIR_SIDE)[-MAX_PAIR_SIDE:]


def _check_threshold(threshold) -> float:
    """A heavy-hitter threshold as a positive finite float, or a ValueError naming it."""
    if isinstance(threshold, (bool, np.bool_)) or not isinstance(threshold, (int, float, np.integer, np.floating)):
        raise ValueError(f"threshold must be a positive finite number, got {threshold!r}")
    t = float(threshold)
    if not (math.isfinite(t) and t > 0):
        raise ValueError(f"threshold must be a positive finite number, got {threshold!r}")
    return t


def _entries_range(keys: np.ndarray) -> tuple[int, int] | None:
    """(smallest, largest) of exact-mode keys (ascending), or None."""
    return (int(keys[0]), int(keys[-1])) if len(keys) else None



#: the sketched terms of ESTSKIMJOINSIZE: (part of f, part of g), part 0 dense, 1 residual
SKETCHED = ((0, 1), (1, 0), (1, 1))


def _table_sd(ff, gg, fg, width: int) -> float:
    """Deviation of one table's sum of the sketched terms ``Z(f_i, g_j)``, (i, j) in SKETCHED.

    ``ff``, ``gg``: inner products of the parts of f (of g); ``fg[i][j] = f_i . g_j`` (part 0
    dense, 1 residual; the sketch's estimates). For hash-sketch inner products
    ``|Cov(Z(a, b), Z(c, d))| <= (|a.c| |b.d| + |a.d| |b.c|) / width`` (up to diagonal terms), so
    the terms' deviations add on a self-join (the two cross terms are one draw) and in
    quadrature when f and g share little; never more than the sum of the terms' deviations."""
    var = 0.0
    for i, j in SKETCHED:
        for k, m in SKETCHED:
            var += abs(ff[i][k] * gg[j][m]) + abs(fg[i][m] * fg[k][j])
    return math.sqrt(max(var, 0.0) / width)


class SkimResult:
    """Dense keys, their estimated frequencies, and the residual counters."""

    __slots__ = ("keys", "values", "residual", "dense_sketch", "threshold", "rounds", "agree", "impostors",
                 "tested", "search", "resolution", "complete")

    def __init__(self, keys, values, residual, dense_sketch, threshold, rounds, agree, impostors,
                 tested=0, search=None, resolution=0.0, complete=False):
        self.complete = complete  # taken because it explained every counter (skimdense.explains)
        self.resolution = resolution  # smallest |frequency| the sketch resolves (heavy_hitters refuses below)
        self.tested = tested  # keys tested on the main counters (domain size, or hierarchy candidates)
        self.search = search  # unbounded keys: prefix-search statistics (skimsketch.sketch.skim.hierarchy)
        self.agree = agree  # tables that had to agree for a key to count as dense (all of them)
        self.impostors = impostors  # bound on the expected absent keys skimmed by chance (budget x rounds)
        self.keys = keys  # int64, sorted
        self.values = values  # float64
        self.residual = residual  # float64 (depth, width)
        self.dense_sketch = dense_sketch  # float64 (depth, width) = counters - residual
        self.threshold = threshold
        self.rounds = rounds


class SkimmedSketch(HashSketch):
    """Skimmed sketch over the integer domain ``[0, domain)``, or over unbounded keys.

    With ``domain=m`` keys are integers in ``[0, m)`` and SKIMDENSE scans the
    domain (the paper's setting). Without ``domain`` keys may be any int64,
    str or bytes; by default (``search="virtual"``) the counters are the hash
    sketch of every key's signed virtual id, and SKIMDENSE scans the ids
    (:mod:`skimsketch.sketch.skim.virtual`). ``hier_width`` / ``hier_depth`` /
    ``search="prefix"`` keep a prefix hierarchy instead
    (:mod:`skimsketch.sketch.skim.hierarchy`: ``6 x hier_depth x hier_width`` counters,
    ``hier_width`` a power of two) in which SKIMDENSE finds the dense keys
    top-down; dense keys are reported by their canonical int64 key (str and
    bytes keys by :func:`~skimsketch.fingerprint64`). Outside the virtual
    layout the main counters are those of a :class:`~skimsketch.HashSketch` of
    the same shape and seed.

    >>> import skimsketch as ss
    >>> f = ss.SkimmedSketch(width=64, depth=5, seed=2, domain=1000).update([5] * 500 + list(range(100)))
    >>> g = ss.SkimmedSketch(width=64, depth=5, seed=2, domain=1000).update([5] * 300 + list(range(50)))
    >>> e = f.join_size(g)
    >>> e.method, e.detail["dense_f"], e.detail["dense_g"]
    ('skimmed', 1, 1)
    """

    KIND = 3
    METHOD = "skimmed"

    def __init__(self, width: int, depth: int, seed: int = 0, domain: int | None = None,
                 dtype: str = "int64", skim_factor: float = DEFAULT_SKIM_FACTOR,
                 hier_width: int | None = None, hier_depth: int | None = None, search: str | None = None,
                 exact: bool = False, virtual_lg: int | None = None):
        if domain is not None and (
            isinstance(domain, bool) or not isinstance(domain, (int, np.integer)) or not 1 <= domain < 2**63
        ):
            raise ValueError(f"domain must be an int in [1, 2**63) or None (unbounded keys), got {domain!r}")
        if domain is not None and domain > MAX_SCAN_DOMAIN:
            raise ValueError(
                f"domain={domain} is larger than the {MAX_SCAN_DOMAIN} keys (2**22) a bounded skimmed sketch "
                "scans per query (docs/defaults.md: query cost); build it without a domain (domain=None: "
                "unbounded keys, found by a prefix search of bounded cost)"
            )
        if isinstance(skim_factor, bool) or not isinstance(skim_factor, (int, float)) or not (
            math.isfinite(skim_factor) and skim_factor > 0
        ):
            raise ValueError(f"skim_factor must be a positive finite number, got {skim_factor!r}")
        if domain is not None and (hier_width is not None or hier_depth is not None):
            raise ValueError("hier_width and hier_depth only apply to unbounded keys (domain=None)")
        if domain is not None and search is not None:
            raise ValueError(f"search={search!r} only applies to unbounded keys (domain=None): a bounded "
                             "sketch scans its domain")
        if search is not None and search not in SEARCHES:
            raise ValueError(f"search must be one of {SEARCHES} (or None), got {search!r}")
        if search in ("range", "virtual") and (hier_width is not None or hier_depth is not None):
            raise ValueError("hier_width and hier_depth only apply to search='prefix'")
        if search is None and domain is None:  # hierarchy parameters ask for the prefix search
            search = "prefix" if hier_width is not None or hier_depth is not None else "virtual"
        if virtual_lg is not None and search != "virtual":
            raise ValueError(f"virtual_lg only applies to search='virtual', got search={search!r}")
        if search == "virtual":
            virtual_lg = DEFAULT_VIRTUAL_LG if virtual_lg is None else virtual_lg
            if isinstance(virtual_lg, (bool, np.bool_)) or not isinstance(virtual_lg, (int, np.integer)) or not (
                MIN_VIRTUAL_LG <= virtual_lg <= MAX_VIRTUAL_LG
            ):
                raise ValueError(f"virtual_lg must be an int in [{MIN_VIRTUAL_LG}, {MAX_VIRTUAL_LG}] (a virtual "
                                 f"domain of 2**virtual_lg ids), got {virtual_lg!r}")
        super().__init__(width, depth, seed, dtype, exact)
        self._domain_size = None if domain is None else int(domain)
        self._skim_factor = float(skim_factor)
        self._search = None if domain is not None else search
        self._key_range = None  # search="range": (smallest, largest) integer key inserted, or None
        self._virtual_lg = int(virtual_lg) if search == "virtual" else None  # search="virtual": 2**lg ids
        if self._search == "prefix":
            hw = default_hier_width(self._width) if hier_width is None else hier_width
            if isinstance(hw, (bool, np.bool_)) or not isinstance(hw, (int, np.integer)) or not (
                (1 << MIN_LG) <= hw <= (1 << MAX_LG) and hw & (hw - 1) == 0
            ):
                raise ValueError(f"hier_width must be a power of two in [{1 << MIN_LG}, {1 << MAX_LG}], got {hw!r}")
            hd = DEFAULT_HIER_DEPTH if hier_depth is None else hier_depth
            if isinstance(hd, (bool, np.bool_)) or not isinstance(hd, (int, np.integer)) or not (
                MIN_HIER_DEPTH <= hd <= MAX_HIER_DEPTH
            ):
                raise ValueError(f"hier_depth must be an int in [{MIN_HIER_DEPTH}, {MAX_HIER_DEPTH}], got {hd!r}")
            self._hier_lg = int(hw).bit_length() - 1
            self._hier_depth = int(hd)
            if self._exact is None:
                self._state = LinearState(self._state_shapes(), self._dtype)

    @property
    def domain(self) -> int | None:
        """The declared key domain size ``m`` (keys in ``[0, m)``), or ``None`` for unbounded keys."""
        return self._domain_size

    @property
    def unbounded(self) -> bool:
        return self._domain_size is None

    @property
    def search(self) -> str | None:
        """How unbounded keys are found: ``"range"`` (scan of the inserted key range),
        ``"prefix"`` (prefix hierarchy); ``None`` with a domain (scan of the domain)."""
        return self._search

    @property
    def key_range(self) -> tuple[int, int] | None:
        """``search="range"``: the smallest and largest integer key inserted (deleted keys
        included; ``None`` with no integer key, and again once the sketch is all zero). In exact
        mode: the smallest and largest key held (the entries are the state)."""
        if self._exact is not None:
            if self._search != "range" or self._key_domain != "int" or not len(self._exact):
                return None
            return _entries_range(self._exact.keys)
        return self._key_range

    @property
    def virtual_lg(self) -> int | None:
        """``search="virtual"``: keys are skimmed as signed ids in ``[0, 2**virtual_lg)``
        (:mod:`skimsketch.sketch.skim.virtual`); ``None`` otherwise."""
        return self._virtual_lg

    @property
    def names_keys(self) -> bool:
        """Whether the dense keys found are the keys themselves (``heavy_hitters`` can list them):
        False in the virtual layout, whose dense entries are virtual ids (ask ``frequency`` or
        ``heavy_hitters(candidates=...)`` for keys you name)."""
        return self._search != "virtual" or self._exact is not None

    @property
    def hier_width(self) -> int | None:
        return None if self._search != "prefix" else 1 << self._hier_lg

    @property
    def hier_depth(self) -> int | None:
        return None if self._search != "prefix" else self._hier_depth

    @property
    def hierarchy_counters(self) -> np.ndarray | None:
        """Read-only (6, hier_depth, hier_width) prefix-level counters (``None`` with a domain; in
        exact mode the counters it would convert to)."""
        return None if self._search != "prefix" else self._counter_state().view("hierarchy")

    @property
    def skim_factor(self) -> float:
        return self._skim_factor

    @property
    def params(self) -> dict:
        p = dict(super().params, domain=self._domain_size, skim_factor=self._skim_factor)
        if self._search is not None:
            p["search"] = self._search  # before the hierarchy's fields: a mismatch names "search"
        if self._search == "prefix":
            p.update(hier_width=1 << self._hier_lg, hier_depth=self._hier_depth)
        if self._search == "virtual":
            p["virtual_lg"] = self._virtual_lg
        return p

    def check_compatible(self, other, operation="combine", same_dtype=True):
        # skim_factor is a query-time setting: it never makes sketches incompatible
        if isinstance(other, SkimmedSketch) and other._skim_factor != self._skim_factor:
            other = other.copy()
            other._skim_factor = self._skim_factor
        super().check_compatible(other, operation, same_dtype)

    def empty_like(self):
        return type(self)(**self.params)

    @property
    def nbytes(self) -> int:
        """Memory of the state: the counters (and hierarchy), plus 16 bytes of key range (in exact
        mode: the entries, whose keys give the range)."""
        return super().nbytes + (16 if self._search == "range" and self._exact is None else 0)

    def copy(self):
        out = super().copy()
        out._key_range = self._key_range
        return out

    __copy__ = copy

    def __eq__(self, other) -> bool:
        return super().__eq__(other) and other.key_range == self.key_range

    __hash__ = None

    def merge(self, other):
        super().merge(other)
        self._union_range(other.key_range)
        return self

    def subtract(self, other):
        super().subtract(other)
        self._union_range(other.key_range)
        return self

    # -- state beyond the main counters: the hierarchy, or the key range -------
    def _state_shapes(self) -> dict:
        shapes = super()._state_shapes()
        if self._search == "prefix":
            shapes["hierarchy"] = (LEVELS, self._hier_depth, 1 << self._hier_lg)
        return shapes

    def _exact_layout(self) -> tuple[int, int, int]:
        """(hierarchy lg, hierarchy depth, virtual lg) for exact-mode bytes; zeros where not used."""
        if self._search == "prefix":
            return self._hier_lg, self._hier_depth, 0
        return 0, 0, self._virtual_lg or 0

    @property
    def _hier(self) -> np.ndarray | None:
        return self._counter_state().array("hierarchy") if self._search == "prefix" else None

    def _union_range(self, other) -> None:
        """Widen the key range to cover ``other`` (a range or None); none while the state is zero."""
        if self._search != "range" or self._exact is not None:  # exact mode: the entries give the range
            return
        mine = self._key_range
        if other is not None:
            mine = other if mine is None else (min(mine[0], other[0]), max(mine[1], other[1]))
        self._key_range = mine if self._key_domain == "int" else None

    def _observed(self, batch, scalar) -> None:
        if self._search != "range" or self._exact is not None or batch.key_domain != "int" or scalar == 0:
            return
        keys = batch.keys if batch.weights is None else batch.keys[batch.weights != 0]
        self._union_range((int(keys.min()), int(keys.max())) if len(keys) else None)

    def _leaving_exact(self, store) -> None:
        if self._search == "range":
            self._key_range = _entries_range(store.keys) if self._key_domain == "int" else None

    def _changed(self) -> None:
        super()._changed()
        if self._key_domain is None:
            self._key_range = None  # all zero again: the range goes with the key domain

    def _delta(self, keys, weights):
        if self._search == "virtual":
            return {"counters": as_counter_delta(self._virtual_delta(keys, weights), self.float_counters)}
        delta = super()._delta(keys, weights)
        if self._search == "prefix":
            delta["hierarchy"] = hierarchy(self._seed, self._hier_lg, self._hier_depth).delta(
                keys, weights, self.float_counters)
        return delta

    def _virtual_delta(self, keys, weights) -> np.ndarray:
        """The counter delta of a canonical batch: the hash sketch of its virtual ids with signed
        weights (:mod:`skimsketch.sketch.skim.virtual`, one fused kernel); a long unweighted batch is summed
        per id first (cheaper than hashing every key, same counters)."""
        salt, lg = virtual_salt(self._seed), self._virtual_lg
        if weights is None and len(keys) >= (1 << lg) // 4:
            ids, net = kernels.virtual_counts(keys, salt, lg)
            return kernels.hash_delta(self.family, ids, net, self._width, self._depth, self.float_counters)
        return kernels.virtual_hash_delta(self.family, keys, weights, salt, lg, self._width, self._depth,
                                          self.float_counters)

    def _point_tables(self, key: int) -> np.ndarray:
        if self._search != "virtual":
            return super()._point_tables(key)
        ids, signs = virtual_ids(np.array([key], dtype=np.int64), self._seed, self._virtual_lg)
        return super()._point_tables(int(ids[0])) * float(signs[0])

    def _point_variance(self) -> float:
        """Virtual layout: the keys sharing the key's id add a term shared by every table, of
        variance at most ``F2 / 2**lg``; the bound covers it beside the counters' ``F2 / width``."""
        var = super()._point_variance()
        if self._search == "virtual":
            var += f2_bound(self.self_join_tables()) / (1 << self._virtual_lg)
        return var

    def _validate_keys(self, keys):
        if self._domain_size is None:
            return
        if len(keys) and (keys.min() < 0 or keys.max() >= self._domain_size):
            bad = keys[(keys < 0) | (keys >= self._domain_size)][0]
            raise KeyDomainError(f"key {int(bad)} is outside the declared domain [0, {self._domain_size})")

    def _domain(self):
        return self._domain_size

    def _kind_param(self) -> float:
        return self._skim_factor

    def _extension(self, counter_width: int) -> bytes:
        if self._search == "virtual":
            return fmt.encode_virtual(self._virtual_lg)
        if self._search == "range":
            return fmt.encode_key_range(self._key_range)
        if self._search is None:
            return b""
        return fmt.encode_hierarchy(self._hier_lg, self._hier_depth, self._hier, self.float_counters, counter_width)

    @classmethod
    def _from_header(cls, head, ext):
        dtype = "float64" if head.float_counters else "int64"
        virtual = fmt.exact_virtual_lg(ext, head) != 0 if head.exact else fmt.is_virtual(ext)
        if head.version == fmt.VIRTUAL_VERSION or virtual:
            if head.domain is not None:
                raise CorruptSketchError("a skimmed sketch in the virtual layout has no domain")
            lg = fmt.exact_virtual_lg(ext, head) if head.exact else fmt.decode_virtual(ext, head)
            if not MIN_VIRTUAL_LG <= lg <= MAX_VIRTUAL_LG:
                raise CorruptSketchError(f"virtual domain lg {lg} out of range [{MIN_VIRTUAL_LG}, {MAX_VIRTUAL_LG}]")
            return cls(head.width, head.depth, head.seed, dtype=dtype, skim_factor=head.param, search="virtual",
                       virtual_lg=lg, exact=head.exact)
        if head.domain is not None:
            if ext and not head.exact:
                raise CorruptSketchError(f"a skimmed sketch with a domain has no extension, found {len(ext)} bytes")
            return cls(head.width, head.depth, head.seed, domain=head.domain, dtype=dtype, skim_factor=head.param,
                       exact=head.exact)
        if head.exact:  # the hierarchy's shape only (the entries are the sketch's to read); (0, 0): a key range
            lg, hd = fmt.exact_hier_shape(ext)
            if (lg, hd) == (0, 0):
                return cls(head.width, head.depth, head.seed, dtype=dtype, skim_factor=head.param, search="range",
                           exact=True)
            if not (MIN_LG <= lg <= MAX_LG and MIN_HIER_DEPTH <= hd <= MAX_HIER_DEPTH):
                raise CorruptSketchError(f"exact-mode hierarchy shape {hd}x2**{lg} out of range")
            return cls(head.width, head.depth, head.seed, dtype=dtype, skim_factor=head.param,
                       hier_width=1 << lg, hier_depth=hd, exact=True)
        if fmt.is_key_range(ext):
            key_range = fmt.decode_key_range(ext, head)
            if (key_range is not None) != (head.key_domain == "int"):
                raise CorruptSketchError("a range-scanning sketch has a key range exactly when it holds integer keys")
            sk = cls(head.width, head.depth, head.seed, dtype=dtype, skim_factor=head.param, search="range")
            sk._key_range = key_range
            return sk
        lg, hd, hier = fmt.decode_hierarchy(ext, head)
        sk = cls(head.width, head.depth, head.seed, dtype=dtype, skim_factor=head.param,
                 hier_width=1 << lg, hier_depth=hd)
        sk._state = LinearState.of({"counters": sk._counters, "hierarchy": hier}, 0, 0, head.float_counters)
        return sk

    # -- sizing ---------------------------------------------------------------
    @classmethod
    def for_bytes(cls, nbytes: int, seed: int = 0, depth: int | None = None, domain: int | None = None, **params):
        """The default-shaped sketch whose state and serialised form fit in ``nbytes`` bytes (up to
        twice that with float counters, ``dtype="float64"``, which keep the count sketch's shape so
        that a SUM sketch joins the count sketch of the same budget: :mod:`skimsketch.sketch.sizing`).

        It starts in exact mode (``exact=False`` to start with counters): while
        the distinct keys fit :attr:`exact_capacity` (about ``nbytes / 16``) it
        keeps and answers their exact frequencies, then converts to counters
        for good (docs/format.md, "Exact mode"); either way within ``nbytes``.

        With a domain: the counters as for every sketch. Without: by default
        (``search="range"``) the counters and the 24-byte key range, so integer
        keys spanning up to ``2**22`` values are skimmed as well as with a
        domain and other keys are estimated as by a hash sketch of the same
        bytes (docs/unbounded.md). ``search="prefix"`` (or ``hier_width`` /
        ``hier_depth``): the hierarchy gets about ``HIER_BYTES_SHARE`` of the
        budget (a power-of-two width of ``hier_depth`` tables per level, at
        least 16), the main counters the rest; ``nbytes`` must leave room for
        at least one main counter per table.
        """
        params.setdefault("exact", True)
        if domain is not None:
            return super().for_bytes(nbytes, seed, depth, domain=domain, **params)
        cb = COUNTER_BYTES  # whatever the dtype: a SUM sketch has the count sketch's shape (skimsketch.sketch.sizing)
        search = params.pop("search", None)
        if search is None:
            search = "prefix" if "hier_width" in params or "hier_depth" in params else "virtual"
        if search in ("range", "virtual"):
            ext = fmt.KEY_RANGE_BYTES if search == "range" else fmt.VIRTUAL_BYTES
            width, d = shape_for_bytes(framed_budget(nbytes, fmt.FRAME_BYTES + ext, depth), depth)
            return cls(width, d, seed, search=search, **params)
        if search != "prefix":
            raise ValueError(f"search must be one of {SEARCHES} (or None), got {search!r}")
        room = framed_budget(nbytes, fmt.FRAME_BYTES + fmt.HIER_HEADER_BYTES, depth)
        hd = params.pop("hier_depth", None)
        hd = DEFAULT_HIER_DEPTH if hd is None else hd
        if "hier_width" in params:
            hw = params.pop("hier_width")
        else:
            per_width = cb * LEVELS * hd
            hw = 1 << max(MIN_LG, int(max(1.0, HIER_BYTES_SHARE * room / per_width)).bit_length() - 1)
        hier_bytes = cb * LEVELS * hd * hw if isinstance(hw, int) and isinstance(hd, int) else 0
        d = DEFAULT_DEPTH if depth is None else depth
        if room - hier_bytes < cb * max(1, d if isinstance(d, int) else 1):
            raise ValueError(
                f"nbytes={nbytes} is too small for an unbounded skimmed sketch: its hierarchy alone takes "
                f"{hier_bytes} bytes: give a larger budget or pass a domain"
            )
        width, d = shape_for_bytes(room - hier_bytes, depth)
        return cls(width, d, seed, hier_width=hw, hier_depth=hd, search="prefix", **params)

    # -- SKIMDENSE (skimsketch.sketch.skim.skimdense) ----------------------------------
    def _floor(self, residual: np.ndarray) -> float:
        """Lowest skim threshold: ``max(skim_factor, JUSTIFY_Z / sqrt(depth))`` times a table
        estimate's noise ``sqrt(F2(residual) / width)`` (:func:`justified_factor`)."""
        return max(self._skim_factor, justified_factor(self._depth)) * self._noise(residual)

    def _complete_floor(self, residual: np.ndarray) -> float:
        """``skim_factor`` times a table estimate's noise: the floor of a skim that may explain every counter."""
        return self._skim_factor * self._noise(residual)

    def _noise(self, residual: np.ndarray) -> float:
        return math.sqrt(float(np.mean(row_dots(residual, residual))) / self._width)

    def _source(self, counters: np.ndarray, t: float) -> Candidates:
        """Candidate keys: the domain or key-range scan, or the prefix search down to threshold ``t``."""
        if self._domain_size is not None:
            return domain_candidates(self._seed, self._width, self._depth, self._domain_size)
        if self._search == "virtual":
            return domain_candidates(self._seed, self._width, self._depth, 1 << self._virtual_lg)
        if self._search == "range":
            if self._key_range is None or not self.scans_keys:
                return no_candidates(self._depth)
            return range_candidates(self._seed, self._width, self._depth, *self._key_range)
        h = hierarchy(self._seed, self._hier_lg, self._hier_depth)
        return prefix_candidates(self._seed, self._width, self._depth, h.search, self._hier.astype(np.float64), t)

    @property
    def scans_keys(self) -> bool:
        """Whether SKIMDENSE has candidates: a domain, a prefix hierarchy, or a key range of at
        most ``MAX_SCAN_DOMAIN`` keys (else the sketch answers as a hash sketch)."""
        if self._search != "range" or self._exact is not None:  # exact mode: every key is known
            return True
        kr = self._key_range
        if kr is None:
            return self._key_domain != "str"  # no key at all: nothing to find, nothing missed
        return kr[1] - kr[0] < MAX_SCAN_DOMAIN

    def _resolution(self, res: DenseResult, cand: Candidates) -> float:
        """Smallest threshold the sketch resolves: peeling's, and for unbounded keys the prefix search's."""
        if not self.scans_keys:
            return math.inf
        r = res.resolution
        if cand.stats is not None:
            # the search may also miss a key whose prefix collided at a narrow level; such a key
            # would leave |residual| >= its weight (less noise) in every table, so no key heavier
            # than the smallest per-table maximum (plus three noise deviations) can be missing
            noise = math.sqrt(float(np.mean(row_dots(res.residual, res.residual))) / self._width)
            missed = float(np.abs(res.residual).max(axis=1).min()) + 3.0 * noise
            r = max([r, missed, *cand.stats["thresholds"], *cand.stats["cut"]])
        return r

    def _search_floor(self) -> float:
        """Lowest threshold of the prefix search: ``skim_factor * max(|total weight|, sqrt(F2)) / width``
        (the level thresholds themselves adapt upwards, :mod:`skimsketch.sketch.skim.hierarchy`)."""
        n = max(abs(float(self._total)), math.sqrt(f2_bound(self.self_join_tables())))
        return self._skim_factor * n / self._width

    def _skim_at(self, floor) -> SkimResult:
        counters = self._counters.astype(np.float64)
        cand = self._source(counters, self._search_floor() if callable(floor) else min(floor, self._search_floor()))
        res, complete = None, False
        if callable(floor):  # a skim that explains every counter is exact: taken whenever there is one
            res = skimdense(counters, cand, self._complete_floor)
            complete = explains(res.residual, counters)
            if not complete:
                res = justified(skimdense(counters, cand, floor), counters)
        res = skimdense(counters, cand, floor) if res is None else res
        thr = res.threshold if math.isfinite(res.threshold) else res.resolution
        return SkimResult(res.keys, res.values, res.residual, counters - res.residual, thr, res.rounds,
                          self._depth, BUDGET * res.rounds, res.tested, cand.stats, self._resolution(res, cand),
                          complete)

    def threshold(self) -> float:
        """The threshold SKIMDENSE reached: the last round's (keys at or above it were resolved)."""
        return self.skim().threshold

    def skim(self) -> SkimResult:
        """Run SKIMDENSE (module :mod:`skimsketch.sketch.skim.skimdense`; cached until the sketch changes).

        In exact mode every key is dense and known exactly: the result lists all
        entries, with a zero residual, threshold and resolution 0."""
        res = self._cache.get("skim")
        if res is None:
            res = self._cache["skim"] = self._skim_at(self._floor) if self._exact is None else self._exact_skim()
        return res

    def _exact_skim(self) -> SkimResult:
        counters = self._counters.astype(np.float64)
        keys, values = self._exact.keys.copy(), self._exact.wide_weights().astype(np.float64)
        if self._search == "virtual":  # the dense entries of the counters: signed sums per virtual id
            ids, signs = virtual_ids(keys, self._seed, self._virtual_lg)
            keys, inverse = np.unique(ids, return_inverse=True)
            values = np.bincount(inverse, weights=values * signs, minlength=len(keys))
        return SkimResult(keys, values, np.zeros_like(counters), counters, 0.0, 0, self._depth, 0.0, len(keys))

    def heavy_hitters(self, threshold: float | None = None, candidates=None) -> dict:
        """Keys whose estimated ``|frequency|`` is at least ``threshold`` -> {canonical key: estimate}.

        ``threshold=None``: the dense keys of the default skim. Otherwise
        SKIMDENSE peels down to ``threshold`` and every key it resolves there
        is returned; if ``threshold`` is below the smallest one this sketch
        can tell from chance (:attr:`SkimResult.resolution`: peeling's, and the
        prefix search's capacity for unbounded keys) a ``ValueError`` names
        that smallest threshold instead of returning a partial answer. Keys
        are canonical int64 keys (a str/bytes key as its ``ss.canonical_key``).
        In exact mode the answer is exact: every key (``threshold=None``) or
        every key with ``|weight| >= threshold``, with its exact weight.

        >>> import skimsketch as ss
        >>> s = ss.SkimmedSketch(256, 5, seed=1, search="prefix").update(["a"] * 500 + ["b"] * 300 + [f"k{i}" for i in range(200)])
        >>> sorted(s.heavy_hitters(100)) == sorted([ss.canonical_key("a"), ss.canonical_key("b")])
        True

        ``candidates`` (keys of any container, as :meth:`update` takes them): only those keys
        are reported, each with its dense estimate. In the virtual layout (``search="virtual"``,
        the ``for_bytes`` default) the dense entries are virtual ids, not keys, so the sketch
        names keys only when given candidates: a candidate is reported when its virtual id is
        dense, with the estimate ``sign * value`` (colliding keys, if any, share that value).
        """
        if candidates is not None:
            return self._candidate_hitters(threshold, candidates)
        if not self.names_keys:
            raise ValueError(
                "heavy_hitters: this sketch's dense entries are virtual ids (search='virtual'): it cannot name "
                "its keys; pass candidates=[...] to report the heavy ones among keys you name, or ask "
                "frequency(key) (with an interval) for one key")
        if not self.scans_keys:
            what = ("string keys" if self._key_range is None else
                    f"integer keys spanning {self._key_range[1] - self._key_range[0] + 1} values")
            raise ValueError(
                f"heavy_hitters: this sketch cannot enumerate its keys ({what}; a key-range scan covers at most "
                f"{MAX_SCAN_DOMAIN}): build it with search='prefix' (a prefix hierarchy) or a domain to find heavy "
                "keys, or ask frequency(key) for a key you know")
        if threshold is None:
            if self._exact is not None:
                return self._exact.items()
            keys, values, _ = self._reported(self.skim())
            return dict(zip(keys.tolist(), values.tolist()))
        t = _check_threshold(threshold)
        if self._exact is not None:  # every key, exactly
            return {k: w for k, w in self._exact.items().items() if abs(w) >= t}
        keys, values = self._resolved_at(threshold, t)
        keep = np.abs(values) >= t
        return dict(zip(keys[keep].tolist(), values[keep].tolist()))

    def _resolved_at(self, threshold, t: float):
        """(dense keys, values) a report names after peeling down to ``t`` (cached per ``t``), or the
        ``ValueError`` of :meth:`heavy_hitters` when ``t`` is below what this sketch resolves."""
        res = self._cache.get(("skim", t))
        if res is None:
            res = self._cache[("skim", t)] = self._skim_at(t)
        keys, values, resolution = self._reported(res)
        if t < resolution:
            raise ValueError(
                f"heavy_hitters({threshold!r}): this sketch cannot resolve keys below |frequency| "
                f"{resolution:.6g} (lighter keys are indistinguishable from collisions); ask for a "
                f"threshold >= {resolution:.6g} or use a larger sketch"
            )
        return keys, values

    def _candidate_hitters(self, threshold, candidates) -> dict:
        """heavy_hitters restricted to ``candidates``: {canonical key: estimate} of those reported."""
        batch = canonicalize(candidates)
        if None not in (batch.key_domain, self._key_domain) and batch.key_domain != self._key_domain:
            raise KeyTypeError(f"candidates are {batch.key_domain} keys but this sketch holds "
                               f"{self._key_domain} keys: they can never match")
        keys = np.unique(batch.keys)
        if self._search != "virtual" or self._exact is not None:
            found = self.heavy_hitters(threshold)
            return {k: found[k] for k in keys.tolist() if k in found}
        if threshold is None:
            dense_ids, values, _ = self._reported(self.skim())
            t = 0.0
        else:
            t = _check_threshold(threshold)
            dense_ids, values = self._resolved_at(threshold, t)
        ids, signs = virtual_ids(keys, self._seed, self._virtual_lg)
        pos = np.searchsorted(dense_ids, ids)
        pos = np.minimum(pos, max(len(dense_ids) - 1, 0))
        hit = (dense_ids[pos] == ids) if len(dense_ids) else np.zeros(len(ids), dtype=bool)
        est = np.where(hit, values[pos] if len(dense_ids) else 0.0, 0.0) * signs
        keep = hit & (np.abs(est) >= t)
        return dict(zip(keys[keep].tolist(), est[keep].tolist()))

    def _virtual_sd(self, other, value: float, a: SkimResult, b: SkimResult, dense_dense: float,
                    f2_dense_a: float, f2_dense_b: float, confidence: float) -> float:
        """Deviation of the virtual ids' collision terms ``F.G - f.g`` (:mod:`skimsketch.sketch.skim.virtual`):
        at most ``(F2(f) F2(g) + (f.g)^2) / 2**lg`` in variance. Every pair with a residual key is
        in. A pair of dense entries ``(u, v)`` collides with probability ``2**-lg`` and then adds
        about ``f(u) g(v)``: the largest such products, as many as ``0.1 (1 - confidence) 2**lg``
        (a tenth of the interval's miss rate in expected collisions), are rare events the interval
        may miss; the other pairs are a spread, and their squares are in. 0 outside the virtual layout."""
        if self._search != "virtual":
            return 0.0
        f2f, f2g = f2_bound(self.self_join_tables()), f2_bound(other.self_join_tables())
        var = max(f2f * f2g - f2_dense_a * f2_dense_b, 0.0) + max(value * value - dense_dense * dense_dense, 0.0)
        rare = int(0.1 * (1.0 - confidence) * (1 << self._virtual_lg))
        sa, sb = _heaviest_squares(a.values), _heaviest_squares(b.values)
        # entries beyond the heaviest MAX_PAIR_SIDE per side: their pairs are a spread, all of them in
        var += max(f2_dense_a * f2_dense_b - float(sa.sum()) * float(sb.sum()), 0.0)
        pairs = np.outer(sa, sb).ravel()
        if rare < len(pairs):
            var += float(np.partition(pairs, len(pairs) - rare - 1)[: len(pairs) - rare].sum())
        return math.sqrt(max(var, 0.0) / (1 << self._virtual_lg))

    def _incomplete(self, other, a: SkimResult, b: SkimResult) -> float:
        """For each side whose skim was taken as complete, ``sqrt(F2(residual) F2(other side))``
        (Cauchy-Schwarz on what that skim left unexplained): such a skim may have missed a light
        key that the fit absorbed, so the residual terms no longer show it (errors ~1e-5 of the
        join missed intervals of that width); 0 for a skim that is not complete."""
        out = 0.0
        for res, side in ((a, other), (b, self)):
            if res.complete:
                out += math.sqrt(float(np.mean(row_dots(res.residual, res.residual)))
                                 * f2_bound(side.self_join_tables()))
        return out

    def _doubtful(self, res: SkimResult):
        """(mask of the dense keys a report would not name, (depth, width) sketch of those keys)."""
        if self._exact is not None:  # exact mode: every key is known, none is in doubt
            return np.zeros(len(res.keys), dtype=bool), np.zeros((self._depth, self._width))
        ok, _, b, s = self._report(res)
        vals = np.where(ok, 0.0, res.values)
        return ~ok, np.stack([np.bincount(b[p], weights=vals * s[p], minlength=self._width)
                              for p in range(self._depth)])

    def _doubt(self, a: SkimResult, other, b: SkimResult, ia, ib) -> float:
        """Largest change of a table's estimate if the dense keys a report would not name were
        chance passes: the estimate subtracts the collisions of distinct dense keys
        (sketch(dense_f) . sketch(dense_g) - f_d . g_d); for such a key those "collisions" are
        the weight it took from a real key, so that part of the correction is in doubt."""
        ma, ua = self._doubtful(a)
        mb, ub = other._doubtful(b)
        if not (ma.any() or mb.any()):
            return 0.0
        corr = row_dots(ua, b.dense_sketch) + row_dots(a.dense_sketch, ub) - row_dots(ua, ub)
        either = ma[ia] | mb[ib]
        corr = corr - float(np.dot(a.values[ia][either], b.values[ib][either]))
        return float(np.median(np.abs(corr)))

    def _reported(self, res: SkimResult):
        """(keys, values, resolution) of the dense keys a report may name (:func:`skimdense.reported`:
        chance passes controlled per query, not per peeling round)."""
        ok, t, _, _ = self._report(res)
        return res.keys[ok], res.values[ok], max(res.resolution, t)  # t is within res.resolution (skimdense)

    def _report(self, res: SkimResult):
        """(mask of the dense keys a report may name, its threshold, their buckets, their signs)."""
        b, s = family(self._seed).buckets_signs(res.keys, self._width, self._depth)
        b, s = b.astype(np.intp), s.astype(np.float64)
        ok, t = reported(res.residual, b, s, res.values, res.tested)
        return ok, t, b, s

    # -- ESTSKIMJOINSIZE ----------------------------------------------------
    def join_size(self, other, confidence: float = 0.95, bound: str = "normal") -> Estimate:
        """Estimated ``f·g`` by ESTSKIMJOINSIZE (see the module docstring).

        ``bound="normal"`` (default): ``median ± k sigma`` with ``k`` from
        :func:`~skimsketch.stats.bounds.normal_median_k` -- the median of normal
        table errors, off by up to ``MEDIAN_BIAS`` of its deviations (the
        estimate's measured bias, docs/defaults.md "Intervals"); ``bound="chebyshev"``: the distribution-free
        Chebyshev-median interval (:func:`~skimsketch.stats.bounds.chebyshev_k`),
        wider but valid whatever the error distribution."""
        conf = self._check_join(other, confidence)
        if bound not in BOUNDS:
            raise ValueError(f"bound must be one of {BOUNDS}, got {bound!r}")
        exact = self._exact_join(other)
        if exact is not None:
            return exact
        a, b = self.skim(), other.skim()
        common, ia, ib = np.intersect1d(a.keys, b.keys, assume_unique=True, return_indices=True)
        dense_dense = float(np.dot(a.values[ia], b.values[ib]))
        terms = np.stack([
            row_dots(a.dense_sketch, b.residual),
            row_dots(a.residual, b.dense_sketch),
            row_dots(a.residual, b.residual),
        ])
        tables = dense_dense + terms.sum(axis=0)
        value = float(np.median(tables))
        f2_dense_a, f2_dense_b = float(np.dot(a.values, a.values)), float(np.dot(b.values, b.values))
        f2_res_a = float(np.mean(row_dots(a.residual, a.residual)))
        f2_res_b = float(np.mean(row_dots(b.residual, b.residual)))
        means = terms.mean(axis=1)
        # one table's deviation: the sketched terms' variances and covariances (_table_sd)
        own_a = float(np.mean(row_dots(a.dense_sketch, a.residual)))
        own_b = float(np.mean(row_dots(b.dense_sketch, b.residual)))
        sd = _table_sd(((f2_dense_a, own_a), (own_a, f2_res_a)), ((f2_dense_b, own_b), (own_b, f2_res_b)),
                       ((dense_dense, means[0]), (means[1], means[2])), self._width)
        k = (normal_median_k(self._depth, conf, MEDIAN_BIAS) if bound == "normal"
             else chebyshev_k(self._depth, conf))
        # floating-point floor: a skim that explains every counter leaves sd ~ 0, and the value
        # still carries the rounding of sums over thousands of dense keys
        # the virtual layout's id collisions: one draw shared by every table (the median does not
        # shrink it), added in quadrature with the normal (or Chebyshev) factor of a single table
        k1 = normal_median_k(1, conf) if bound == "normal" else chebyshev_k(1, conf)
        virt = self._virtual_sd(other, value, a, b, dense_dense, f2_dense_a, f2_dense_b, conf)
        half = math.hypot(k * sd, k1 * virt) + ROUNDING * (abs(dense_dense) + float(np.abs(terms).sum(axis=0).max()))
        half += self._doubt(a, other, b, ia, ib) + self._incomplete(other, a, b)
        return Estimate(
            value, value - half, value + half, conf, self.METHOD,
            {
                "dense_dense": dense_dense, "dense_f": len(a.keys), "dense_g": len(b.keys),
                "common_dense": len(common), "terms": [float(x) for x in np.median(terms, axis=1)],
                "threshold_f": a.threshold, "threshold_g": b.threshold, "bound": bound, "tables": tables,
            },
        )
