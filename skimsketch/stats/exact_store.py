"""``ExactStore``: exact net weights per key, shared by the families: a linear sketch's entries in
exact mode (:mod:`skimsketch.sketch.exact_mode`), a join sample's totals before it is finished.

Canonical int64 keys, sorted and unique, and their weights (never zero: a key whose
weight returns to zero disappears). Weights follow the counters' rules (:mod:`skimsketch.sketch.state`):

* integer weights are int32 while every one fits, else all int64 (exact,
  never wrapped: an operation that would overflow int64 raises
  :class:`CounterOverflowError`); :attr:`ExactStore.width` reports it;
* float64 weights stay finite (inf or NaN raise :class:`CounterOverflowError`);
* every operation returns a new store, so a failed one changes nothing.
"""

from __future__ import annotations

import numpy as np

from ..errors import CounterOverflowError
from ..kernels import FLOAT_EXACT, I64, checked_add, fits_int32, key_counts

__all__ = ["ExactStore", "aggregate"]



def aggregate(keys: np.ndarray, weights: np.ndarray | None, float_weights: bool) -> tuple[np.ndarray, np.ndarray]:
    """(sorted unique keys, their summed weights) of a batch; zero sums are dropped.

    Integer weights are summed exactly in int64: the caller guarantees that the
    batch's absolute weights sum below 2**63."""
    keys = np.asarray(keys, dtype=np.int64)
    if weights is None:
        uk, counts = key_counts(keys, None)  # dense keys: one bincount instead of a sort
        if counts is not None:
            return uk, counts.astype(np.int64)
    uk, inv = np.unique(keys, return_inverse=True)
    if weights is None:
        agg = np.bincount(inv, minlength=len(uk)).astype(np.int64)
    elif float_weights:
        agg = np.bincount(inv, weights=np.asarray(weights, dtype=np.float64), minlength=len(uk))
    elif float(np.abs(weights).sum(dtype=np.float64)) < FLOAT_EXACT:  # float64 sums are exact here
        agg = np.rint(np.bincount(inv, weights=np.asarray(weights, dtype=np.float64), minlength=len(uk)))
        agg = agg.astype(np.int64)
    else:
        agg = np.zeros(len(uk), dtype=np.int64)
        np.add.at(agg, inv, np.asarray(weights).astype(np.int64, copy=False))
    keep = agg != 0
    return uk[keep], agg[keep]


class ExactStore:
    """Sorted unique int64 keys and their non-zero weights (int32/int64, or float64)."""

    __slots__ = ("_float", "_keys", "_weights")

    def __init__(self, float_weights: bool, keys=None, weights=None):
        """A store of ``keys`` (sorted, unique) and ``weights`` (non-zero; integers are
        kept at the narrowest width holding them all); empty by default."""
        self._float = bool(float_weights)
        self._keys = np.zeros(0, dtype=np.int64) if keys is None else np.asarray(keys, dtype=np.int64)
        if weights is None:
            weights = np.zeros(0)
        self._weights = np.asarray(weights, dtype=np.float64) if self._float else _narrowest(np.asarray(weights))
        if self._keys.shape != self._weights.shape:
            raise ValueError(f"{len(self._keys)} keys but {len(self._weights)} weights")

    # -- reading ------------------------------------------------------------
    def __len__(self) -> int:
        return len(self._keys)

    @property
    def float_weights(self) -> bool:
        return self._float

    @property
    def keys(self) -> np.ndarray:
        """Sorted unique int64 keys (read-only view)."""
        return _readonly(self._keys)

    @property
    def weights(self) -> np.ndarray:
        """Their weights in memory (int32, int64 or float64; read-only view)."""
        return _readonly(self._weights)

    def wide_weights(self) -> np.ndarray:
        """The weights as int64 (integer stores) or float64."""
        return self._weights.astype(np.float64 if self._float else np.int64)

    @property
    def width(self) -> int:
        """Bytes per weight in memory: 4 (int32), 8 (int64 after widening, or float64)."""
        return self._weights.itemsize

    def narrowest_width(self) -> int:
        """Bytes per weight of the narrowest type holding them all (what the format writes)."""
        return 8 if self._float else (4 if fits_int32(self._weights) else 8)

    @property
    def nbytes(self) -> int:
        return int(self._keys.nbytes + self._weights.nbytes)

    def weight_of(self, key: int):
        """The weight of ``key`` (0 if absent): a Python int, or float."""
        i = int(np.searchsorted(self._keys, key))
        if i < len(self._keys) and int(self._keys[i]) == key:
            return self._weights[i].item()
        return 0.0 if self._float else 0

    def dot(self, other: ExactStore):
        """``sum_v f(v) g(v)`` over the common keys, exactly (Python ints unless a side is float)."""
        _, i, j = np.intersect1d(self._keys, other._keys, assume_unique=True, return_indices=True)
        if self._float or other._float:
            return float(np.dot(self._weights[i].astype(np.float64), other._weights[j].astype(np.float64)))
        return sum(a * b for a, b in zip(self._weights[i].tolist(), other._weights[j].tolist()))

    def items(self) -> dict:
        """``{key: weight}`` (Python numbers)."""
        return dict(zip(self._keys.tolist(), self._weights.tolist()))

    def copy(self) -> ExactStore:
        return ExactStore(self._float, self._keys.copy(), self._weights.copy())

    def __eq__(self, other) -> bool:
        return (
            isinstance(other, ExactStore)
            and other._float == self._float
            and np.array_equal(other._keys, self._keys)
            and np.array_equal(other._weights, self._weights)
        )

    __hash__ = None  # mutable contents

    # -- combining (new stores; self never changes) ----------------------------
    def plus(self, keys: np.ndarray, weights: np.ndarray, what: str) -> ExactStore:
        """This store plus sorted unique ``keys`` with ``weights`` (int64 or float64)."""
        union = np.union1d(self._keys, keys)
        if self._float:
            a = np.zeros(len(union))
            a[np.searchsorted(union, self._keys)] = self._weights
            with np.errstate(over="ignore", invalid="ignore"):  # inf is refused just below
                a[np.searchsorted(union, keys)] += np.asarray(weights, dtype=np.float64)
            if not np.isfinite(a).all():
                raise CounterOverflowError(f"{what} would overflow a float64 weight to infinity or NaN; the "
                                           "sketch is unchanged")
            out = a
        else:
            a = np.zeros(len(union), dtype=np.int64)
            b = np.zeros(len(union), dtype=np.int64)
            a[np.searchsorted(union, self._keys)] = self._weights
            b[np.searchsorted(union, keys)] = np.asarray(weights).astype(np.int64, copy=False)
            out = checked_add(a, b, what)
        keep = out != 0
        return ExactStore(self._float, union[keep], out[keep])

    def surely_outgrows(self, keys: np.ndarray, weights: np.ndarray | None, scalar, capacity: int) -> bool:
        """True if adding the batch (``keys``, ``weights`` times ``scalar``) certainly leaves more than
        ``capacity`` non-zero keys, judged cheaply: only for batches whose weights are all positive
        (then a new key, and a key already positive, stays non-zero) from the distinct new keys among
        the batch's first ``4 * (capacity + 1)`` (at least 4096; shorter batches: False). False
        means "maybe not"."""
        size = max(4096, 4 * (capacity + 1))
        if len(keys) <= max(size, capacity - len(self._keys)) or (scalar is not None and not scalar > 0):
            return False  # a batch this small is aggregated exactly anyway (one sort either way)
        if weights is not None and not weights.min() > 0:
            return False
        probe = np.unique(keys[:size])
        new = np.setdiff1d(probe, self._keys, assume_unique=True)
        return len(new) + int((self._weights > 0).sum()) > capacity

    def minus(self, other: ExactStore, what: str) -> ExactStore:
        """This store minus ``other``; negating int64's minimum is an overflow like any other."""
        w = other.wide_weights()
        if not self._float and (w == I64.min).any():
            raise CounterOverflowError(f"{what} would overflow the int64 weights; the sketch is unchanged")
        return self.plus(other._keys, -w, what)


def _narrowest(a: np.ndarray) -> np.ndarray:
    return a.astype(np.int32 if fits_int32(a) else np.int64)


def _readonly(a: np.ndarray) -> np.ndarray:
    v = a.view()
    v.flags.writeable = False
    return v
