"""The result schemas of ``spark_udaf``, declared once.

Each schema is a tuple of ``(name, SQL type)`` fields; the SQL struct type of a
function's result (:func:`ddl`), its Arrow twin (:func:`arrow_type`,
:func:`arrow_schema`) and the Spark schema of a DataFrame (:func:`spark_schema`)
are all derived from it, and the rows are built by the functions here
(:func:`estimate_row`, :func:`sketch_row`), so names, order and types cannot
drift apart.

A sketch's seed is a u64: it is ``DECIMAL(20,0)`` everywhere (exact, and numeric
in SQL), since a signed ``BIGINT`` cannot hold seeds of ``2**63`` and above.

>>> ddl(ESTIMATE)
'struct<value: double, low: double, high: double, confidence: double, method: string>'
>>> arrow_type(INFO).field("seed").type
Decimal128Type(decimal128(20, 0))
"""

from __future__ import annotations

from decimal import Decimal

import pyarrow as pa

__all__ = ["ESTIMATE", "INFO", "SEED_TYPE", "SKETCH", "STATE_VIEW", "arrow_schema", "arrow_type", "ddl",
           "estimate_row", "spark_schema", "sketch_row"]

SEED_TYPE = "decimal(20,0)"

#: ``skim_*_bounds``: an :class:`skimsketch.Estimate` without its detail.
ESTIMATE = (("value", "double"), ("low", "double"), ("high", "double"), ("confidence", "double"),
            ("method", "string"))
#: What describes a sketch: its class, shape, seed and weights.
SKETCH = (("kind", "string"), ("width", "int"), ("depth", "int"), ("seed", SEED_TYPE),
          ("total_weight", "double"), ("null_weight", "double"))
#: ``skim_sketch_info``: the description and the state's memory.
INFO = SKETCH + (("nbytes", "bigint"),)
#: The one-row view / Parquet table a ``StreamingSketch`` publishes after every batch.
STATE_VIEW = (("batch_id", "bigint"), ("sketch", "binary")) + SKETCH + (
    ("now", "double"), ("watermark", "double"), ("late_count", "bigint"), ("updated_at", "timestamp"))

_ARROW = {
    "double": pa.float64(), "string": pa.string(), "int": pa.int32(), "bigint": pa.int64(), "binary": pa.binary(),
    "timestamp": pa.timestamp("us"), SEED_TYPE: pa.decimal128(20, 0),
}


def ddl(fields) -> str:
    """The SQL struct type, e.g. ``struct<value: double, ...>`` (what ``arrow_udf`` declares)."""
    return "struct<" + ", ".join(f"{name}: {t}" for name, t in fields) + ">"


def arrow_type(fields) -> pa.StructType:
    """The Arrow struct type of the same fields (what an Arrow UDF returns)."""
    return pa.struct([(name, _ARROW[t]) for name, t in fields])


def arrow_schema(fields) -> pa.Schema:
    """The Arrow schema of a table with these columns."""
    return pa.schema([(name, _ARROW[t]) for name, t in fields])


def spark_schema(fields):
    """The Spark ``StructType`` of a DataFrame with these columns."""
    from pyspark.sql.types import (
        BinaryType,
        DecimalType,
        DoubleType,
        IntegerType,
        LongType,
        StringType,
        StructField,
        StructType,
        TimestampType,
    )

    types = {"double": DoubleType(), "string": StringType(), "int": IntegerType(), "bigint": LongType(),
             "binary": BinaryType(), "timestamp": TimestampType(), SEED_TYPE: DecimalType(20, 0)}
    return StructType([StructField(name, types[t]) for name, t in fields])


def estimate_row(e) -> dict:
    """An :class:`skimsketch.Estimate` as an :data:`ESTIMATE` row."""
    return {"value": float(e.value), "low": float(e.low), "high": float(e.high),
            "confidence": float(e.confidence), "method": e.method}


def sketch_row(sk) -> dict:
    """A sketch's :data:`SKETCH` fields (the seed as a ``Decimal``, which Spark requires of ``DECIMAL``)."""
    width, depth = (sk.width, sk.depth) if hasattr(sk, "width") else (sk.budget, 1)  # a join sample: its byte budget, 1
    return {"kind": type(sk).__name__, "width": width, "depth": depth, "seed": Decimal(sk.seed),
            "total_weight": float(sk.total_weight), "null_weight": float(sk.null_weight)}
