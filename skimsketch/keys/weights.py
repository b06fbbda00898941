"""Weight canonicalisation (docs/inputs.md, "Weights"): aligned or scalar weights as int64 or float64.

Weights are integers (exact, int64) or, for ``dtype="float64"`` sketches, floats; integral
floats on an integer sketch become int64; bools, NaN/infinity, non-numbers and values beyond
int64 are a :class:`KeyTypeError` naming the weights. A *null* weight (``None``, NaN,
``pandas.NA``/``NaT``, an Arrow null) skips its row, as SQL ``SUM`` does (:func:`drop_null_weights`).
"""

from __future__ import annotations

import math
import numbers
from decimal import Decimal

import numpy as np

from ..errors import CounterOverflowError, KeyTypeError

__all__ = ["batch_scalar_weight", "drop_null_weights", "drop_rows", "is_null", "numeric_vector", "scalar_weight",
           "select_rows", "weight_nulls", "weights_array"]

_I64_MIN, _I64_MAX = -(2**63), 2**63 - 1
# Largest float magnitude that converts to int64 exactly and safely.
_F64_SAFE = 2.0**63


def is_null(x) -> bool:
    """Whether one key or weight is a null: ``None``, NaN, ``pandas.NA`` or ``NaT``."""
    if x is None:
        return True
    if isinstance(x, (float, np.floating)) and math.isnan(x):
        return True
    # pandas.NA / NaT without importing pandas
    return type(x).__name__ in ("NAType", "NaTType")


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


def weights_array(weights, n: int, allow_float: bool):
    """``(weights, is_float)``: ``n`` aligned weights (a scalar is repeated; None stays None) as
    int64, or float64 when ``allow_float`` and one is fractional; integral floats become int64."""
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


def batch_scalar_weight(weights, float_counters: bool):
    """The one weight of a whole batch when ``weights`` is a scalar (see :func:`scalar_weight`),
    else None (no weights, or an aligned array); an integer beyond int64 is a
    :class:`CounterOverflowError`."""
    if weights is None or np.ndim(weights) != 0 or hasattr(weights, "__len__"):
        return None
    v = scalar_weight(weights, float_counters)
    if not float_counters and not _I64_MIN <= v <= _I64_MAX:
        raise CounterOverflowError(f"weight {v} does not fit in int64")
    return v


def weight_nulls(weights, n: int):
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
                null = np.fromiter((is_null(x) for x in weights), bool)
            except TypeError:
                return None
    if null is None or null.ndim != 1 or len(null) != n or not null.any():
        return None
    return null


def select_rows(values, keep: np.ndarray):
    """``values`` (an aligned array: list, numpy, pandas, pyarrow) restricted to the rows of ``keep``."""
    return drop_rows(values, keep)


def drop_null_weights(weights, n: int):
    """``(weights without their null rows, keep mask)``; the mask is ``None`` when no weight is null.

    The null weights of docs/inputs.md (``None``, NaN, ``pandas.NA``, Arrow
    nulls) mark rows to skip, as SQL ``SUM`` skips them: callers drop the same
    rows from their keys (and timestamps) with :func:`select_rows`.
    """
    null = weight_nulls(weights, n)
    if null is None:
        return weights, None
    keep = ~null
    return drop_rows(weights, keep), keep


def drop_rows(weights, keep: np.ndarray):
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
