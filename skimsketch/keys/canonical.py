"""Key canonicalisation (docs/inputs.md): every key of any container as one signed 64-bit integer.

* integers of any width (Python, numpy, pandas nullable, pyarrow) -> int64;
  values outside [-2**63, 2**63) are rejected;
* ``str`` -> its UTF-8 bytes, then as ``bytes``;
* ``bytes`` -> ``fingerprint64(b)`` (:mod:`skimsketch.keys.fingerprints`): MurmurHash3 x64-128
  (seed 0) of the bytes, first 64 bits, signed. Equal strings give equal keys whatever
  container (list, numpy, pandas, pyarrow) carried them;
* floats are accepted only when integral (an integer column that picked up NaN
  nulls in pandas) and below the float type's exact-integer limit in magnitude
  (2**53 for float64, 2**24 for float32, 2**11 for float16: :func:`float_key_limit`);
  ``1.5`` is an error;
* ``None``, NaN, ``pandas.NA``/``NaT`` and Arrow nulls are *null*: skipped, and
  their weight is added to the sketch's ``null_weight`` (nulls never join);
* ``bool`` (Python, numpy, pandas, Arrow; also inside a list of integers), datetimes and
  anything else raise :class:`KeyTypeError`.

Weights follow :mod:`skimsketch.keys.weights` (re-exported here for the modules that take keys
and weights together); string columns are fingerprinted by the active kernels
(:mod:`skimsketch.kernels`).
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass

import numpy as np

from ..errors import KeyTypeError
from .fingerprints import fingerprint64
from ..kernels import exact_int_sum, fingerprints, object_fingerprints
from .weights import (
    batch_scalar_weight,
    drop_null_weights,
    drop_rows,
    is_null,
    numeric_vector,
    scalar_weight,
    select_rows,
    weight_nulls,
    weights_array,
)

__all__ = ["CanonicalBatch", "batch_scalar_weight", "canonical_key", "canonical_rows", "canonicalize",
           "drop_null_weights", "fingerprint64", "fingerprint64_many", "keys_array", "numeric_vector",
           "scalar_weight", "select_rows", "weights_array"]

_I64_MIN, _I64_MAX = -(2**63), 2**63 - 1
_FLOAT_KEY_REMEDY = "pass integer keys (e.g. the pandas 'Int64' dtype instead of float64 with NaN)"
_BOOL_KEYS = "bool keys are not supported: cast them to int explicitly"


def float_key_limit(dtype) -> int:
    """The exponent ``e`` below whose power ``2**e`` (in magnitude) float keys of ``dtype`` are exact
    integers: 53 for float64, 24 for float32, 11 for float16 (the significand's bits). At and beyond
    it a float cannot tell neighbouring integers apart (an int64 column that went through float64
    has already lost its low bits), so such a key could silently be another key: refused. Wider
    types (long double) keep float64's limit, as a scalar key goes through a Python float.

    >>> float_key_limit(np.float64), float_key_limit(np.float32), float_key_limit(np.float16)
    (53, 24, 11)
    """
    return min(np.finfo(dtype).nmant + 1, 53)


def _float_name(dtype) -> str:
    return "float" if np.dtype(dtype) == np.float64 else np.dtype(dtype).name


def fingerprint64_many(offsets: np.ndarray, data: np.ndarray) -> np.ndarray:
    """``fingerprint64`` of every byte string ``data[offsets[i]:offsets[i+1]]`` -> int64 array
    (Arrow-style buffers; the active kernels, :func:`skimsketch.kernels.fingerprints`).

    >>> b = [b"skim", b"", "héllo".encode(), b"x" * 40]
    >>> offs = np.cumsum([0] + [len(x) for x in b])
    >>> fingerprint64_many(offs, np.frombuffer(b"".join(b), np.uint8)).tolist() == [fingerprint64(x) for x in b]
    True
    """
    return fingerprints(np.asarray(offsets, dtype=np.int64), np.asarray(data, dtype=np.uint8))


def _arrow_string_fingerprints(arr) -> np.ndarray:
    """Fingerprints of a pyarrow string/binary (or large_*) array; nulls get 0 (masked by the caller)."""
    import pyarrow as pa

    large = pa.types.is_large_string(arr.type) or pa.types.is_large_binary(arr.type)
    bufs = arr.buffers()
    odt = np.int64 if large else np.int32
    offsets = np.frombuffer(bufs[1], dtype=odt, count=len(arr) + 1, offset=arr.offset * np.dtype(odt).itemsize)
    data = np.frombuffer(bufs[2], dtype=np.uint8) if bufs[2] is not None and bufs[2].size else np.zeros(1, np.uint8)
    out = fingerprint64_many(offsets.astype(np.int64), data)
    if arr.null_count:
        out[arr.is_null().to_numpy(zero_copy_only=False)] = 0
    return out


@dataclass
class CanonicalBatch:
    """Non-null canonical keys, their weights (``None`` = all 1) and the nulls' weight."""

    keys: np.ndarray  # int64
    weights: np.ndarray | None  # int64 or float64, aligned with keys
    null_weight: float | int
    float_weights: bool
    key_domain: str | None = None  # "int" (integer keys), "str" (str/bytes keys), None (no non-null key)


def canonical_key(x) -> int | None:
    """The int64 form of one key, or ``None`` for a null."""
    if is_null(x):
        return None
    if isinstance(x, (bool, np.bool_)):
        raise KeyTypeError(_BOOL_KEYS)
    if isinstance(x, numbers.Integral):
        v = int(x)
        if not _I64_MIN <= v <= _I64_MAX:
            raise KeyTypeError(f"integer key {v} does not fit in int64")
        return v
    if isinstance(x, str):
        return fingerprint64(x.encode("utf-8"))
    if isinstance(x, (bytes, bytearray, memoryview)):
        return fingerprint64(bytes(x))
    if isinstance(x, (float, np.floating)):
        dtype = x.dtype if isinstance(x, np.floating) else np.float64
        f = float(x)
        if f.is_integer() and abs(f) < 2.0 ** float_key_limit(dtype):
            return int(f)
        raise _float_key_error(f, dtype)
    raise KeyTypeError(f"unsupported key type {type(x).__name__}: use int, str or bytes keys")


def _float_key_error(f: float, dtype=np.float64) -> KeyTypeError:
    """The error for float key ``f`` of ``dtype``: beyond the type's exact integers, or not integral."""
    name = _float_name(dtype)
    if math.isfinite(f) and f.is_integer():
        e = float_key_limit(dtype)
        what = "floats" if name == "float" else f"{name} values"
        return KeyTypeError(
            f"{name} key {f!r} is not below 2**{e} in magnitude, where {what} cannot tell neighbouring "
            f"integers apart: {_FLOAT_KEY_REMEDY}"
        )
    return KeyTypeError(f"float key {f!r} is not integral; only integer, str and bytes keys are supported")


def _object_keys(arr: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Canonicalise an object array element by element -> (int64 keys, null mask)."""
    out = np.empty(len(arr), dtype=np.int64)
    null = np.zeros(len(arr), dtype=bool)
    for i, x in enumerate(arr):
        k = canonical_key(x)
        if k is None:
            null[i] = True
            out[i] = 0
        else:
            out[i] = k
    return out, null


def _string_keys(arr: np.ndarray) -> np.ndarray:
    """Fingerprints of a numpy ``U`` (str) or ``S`` (bytes) array."""
    fast = object_fingerprints(arr.astype(object))
    if fast is not None:
        return fast[0]
    if arr.dtype.kind == "U":  # a str without a UTF-8 form: encode() names it
        return np.fromiter((fingerprint64(s.encode("utf-8")) for s in arr), np.int64, len(arr))
    return np.fromiter((fingerprint64(bytes(s)) for s in arr), np.int64, len(arr))


def _numpy_keys(arr: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
    """numpy array -> (int64 keys, null mask or None)."""
    kind = arr.dtype.kind
    if arr.ndim != 1:
        arr = arr.reshape(-1) if arr.ndim == 0 else arr
        if arr.ndim != 1:
            raise KeyTypeError(f"keys must be one-dimensional, got shape {arr.shape}")
    if kind == "i":
        return arr.astype(np.int64, copy=False), None
    if kind == "u":
        if arr.size and arr.max() > _I64_MAX:
            raise KeyTypeError(f"unsigned key {int(arr.max())} does not fit in int64")
        return arr.astype(np.int64), None
    if kind == "f":
        full = arr.astype(np.float64, copy=False)  # exact for every narrower float; no overflow in the limit
        null = np.isnan(full)
        vals = full[~null]
        bad = ~(np.abs(vals) < 2.0 ** float_key_limit(arr.dtype)) | (vals != np.floor(vals))
        if bad.any():
            raise _float_key_error(float(vals[bad][0]), arr.dtype)
        keys = np.where(null, 0.0, full).astype(np.int64)
        return keys, (null if null.any() else None)
    if kind in "US":
        return _string_keys(arr), None
    if kind == "O":
        # all-str/bytes object arrays (pandas string columns) are fingerprinted in one pass; others key by key
        fast = object_fingerprints(arr)
        if fast is not None:
            return fast
        keys, null = _object_keys(arr)
        return keys, (null if null.any() else None)
    if kind == "b":
        raise KeyTypeError(_BOOL_KEYS)
    raise KeyTypeError(f"unsupported key dtype {arr.dtype}: use int, str or bytes keys")


def _arrow_keys(arr) -> tuple[np.ndarray, np.ndarray | None]:
    import pyarrow as pa
    import pyarrow.compute as pc

    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    t = arr.type
    null = None
    if arr.null_count:
        null = arr.is_null().to_numpy(zero_copy_only=False)
    if pa.types.is_integer(t):
        filled = pc.fill_null(arr, 0) if arr.null_count else arr
        return _numpy_keys(filled.to_numpy(zero_copy_only=False))[0], null
    if pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_binary(t) or pa.types.is_large_binary(t):
        return _arrow_string_fingerprints(arr), null
    if pa.types.is_floating(t):
        return _numpy_keys(arr.to_numpy(zero_copy_only=False))
    if pa.types.is_dictionary(t):
        return _arrow_keys(arr.dictionary_decode())
    if pa.types.is_null(t):  # an all-null column (SQL NULL literal): every key is null
        return np.zeros(len(arr), dtype=np.int64), np.ones(len(arr), dtype=bool)
    if pa.types.is_boolean(t):
        raise KeyTypeError(_BOOL_KEYS)
    raise KeyTypeError(f"unsupported Arrow key type {t}: use integer, string or binary columns")


def _pandas_keys(s) -> tuple[np.ndarray, np.ndarray | None]:
    dtype = s.dtype
    kind = getattr(dtype, "kind", "O")
    null = np.asarray(s.isna())  # a Series gives a Series, an Index an ndarray
    has_null = bool(null.any())
    if kind in "iu" and getattr(dtype, "na_value", None) is not None or (kind in "iu" and has_null):
        # nullable integer extension dtype
        keys, _ = _numpy_keys(s.to_numpy(dtype=np.dtype("int64") if kind == "i" else np.dtype("uint64"), na_value=0))
        return keys, (null if has_null else None)
    if kind in "iuf" and not str(dtype).startswith(("Int", "UInt", "Float")):
        return _numpy_keys(s.to_numpy())
    if kind == "f":  # nullable Float32/Float64: their own width (float_key_limit)
        return _numpy_keys(s.to_numpy(dtype=getattr(dtype, "numpy_dtype", np.float64), na_value=np.nan))
    if kind == "b":
        raise KeyTypeError(_BOOL_KEYS)
    return _numpy_keys(s.to_numpy(dtype=object))


def keys_array(keys) -> tuple[np.ndarray, np.ndarray | None]:
    """Canonical int64 keys of one column (any container) and its null mask (None: no null).

    The nulls' positions hold placeholders; :func:`canonicalize` is the batch-level API
    (nulls dropped, weights, key domain), this is for callers aligning several columns."""
    mod = type(keys).__module__ or ""
    if isinstance(keys, np.ndarray):
        return _numpy_keys(keys)
    if mod.startswith("pyarrow"):
        return _arrow_keys(keys)
    if mod.startswith("pandas"):
        if hasattr(keys, "to_numpy") and getattr(keys, "ndim", 1) == 1:
            return _pandas_keys(keys)
        raise KeyTypeError(f"unsupported pandas key container {type(keys).__name__}: pass a Series or Index")
    if isinstance(keys, (str, bytes, bytearray, numbers.Number)) or keys is None:
        return _numpy_keys(np.array([keys], dtype=object))
    if isinstance(keys, (list, tuple, range)) or hasattr(keys, "__iter__"):
        seq = list(keys) if not isinstance(keys, (list, tuple)) else keys
        if not seq:
            return np.empty(0, dtype=np.int64), None
        if isinstance(seq[0], (str, bytes)):  # strings: fingerprinted in one pass (see _numpy_keys)
            arr = np.empty(len(seq), dtype=object)
            arr[:] = seq
            return _numpy_keys(arr)
        try:
            arr = np.asarray(seq)
        except (ValueError, OverflowError):
            arr = np.array(seq, dtype=object)
        if arr.dtype.kind in "iuf" and any(issubclass(t, (bool, np.bool_)) for t in set(map(type, seq))):
            raise KeyTypeError(_BOOL_KEYS)  # numpy made [1, True] the integers [1, 1]
        if arr.dtype.kind not in "iu" or arr.ndim != 1:
            arr = np.empty(len(seq), dtype=object)
            arr[:] = seq
        return _numpy_keys(arr)
    raise KeyTypeError(f"unsupported key container {type(keys).__name__}")


_STR_TYPES = (str, bytes, bytearray, memoryview, np.str_, np.bytes_)


def _domain_of_objects(values) -> str | None:
    """Key domain of a sequence of valid scalar keys (nulls ignored); mixed -> KeyTypeError."""
    found = set()
    for t in set(map(type, values)):
        if issubclass(t, _STR_TYPES):
            found.add("str")
        elif t is type(None) or t.__name__ in ("NAType", "NaTType"):
            continue
        elif issubclass(t, (float, np.floating)):
            if any(not math.isnan(x) for x in values if type(x) is t):  # NaN is a null
                found.add("int")
        else:
            found.add("int")
    if len(found) > 1:
        raise KeyTypeError(
            "keys mix integers and strings/bytes in one batch: a sketch holds one key domain "
            "(integers, or strings/bytes); cast the keys to one type"
        )
    return found.pop() if found else None


def _key_domain(keys) -> str | None:
    """"int" or "str" for a batch of valid keys with at least one non-null key."""
    mod = type(keys).__module__ or ""
    if mod.startswith("pyarrow"):
        t = keys.type
        t = getattr(t, "value_type", t)  # dictionary arrays: their values' type
        return "str" if str(t) in ("string", "large_string", "binary", "large_binary") else "int"
    if mod.startswith("pandas"):
        keys = keys.to_numpy(dtype=object) if getattr(keys.dtype, "kind", "O") not in "iuf" else keys.to_numpy()
    if isinstance(keys, np.ndarray):
        if keys.dtype.kind in "iuf":
            return "int"
        if keys.dtype.kind in "US":
            return "str"
        return _domain_of_objects(keys.ravel())
    if isinstance(keys, (str, bytes, bytearray, numbers.Number)) or keys is None:
        return _domain_of_objects([keys])
    return _domain_of_objects(keys if isinstance(keys, (list, tuple)) else list(keys))


def canonical_rows(columns: dict, weights=None, allow_float_weights: bool = False):
    """Aligned key columns (``{name: keys}``) and one weight column, by the rules of :func:`canonicalize`
    -> ``(keys, weights, null_weight, is_float)``: ``keys`` one int64 array per column.

    A row with a null weight is skipped; a row with a null key in any column goes to
    ``null_weight`` (the rows left have no null). Columns of different lengths are a
    :class:`KeyTypeError` naming them.

    >>> ks, w, null_weight, _ = canonical_rows({"a": [1, None, 3, 4]}, weights=[5, 6, None, 8])
    >>> [k.tolist() for k in ks], w.tolist(), null_weight
    ([[1, 4]], [5, 8], 6)
    """
    names = list(columns)
    ks, nulls = map(list, zip(*(keys_array(columns[name]) for name in names)))
    n = len(ks[0])
    for name, k in zip(names[1:], ks[1:]):
        if len(k) != n:
            raise KeyTypeError(f"{names[0]} and {name} must have the same length, got {n} and {len(k)}")
    wnull = weight_nulls(weights, n)
    if wnull is not None:  # rows with a null weight are skipped, as SQL SUM skips them
        keep = ~wnull
        weights, n = drop_rows(weights, keep), int(keep.sum())
        ks = [k[keep] for k in ks]
        nulls = [None if m is None else m[keep] for m in nulls]
    w, is_float = weights_array(weights, n, allow_float_weights)
    null = None
    for m in nulls:
        if m is not None:
            null = m if null is None else null | m
    null_weight = 0.0 if is_float else 0
    if null is not None:
        if w is None:
            null_weight = int(null.sum())
        else:
            null_weight = exact_int_sum(w[null]) if w.dtype.kind != "f" else float(w[null].sum())
            w = w[~null]
        ks = [k[~null] for k in ks]
    return [np.ascontiguousarray(k, dtype=np.int64) for k in ks], w, null_weight, is_float


def canonicalize(keys, weights=None, allow_float_weights: bool = False) -> CanonicalBatch:
    """Canonicalise a batch of keys (and weights) -> :class:`CanonicalBatch`.

    >>> b = canonicalize([3, None, 5], weights=[1, 7, -1])
    >>> b.keys.tolist(), b.weights.tolist(), b.null_weight
    ([3, 5], [1, -1], 7)

    ``keys`` may be a :class:`CanonicalBatch` of unit weight (keys already
    canonical, e.g. a slice of an earlier batch): its keys keep their recorded
    key domain, and ``weights`` go through the usual checks.
    """
    recorded = None
    if isinstance(keys, CanonicalBatch):
        if keys.weights is not None or keys.null_weight:
            raise ValueError("a CanonicalBatch passed as keys must have unit weights: pass its weights as weights=")
        keys, recorded = keys.keys, keys.key_domain
    if not isinstance(keys, (list, tuple, np.ndarray, str, bytes, bytearray, numbers.Number)) and keys is not None \
            and not (type(keys).__module__ or "").startswith(("pyarrow", "pandas")) and hasattr(keys, "__iter__"):
        keys = list(keys)  # one pass over a generator serves both the keys and their domain
    (k,), w, null_weight, is_float = canonical_rows({"keys": keys}, weights, allow_float_weights)
    domain = (recorded or _key_domain(keys)) if len(k) else None
    return CanonicalBatch(k, w, null_weight, is_float, domain)
