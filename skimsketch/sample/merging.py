"""Merging join samples (:class:`SampleMerges`, a part of :class:`~skimsketch.sample.join_sample.JoinSample`):
exact or refused, never approximate.

* Two building samples add their exact per-fingerprint totals (exact; integer weights give bytes independent
  of the partitioning and order).
* A side without keys adds its weights; the other side's sample stays.
* Finished samples merge only as pieces of disjoint partitions of one key-hash partitioning: the union keeps
  its smallest entries by the same rules (byte-identical to one machine's sample once every partition is
  covered). Anything else is :class:`SampleMergeError`, with its remedy.
"""

from __future__ import annotations

import numpy as np

from ..errors import CounterOverflowError, IncompatibleSketchError
from ..kernels import I64
from .selection import select
from .totals import Totals

__all__ = ["SampleMergeError", "SampleMerges"]


class SampleMergeError(IncompatibleSketchError):
    """Two finished samples whose keys may overlap: the merge cannot be exact."""

    def __init__(self, why: str):
        super().__init__("key sets", "finished", "finished", "merge")
        self.args = (
            f"cannot merge finished join samples: {why}. A finished sample keeps only its sample, not the totals "
            "of the keys it dropped, so the union's sample is unknown (refused even when both kept every key, so "
            "that a union refused on a big day is refused on the first). Merge the building pieces (before "
            "to_bytes), or build one sample from the union of the rows (over days: keep each day's per-key totals, "
            "GROUP BY key, and sample the union of the totals; or union skimmed sketches), or build the pieces for "
            "disjoint key-hash partitions (JoinSample.for_bytes(..., partition=(i, P)))",
        )


class SampleMerges:
    """The merge of join samples (module docstring)."""

    def merge(self, other):
        """The sample of the union; returns ``self`` (module docstring: exact or refused)."""
        self._check_compatible(other, "merge")
        if other is self:
            other = other.copy()
        mine_exact, theirs_exact = self._exact(), other._exact()
        total, null = self._total + other._total, self._null + other._null
        if not self._float:  # (the dtypes are equal: checked)
            if not (I64.min <= total <= I64.max and I64.min <= null <= I64.max):
                raise CounterOverflowError("merge would overflow the int64 total weight; the sample is unchanged")
        legacy = self._legacy if self.n_keys else other._legacy  # an empty sample takes the other's rank hash
        if mine_exact and theirs_exact:
            parts, covered = _union_claims(self, other, need_disjoint=False)
            theirs = other._totals("merge").store()
            store = self._totals("merge").store().plus(theirs.keys, theirs.wide_weights(), "merge")
            self._store, self._fin = Totals(self._float, store), None
        elif not (self.n_keys and other.n_keys) and not (self._parts == other._parts > 1):
            # a side without keys (and not a sibling piece, whose claim counts) adds its weights: the other stays
            keyed = other if mine_exact else self
            parts, covered = keyed._parts, keyed._covered
            self._fin, self._store = keyed._sample(), None
        else:
            parts, covered = _union_claims(self, other, need_disjoint=True)
            a, b = self._sample(), other._sample()
            self._fin = select(np.concatenate([a.fps, b.fps]), np.concatenate([a.totals, b.totals]), self._budget,
                                parts > 1, self._float, ((a.tau, a.scale), (b.tau, b.scale)),
                                a.n_keys + b.n_keys)
            self._store = None
        self._total, self._null, self._legacy = total, null, legacy
        self._parts, self._covered = parts, covered
        self._key_domain = self._domain() or other._domain()
        self._nonnegative = self._nonnegative and other._nonnegative
        return self

    def __add__(self, other):
        return self.copy().merge(other)


def _union_claims(a, b, need_disjoint: bool) -> tuple[int, frozenset]:
    """(P, covered) of the union of two samples' key claims; with ``need_disjoint`` the claims must be
    disjoint partitions of one partitioning, else :class:`SampleMergeError`."""
    same = a._parts == b._parts and a._parts > 1
    if need_disjoint:
        if not same:
            raise SampleMergeError("their keys may overlap (they are not pieces of one key-hash partitioning)")
        if a._covered & b._covered:
            raise SampleMergeError(f"both cover partitions {sorted(a._covered & b._covered)} of {a._parts}")
    if not same:
        return 1, frozenset({0})
    covered = a._covered | b._covered
    return (1, frozenset({0})) if len(covered) == a._parts else (a._parts, covered)
