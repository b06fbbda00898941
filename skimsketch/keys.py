"""Key and weight canonicalisation (docs/inputs.md).

Every key becomes one signed 64-bit integer before hashing:

* integers of any width (Python, numpy, pandas nullable, pyarrow) -> int64;
  values outside [-2**63, 2**63) are rejected;
* ``str`` -> its UTF-8 bytes, then as ``bytes``;
* ``bytes`` -> ``fingerprint64(b)``: MurmurHash3 x64-128 (seed 0) of the bytes,
  first 64 bits, signed. Equal strings give equal keys whatever container
  (list, numpy, pandas, pyarrow) carried them;
* floats are accepted only when integral (an integer column that picked up NaN
  nulls in pandas); ``1.5`` is an error;
* ``None``, NaN, ``pandas.NA``/``NaT`` and Arrow nulls are *null*: skipped, and
  their weight is added to the sketch's ``null_weight`` (nulls never join);
* ``bool``, datetimes and anything else raise :class:`KeyTypeError`.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from decimal import Decimal

import mmh3
import numpy as np

from .errors import KeyTypeError

__all__ = ["CanonicalBatch", "canonical_key", "canonicalize", "drop_null_weights", "fingerprint64",
           "fingerprint64_many", "scalar_weight", "select_rows"]

_I64_MIN, _I64_MAX = -(2**63), 2**63 - 1
# Largest float magnitude that converts to int64 exactly and safely.
_F64_SAFE = 2.0**63
# Float keys must stay below 2**53 in magnitude: beyond it a float cannot tell
# neighbouring integers apart (an int64 column that went through float64 has
# already lost its low bits), so such a key could silently be another key.
_F64_EXACT_KEY = 2.0**53
_FLOAT_KEY_REMEDY = "pass integer keys (e.g. the pandas 'Int64' dtype instead of float64 with NaN)"


def fingerprint64(data: bytes) -> int:
    """Signed 64-bit fingerprint of canonical key bytes (MurmurHash3 x64-128, seed 0).

    >>> fingerprint64(b"skim") == fingerprint64("skim".encode("utf-8"))
    True
    """
    return mmh3.hash64(data, 0, True, True)[0]


# -- vectorised fingerprints (same values as fingerprint64, pinned in tests) -------
_C1 = np.uint64(0x87C37B91114253D5)
_C2 = np.uint64(0x4CF5AD432745937F)
_FM1 = np.uint64(0xFF51AFD7ED558CCD)
_FM2 = np.uint64(0xC4CEB9FE1A85EC53)
_N1 = np.uint64(0x52DCE729)
_N2 = np.uint64(0x38495AB5)
_U5 = np.uint64(5)


def _rotl(x: np.ndarray, r: int) -> np.ndarray:
    return (x << np.uint64(r)) | (x >> np.uint64(64 - r))


def _fmix(k: np.ndarray) -> np.ndarray:
    k ^= k >> np.uint64(33)
    k *= _FM1
    k ^= k >> np.uint64(33)
    k *= _FM2
    k ^= k >> np.uint64(33)
    return k


_GATHER_BYTES = 1 << 21  # bytes gathered per step (bounds the index temporaries)
_MASKS = np.array([(1 << (8 * r)) - 1 for r in range(8)] + [(1 << 64) - 1], dtype=np.uint64)


def _murmur_rows(word, nblocks: int, lens: np.ndarray) -> np.ndarray:
    """h1 of MurmurHash3_x64_128 (seed 0) for strings of ``nblocks`` full 16-byte blocks plus a tail.

    ``word(k)`` returns the k-th little-endian 8-byte word of every string,
    zero beyond its end. A zero tail word contributes nothing (0 * c = 0), so
    the tail is mixed unconditionally."""
    h1 = np.zeros(len(lens), dtype=np.uint64)
    h2 = np.zeros(len(lens), dtype=np.uint64)
    with np.errstate(over="ignore"):
        for j in range(nblocks + 1):
            k1 = word(2 * j) * _C1
            k1 = _rotl(k1, 31)
            k1 *= _C2
            h1 ^= k1
            k2 = word(2 * j + 1) * _C2
            k2 = _rotl(k2, 33)
            k2 *= _C1
            if j == nblocks:  # tail: no rounds after the xor
                h2 ^= k2
                break
            h1 = _rotl(h1, 27)
            h1 += h2
            h1 = h1 * _U5 + _N1
            h2 ^= k2
            h2 = _rotl(h2, 31)
            h2 += h1
            h2 = h2 * _U5 + _N2
        ln = lens.astype(np.uint64)
        h1 ^= ln
        h2 ^= ln
        h1 += h2
        h2 += h1
        h1 = _fmix(h1)
        h2 = _fmix(h2)
        h1 += h2
    return h1.view(np.int64)


def fingerprint64_many(offsets: np.ndarray, data: np.ndarray) -> np.ndarray:
    """``fingerprint64`` of every byte string ``data[offsets[i]:offsets[i+1]]`` -> int64 array.

    Vectorised MurmurHash3 x64-128 over Arrow-style (offsets, data) buffers:
    strings are grouped by their number of 16-byte blocks, gathered into a
    zero-padded byte matrix viewed as little-endian words (masked past each
    string's end) and hashed column by column.

    >>> b = [b"skim", b"", "héllo".encode(), b"x" * 40]
    >>> offs = np.cumsum([0] + [len(x) for x in b])
    >>> fingerprint64_many(offs, np.frombuffer(b"".join(b), np.uint8)).tolist() == [fingerprint64(x) for x in b]
    True
    """
    offsets = np.asarray(offsets, dtype=np.int64)
    n = len(offsets) - 1
    out = np.empty(n, dtype=np.int64)
    if n <= 0:
        return out
    buf = np.concatenate([np.asarray(data, dtype=np.uint8)[: int(offsets[-1])], np.zeros(16, dtype=np.uint8)])
    lens = np.diff(offsets)
    nblocks = lens // 16
    uniq = np.unique(nblocks)
    for nb in uniq.tolist():
        rows = np.arange(n) if len(uniq) == 1 else np.flatnonzero(nblocks == nb)
        width = 16 * (nb + 1)
        step = max(1, _GATHER_BYTES // width)
        cols = np.arange(width)
        for s in range(0, len(rows), step):
            r = rows[s : s + step]
            ln = lens[r]
            # every string's bytes, zero-padded on the right: one byte gather, viewed as words
            words = buf[offsets[r][:, None] + cols[None, :]].view("<u8")

            def word(k, words=words, ln=ln):
                return words[:, k].astype(np.uint64) & _MASKS[np.clip(ln - 8 * k, 0, 8)]

            out[r] = _murmur_rows(word, nb, ln)
    return out


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


def _strings_via_arrow(values, from_pandas: bool = False):
    """(fingerprints, null mask or None) of a sequence that is all str (or nulls), else ``None``."""
    try:
        import pyarrow as pa
    except ImportError:  # pragma: no cover - pyarrow is a dependency, this is a fallback
        return None
    try:
        arr = pa.array(values, type=pa.string(), from_pandas=from_pandas)
    except (pa.ArrowException, TypeError, ValueError, UnicodeError):
        return None
    null = arr.is_null().to_numpy(zero_copy_only=False) if arr.null_count else None
    return _arrow_string_fingerprints(arr), null


@dataclass
class CanonicalBatch:
    """Non-null canonical keys, their weights (``None`` = all 1) and the nulls' weight."""

    keys: np.ndarray  # int64
    weights: np.ndarray | None  # int64 or float64, aligned with keys
    null_weight: float | int
    float_weights: bool
    key_domain: str | None = None  # "int" (integer keys), "str" (str/bytes keys), None (no non-null key)


def _is_null_scalar(x) -> bool:
    if x is None:
        return True
    if isinstance(x, (float, np.floating)) and math.isnan(x):
        return True
    # pandas.NA / NaT without importing pandas
    return type(x).__name__ in ("NAType", "NaTType")


def canonical_key(x) -> int | None:
    """The int64 form of one key, or ``None`` for a null."""
    if _is_null_scalar(x):
        return None
    if isinstance(x, (bool, np.bool_)):
        raise KeyTypeError("bool keys are not supported: cast them to int explicitly")
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
        f = float(x)
        if f.is_integer() and abs(f) < _F64_EXACT_KEY:
            return int(f)
        raise _float_key_error(f)
    raise KeyTypeError(f"unsupported key type {type(x).__name__}: use int, str or bytes keys")


def _float_key_error(f: float) -> KeyTypeError:
    if math.isfinite(f) and f.is_integer():
        return KeyTypeError(
            f"float key {f!r} is not below 2**53 in magnitude, where floats cannot tell neighbouring "
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
    if arr.dtype.kind == "U":
        fast = _strings_via_arrow(arr.tolist())
        if fast is not None:
            return fast[0]
        return np.fromiter((fingerprint64(s.encode("utf-8")) for s in arr), np.int64, len(arr))
    return np.fromiter((fingerprint64(bytes(s)) for s in arr), np.int64, len(arr))


def _nulls_are_null_markers(arr: np.ndarray, null: np.ndarray) -> bool:
    """Arrow's nulls must be exactly the elements :func:`canonical_key` treats as null."""
    return all(_is_null_scalar(x) for x in arr[null])


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
        null = np.isnan(arr)
        vals = arr[~null]
        bad = ~(np.abs(vals) < _F64_EXACT_KEY) | (vals != np.floor(vals))
        if bad.any():
            raise _float_key_error(float(vals[bad][0]))
        keys = np.where(null, 0.0, arr).astype(np.int64)
        return keys, (null if null.any() else None)
    if kind in "US":
        return _string_keys(arr), None
    if kind == "O":
        # all-str object arrays (pandas string columns) are hashed vectorised; others key by key
        fast = _strings_via_arrow(arr, from_pandas=True) if len(arr) else None
        if fast is not None and (fast[1] is None or _nulls_are_null_markers(arr, fast[1])):
            return fast
        keys, null = _object_keys(arr)
        return keys, (null if null.any() else None)
    if kind == "b":
        raise KeyTypeError("bool keys are not supported: cast them to int explicitly")
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
    if kind == "f":
        return _numpy_keys(s.to_numpy(dtype=np.float64, na_value=np.nan))
    if kind == "b":
        raise KeyTypeError("bool keys are not supported: cast them to int explicitly")
    return _numpy_keys(s.to_numpy(dtype=object))


def _keys_array(keys) -> tuple[np.ndarray, np.ndarray | None]:
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
        if isinstance(seq[0], str):  # a list of strings: straight to Arrow (None -> null), else key by key
            fast = _strings_via_arrow(seq)
            if fast is not None:
                return fast
        try:
            arr = np.asarray(seq)
        except (ValueError, OverflowError):
            arr = np.array(seq, dtype=object)
        if arr.dtype.kind not in "iu" or arr.ndim != 1:
            arr = np.empty(len(seq), dtype=object)
            arr[:] = seq
        return _numpy_keys(arr)
    raise KeyTypeError(f"unsupported key container {type(keys).__name__}")


def numeric_vector(values, n: int, what: str) -> np.ndarray:
    """``values`` — a scalar, or an aligned array (numpy, list, pandas, pyarrow) —
    as a 1-D int64 or float64 array of length ``n``.

    Rejects bools, nulls, NaN/infinity, non-numbers and unsigned values beyond
    int64 with a :class:`KeyTypeError` naming ``what``.
    """
    if isinstance(values, (bool, np.bool_)):
        raise KeyTypeError(f"{what} must be int or float, got bool")
    mod = type(values).__module__ or ""
    if mod.startswith("pyarrow"):
        if values.null_count:
            raise KeyTypeError(f"{what} contain nulls")
        values = values.to_numpy(zero_copy_only=False)
    elif mod.startswith("pandas"):
        if values.isna().any():
            raise KeyTypeError(f"{what} contain nulls")
        values = values.to_numpy()
    v = np.asarray(values)
    if v.dtype.kind == "O":
        v = _object_numbers(v, what)
    if v.dtype.kind not in "iuf":
        raise KeyTypeError(f"{what} must be int or float, got dtype {v.dtype}")
    if v.ndim == 0:
        v = np.full(n, v[()], dtype=v.dtype)
    if v.ndim != 1 or len(v) != n:
        raise KeyTypeError(f"{what} have shape {v.shape}, expected a scalar or ({n},)")
    if v.dtype.kind == "f":
        bad = ~np.isfinite(v)
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise KeyTypeError(f"{what} contain NaN or infinity (position {i} is {v[i].item()!r})")
        return v.astype(np.float64, copy=False)
    if v.dtype.kind == "u" and v.size and v.max() > _I64_MAX:
        raise KeyTypeError(f"{what} value {int(v.max())} does not fit in int64")
    return v.astype(np.int64, copy=False)


def _object_number(x, what: str):
    """One weight from an object array: int exactly, float as is, other rationals
    (``Decimal``, ``Fraction``) exactly when integral, else to the nearest float64."""
    if isinstance(x, (bool, np.bool_)):
        raise KeyTypeError(f"{what} must be numbers, got the bool {x!r}: cast it to int explicitly")
    if isinstance(x, numbers.Integral):
        return int(x)
    if isinstance(x, (float, np.floating)):
        return float(x)
    if isinstance(x, (numbers.Rational, Decimal)):
        try:
            if x == int(x):  # integral Decimal/Fraction: exact
                return int(x)
            return float(x)  # correctly rounded to the nearest float64
        except (ValueError, OverflowError):  # Decimal NaN / Infinity
            raise KeyTypeError(f"{what} contain NaN or infinity ({x!r})") from None
    raise KeyTypeError(f"{what} must be int or float (or Decimal, Fraction), got {x!r} ({type(x).__name__})")


def _object_numbers(v: np.ndarray, what: str) -> np.ndarray:
    """Object array of numbers -> int64 (all integral) or float64, see :func:`_object_number`."""
    vals = [_object_number(x, what) for x in v.ravel()]
    if any(isinstance(x, float) for x in vals):
        return np.array(vals, dtype=np.float64).reshape(v.shape)
    try:
        return np.array(vals, dtype=np.int64).reshape(v.shape)
    except OverflowError:
        big = next(x for x in vals if not _I64_MIN <= x <= _I64_MAX)
        raise KeyTypeError(f"{what} value {big} does not fit in int64") from None


def _fractional_decimal(weights) -> bool:
    """Whether ``weights`` is a typed (Arrow) DECIMAL with a fractional scale: float weights by type."""
    t = getattr(weights, "type", None)
    if t is None or not (type(weights).__module__ or "").startswith("pyarrow"):
        return False
    import pyarrow as pa

    return pa.types.is_decimal(t) and t.scale > 0


def _weights_array(weights, n: int, allow_float: bool):
    if weights is None:
        return None, False
    fractional = _fractional_decimal(weights)
    if fractional and not allow_float:
        raise KeyTypeError(
            f"weights have type {weights.type} (a fractional DECIMAL) but the sketch has integer counters: "
            "create it with dtype='float64', or cast the weights to an integer type"
        )
    w = numeric_vector(weights, n, "weights")
    if fractional:  # float weights by type, whatever the values in this batch
        return w.astype(np.float64), True
    if w.dtype.kind == "f":
        if not allow_float:
            integral = (w == np.floor(w)) & (np.abs(w) < _F64_SAFE)
            if not integral.all():
                raise KeyTypeError(
                    f"non-integral weight {w[~integral][0]!r} on an integer-counter sketch: "
                    "create the sketch with dtype='float64' for SUM aggregates"
                )
            return w.astype(np.int64), False
        return w, True
    return w, False


def scalar_weight(x, float_counters: bool):
    """One weight for a whole batch, as the sketch's counter type (int, or float
    when ``float_counters``); the rule of :func:`_object_number`, and it must be finite."""
    if x is None or type(x).__name__ in ("NAType", "NaTType"):
        raise KeyTypeError(f"a scalar weight must be a number, got {x!r}: pass weights=None for weight 1 per key")
    v = _object_number(x, "weights")
    if isinstance(v, float):
        if not math.isfinite(v):
            raise KeyTypeError("weights contain NaN or infinity")
        if not float_counters:
            if not v.is_integer():
                raise KeyTypeError(
                    f"non-integral weight {x!r} on an integer-counter sketch: "
                    "create the sketch with dtype='float64' for SUM aggregates"
                )
            v = int(v)
    return float(v) if float_counters else v


def _weight_nulls(weights, n: int):
    """Null mask of an aligned weight array (``None`` when it has no null or is a scalar).

    Null weights are the key nulls: ``None``, NaN, ``pandas.NA``/``NaT`` and
    Arrow nulls (see docs/inputs.md).
    """
    if weights is None or np.ndim(weights) == 0 and not hasattr(weights, "__len__"):
        return None
    mod = type(weights).__module__ or ""
    if mod.startswith("pyarrow"):
        import pyarrow as pa
        import pyarrow.compute as pc

        if not hasattr(weights, "type") or not (weights.null_count or pa.types.is_floating(weights.type)):
            return None
        null = pc.is_null(weights, nan_is_null=True).to_numpy(zero_copy_only=False)
    elif mod.startswith("pandas"):
        null = np.asarray(weights.isna())
    else:
        v = np.asarray(weights) if isinstance(weights, np.ndarray) else None
        if v is not None and v.dtype.kind == "f":
            null = np.isnan(v)
        elif v is not None and v.dtype.kind != "O":
            return None
        else:
            try:
                null = np.fromiter((_is_null_scalar(x) for x in weights), bool)
            except TypeError:
                return None
    if null is None or null.ndim != 1 or len(null) != n or not null.any():
        return None
    return null


def select_rows(values, keep: np.ndarray):
    """``values`` (an aligned array: list, numpy, pandas, pyarrow) restricted to the rows of ``keep``."""
    return _drop_weights(values, keep)


def drop_null_weights(weights, n: int):
    """``(weights without their null rows, keep mask)``; the mask is ``None`` when no weight is null.

    The null weights of docs/inputs.md (``None``, NaN, ``pandas.NA``, Arrow
    nulls) mark rows to skip, as SQL ``SUM`` skips them: callers drop the same
    rows from their keys (and timestamps) with :func:`select_rows`.
    """
    null = _weight_nulls(weights, n)
    if null is None:
        return weights, None
    keep = ~null
    return _drop_weights(weights, keep), keep


def _drop_weights(weights, keep: np.ndarray):
    """``weights`` restricted to the rows of ``keep`` (same container kind)."""
    mod = type(weights).__module__ or ""
    if mod.startswith("pyarrow"):
        import pyarrow as pa

        return weights.filter(pa.array(keep))
    if mod.startswith("pandas"):
        return weights[keep]
    if isinstance(weights, np.ndarray):
        return weights[keep]
    arr = np.empty(len(keep), dtype=object)
    arr[:] = list(weights)
    return arr[keep]


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
    k, null = _keys_array(keys)
    wnull = _weight_nulls(weights, len(k))
    if wnull is not None:  # rows with a null weight are skipped, as SQL SUM skips them
        keep = ~wnull
        weights, k = _drop_weights(weights, keep), k[keep]
        null = None if null is None else null[keep]
    w, is_float = _weights_array(weights, len(k), allow_float_weights)
    domain = (recorded or _key_domain(keys)) if len(k) > (0 if null is None else int(null.sum())) else None
    null_weight = 0.0 if is_float else 0
    if null is not None:
        if w is None:
            null_weight = int(null.sum())
        else:
            null_weight = w[null].sum().item()
            w = w[~null]
        k = k[~null]
    return CanonicalBatch(np.ascontiguousarray(k, dtype=np.int64), w, null_weight, is_float, domain)
