"""Helpers shared by the Spark adapters: column checks and sketch (de)serialisation.

Nothing here starts a Spark job; the functions run on the driver or inside
Python workers.
"""

from __future__ import annotations

import re
from contextlib import contextmanager
from functools import reduce

import skimsketch as ss

from .cluster import python_workers

__all__ = [
    "KEY_TYPE_NAMES",
    "WEIGHT_TYPE_NAMES",
    "check_columns",
    "check_key_field",
    "check_weight_field",
    "check_weight_fits",
    "collation_error",
    "column_text",
    "field_of",
    "key_family",
    "keys_join",
    "load_sketch",
    "merge_blobs",
    "require_sketch",
    "resolve_column",
    "worker_errors",
    "worker_python",
]

#: Spark SQL types accepted as join keys (docs/inputs.md: integers, strings, bytes; floats only
#: when integral and below 2**53 (FLOAT: 2**24) in magnitude, checked per value; ``void``: an all-NULL column).
KEY_TYPE_NAMES = ("tinyint", "smallint", "int", "bigint", "float", "double", "string", "binary", "void")
#: Spark SQL types accepted as weights (and DECIMAL(p, s); ``void``: all NULL, every row skipped).
WEIGHT_TYPE_NAMES = ("tinyint", "smallint", "int", "bigint", "float", "double", "void")


def field_of(df, column: str):
    """The ``StructField`` of top-level ``column`` in ``df`` (clear error if absent)."""
    if not isinstance(column, str):
        raise TypeError(f"column must be a column name (str), got {type(column).__name__}")
    for f in df.schema.fields:
        if f.name == column:
            return f
    names = ", ".join(f.name for f in df.schema.fields)
    raise ValueError(f"column {column!r} not found in DataFrame columns [{names}]")


def _type_name(dtype) -> str:
    return dtype.simpleString()


def key_family(type_name: str) -> str | None:
    """'int' for integer (and float) keys, 'bytes' for string/binary keys (they hash alike), ``None`` for void."""
    if type_name == "void":
        return None
    return "bytes" if type_name in ("string", "binary") else "int"


def keys_join(type_a: str, type_b: str) -> bool:
    """Whether key columns of these Spark types can join (one family; an all-NULL column joins any)."""
    fa, fb = key_family(type_a), key_family(type_b)
    return fa is None or fb is None or fa == fb


def _check_field(df, column: str, role: str, allowed, hint: str = ""):
    """The ``role`` column's ``StructField``; a ``KeyTypeError`` naming it when its type is not allowed."""
    f = field_of(df, column)
    name = _type_name(f.dataType)
    if name not in allowed:
        raise ss.KeyTypeError(f"{role} column {_shown(f)!r} has type {name}; supported {role} types are "
                              f"{', '.join(allowed)}{hint}")
    return f


def collation_error(fn: str, type_name: str, collation: str) -> str:
    """The message refusing a STRING key in a non-binary collation (the jar's ``Args.requireBinaryCollation``)."""
    return (f"{fn}: key has type {type_name}: keys equal under collation {collation} ('Alice' and 'alice' under "
            "UTF8_LCASE) may differ in bytes, and the summaries hash a key's bytes, so they would count as different "
            "keys; normalise the keys first, e.g. lower(key) COLLATE UTF8_BINARY for a case-insensitive collation "
            "(or key COLLATE UTF8_BINARY to count each spelling as its own key)")


#: The metadata key of a column :func:`resolve_column` added: the column as the caller gave it (``a.b``).
_SHOWN = "skimsketch.column"


def _shown(field) -> str:
    """The name a message gives the column: as the caller gave it when :func:`resolve_column` added it."""
    return (field.metadata or {}).get(_SHOWN, field.name)


def check_key_field(df, column: str):
    """The key column's ``StructField``; rejects types the sketches cannot hash, and strings in a collation other
    than UTF8_BINARY anywhere (a nested field ``s.a`` too: equal keys of different bytes, :func:`collation_error`)."""
    f = field_of(df, column)
    collation = getattr(f.dataType, "collation", "UTF8_BINARY")
    if _type_name(f.dataType).startswith("string") and collation != "UTF8_BINARY":
        raise ss.KeyTypeError(collation_error(f"key column {_shown(f)!r}", _type_name(f.dataType), collation))
    return _check_field(df, column, "key", KEY_TYPE_NAMES, f" (cast it, e.g. CAST({_shown(f)} AS BIGINT))")


def check_weight_field(df, column: str):
    """The weight column's ``StructField``; rejects non-numeric types."""
    f = field_of(df, column)
    if _type_name(f.dataType).startswith("decimal("):  # exact when integral, else nearest float64
        return f
    return _check_field(df, column, "weight", WEIGHT_TYPE_NAMES + ("decimal(p,s)",))


def check_weight_fits(field, sketch) -> None:
    """Refuse, on the driver, a DECIMAL weight with a fractional scale for an integer-counter sketch."""
    t = field.dataType
    if _type_name(t).startswith("decimal(") and t.scale > 0 and not sketch.float_counters:
        raise ss.KeyTypeError(
            f"weight column {field.name!r} has type {_type_name(t)} (fractional) but the sketch has integer "
            "counters: create it with dtype='float64', or CAST the column to an integer type"
        )


#: A skimsketch error raised inside a Spark task, as its class and message appear in the task's error: the
#: core's (Python workers) or the jar's classes of the same names (io.skimsketch.spark.KeyTypeError, ...).
_WORKER_ERROR = re.compile(r"(?:skimsketch\.errors|io\.skimsketch\.spark)\.(KeyTypeError|CounterOverflowError|"
                           r"KeyDomainError|CorruptSketchError|IncompatibleSketchError|SketchMemoryError): ([^\n]*)")


@contextmanager
def worker_errors():
    """Re-raise a skimsketch input error from a Spark task as that error on the driver.

    The core's message (naming the argument, the value and the remedy) would
    otherwise sit at the bottom of a long Java trace; the jar's ``SketchMemoryError``
    (one query's allocation failed) becomes ``MemoryError``; other errors pass unchanged.
    """
    try:
        yield
    except Exception as e:
        m = _WORKER_ERROR.search(str(e))
        if m is None:
            raise
        if m.group(1) == "SketchMemoryError":  # the jar's heap ran out in one query (its JVM goes on)
            raise MemoryError(m.group(2).strip()) from None
        cls = getattr(ss, m.group(1))
        if cls is ss.IncompatibleSketchError:  # its constructor takes the field; keep the JVM's whole message
            err = ss.SketchError.__new__(cls)
            ss.SketchError.__init__(err, m.group(2).strip())
            raise err from None
        raise cls(m.group(2).strip()) from None


def check_columns(df, column: str, sketch, weight: str | None = None) -> None:
    """Everything ``df``'s schema already tells about sketching ``df[column]`` into ``sketch``, on the driver.

    The key type, the weight type, a fractional DECIMAL weight for integer
    counters, and string/binary keys for a sketch over a bounded integer
    domain (they hash to 64-bit integers outside it). Raises before any scan;
    what only the values can tell is checked by the core in the tasks.
    """
    key = check_key_field(df, column)
    if weight is not None:
        if weight == column:
            raise ValueError(f"key and weight must be different columns, got {column!r} twice")
        check_weight_fits(check_weight_field(df, weight), sketch)
    domain = getattr(sketch, "domain", None)
    if domain is not None and key_family(_type_name(key.dataType)) == "bytes":
        raise ss.KeyDomainError(
            f"key column {column!r} has type {_type_name(key.dataType)} but the sketch's keys are integers in "
            f"[0, {domain}) (string keys hash outside it): use an unbounded sketch (domain=None) or integer keys"
        )


def require_sketch(sketch, what: str = "sketch"):
    """Raise ``TypeError`` unless ``sketch`` is a core skimsketch sketch."""
    for attr in ("to_bytes", "empty_like", "merge", "join_size"):
        if not hasattr(sketch, attr):
            raise TypeError(
                f"{what} must be a skimsketch sketch (HashSketch, SkimmedSketch, AGMSSketch), "
                f"got {type(sketch).__name__}"
            )
    return sketch


def load_sketch(blob, what: str = "sketch"):
    """``ss.from_bytes`` with the argument's role in the error message."""
    if not isinstance(blob, (bytes, bytearray, memoryview)):
        raise TypeError(f"{what}: expected sketch bytes, got {type(blob).__name__}")
    try:
        return ss.from_bytes(bytes(blob))
    except ss.CorruptSketchError as e:
        raise ss.CorruptSketchError(f"{what}: {e}") from None


def merge_blobs(blobs, what: str = "sketch"):
    """Merge serialised sketches (``None`` entries skipped) -> sketch, or ``None`` if none."""
    sketches = [load_sketch(b, what) for b in blobs if b is not None]
    if not sketches:
        return None
    return reduce(lambda a, b: a.merge(b), sketches[1:], sketches[0])


def worker_python(spark) -> bool:
    """Give a classic session's Python workers an interpreter that runs the library, if one exists there.

    PySpark starts workers with ``$PYSPARK_PYTHON`` or else a bare ``python3``, which
    may lack numpy and mmh3 (``No module named 'mmh3'`` on the first Python task) or
    this driver's sources. :func:`spark_udaf.cluster.python_workers` probes the
    executors once per application, ships the sources and takes the driver's
    interpreter where that is what works. Returns whether the session's interpreter
    changed; Connect sessions are left alone.
    """
    sc = getattr(spark, "sparkContext", None) if getattr(spark, "_jsparkSession", None) is not None else None
    if sc is None:
        return False
    before = sc.pythonExec
    python_workers(spark)
    return sc.pythonExec != before


def resolve_column(df, column):
    """``(df, name)``: ``column`` (a name, as Spark resolves names, or a ``Column``) as a top-level column of ``df``.

    A name matching a top-level field exactly, or case-insensitively when
    ``spark.sql.caseSensitive`` is false (Spark's default), keeps ``df`` as it is
    (so a plain Parquet scan stays one). Any other name (a nested field ``a.b``, a
    back-quoted name) and any ``Column`` expression is resolved by Spark itself
    (``df.select``): an unknown name raises Spark's ``AnalysisException``, and the
    value becomes a column ``__skim_<n>`` added to ``df``. Works on classic and
    Spark Connect DataFrames.
    """
    shown = column if isinstance(column, str) else column_text(column)
    if isinstance(column, str):
        names = [f.name for f in df.schema.fields]
        if column in names:
            return df, column
        sensitive = str(df.sparkSession.conf.get("spark.sql.caseSensitive", "false")).lower() == "true"
        if not sensitive:
            hits = [n for n in names if n.lower() == column.lower()]
            if len(hits) == 1:
                return df, hits[0]
        from pyspark.sql import functions as F

        column = F.col(column)
    elif not _is_column(column):
        raise TypeError(f"column must be a column name (str) or a pyspark Column, got {type(column).__name__}")
    name = _fresh_name(df)
    # the column as the caller gave it (a.b), for the messages of check_key_field and check_weight_field
    return df.withColumn(name, column.alias(name, metadata={_SHOWN: shown})), name


def column_text(column) -> str:
    """A ``Column`` as a message names it: its expression (``s.a``), without PySpark's ``Column<'...'>``."""
    text = str(column)
    return text[8:-2] if text.startswith("Column<'") and text.endswith("'>") else text


def _is_column(x) -> bool:
    from pyspark.sql import Column

    return isinstance(x, Column)


def _fresh_name(df) -> str:
    names = set(df.columns)
    i = 0
    while f"__skim_{i}" in names:
        i += 1
    return f"__skim_{i}"
