"""Numeric kernels shared by several sketches: cell accumulation, string fingerprints, exact int64 sums.

Every sketch's update is "add each key's weight, times a sign, to one cell per
table"; :func:`accumulate_cells` does that for any cell layout. Integer state
is exact: :func:`checked_add` raises :class:`CounterOverflowError` instead of
wrapping (:class:`skimsketch.sketch.state.LinearState` applies it all or nothing), and
:func:`exact_int_sum` sums int64 weights without wrapping.

The hot loops sit behind one small interface, :class:`Kernels` (docs/kernels.md):
:func:`hash_delta` (a hash/skimmed sketch's counter delta), :func:`fingerprints`
(MurmurHash3 of Arrow-style string buffers) and :func:`object_fingerprints` (an
object array of ``str``/``bytes``) for updates; :func:`hot_candidates` (the skim's
candidate scan) and :func:`estimates` (the candidates' table estimates) for queries. :class:`NumpyKernels` is the written-down
reference and the fallback; :class:`CompiledKernels` runs the C extension
``skimsketch.kernels._ckernels`` built by the package's setuptools build, with the same
bytes (tests/core/test_kernels.py). :func:`backend` is the active one: compiled
when the extension is importable and current, unless the environment variable
``SKIMSKETCH_KERNELS=numpy`` asks for the reference; :func:`use` switches it.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib
import os
import sys
import warnings
from pathlib import Path

import numpy as np

from ..errors import CounterOverflowError
from ..keys.fingerprints import fingerprints_reference
from ..keys.hashing import signed_virtual_ids



def _load_extension():
    """``skimsketch.kernels._ckernels``, or None when it was not built (no C compiler at install time:
    the numpy reference serves). Loaded by name because it is optional: an ``import``
    statement cannot be."""
    try:
        return importlib.import_module(f"{__package__}._ckernels")
    except ImportError:
        return None


_ckernels = _load_extension()

__all__ = ["FLOAT_EXACT", "I64", "CompiledKernels", "Kernels", "NumpyKernels", "accumulate_cells",
           "as_counter_delta", "available", "backend", "checked_add", "exact_int_sum", "fingerprints",
           "fits_int32", "hash_delta", "key_counts", "object_fingerprints", "scale_batch", "use", "weight_total",
           "bucket_members", "estimates", "hot_candidates", "virtual_counts", "virtual_hash_delta"]

I64 = np.iinfo(np.int64)
_I32 = np.iinfo(np.int32)


def fits_int32(a: np.ndarray) -> bool:
    """Whether every value of the integer array ``a`` fits in int32 (the compact counter width)."""
    return a.dtype.itemsize <= 4 or a.size == 0 or (_I32.min <= int(a.min()) and int(a.max()) <= _I32.max)
_CHUNK = 1 << 15  # keys hashed per step: keeps temporaries in cache
# bincount accumulates in float64: exact while every partial sum stays below 2**53
FLOAT_EXACT = float(2**52)


def checked_add(a: np.ndarray, b: np.ndarray, what: str) -> np.ndarray:
    """``a + b`` for int64 arrays, raising instead of wrapping."""
    with np.errstate(over="ignore"):
        out = a + b
    if ((a ^ out) & (b ^ out) < 0).any():
        raise CounterOverflowError(f"{what} would overflow the int64 counters; the sketch is unchanged")
    return out


def exact_int_sum(values: np.ndarray) -> int:
    """The exact sum of an int64 or uint64 array as a Python int (never wrapped, whatever its size).

    >>> exact_int_sum(np.array([2**62, 2**62, 2**62], dtype=np.int64)) == 3 * 2**62
    True
    """
    v = np.asarray(values).ravel()
    if v.size == 0:
        return 0
    if float(np.abs(v.astype(np.float64)).sum()) < 2.0**62:  # no partial sum can wrap
        return int(v.sum(dtype=v.dtype))
    shift, low = v.dtype.type(32), v.dtype.type(0xFFFFFFFF)
    total = 0
    for s in range(0, len(v), 1 << 30):  # the high and low 32-bit halves: each half's sum fits 64 bits
        part = v[s : s + (1 << 30)]
        total += (int((part >> shift).sum(dtype=v.dtype)) << 32) + int((part & low).sum(dtype=v.dtype))
    return total


def weight_total(weights, n: int, float_counters: bool):
    """Net weight of a batch of ``n`` rows (``weights`` None: 1 each), as the counters' type.

    Integer weights sum exactly. Into integer counters, a batch whose weights could carry a
    counter past int64 (``sum |w| > 2**63 - 1``) raises :class:`CounterOverflowError`; into
    float counters the exact integer total is rounded once (exact whenever float64 holds it)."""
    if weights is None:
        return n
    if weights.dtype.kind == "f":
        with np.errstate(over="ignore"):  # an infinite total is refused by the state, naming the overflow
            return float(weights.sum())
    total = exact_int_sum(weights)
    if float_counters:
        return float(total)
    if exact_int_sum(np.abs(weights).view(np.uint64)) > I64.max:  # |-2**63| is 2**63 as uint64
        raise CounterOverflowError("the batch's weights sum beyond int64; the sketch is unchanged")
    return total


def scale_batch(deltas: dict, total, null, scalar, float_counters: bool):
    """A unit-weight batch's ``({name: delta}, total, null)`` times a scalar weight.

    Integer results beyond int64 raise :class:`CounterOverflowError`; float results
    that overflow are left to the state, which refuses them."""
    if float_counters:
        with np.errstate(over="ignore", invalid="ignore"):
            deltas = {k: d * scalar for k, d in deltas.items()}
        return deltas, total * scalar, null * scalar
    if scalar != 1:
        peak = max((int(np.abs(d).max(initial=0)) for d in deltas.values()), default=0)
        if peak * abs(scalar) > I64.max or abs(total * scalar) > I64.max:
            raise CounterOverflowError("update would overflow the int64 counters; the sketch is unchanged")
        deltas = {k: d * scalar for k, d in deltas.items()}
    return deltas, total * scalar, null * scalar


_DENSE_MIN = 1 << 16  # batches shorter than this are hashed as they are


def key_counts(keys: np.ndarray, weights):
    """An unweighted batch of int64 keys as (distinct keys, their counts) when that is cheaper to hash.

    When the keys span at most as many values as there are keys (ids, codes, a bounded
    domain), one ``bincount`` over the span gives each key's count, and hashing the
    distinct keys weighted by their counts yields the same counters (the sketches are
    linear, and integer counts are exact). Otherwise, or with weights, the batch is
    returned unchanged.
    """
    n = len(keys)
    if weights is not None or n < _DENSE_MIN:
        return keys, weights
    lo, hi = int(keys.min()), int(keys.max())
    if hi - lo >= n:
        return keys, weights
    counts = np.bincount(keys - lo, minlength=hi - lo + 1)
    present = np.flatnonzero(counts)
    return present.astype(np.int64) + lo, counts[present]


def accumulate_cells(n: int, cells_of, weights, n_cells: int, per_key: int, key_major: bool,
                     float_counters: bool) -> np.ndarray:
    """Sum of the weights (1 each when ``weights`` is None) landing in each of ``n_cells`` cells.

    ``cells_of(start, stop)`` gives the ``per_key`` cell ids of keys ``start..stop``,
    shaped (keys, per_key) when ``key_major`` else (per_key, keys). Counts are
    int64; weights accumulate in float64 while that is exact (total |weight| <
    2**52) and by an exact int64 scatter-add beyond.
    """
    exact_float = weights is None or float_counters or \
        float(np.abs(weights.astype(np.float64, copy=False)).sum()) < FLOAT_EXACT
    acc = np.zeros(n_cells, dtype=np.int64 if (weights is None or not exact_float) else np.float64)
    spread = np.repeat if key_major else np.tile
    for s in range(0, n, _CHUNK):
        cells = cells_of(s, min(s + _CHUNK, n)).ravel()
        if weights is None:
            acc += np.bincount(cells, minlength=n_cells)
            continue
        w = spread(weights[s : s + _CHUNK], per_key)
        if exact_float:
            acc += np.bincount(cells, weights=w, minlength=n_cells)
        else:  # huge integer weights
            np.add.at(acc, cells, w)
    return acc


def as_counter_delta(delta: np.ndarray, float_counters: bool) -> np.ndarray:
    """A float delta rounded to int64 for integer counters (it holds whole numbers)."""
    if not float_counters and delta.dtype != np.int64:
        return np.rint(delta).astype(np.int64)
    return delta


# -- the kernel interface: one numpy reference, one compiled implementation ----------------
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


class CompiledKernels(Kernels):
    """The C extension ``skimsketch.kernels._ckernels``: the reference's loops, one pass per batch."""

    name = "compiled"

    def hash_delta(self, family, keys, weights, width, depth, float_counters):
        return self._delta(family, keys, weights, width, depth, float_counters, (0, 0))

    @staticmethod
    def _delta(family, keys, weights, width, depth, float_counters, virtual):
        """hash_delta, with the keys first mapped to virtual ids and signs when ``virtual`` = (salt, lg > 0)."""
        n_words = (depth + 1) // 2
        t0, t1, t2 = family.tables(n_words)
        a, b = family.fold_constants
        keys = np.ascontiguousarray(keys, dtype=np.int64)
        signed = virtual[1] > 0  # virtual signs make unit weights a weight column (float sums on float counters)
        if (weights is None and not (signed and float_counters)) or \
                (weights is not None and weights.dtype.kind != "f" and not float_counters):
            out = np.zeros(depth * width, dtype=np.int64)
            w = None if weights is None else np.ascontiguousarray(weights, dtype=np.int64)
            _ckernels.hash_counts(keys, w, t0, t1, t2, n_words, a, b, width, depth, out, *virtual)
            return out.reshape(depth, width)
        # float counters: the reference's float64 sums, in its order (chunks of _CHUNK keys)
        w = np.ones(len(keys)) if weights is None else np.ascontiguousarray(weights, dtype=np.float64)
        acc = np.zeros(2 * depth * width)
        scratch = np.zeros_like(acc)
        cells = np.empty(_CHUNK * depth, dtype=np.int64)
        _ckernels.hash_float_cells(keys, w, t0, t1, t2, n_words, a, b, width, depth, _CHUNK, acc, scratch, cells,
                                   *virtual)
        return as_counter_delta((acc[0::2] - acc[1::2]).reshape(depth, width), float_counters)

    def virtual_hash_delta(self, family, keys, weights, salt, lg, width, depth, float_counters):
        if not 1 <= lg <= 62:
            raise ValueError(f"lg={lg} is outside [1, 62]")
        return self._delta(family, keys, weights, width, depth, float_counters, (salt, lg))

    def virtual_counts(self, keys, salt, lg):
        if not 1 <= lg <= 62:
            raise ValueError(f"lg={lg} is outside [1, 62]")
        net = np.zeros(1 << lg, dtype=np.int64)
        _ckernels.virtual_counts(np.ascontiguousarray(keys, dtype=np.int64), salt, lg, net)
        present = np.flatnonzero(net)
        return present.astype(np.int64), net[present]

    def fingerprints(self, offsets, data):
        offsets = np.ascontiguousarray(offsets, dtype=np.int64)
        data = np.ascontiguousarray(data, dtype=np.uint8)
        out = np.empty(max(len(offsets) - 1, 0), dtype=np.int64)
        if len(out):
            _ckernels.fingerprints(offsets, data if len(data) else np.zeros(1, np.uint8), out)
        return out

    def object_fingerprints(self, arr):
        arr = np.ascontiguousarray(arr, dtype=object)
        out = np.empty(len(arr), dtype=np.int64)
        null = np.empty(len(arr), dtype=np.uint8)
        if not _ckernels.object_fingerprints(arr, _extra_nulls(), out, null):
            return None
        null = null.view(bool)
        return out, (null if null.any() else None)


    def hot_candidates(self, order, starts, hot, exclude, need):
        d, n = order.shape
        out = np.empty(n, dtype=np.int64)
        k = _ckernels.hot_candidates(np.ascontiguousarray(order, dtype=np.int64),
                                     np.ascontiguousarray(starts, dtype=np.int64), np.ascontiguousarray(hot, dtype=bool),
                                     np.ascontiguousarray(exclude, dtype=bool), d, hot.shape[1], n, need,
                                     np.zeros(n, dtype=np.uint8), out)
        return np.sort(out[:k])

    def estimates(self, residual, buckets, signs, idx):
        d, n = buckets.shape
        out = np.empty((d, len(idx)))
        res = np.ascontiguousarray(residual, dtype=np.float64)
        idx = np.ascontiguousarray(idx, dtype=np.int64)
        b, s = buckets.astype(np.int64, copy=False), signs.astype(np.float64, copy=False)
        if b.flags.f_contiguous and s.flags.f_contiguous and not (b.flags.c_contiguous and s.flags.c_contiguous):
            _ckernels.gather_estimates(res, b.T, s.T, idx, d, res.shape[1], n, 1, d, out)  # key-major buffers
        else:
            _ckernels.gather_estimates(res, np.ascontiguousarray(b), np.ascontiguousarray(s), idx, d, res.shape[1], n,
                                       n, 1, out)
        return out


def _extra_nulls() -> tuple:
    """``pandas.NA`` and ``pandas.NaT`` when pandas is loaded (an object array can hold them only then)."""
    pd = sys.modules.get("pandas")
    return (pd.NA, pd.NaT) if pd is not None and hasattr(pd, "NA") else ()


def _compiled_problem() -> str | None:
    """Why the compiled kernels cannot serve (None: they can)."""
    if _ckernels is None:
        return "skimsketch.kernels._ckernels is not built (no C compiler when the package was installed)"
    source = Path(__file__).with_name("_ckernels.c")
    if source.exists() and hashlib.sha1(source.read_bytes()).hexdigest() != _ckernels.SOURCE_SHA:
        return ("skimsketch.kernels._ckernels was built from another version of skimsketch/kernels/_ckernels.c: "
                "reinstall the package (pip install -e .) to rebuild it")
    return None


_PROBLEM = _compiled_problem()
_REFERENCE = NumpyKernels()
_BACKENDS = {"numpy": _REFERENCE, "compiled": CompiledKernels() if _PROBLEM is None else None}


def _initial() -> Kernels:
    want = os.environ.get("SKIMSKETCH_KERNELS", "auto")
    if want not in ("auto", "numpy", "compiled"):
        raise ValueError(f"SKIMSKETCH_KERNELS={want!r}: use 'auto', 'compiled' or 'numpy'")
    if want == "numpy":
        return _REFERENCE
    if _PROBLEM is not None:
        if want == "compiled" or _ckernels is not None:  # asked for, or built but stale: say so
            warnings.warn(f"using the numpy reference kernels: {_PROBLEM}", RuntimeWarning, stacklevel=2)
        return _REFERENCE
    return _BACKENDS["compiled"]


_active = [_initial()]


def available() -> dict:
    """``{name: why not, or None}`` for the two implementations."""
    return {"numpy": None, "compiled": _PROBLEM}


def backend() -> Kernels:
    """The active implementation."""
    return _active[0]


@contextlib.contextmanager
def use(name: str):
    """Run a block with the ``"numpy"`` or ``"compiled"`` kernels (tests, benchmarks)."""
    if name not in _BACKENDS:
        raise ValueError(f"kernels {name!r}: use 'numpy' or 'compiled'")
    if _BACKENDS[name] is None:
        raise RuntimeError(f"the compiled kernels are unavailable: {_PROBLEM}")
    before, _active[0] = _active[0], _BACKENDS[name]
    try:
        yield _active[0]
    finally:
        _active[0] = before


def hash_delta(family, keys, weights, width: int, depth: int, float_counters: bool) -> np.ndarray:
    """:meth:`Kernels.hash_delta` of the active kernels."""
    return _active[0].hash_delta(family, keys, weights, width, depth, float_counters)


def fingerprints(offsets, data) -> np.ndarray:
    """:meth:`Kernels.fingerprints` of the active kernels.

    >>> fingerprints(np.array([0, 4]), np.frombuffer(b"skim", np.uint8)).tolist()
    [815987628662419427]
    """
    return _active[0].fingerprints(offsets, data)


def object_fingerprints(arr: np.ndarray):
    """:meth:`Kernels.object_fingerprints` of the active kernels."""
    return _active[0].object_fingerprints(arr)


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


def hot_candidates(order, starts, hot, exclude, need: int) -> np.ndarray:
    """:meth:`Kernels.hot_candidates` of the active kernels."""
    return _active[0].hot_candidates(order, starts, hot, exclude, need)


def estimates(residual, buckets, signs, idx) -> np.ndarray:
    """:meth:`Kernels.estimates` of the active kernels."""
    return _active[0].estimates(residual, buckets, signs, idx)


def virtual_hash_delta(family, keys, weights, salt: int, lg: int, width: int, depth: int,
                       float_counters: bool) -> np.ndarray:
    """:meth:`Kernels.virtual_hash_delta` of the active kernels (the virtual-id map fused into the update)."""
    return _active[0].virtual_hash_delta(family, keys, weights, salt, lg, width, depth, float_counters)


def virtual_counts(keys, salt: int, lg: int) -> tuple[np.ndarray, np.ndarray]:
    """:meth:`Kernels.virtual_counts` of the active kernels."""
    return _active[0].virtual_counts(keys, salt, lg)
