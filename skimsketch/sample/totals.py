"""A building sample's exact per-fingerprint totals, updated in near-linear time.

An :class:`~skimsketch.stats.exact_store.ExactStore` merged with every batch would
re-sort the whole table per ``update`` (quadratic in the number of batches). Here each
batch's aggregated ``(fingerprints, totals)`` is appended to a list and the list is
merged into the store lazily: when a query needs the totals, or when the appended
entries reach the store's size (so every entry takes part in ``O(log)`` merges).

The result is exactly the eager one: integer totals are summed in int64, float totals
in the order the batches came (one ``bincount`` over the store, then the batches, adds
each fingerprint's values in that order, as successive merges would). Overflow is
never deferred: a batch is appended only while the sum of every absolute value
appended since the last merge, plus the store's largest, stays within int64 (float64:
half its largest finite value), so the lazy merge cannot overflow; otherwise the
pending batches are merged and the batch is added eagerly, which raises
:class:`~skimsketch.errors.CounterOverflowError` and changes nothing if it overflows.
"""

from __future__ import annotations

import numpy as np

from ..kernels import I64
from ..stats.exact_store import ExactStore, aggregate

__all__ = ["Totals"]

_MIN_MERGE = 1 << 16  # appended entries below this are never merged for size alone
_FLOAT_LIMIT = float(np.finfo(np.float64).max) / 2


def _max_abs(w: np.ndarray, float_totals: bool):
    if not len(w):
        return 0.0 if float_totals else 0
    if float_totals:
        return float(np.abs(w).max())
    return max(abs(int(w.max())), abs(int(w.min())))  # Python ints: |int64 min| does not wrap


class Totals:
    """Sorted unique int64 fingerprints and their non-zero totals, plus batches not merged yet."""

    __slots__ = ("_float", "_store", "_pending", "_pending_n", "_bound")

    def __init__(self, float_totals: bool, store: ExactStore | None = None):
        self._float = bool(float_totals)
        self._store = ExactStore(self._float) if store is None else store
        self._pending: list = []
        self._pending_n = 0
        self._bound = _max_abs(self._store.weights, self._float)  # bounds every |total| after a merge

    def add(self, keys: np.ndarray, totals: np.ndarray, what: str) -> None:
        """Add sorted unique ``keys`` with their ``totals``; on overflow nothing changes."""
        if not len(keys):
            return
        m = _max_abs(totals, self._float)
        limit = _FLOAT_LIMIT if self._float else int(I64.max)
        if self._bound + m <= limit:
            self._pending.append((keys, totals))
            self._pending_n += len(keys)
            self._bound += m
            if self._pending_n >= max(len(self._store), _MIN_MERGE):
                self._merge()
            return
        store = self.store().plus(keys, totals, what)  # eager: raises, unchanged, on overflow
        self._store, self._bound = store, _max_abs(store.weights, self._float)

    def _merge(self) -> None:
        if not self._pending:
            return
        parts = [(self._store.keys, self._store.wide_weights())] + self._pending
        keys = np.concatenate([k for k, _ in parts])
        totals = np.concatenate([np.asarray(t, dtype=np.float64 if self._float else np.int64) for _, t in parts])
        ukeys, agg = aggregate(keys, totals, self._float)  # in order: the store's value first, then each batch's
        self._store = ExactStore(self._float, ukeys, agg)
        self._pending, self._pending_n = [], 0
        self._bound = _max_abs(self._store.weights, self._float)

    def store(self) -> ExactStore:
        """The totals as one ExactStore (merging the pending batches)."""
        self._merge()
        return self._store

    def __len__(self) -> int:
        return len(self.store())

    @property
    def nbytes(self) -> int:
        """Memory of the store and the pending batches."""
        return self._store.nbytes + sum(k.nbytes + t.nbytes for k, t in self._pending)

    def copy(self) -> Totals:
        out = Totals(self._float, self.store().copy())
        return out
