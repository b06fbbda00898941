"""SKIMDENSE on a skimmed sketch: the candidates, the skim (cached until the sketch changes), the heavy
hitters, and which dense keys a report may name (:class:`SkimSearch`, a part of
:class:`~skimsketch.sketch.skim.skimmed.SkimmedSketch`).

Thresholds adapt per round to what the residual can tell from chance (docs/defaults.md).
The default skim is *justified* by the sketch's own variance estimates: a key is
skimmed only at ``JUSTIFY_Z`` standard errors of its mean over the tables, and
the skim is kept only when its dense keys hold at least half of the counters'
F2 (:func:`skimsketch.sketch.skim.skimdense.justified`), unless it explains every counter
(then it is exact); otherwise the sketch answers as its counters' hash sketch.
:meth:`SkimSearch.heavy_hitters` refuses thresholds below the sketch's resolution
instead of answering partially.

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
key, at the price of a share of the counters (docs/unbounded.md).
"""

from __future__ import annotations

import math

import numpy as np

from ...errors import KeyTypeError
from ...keys.canonical import canonicalize
from ...keys.hashing import family
from ..query import f2_bound
from ..hash_sketch import row_dots
from .hierarchy import hierarchy
from .candidates import (MAX_SCAN_DOMAIN, Candidates, domain_candidates, no_candidates, prefix_candidates,
                         range_candidates)
from .skimdense import BUDGET, DenseResult, explains, justified, reported, skimdense
from .virtual import virtual_ids

__all__ = ["JUSTIFY_Z", "SkimResult", "SkimSearch", "justified_factor"]

#: A key is skimmed only when its estimate is at least JUSTIFY_Z standard errors of the mean of
#: its ``depth`` table estimates, ``sqrt(F2(residual) / width / depth)`` (docs/defaults.md,
#: "Justified skims"): a lighter key's value is mostly its colliders', and skimming it moves their
#: weight out of the residual (the residual terms then fall short, the interval with them).
JUSTIFY_Z = 6.0


def justified_factor(depth: int) -> float:
    """Lowest skim threshold, in deviations of one table estimate, that the sketch can justify:
    ``JUSTIFY_Z / sqrt(depth)`` (a key's mean over ``depth`` tables at ``JUSTIFY_Z`` standard errors).

    >>> round(justified_factor(3), 3), round(justified_factor(5), 3)
    (3.464, 2.683)
    """
    return JUSTIFY_Z / math.sqrt(depth)


def _check_threshold(threshold) -> float:
    """A heavy-hitter threshold as a positive finite float, or a ValueError naming it."""
    if isinstance(threshold, (bool, np.bool_)) or not isinstance(threshold, (int, float, np.integer, np.floating)):
        raise ValueError(f"threshold must be a positive finite number, got {threshold!r}")
    t = float(threshold)
    if not (math.isfinite(t) and t > 0):
        raise ValueError(f"threshold must be a positive finite number, got {threshold!r}")
    return t


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


class SkimSearch:
    """The skimming half of a skimmed sketch: its methods read the sketch's counters and parameters."""

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
