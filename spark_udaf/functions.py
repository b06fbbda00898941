"""Column helpers for the ``skim_*`` SQL functions, in the style of ``pyspark.sql.functions``.

```python
from spark_udaf import functions as SF

daily = events.groupBy("day").agg(SF.skim_sketch_agg("user_id").alias("sk"), F.count("*"))
week = daily.agg(SF.skim_union_agg("sk").alias("sk"))
est = a.crossJoin(b).select(SF.skim_join_size_bounds(a.sk, b.sk))
```

Each helper takes column names or ``Column`` objects (constants as Python
values) and calls the function by name (``call_function``), so it works on
classic and Spark Connect sessions alike, with whatever implementation the
session has: the native functions of the jar (``spark_udaf.configure``, or a
server started with ``spark.sql.extensions``), or the Python ones of
``spark_udaf.register(spark)``. Optional parameters are passed only when given,
and by name (``weight => ...``, ``nbytes => ...``, ``confidence => ...``), which
both implementations read the same way (docs/spark.md). A STRING key in a
collation other than UTF8_BINARY is refused when the query is analysed, by the
jar's functions and by the Python ones ``spark_udaf.register`` registered
(:mod:`spark_udaf.sql.guard`, docs/inputs.md).
"""

from __future__ import annotations

import operator
from decimal import Decimal

import numpy as np

__all__ = [
    "skim_frequency",
    "skim_hash_sketch_agg",
    "skim_join_size",
    "skim_join_size_bounds",
    "skim_self_join_size",
    "skim_self_join_size_bounds",
    "skim_sketch_agg",
    "skim_sketch_info",
    "skim_union",
    "skim_union_agg",
    "skim_sample_agg",
]


def _col(c):
    from pyspark.sql import Column
    from pyspark.sql import functions as F

    if isinstance(c, Column):
        return c
    if isinstance(c, str):
        return F.col(c)
    raise TypeError(f"expected a column name (str) or a Column, got {type(c).__name__}")


def _lit(x, name: str):
    from pyspark.sql import Column
    from pyspark.sql import functions as F

    if isinstance(x, Column):
        return x
    if isinstance(x, bool) or not isinstance(x, (int, float, np.integer, np.floating)):
        raise TypeError(f"{name} must be a number, got {type(x).__name__}")
    return F.lit(int(x) if isinstance(x, np.integer) else float(x) if isinstance(x, np.floating) else x)


def _seed(x, fn: str):
    """``seed`` as a literal: a bigint below 2**63, else a ``DECIMAL(20, 0)`` (``F.lit`` refuses ints past
    int64), which the SQL functions read as the unsigned 64-bit seed, as a SQL literal ``18446744073709551615``."""
    from pyspark.sql import Column
    from pyspark.sql import functions as F

    if isinstance(x, Column):
        return x
    try:
        if isinstance(x, bool):
            raise TypeError
        x = operator.index(x)  # an int or a numpy integer
    except TypeError:
        raise TypeError(f"{fn}: seed must be an int, got {type(x).__name__}") from None
    if not 0 <= x < 2**64:
        raise ValueError(f"{fn}: seed must be an integer in [0, 2**64), got {x}")
    return F.lit(x) if x < 2**63 else F.lit(Decimal(x))


def _named(key: str, col):
    """``key => col``: a named argument of a function call, on classic and Spark Connect sessions."""
    if type(col).__module__.startswith("pyspark.sql.connect"):
        from pyspark.sql.connect.column import Column
        from pyspark.sql.connect.expressions import NamedArgumentExpression

        return Column(NamedArgumentExpression(key, col._expr))
    from pyspark import SparkContext
    from pyspark.sql.classic.column import Column, _to_java_column

    jvm = SparkContext._active_spark_context._jvm
    return Column(jvm.PythonSQLUtils.namedArgumentExpression(key, _to_java_column(col)))


def _call(name: str, *args):
    from pyspark.sql import functions as F

    return F.call_function(name, *args)


def skim_sketch_agg(col, weight=None, *, nbytes: int | None = None, seed: int | None = None):
    """The library default sketch of ``col`` (``SkimmedSketch.for_bytes(nbytes, seed)``), as BINARY.

    ``weight``: a numeric column (a SUM sketch). ``nbytes`` (16384 by default) and
    ``seed`` (0; unsigned 64-bit) are constants; each is passed (by name) only when given.
    """
    args = [_col(col)] + ([] if weight is None else [_named("weight", _col(weight))])
    if nbytes is not None:
        args.append(_named("nbytes", _lit(nbytes, "nbytes")))
    if seed is not None:
        args.append(_named("seed", _seed(seed, "skim_sketch_agg")))
    return _call("skim_sketch_agg", *args)


def skim_hash_sketch_agg(col, width: int, depth: int, seed: int | None = None, weight=None):
    """A hash (Fast-AGMS) sketch ``HashSketch(width, depth, seed)`` of ``col``, as BINARY (``seed``: unsigned
    64-bit, 0 by default)."""
    args = [_col(col)] + ([] if weight is None else [_named("weight", _col(weight))])
    args += [_named("width", _lit(width, "width")), _named("depth", _lit(depth, "depth"))]
    if seed is not None:
        args.append(_named("seed", _seed(seed, "skim_hash_sketch_agg")))
    return _call("skim_hash_sketch_agg", *args)


def skim_union_agg(col):
    """The merge of a column of sketches (NULLs skipped; NULL when there is none)."""
    return _call("skim_union_agg", _col(col))


def skim_union(a, b):
    """The merge of two sketch columns, row by row (NULL if either is NULL)."""
    return _call("skim_union", _col(a), _col(b))


def _estimate(name: str, cols, confidence):
    args = [_col(c) for c in cols]
    if confidence is not None:
        args.append(_named("confidence", _lit(float(confidence), "confidence")))
    return _call(name, *args)


def skim_join_size(a, b, confidence: float | None = None):
    """The estimated join size of two sketch columns, DOUBLE."""
    return _estimate("skim_join_size", (a, b), confidence)


def skim_join_size_bounds(a, b, confidence: float | None = None):
    """The join-size estimate with its interval: STRUCT<value, low, high, confidence, method>."""
    return _estimate("skim_join_size_bounds", (a, b), confidence)


def skim_self_join_size(a, confidence: float | None = None):
    """The estimated self-join size of a sketch column, DOUBLE."""
    return _estimate("skim_self_join_size", (a,), confidence)


def skim_self_join_size_bounds(a, confidence: float | None = None):
    """The self-join size with its interval: STRUCT<value, low, high, confidence, method>."""
    return _estimate("skim_self_join_size_bounds", (a,), confidence)


def skim_frequency(a, key, confidence: float | None = None):
    """The estimated frequency of ``key`` (a constant, or a Column) in a sketch column, DOUBLE."""
    from pyspark.sql import Column
    from pyspark.sql import functions as F

    k = key if isinstance(key, Column) else F.lit(key)
    args = [_col(a), k]
    if confidence is not None:
        args.append(_named("confidence", _lit(float(confidence), "confidence")))
    return _call("skim_frequency", *args)


def skim_sketch_info(a):
    """A sketch's description: STRUCT<kind, width, depth, seed, total_weight, null_weight, nbytes>."""
    return _call("skim_sketch_info", _col(a))


def skim_sample_agg(col, weight=None, *, nbytes: int | None = None, seed: int | None = None):
    """The coordinated join sample of ``col`` (``JoinSample.for_bytes(nbytes, seed)``), as BINARY: exact
    per-key totals grouped by Spark's shuffle, the ``m`` smallest ranks kept (docs/native.md).
    ``weight`` (any numeric column, passed by name), ``nbytes`` (16384) and ``seed`` (0) as in
    :func:`skim_sketch_agg`."""
    args = [_col(col)] + ([] if weight is None else [_named("weight", _col(weight))])
    if nbytes is not None:
        args.append(_named("nbytes", _lit(nbytes, "nbytes")))
    if seed is not None:  # unsigned 64-bit: past 2**63 a DECIMAL(20, 0) literal, as the sketches' helpers pass it
        args.append(_named("seed", _seed(seed, "skim_sample_agg")))
    return _call("skim_sample_agg", *args)
