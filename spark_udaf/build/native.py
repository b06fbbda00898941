"""DataFrame sketch building on the JVM: the native path of ``sketch_column`` / ``sketch_by``.

When the session's JVM has the native jar (:mod:`spark_udaf.native`) and the
sketch and columns are ones the Java aggregates build byte-identically —
a ``HashSketch`` or ``SkimmedSketch`` (any shape, domain, hierarchy or layout),
keys of an integer, float/double (integral values), string or binary type, no
weight, an integer or DECIMAL weight, or a float weight with float counters — the sketch is built by
``skim_sketch_like_agg(key [, weight], template)``: map-side partial
aggregation on the JVM, no Python worker and no row-to-Arrow conversion.
Anything else returns ``None`` and the caller takes the Python path.
"""

from __future__ import annotations

import logging

import skimsketch as ss

from .. import native
from .._common import check_columns, field_of, worker_errors

__all__ = ["PATHS", "check_path", "log_path", "native_reason", "sketch_by", "sketch_column"]

#: Values of the ``path`` argument of the builders: "auto" (native when possible), "native", "python".
PATHS = ("auto", "native", "python")
_INT_TYPES = ("tinyint", "smallint", "int", "bigint")
_FLOAT_TYPES = ("float", "double")
_KEY_TYPES = _INT_TYPES + _FLOAT_TYPES + ("string", "binary")
_log = logging.getLogger("spark_udaf")


def native_reason(df, column: str, sketch, weight: str | None) -> str | None:
    """``None`` when the native path can build this sketch, else why it cannot."""
    if type(sketch) not in (ss.HashSketch, ss.SkimmedSketch):
        return f"{type(sketch).__name__} is built by the Python path only"
    if not native.loaded(df.sparkSession):
        return "the session's JVM does not have the native jar (spark_udaf.native.configure)"
    key = field_of(df, column).dataType.simpleString()
    if key not in _KEY_TYPES:
        return f"key type {key}"
    if weight is not None:
        wt = field_of(df, weight).dataType.simpleString()
        if not (wt in _INT_TYPES or wt.startswith("decimal(") or (wt in _FLOAT_TYPES and sketch.float_counters)):
            return f"weight type {wt} with {sketch.dtype} counters"
    return None


def check_path(path: str) -> None:
    if path not in PATHS:
        raise ValueError(f"path must be one of {PATHS}, got {path!r}")


def _aggregate(df, column: str, sketch, weight: str | None):
    from pyspark.sql import functions as F

    args = [F.col(column)] + ([] if weight is None else [F.col(weight)])
    template = F.lit(bytearray(sketch.empty_like().to_bytes()))
    return F.call_function("skim_sketch_like_agg", *args, template).alias("sketch")


def _use_native(df, column, sketch, weight, path) -> bool:
    check_path(path)
    if path == "python":
        return False
    check_columns(df, column, sketch, weight)  # the Python path's driver-side errors, before any scan
    reason = native_reason(df, column, sketch, weight)
    if reason is not None and path == "native":
        raise ValueError(f"path='native' is not possible here: {reason}; use path='auto' or 'python'")
    log_path(column, "native path (JVM)" if reason is None else f"Python path ({reason})")
    return reason is None


def log_path(column: str, which: str) -> None:
    """Say on the ``spark_udaf`` logger which path builds the sketch of ``column``."""
    _log.info("building the sketch of %r: %s", column, which)


def sketch_column(df, column: str, sketch, weight: str | None = None, path: str = "auto"):
    """Merge the native sketch of ``df[column]`` into ``sketch`` -> ``sketch``; ``None`` if the
    Python path must build it (``path="python"``, or native impossible with ``path="auto"``)."""
    if not _use_native(df, column, sketch, weight, path):
        return None
    with worker_errors():  # the core's input errors, raised by the JVM tasks with the core's names
        blob = df.agg(_aggregate(df, column, sketch, weight)).collect()[0][0]
    return sketch.merge(ss.from_bytes(bytes(blob)))


def sketch_by(df, column: str, sketch, by: list, weight: str | None = None, path: str = "auto"):
    """DataFrame (``by`` columns, ``sketch`` bytes) built natively, or ``None`` (see :func:`sketch_column`)."""
    if not _use_native(df, column, sketch, weight, path):
        return None
    return df.groupBy(*by).agg(_aggregate(df, column, sketch, weight))
