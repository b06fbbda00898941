"""Exact join sizes on Spark, by grouped counts — never by materialising the join.

``J = Σ_v f(v)·g(v)``: each side is reduced to ``(key, count)`` (or
``(key, SUM(weight))``) with a map-side-combined ``groupBy``, the two small
frequency tables are joined on the key, and the products are summed. Counts
are multiplied and summed as ``DECIMAL(38,0)``, so products of int64 counts
cannot overflow (Spark raises an error rather than wrap if a sum ever passed
10^38). Null keys never join (SQL semantics).
"""

from __future__ import annotations

from decimal import Decimal

import numpy as np

from skimsketch.keys.canonical import float_key_limit

from ._common import check_key_field, check_weight_field, keys_join, worker_errors

__all__ = ["check_join_keys", "exact_join_size", "exact_self_join_size", "frequencies"]

_K, _C = "__skim_key", "__skim_count"


def _is_float(df, weight) -> bool:
    """Float weights, or fractional DECIMALs (summed as float64, as the core does: docs/inputs.md)."""
    if weight is None:
        return False
    t = check_weight_field(df, weight).dataType
    return t.simpleString() in ("float", "double") or (t.simpleString().startswith("decimal(") and t.scale > 0)


def frequencies(df, column: str, weight: str | None = None, *, as_float: bool = False):
    """DataFrame ``(key, count)`` of the non-null keys of ``df[column]``.

    ``count`` is the number of rows (or the sum of ``weight``, nulls skipped)
    as ``DECIMAL(38,0)``, or ``DOUBLE`` when ``as_float`` (required for float
    and fractional DECIMAL weights). String keys are compared as their UTF-8
    bytes (``key`` is then binary) so that they join binary keys as sketches do.
    """
    return _frequencies(df, column, weight, as_float=as_float).withColumnRenamed(_K, "key") \
        .withColumnRenamed(_C, "count")


def _frequencies(df, column: str, weight: str | None = None, *, as_float: bool = False, suffix: str = ""):
    from pyspark.sql import functions as F

    if not as_float and _is_float(df, weight):
        raise ValueError(f"weight column {weight!r} is not integral: pass as_float=True (its sums are DOUBLE)")
    f = check_key_field(df, column)
    key = F.col(column)
    if f.dataType.simpleString() == "string":
        key = key.cast("binary")
    elif f.dataType.simpleString() in ("float", "double"):
        key = _float_key(key, column, f.dataType.simpleString() == "float")
    ctype = "double" if as_float else "decimal(38,0)"
    value = F.lit(1) if weight is None else _weight_value(df, weight)
    rows = df.select(key.alias(_K), value.cast(ctype).alias(_C)).where(F.col(_K).isNotNull())
    if weight is not None:
        rows = rows.where(F.col(_C).isNotNull())
    return rows.groupBy(_K).agg(F.sum(_C).cast(ctype).alias(_C + suffix))


def _raise(message_parts):
    """``raise_error`` whose message carries the core's error class (see ``worker_errors``)."""
    from pyspark.sql import functions as F

    parts = [F.lit(p) if isinstance(p, str) else p.cast("string") for p in message_parts]
    return F.raise_error(F.concat(F.lit("skimsketch.errors.KeyTypeError: "), *parts))


def _weight_value(df, weight: str):
    """The weight column under the core's rule (docs/inputs.md): NaN is NULL (the row is skipped),
    infinity raises, integer values beyond int64 raise."""
    from pyspark.sql import functions as F

    t = check_weight_field(df, weight).dataType
    w = F.col(weight)
    if t.simpleString() in ("float", "double"):
        bad = _raise([f"weights contain NaN or infinity: column {weight!r} holds ", w])
        return F.when(F.isnan(w), F.lit(None).cast(t)).when(F.abs(w) == F.lit(float("inf")), bad.cast(t)) \
            .otherwise(w)
    if t.simpleString().startswith("decimal(") and t.scale == 0 and t.precision > 18:
        bad = _raise(["weights value ", w, f" in column {weight!r} does not fit in int64"])
        return F.when((w > F.lit(2**63 - 1)) | (w < F.lit(-(2**63))), bad.cast(t)).otherwise(w)
    return w


def _float_key(key, column: str, float32: bool):
    """A FLOAT/DOUBLE key column as BIGINT under the core's rule (docs/inputs.md): NaN is NULL,
    integral values below the type's exact integers in magnitude (2**24 for FLOAT, 2**53 for DOUBLE:
    ``skimsketch.keys.canonical.float_key_limit``) are those integers, any other value raises."""
    from pyspark.sql import functions as F

    e = float_key_limit(np.float32 if float32 else np.float64)
    bad = (F.abs(key) >= F.lit(2.0 ** e)) | (key != F.floor(key))
    name = "float32" if float32 else "float"
    message = _raise([f"{name} key in column {column!r} is not an integer below 2**{e} in magnitude: ", key,
                      " (cast the column to BIGINT, or use integer, string or binary keys)"])
    return F.when(F.isnan(key), F.lit(None).cast("bigint")).when(bad, message.cast("bigint")) \
        .otherwise(key.cast("bigint"))


def check_join_keys(left, lcol, right, rcol):
    """Raise ``ValueError`` unless ``left[lcol]`` and ``right[rcol]`` are key columns of one family."""
    lf, rf = check_key_field(left, lcol), check_key_field(right, rcol)
    lt, rt = lf.dataType.simpleString(), rf.dataType.simpleString()
    if not keys_join(lt, rt):
        raise ValueError(
            f"key columns {lcol!r} ({lt}) and {rcol!r} ({rt}) cannot join: integer keys only join integer keys, "
            "string/binary keys only string/binary keys (as in the sketches' hashing)"
        )


def _checked(row):
    """The sum of a (j, n) row; a NULL sum over matching keys means decimal overflow (non-ANSI mode)."""
    if row["j"] is None and row["n"]:
        raise OverflowError("exact join size exceeds DECIMAL(38,0)")
    return row["j"]


def _result(value, as_float: bool):
    if value is None:
        return 0.0 if as_float else 0
    if as_float:
        return float(value)
    return int(Decimal(value))


def exact_join_size(left, lcol: str, right, rcol: str, lweight: str | None = None, rweight: str | None = None):
    """Exact ``Σ_v f(v)·g(v)`` of ``left[lcol]`` and ``right[rcol]`` (Python int).

    ``f``/``g`` count rows, or sum ``lweight``/``rweight`` when given (join
    aggregates; a float when either weight column is floating-point). Computed
    by grouped counts, a join of the two frequency tables and one sum.
    """
    from pyspark.sql import functions as F

    check_join_keys(left, lcol, right, rcol)
    as_float = _is_float(left, lweight) or _is_float(right, rweight)
    fl = _frequencies(left, lcol, lweight, as_float=as_float, suffix="_l")
    fr = _frequencies(right, rcol, rweight, as_float=as_float, suffix="_r")
    prod = F.col(_C + "_l") * F.col(_C + "_r")
    if not as_float:
        prod = prod.cast("decimal(38,0)")
    with worker_errors():
        row = fl.join(fr, on=_K, how="inner").agg(F.sum(prod).alias("j"), F.count(F.lit(1)).alias("n")).collect()[0]
    return _result(_checked(row), as_float)


def exact_self_join_size(df, column: str, weight: str | None = None):
    """Exact ``Σ_v f(v)²`` (second frequency moment) of ``df[column]``, by grouped counts."""
    from pyspark.sql import functions as F

    as_float = _is_float(df, weight)
    fr = _frequencies(df, column, weight, as_float=as_float)
    sq = F.col(_C) * F.col(_C)
    if not as_float:
        sq = sq.cast("decimal(38,0)")
    with worker_errors():
        row = fr.agg(F.sum(sq).alias("j"), F.count(F.lit(1)).alias("n")).collect()[0]
    return _result(_checked(row), as_float)
