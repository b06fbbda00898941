"""``JoinSample``: a coordinated weighted (l2 priority) sample of a table at rest.

For tables at rest, the most accurate join-size summary per byte is a coordinated
weighted sample (Daliri, Freire, Musco, Santos, Zhang, "Sampling Methods for Inner Product
Sketching", VLDB 2024; after Bessa et al., PODS 2023): every key gets the rank
``u(k) / f(k)^2`` with one seeded uniform hash ``u`` shared by every table
(:mod:`skimsketch.sample.rank`), and the sample keeps the ``n`` keys of smallest rank with
their exact totals, and ``tau``, the ``(n+1)``-th smallest rank. Heavy keys are kept
exactly and by both sides at once; keys only one side has cost a slot and nothing else.
The join estimate (:mod:`skimsketch.sample.estimator`) is unbiased.

The sample is over 52-bit key fingerprints ``fp(k) = h(k) >> 12``: totals are kept per
fingerprint (two keys share one with probability about ``K^2 / 2**53`` among ``K`` keys,
and then count as one key with the sum of their totals), and the bytes hold the kept
fingerprints sorted and Rice-coded and the totals as varints (``docs/format.md``, kind 5,
layout 2), about 5-7 bytes an entry where 12 were needed for a key and an int32 total.
``n`` is the byte budget's: a whole sample keeps the longest prefix of its ``(rank, fp)``
order whose bytes fit ``nbytes`` (at most :func:`sample_max_entries`).

Life cycle.

* *Building* (``for_bytes``, ``update``, ``merge`` of building pieces): the sample holds
  every key's exact total (an int64 fingerprint and an int64/float64 total, 16 bytes a key plus
  numpy's overhead), so **its memory grows with the distinct keys**. Pieces merge by
  adding totals: exact, and (integer weights) the bytes do not depend on the partitioning
  or order. Deletes (negative weights) are fine while building: a key whose total returns
  to 0 leaves the table.
* *Finished* (``from_bytes``; ``to_bytes`` writes it): only the sample. A finished
  sample cannot be updated, and two finished samples whose keys may overlap cannot be
  merged (it cannot know the totals it did not keep): :class:`SampleMergeError` names
  the remedy, also when both kept every key (``tau = inf``), so that a daily union refused
  on a big day is refused on the first (``docs/sample.md``, "Unions over time"). A sample
  without keys updates and merges (adding its weights). The exact exception: pieces built for
  disjoint partitions of the key hash (``partition=(i, P)``: every key ``k`` of piece
  ``i`` has ``part_P(fp(k)) == i``, checked by ``update``) merge exactly: a piece keeps its
  ``min(K, C)`` smallest (so it may exceed ``nbytes``), the union keeps its smallest by the
  same rules, and when the pieces cover all ``P`` partitions the result is byte-identical
  to the sample built on one machine.

Queries always use the sample the object would serialise, so an answer is the same
before and after ``to_bytes``/``from_bytes``.

>>> import skimsketch as ss
>>> a = ss.JoinSample.for_bytes(4096, seed=1).update([1, 1, 2, 3])
>>> b = ss.JoinSample.for_bytes(4096, seed=1).update([1, 3, 3])
>>> float(a.join_size(b))  # every key kept: exact, 2*1 + 1*2
4.0
>>> ss.from_bytes(a.to_bytes()).join_size(b).value
4.0
"""

from __future__ import annotations

import math

import numpy as np

from ..format import header as fmt
from . import layout
from ..stats.bounds import check_confidence
from ..errors import (CorruptSketchError, CounterOverflowError, IncompatibleSketchError, KeyDomainError, KeyTypeError,
                      check_int)
from ..estimate import Estimate
from ..stats.exact_store import ExactStore, aggregate
from ..kernels import I64, weight_total
from ..keys.canonical import batch_scalar_weight, canonical_key, canonicalize, keys_array
from ..format.kinds import register_kind
from .estimator import METHOD, Side, join_estimate
from .totals import Totals
from .rank import MAX_PARTITIONS, fingerprints, order, partitions_fp, ranks, units
from .scale import check_stored
from .selection import Finished, select
from ..format.serde import Serialisable
from .merging import SampleMergeError, SampleMerges

__all__ = ["JoinSample", "SampleMergeError", "sample_max_entries"]

MIN_NBYTES, MAX_NBYTES = fmt.SAMPLE_MIN_BUDGET, fmt.SAMPLE_MAX_BUDGET
LAYOUT1_OVERHEAD, LAYOUT1_ENTRY, LAYOUT1_FLOAT_ENTRY = 100, 12, 16  # a layout-1 sample of capacity m: budget 100 + 12 m
_LAYOUT = {True: "layout 1", False: "layout 2"}  # the rank hash of a legacy sample, of a new one
_KINDS = {"int": "integer", "str": "string/bytes"}


def sample_max_entries(nbytes: int, dtype: str = "int64") -> int:
    """``C(nbytes)``: the most entries a sample of budget ``nbytes`` can keep, ``floor(8 (nbytes - 105) / 9)``
    for integer totals (an entry costs at least one bit of fingerprint code and one varint byte),
    ``floor(8 (nbytes - 105) / 65)`` for float totals, at most ``2**26``. A whole sample keeps fewer: the
    longest prefix of its order that fits ``nbytes`` (module docstring); a partial piece keeps ``min(K, C)``.

    >>> sample_max_entries(4096), sample_max_entries(16384), sample_max_entries(4096, "float64")
    (3547, 14470, 491)
    """
    nbytes = check_int("nbytes", nbytes, MIN_NBYTES, MAX_NBYTES)
    return layout.sample_max_entries(nbytes, dtype == "float64")


@register_kind
class JoinSample(SampleMerges, Serialisable):
    """A coordinated l2 priority sample of key fingerprints in ``nbytes`` bytes (module docstring).

    ``seed`` chooses the shared hash: only samples of equal seeds join. ``dtype`` is
    ``"int64"`` (COUNT, integer SUM; exact) or ``"float64"`` (SUM of floats: totals are
    float64 sums, so merges are exact up to the order of float additions).
    ``partition=(i, P)`` makes a piece for partition ``i`` of ``P`` of the key hash
    (:meth:`partition_of`).
    """

    KIND = fmt.SAMPLE_KIND
    METHOD = METHOD

    def __init__(self, nbytes: int = 16384, seed: int = 0, dtype: str = "int64", partition: tuple | None = None):
        self._budget = check_int("nbytes", nbytes, MIN_NBYTES, MAX_NBYTES)
        self._seed = check_int("seed", seed, 0, 2**64 - 1)
        if dtype not in ("int64", "float64"):
            raise ValueError(f"dtype must be 'int64' or 'float64', got {dtype!r}")
        self._float = dtype == "float64"
        self._parts, self._covered = 1, frozenset({0})
        if partition is not None:
            i, p = partition
            p = check_int("partition count", p, 1, MAX_PARTITIONS)
            self._parts, self._covered = (p, frozenset({check_int("partition index", i, 0, p - 1)})) if p > 1 \
                else (1, frozenset({0}))
        self._store: Totals | None = Totals(self._float)  # the exact totals while building
        self._fin: Finished | None = None  # the sample (cached while building)
        self._total = 0.0 if self._float else 0
        self._null = 0.0 if self._float else 0
        self._key_domain: str | None = None
        self._nonnegative = True  # the sign flag: no weight of a non-null key was negative (format bit 4)
        self._legacy = False  # read from layout 1: fingerprints h >> 12 (sample_rank), joins legacy samples only

    @classmethod
    def for_bytes(cls, nbytes: int = 16384, seed: int = 0, dtype: str = "int64",
                  partition: tuple | None = None) -> JoinSample:
        """The sample whose serialised bytes (and finished :attr:`nbytes`) fit in ``nbytes`` (148 to ``2**30``):
        it keeps the longest prefix of its ``(rank, fp)`` order that fits. A partial piece
        (``partition=(i, P)``) keeps ``min(K, C)`` entries (:func:`sample_max_entries`) so that pieces merge
        exactly: it may exceed ``nbytes`` by its ``ceil(P/8)``-byte bitmap plus the bytes of those entries
        beyond ``nbytes - 105``; the merged whole fits ``nbytes``."""
        return cls(nbytes, seed, dtype, partition)

    @staticmethod
    def partition_of(keys, count: int, seed: int = 0) -> np.ndarray:
        """``part_count(fp(k))`` of every key (int64; -1 for a null key): route rows to pieces with it."""
        k, null = keys_array(keys)
        out = partitions_fp(fingerprints(k, seed), count)
        if null is not None:
            out[null] = -1
        return out

    # -- description ------------------------------------------------------
    @property
    def params(self) -> dict:
        return {"nbytes": self._budget, "seed": self._seed, "dtype": "float64" if self._float else "int64"}

    budget = property(lambda self: self._budget, doc="The byte budget ``nbytes`` (the header's width field).")
    seed = property(lambda self: self._seed)
    dtype = property(lambda self: "float64" if self._float else "int64")
    float_counters = property(lambda self: self._float)
    total_weight = property(lambda self: self._total)
    null_weight = property(lambda self: self._null)
    key_domain = property(lambda self: self._domain())

    def _domain(self) -> str | None:
        """The key domain: None before the first key and once deletes left no key."""
        if self._key_domain is not None and self._store is not None and len(self._store) == 0:
            self._key_domain = None
        return self._key_domain

    @property
    def partition(self) -> tuple | None:
        """``(sorted covered partitions, P)`` of a partial piece; None for a whole sample."""
        return None if self._parts == 1 else (tuple(sorted(self._covered)), self._parts)

    @property
    def finished(self) -> bool:
        """True when the object holds only its sample (read from bytes, or merged from finished pieces) and holds
        a key: it can no longer be updated, and merges only with disjoint key-hash pieces or samples without keys.
        Also when the sample kept every key (``tau`` infinite): the rule must not depend on the table's size, or
        a daily union that works on small days would fail on the first big one (``docs/sample.md``)."""
        return not self._exact()

    @property
    def tau(self) -> float:
        """The sample's threshold: the ``(n+1)``-th smallest rank at totals times ``2^scale``, inf when every key
        is kept."""
        return self._sample().tau

    @property
    def scale(self) -> int:
        """The scale exponent ``sigma``: :attr:`tau` is the rank ``u / (f 2^sigma)^2``. 0 but for float totals
        whose ranks leave the doubles (:mod:`skimsketch.sample.scale`, ``docs/sample.md``)."""
        return self._sample().scale

    @property
    def n_keys(self) -> int:
        """Fingerprints (keys, but for collisions) with a non-zero total in the table (kept or not)."""
        return self._sample().n_keys

    @property
    def is_empty(self) -> bool:
        return self._sample().n_keys == 0 and self._null == 0

    @property
    def nonnegative(self) -> bool:
        """Every key's total is known to be ``>= 0``: no weight of a non-null key was negative (the sign flag,
        format bit 4, ANDed by merges), or the sample kept every key and none is negative. The interval then
        bounds the join from below by the products both samples kept (``docs/sample.md``)."""
        s = self._sample()
        return self._nonnegative or (s.complete and bool((s.totals >= 0).all()))

    @property
    def nbytes(self) -> int:
        """Memory of the state: while building, the exact totals (16 bytes a distinct key: grows with
        the keys); finished, the serialised size (at most the ``for_bytes`` budget)."""
        if self._store is not None:
            return self._store.nbytes
        return len(self.to_bytes())

    def sample_items(self) -> tuple[np.ndarray, np.ndarray]:
        """(fingerprints ``fp(k) = h(k) >> 12`` as int64, totals) of the sample, in sample order ``(rank, fp)``
        ascending: copies. (The sample is over fingerprints; it does not know its keys.)"""
        s = self._sample()
        return s.fps.copy(), s.totals.copy()

    def __repr__(self) -> str:
        state = "finished" if self.finished else "building"
        return f"JoinSample(nbytes={self._budget}, seed={self._seed}, dtype={self.dtype!r}, {state})"

    def __eq__(self, other) -> bool:
        return isinstance(other, JoinSample) and self.finished == other.finished and self.to_bytes() == other.to_bytes()

    __hash__ = None

    def empty_like(self) -> JoinSample:
        """An empty building sample with the same parameters (and partition, for a piece of one partition)."""
        part = (next(iter(self._covered)), self._parts) if self._parts > 1 and len(self._covered) == 1 else None
        return JoinSample(self._budget, self._seed, self.dtype, part)

    def __getstate__(self):
        """A building sample pickles its totals (so pieces shipped between processes still merge exactly)."""
        if self._store is None:
            return {"bytes": self.to_bytes()}
        store = self._store.store()
        return {"bytes": self.to_bytes(), "keys": np.asarray(store.keys), "totals": store.wide_weights(),
                "total": self._total, "null": self._null, "parts": self._parts, "covered": sorted(self._covered)}

    def __setstate__(self, state):
        self.__dict__.update(JoinSample.from_bytes(state["bytes"]).__dict__)
        if "keys" in state:
            self._store = Totals(self._float, ExactStore(self._float, state["keys"], state["totals"]))
            self._fin = None
            self._total, self._null = state["total"], state["null"]
            self._parts, self._covered = state["parts"], frozenset(state["covered"])

    def copy(self) -> JoinSample:
        out = JoinSample(self._budget, self._seed, self.dtype)
        out.__dict__.update(self.__dict__)
        out._store = None if self._store is None else self._store.copy()
        return out

    # -- building ---------------------------------------------------------
    def _sample(self) -> Finished:
        if self._fin is None:
            store = self._store.store()
            keys, tot = store.keys, store.wide_weights()
            self._fin = select(np.asarray(keys), tot, self._budget, self._parts > 1, self._float)
        return self._fin

    def _exact(self) -> bool:
        """Whether the object holds every key's exact total: building, or holding no key at all. A sample read
        from bytes that kept every key holds them too, but is not taken as exact: a daily union or update that
        worked while every day's sample kept every key would fail on the first day one did not."""
        return self._store is not None or self._fin.n_keys == 0

    def _totals(self, what: str) -> Totals:
        """The exact totals (building, or a sample without keys), else :class:`SampleMergeError`
        or, for ``update``, a :class:`ValueError` naming the remedy."""
        if self._store is None:
            if not self._exact():
                if what == "update":
                    raise ValueError(
                        "cannot update a finished JoinSample (read from bytes, or merged from finished pieces): it "
                        "keeps only its sample, not every key's total (refused even when it kept every key, so "
                        "that an update that works on a small table works on a big one); update the building "
                        "sample before to_bytes, or build a new one from all the rows")
                raise SampleMergeError("this sample is finished")
            return Totals(self._float, ExactStore(self._float, *_sorted(self._fin.fps, self._fin.totals)))
        return self._store

    def update(self, keys, weights=None):
        """Add ``weights`` (default 1 each; negative = delete) for ``keys``; returns ``self``.

        Keys and weights follow the sketches' rules (:mod:`skimsketch.keys.canonical`): int, str
        and bytes keys, nulls skipped (their weight goes to :attr:`null_weight`). The totals are kept
        per fingerprint ``fp(k)`` (:mod:`skimsketch.sample.rank`)."""
        if self._parts > 1 and self._legacy:
            raise ValueError("cannot update a layout-1 partial piece: its partitions came from a hash this version "
                             "no longer computes; merge it with the other pieces of its partitioning (the result "
                             "is a whole sample), or rebuild the pieces")
        store = self._totals("update")
        scalar = batch_scalar_weight(weights, self._float)
        batch = canonicalize(keys, None if scalar is not None else weights, allow_float_weights=self._float)
        if None not in (batch.key_domain, self._key_domain) and batch.key_domain != self._key_domain \
                and self._domain() is not None:
            raise KeyTypeError(
                f"this sample holds {_KINDS[self._key_domain]} keys, got {_KINDS[batch.key_domain]} keys: a sample "
                "holds one key domain (integer and string keys never join); use another sample or cast the keys")
        fps = fingerprints(batch.keys, self._seed, self._legacy)
        if self._parts > 1 and len(batch.keys):
            part = partitions_fp(fps, self._parts)
            bad = ~np.isin(part, list(self._covered))
            if bad.any():
                raise KeyDomainError(
                    f"key {int(batch.keys[bad][0])} (canonical) is in partition {int(part[bad][0])} of "
                    f"{self._parts}, not in this piece's {sorted(self._covered)}: route rows with "
                    f"JoinSample.partition_of(keys, {self._parts}, seed={self._seed})")
        total = weight_total(batch.weights, len(batch.keys), self._float)
        null = batch.null_weight
        ukeys, agg = aggregate(fps, batch.weights, self._float)
        if scalar is not None:
            if not self._float and (int(np.abs(agg).max(initial=0)) * abs(scalar) > I64.max
                                    or abs(total * scalar) > I64.max):
                raise CounterOverflowError("update would overflow the int64 totals; the sample is unchanged")
            agg, total, null = agg * scalar, total * scalar, null * scalar
        new_total, new_null = self._total + total, self._null + null
        if not self._float and not (I64.min <= new_total <= I64.max and I64.min <= new_null <= I64.max):
            raise CounterOverflowError("update would overflow the int64 total weight; the sample is unchanged")
        if self._float and not (math.isfinite(new_total) and math.isfinite(new_null)):
            raise CounterOverflowError("update would overflow a float64 weight to infinity; the sample is unchanged")
        store.add(ukeys, agg, "update")  # nothing changed if it raises
        self._store, self._total, self._null, self._fin = store, new_total, new_null, None
        if len(batch.keys) and ((scalar is not None and scalar < 0)
                                or (batch.weights is not None and np.min(batch.weights) < 0)):
            self._nonnegative = False  # a delete (or negative weight): totals may be negative
        self._key_domain = self._key_domain or batch.key_domain
        return self

    # -- combining ----------------------------------------------------------
    def _check_compatible(self, other, operation: str) -> None:
        if not isinstance(other, JoinSample):
            raise IncompatibleSketchError("type", type(self).__name__, type(other).__name__, operation)
        fields = ("seed",) if operation == "join" else ("seed", "dtype", "nbytes")
        for field in fields:
            if self.params[field] != other.params[field]:
                raise IncompatibleSketchError(field, self.params[field], other.params[field], operation)
        mine, theirs = self._domain(), other._domain()
        if None not in (mine, theirs) and mine != theirs:
            raise IncompatibleSketchError("key_domain", mine, theirs, operation)
        if self._legacy != other._legacy and self.n_keys and other.n_keys:  # fingerprints of different hashes
            raise IncompatibleSketchError("rank hash", _LAYOUT[self._legacy], _LAYOUT[other._legacy], operation)

    # -- queries ------------------------------------------------------------
    def join_size(self, other: JoinSample, confidence: float = 0.95) -> Estimate:
        """Estimated ``sum_k f(k) g(k)`` (unbiased; :mod:`skimsketch.sample.estimator`): exact when
        both samples kept every key. ``other`` must be a :class:`JoinSample` of the same seed (the
        budgets may differ)."""
        self._check_compatible(other, "join")
        conf = check_confidence(confidence)
        return join_estimate(self._side(), other._side(), conf)

    def self_join_size(self, confidence: float = 0.95) -> Estimate:
        """Estimated ``F2 = sum_k f(k)^2``: the join estimate of the sample with itself (``p = min(1, tau f^2)``)."""
        conf = check_confidence(confidence)
        a = self._side()
        return join_estimate(a, a, conf).at_least(0.0)

    def frequency(self, key, confidence: float = 0.95) -> Estimate:
        """``f(key)``: exact for a kept key (the total of its fingerprint); for a dropped one ``0`` within
        ``-+ sqrt(u(key) / tau)`` (it was dropped, so its rank ``u / f^2`` was at least ``tau``): both with
        confidence 1."""
        check_confidence(confidence)
        k = canonical_key(key)
        if k is None:
            raise ValueError("the frequency of a null key is not tracked: see null_weight")
        domain = "str" if isinstance(key, (str, bytes, bytearray, memoryview)) else "int"
        if self._domain() not in (None, domain):
            raise IncompatibleSketchError("key_domain", self._key_domain, domain, "query")
        s = self._sample()
        fp = fingerprints(np.array([k], dtype=np.int64), self._seed, self._legacy)
        hit = np.flatnonzero(s.fps == fp[0])
        if len(hit):
            return Estimate.exact(float(s.totals[hit[0]]), METHOD)
        if s.complete:
            return Estimate.exact(0.0, METHOD)
        bound = math.ldexp(math.sqrt(float(units(fp)[0]) / s.tau), -s.scale)
        return Estimate(0.0, -bound, bound, 1.0, METHOD)

    def _side(self) -> Side:
        s = self._sample()
        return Side(s.fps, s.totals, s.tau, s.n_keys, self._total, not self._float, self.nonnegative, s.scale)

    # -- serialisation ------------------------------------------------------
    def to_bytes(self) -> bytes:
        """The sample as kind 5, layout 2 of :mod:`skimsketch.format.header` (``docs/format.md``)."""
        s = self._sample()
        head = fmt.Header(self.KIND, self._budget, 1, self._seed, None, self._float, 0.0, self._total, self._null,
                          self.is_empty, counter_width=8, key_domain=self._domain(), nonnegative=self._nonnegative)
        fps, totals = _sorted(s.fps, s.totals)
        parts = layout.SampleParts(s.tau, s.n_keys, self._parts, tuple(sorted(self._covered)), fps, totals,
                                legacy=self._legacy, scale=s.scale)
        return fmt.encode(head, np.zeros(0), layout.encode_sample(parts, self._float), 8)

    @classmethod
    def _from_parts(cls, head: fmt.Header, counters: np.ndarray, ext: bytes) -> JoinSample:
        negative_zero = any(isinstance(x, float) and x == 0 and math.copysign(1.0, x) < 0
                            for x in (head.param, head.total_weight, head.null_weight))
        if negative_zero:
            raise CorruptSketchError("a join sample writes 0.0, never -0.0, in its kind parameter and weights")
        if head.version != fmt.VERSION or head.depth != 1 or head.domain is not None or head.param != 0.0 \
                or head.exact:
            raise CorruptSketchError("a join sample is format version 4 with depth 1, and no domain, kind parameter "
                                     "or exact-mode flag")
        p = layout.decode_sample(ext, head)
        budget = head.width
        if p.layout == 1:  # keys in (rank, key) order -> legacy fingerprints; the budget 100 + 12 m (16 m: floats)
            keys, p.fps, p.legacy = p.fps, fingerprints(p.fps, head.seed, legacy=True), True
            r = ranks(p.fps, p.totals)
            if len(np.unique(keys)) != len(keys) or len(np.unique(p.fps)) != len(keys) or (np.diff(r) < 0).any():
                raise CorruptSketchError("layout-1 sample entries are not distinct keys in rank order")
            budget = LAYOUT1_OVERHEAD + (LAYOUT1_FLOAT_ENTRY if head.float_counters else LAYOUT1_ENTRY) * head.width
        if head.nonnegative and (p.totals < 0).any():
            raise CorruptSketchError("the sign flag says no weight was negative, but a sample total is negative")
        if p.scale:
            check_stored(p.totals, p.tau, p.scale)
        r = ranks(p.fps, p.totals, p.scale)
        if len(r) and not r.max() <= p.tau:
            raise CorruptSketchError("a sample entry ranks above tau: altered bytes or another seed")
        if p.parts > 1 and not p.legacy and not np.isin(partitions_fp(p.fps, p.parts), p.covered).all():
            raise CorruptSketchError("a partial sample holds a fingerprint of a partition it does not cover")
        o = order(p.fps, r)
        sk = cls(budget, head.seed, "float64" if head.float_counters else "int64")
        sk._store, sk._fin = None, Finished(p.fps[o], p.totals[o], p.tau, p.n_keys, p.scale)
        sk._total, sk._null, sk._key_domain = head.total_weight, head.null_weight, head.key_domain
        sk._parts, sk._covered = p.parts, frozenset(p.covered)
        sk._legacy = p.legacy
        sk._nonnegative = head.nonnegative
        return sk


def _sorted(keys: np.ndarray, totals: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    o = np.argsort(keys, kind="stable")
    return keys[o], totals[o]

