"""The kernel interface (:class:`Kernels`: the hot loops of an update and of a skim) and its written-down
reference, :class:`NumpyKernels` (numpy and mmh3; the fallback without a C compiler)."""

from __future__ import annotations

import numpy as np

from ..keys.fingerprints import fingerprints_reference
from ..keys.hashing import signed_virtual_ids
from .arith import accumulate_cells, as_counter_delta

__all__ = ["Kernels", "NumpyKernels", "bucket_members"]

_NULL_TYPES = ("NAType", "NaTType")


class Kernels:
    """The hot loops of an update. Every implementation returns exactly the reference's values."""

    name = "abstract"

    def hash_delta(self, family, keys: np.ndarray, weights, width: int, depth: int,
                   float_counters: bool) -> np.ndarray:
        """The (depth, width) counter delta of a hash/skimmed sketch for int64 ``keys`` and their
        ``weights`` (None: 1 each; int64, or float64 for float counters): int64 for counts and
        integer counters, float64 for weighted float counters."""
        raise NotImplementedError

    def virtual_hash_delta(self, family, keys: np.ndarray, weights, salt: int, lg: int, width: int, depth: int,
                           float_counters: bool) -> np.ndarray:
        """:meth:`hash_delta` of the keys' virtual ids with their weights times the virtual signs
        (skimsketch/sketch/skim/virtual.py: ``y = mix(key ^ salt)``, id ``y >> (64 - lg)``, sign ``-1`` when ``y``
        is odd); the delta of ``hash_delta(family, ids, signs * (weights or 1), ...)``."""
        ids, signs = signed_virtual_ids(keys, salt, lg)
        w = signs if weights is None else weights * signs
        return self.hash_delta(family, ids, w, width, depth, float_counters)

    def virtual_counts(self, keys: np.ndarray, salt: int, lg: int) -> tuple[np.ndarray, np.ndarray]:
        """``(ids, net)``: the virtual ids (ascending int64) whose keys' signs do not cancel, and each
        one's net signed count (int64): an unweighted batch summed per virtual id."""
        ids, signs = signed_virtual_ids(keys, salt, lg)
        both = np.bincount(ids * 2 + (signs < 0), minlength=2 << lg).reshape(-1, 2)
        net = both[:, 0] - both[:, 1]
        present = np.flatnonzero(net)
        return present.astype(np.int64), net[present]

    def fingerprints(self, offsets: np.ndarray, data: np.ndarray) -> np.ndarray:
        """``fingerprint64`` of each ``data[offsets[i]:offsets[i+1]]`` (int64 offsets, uint8 data)."""
        raise NotImplementedError

    def object_fingerprints(self, arr: np.ndarray):
        """``(fingerprints, null mask or None)`` of a 1-d object array whose elements are all
        ``str``, ``bytes`` or nulls (``None``, NaN, ``pandas.NA``/``NaT``); ``None`` if some element
        is anything else (the caller canonicalises element by element)."""
        raise NotImplementedError

    def hot_candidates(self, order: np.ndarray, starts: np.ndarray, hot: np.ndarray, exclude: np.ndarray,
                       need: int) -> np.ndarray:
        """The skim's candidate scan: positions (ascending int64) of the candidates not in ``exclude`` whose
        bucket is set in ``hot`` (depth, width) in at least ``need`` tables. ``order`` (depth, n) and
        ``starts`` (depth, width + 1) index the buckets (:func:`bucket_members`)."""
        raise NotImplementedError

    def estimates(self, residual: np.ndarray, buckets: np.ndarray, signs: np.ndarray, idx: np.ndarray) -> np.ndarray:
        """Table estimates ``residual[p, buckets[p, i]] * signs[p, i]`` of the candidates ``idx`` -> (depth, len(idx))."""
        raise NotImplementedError


class NumpyKernels(Kernels):
    """The written-down reference (and the fallback without a C compiler): numpy and mmh3."""

    name = "numpy"

    def hash_delta(self, family, keys, weights, width, depth, float_counters):
        acc = accumulate_cells(len(keys), lambda a, b: family.signed_cells(keys[a:b], width, depth), weights,
                               2 * depth * width, depth, True, float_counters)
        return as_counter_delta((acc[0::2] - acc[1::2]).reshape(depth, width), float_counters)

    def fingerprints(self, offsets, data):
        return fingerprints_reference(offsets, data)

    def object_fingerprints(self, arr):
        null = np.zeros(len(arr), dtype=bool)
        out = np.zeros(len(arr), dtype=np.int64)
        strings, blobs = [], []
        for i, x in enumerate(arr.tolist()):
            if isinstance(x, str):
                try:
                    x = x.encode("utf-8")
                except UnicodeEncodeError:
                    return None
            if isinstance(x, bytes):
                strings.append(x)
                blobs.append(i)
            elif x is None or type(x) is float and x != x or type(x).__name__ in _NULL_TYPES:
                null[i] = True
            else:
                return None
        if strings:
            offsets = np.cumsum([0] + [len(b) for b in strings], dtype=np.int64)
            out[blobs] = fingerprints_reference(offsets, np.frombuffer(b"".join(strings), dtype=np.uint8))
        return out, (null if null.any() else None)

    def hot_candidates(self, order, starts, hot, exclude, need):
        parts = [bucket_members(order[p], starts[p], hot[p]) for p in range(len(hot))]
        count = np.bincount(np.concatenate(parts), minlength=len(exclude))
        return np.flatnonzero((count >= need) & ~exclude)

    def estimates(self, residual, buckets, signs, idx):
        return np.take_along_axis(residual, buckets[:, idx], axis=1) * signs[:, idx]


def bucket_members(order: np.ndarray, starts: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Positions of the candidates whose bucket is set in ``mask`` (width,), given one table's bucket
    index: the candidates of bucket ``b`` are ``order[starts[b]:starts[b + 1]]``."""
    b = np.flatnonzero(mask)
    lo, hi = starts[b], starts[b + 1]
    lens = hi - lo
    total = int(lens.sum())
    if not total:
        return np.zeros(0, dtype=np.intp)
    shift = np.repeat(lo - (np.cumsum(lens) - lens), lens)
    return order[shift + np.arange(total)]
