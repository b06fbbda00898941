"""Join samples (``skimsketch.JoinSample``) of DataFrame columns: the sample side of ``sketch_column`` / ``sketch_by``.

A sample's exact per-key totals cannot be summed in a partial buffer of bounded size, so
both paths let Spark's shuffle group the rows by key first, and no task holds every key
of the table:

* **native** (the session's JVM has the jar): ``skim_sample_agg(key [, weight], nbytes,
  seed)``, which the jar's optimizer rule turns into a ``GROUP BY key`` (exact totals)
  under a sample aggregate whose partial buffers keep only a bounded number of the smallest ranks;
* **Python**: rows are routed by the core's key-hash partition
  (``JoinSample.partition_of(keys, P, seed)``) into ``P`` Spark partitions, each task
  builds the pieces ``JoinSample(nbytes, seed, dtype, partition=(i, P))`` of the partitions it
  received (exact totals of its keys only), and the driver merges the ``P`` finished
  pieces: pieces of disjoint key-hash partitions merge exactly, so the result is the
  sample built on one machine.

Both give the core's bytes (integer weights; float sums are exact up to their order).
The template is a ``JoinSample`` for a whole table (no ``partition``); its ``dtype``
decides integer or float totals, as in the core (float weights need ``dtype="float64"``).
"""

from __future__ import annotations

import skimsketch as ss
from skimsketch.sample.rank import MAX_PARTITIONS

from .. import native
from . import native as native_build
from .._common import check_columns, field_of, worker_errors
from ..cluster import require_python
from ..functions import skim_sample_agg

__all__ = ["SUMMARIES", "native_sides", "nbytes_of", "python_pieces", "sample_by", "sample_column", "sample_partials",
           "use_sample"]

#: estimate_join_size's choice of summary.
SUMMARIES = ("auto", "sample", "sketch")

_INT_TYPES = ("tinyint", "smallint", "int", "bigint")
_PIECE_COL = "piece"
_SKETCH_COL = "sketch"  # the partial builders' column (spark_udaf.build.sketch_partials)


def nbytes_of(sample: ss.JoinSample) -> int:
    """The ``nbytes`` of ``JoinSample.for_bytes`` (and ``skim_sample_agg``) that gives ``sample``: its budget."""
    return sample.budget


def _template(sample) -> ss.JoinSample:
    if not isinstance(sample, ss.JoinSample):
        raise TypeError(f"sample must be a skimsketch.JoinSample, got {type(sample).__name__}")
    if not sample.is_empty or sample.finished:
        raise ValueError(f"sample holds data (total weight {sample.total_weight}, null weight {sample.null_weight}):"
                         " pass an empty template, e.g. JoinSample.for_bytes(16384)")
    if sample.partition is not None:
        raise ValueError(f"sample is a piece of a key-hash partitioning {sample.partition}: the builders make whole "
                         "samples; pass JoinSample.for_bytes(nbytes, seed) without partition")
    return sample


def _has_function(spark) -> bool:
    """The jar's functions in the session: its JVM has the jar, or (Spark Connect) the server has the extension."""
    if native.loaded(spark):
        return True
    if getattr(spark, "_jvm", None) is not None:
        return False
    try:
        return bool(spark.catalog.functionExists("skim_sample_agg"))
    except Exception:  # an old server without the call
        return False


def _native_reason(df, column: str, sample, weight: str | None) -> str | None:
    if not _has_function(df.sparkSession):
        return "the session does not have the native jar (spark_udaf.native.configure, or the server's extension)"
    if weight is not None and not sample.float_counters:
        wt = field_of(df, weight).dataType.simpleString()
        if not (wt in _INT_TYPES or (wt.startswith("decimal(") and wt.endswith(",0)"))):
            return f"weight type {wt} with integer totals (the core checks each value)"
    return None


def _aggregate(df, column: str, sample, weight: str | None):
    from pyspark.sql import functions as F

    w = None if weight is None else F.col(weight)
    if sample.float_counters:  # float totals whatever the weight's type, as the core's float64 sample
        w = F.lit(1.0) if w is None else w.cast("double")
    return skim_sample_agg(column, w, nbytes=nbytes_of(sample), seed=sample.seed).alias(_PIECE_COL)


def _use_native(df, column, sample, weight, path) -> bool:
    native_build.check_path(path)
    check_columns(df, column, sample, weight)
    if path == "python":
        return False
    reason = _native_reason(df, column, sample, weight)
    if reason is not None and path == "native":
        raise ValueError(f"path='native' is not possible here: {reason}; use path='auto' or 'python'")
    native_build.log_path(column, "native path (JVM)" if reason is None else f"Python path ({reason})")
    return reason is None


def parts_of(df) -> int:
    """``P``: ``spark.sql.shuffle.partitions`` within [2, MAX_PARTITIONS]."""
    n = int(df.sparkSession.conf.get("spark.sql.shuffle.partitions", "8"))
    return max(2, min(MAX_PARTITIONS, n))


def _routed(df, column: str, sample, weight: str | None, parts: int):
    """The rows (``k``, ``w``) with their piece ``p = part_P(fp(k))`` (0 for a NULL key) and ``m`` false, plus one
    marker row (``m`` true) per piece so that every piece is built, repartitioned by ``p``."""
    import pyarrow as pa
    from pyspark.sql import functions as F
    from pyspark.sql.types import BooleanType, LongType, StructField, StructType

    seed = sample.seed
    cols = [F.col(column).alias("k")] + ([] if weight is None else [F.col(weight).alias("w")])
    keyed = df.select(*cols)
    out_schema = StructType([*keyed.schema.fields, StructField("p", LongType(), False),
                             StructField("m", BooleanType(), False)])

    def route(batches):
        for b in batches:
            p = ss.JoinSample.partition_of(b.column(0), parts, seed=seed)
            p[p < 0] = 0  # a null key adds to the null weight of any piece: piece 0's
            yield pa.RecordBatch.from_arrays([*b.columns, pa.array(p, pa.int64()), pa.array(p < -1)],
                                             names=[*b.schema.names, "p", "m"])

    markers = df.sparkSession.range(parts).select(
        *[F.lit(None).cast(f.dataType).alias(f.name) for f in keyed.schema.fields],
        F.col("id").alias("p"), F.lit(True).alias("m"))
    return keyed.mapInArrow(route, out_schema).unionByName(markers).repartition(parts, "p")


def _piece_builder(budget: int, seed: int, dtype: str, parts: int, weighted: bool):
    """The ``mapInArrow`` function: routed rows -> one row per piece ``(i, P)`` met (markers included)."""

    def build(batches):
        import numpy as np
        import pyarrow as pa
        import pyarrow.compute as pc

        pieces = {}
        for b in batches:
            n = b.num_columns
            p = b.column(n - 2).to_numpy(zero_copy_only=False)
            m = b.column(n - 1).to_numpy(zero_copy_only=False)
            for i in np.unique(p).tolist():
                piece = pieces.setdefault(i, ss.JoinSample(budget, seed, dtype, partition=(i, parts)))
                take = (p == i) & ~m
                if not take.any():
                    continue
                rows = b.filter(pa.array(take))
                keys, w = rows.column(0), rows.column(1) if weighted else None
                if w is not None and w.null_count:  # a NULL weight skips its row, as SQL's SUM
                    valid = pc.is_valid(w)
                    keys, w = pc.filter(keys, valid), pc.filter(w, valid)
                piece.update(keys, w)
        if pieces:
            yield pa.RecordBatch.from_arrays([pa.array([p.to_bytes() for p in pieces.values()], pa.binary())],
                                             names=[_SKETCH_COL])

    return build


def python_pieces(df, column: str, sample, weight: str | None = None):
    """The Python path's partial samples (module docstring): a lazy DataFrame of ``P`` rows (``sketch``: the
    finished piece ``(i, P)`` of every ``i``, empty ones included), whose merge is exactly the whole sample."""
    parts = parts_of(df)
    build = _piece_builder(sample.budget, sample.seed, sample.dtype, parts, weight is not None)
    return _routed(df, column, sample, weight, parts).mapInArrow(build, f"{_SKETCH_COL} binary")


def _python(df, column: str, sample, weight: str | None):
    """The Python path (module docstring) -> the whole sample."""
    with worker_errors():
        blobs = [bytes(r[0]) for r in python_pieces(df, column, sample, weight).collect()]
    total = ss.JoinSample.from_bytes(blobs[0])
    for b in blobs[1:]:
        total = total.merge(ss.JoinSample.from_bytes(b))
    if total.partition is not None:  # every piece is built (a marker row each): a missing one is a bug
        raise RuntimeError(f"the Python sample build returned pieces {total.partition} instead of all of them")
    return ss.JoinSample.from_bytes(total.to_bytes())


def sample_partials(df, column: str, sample, weight: str | None = None, by=()):
    """``sketch_partials`` of a join sample: a lazy DataFrame (``by`` columns, ``sketch``) whose rows of a group
    merge exactly into the group's sample. On the JVM (the jar loaded): one row per group, ``skim_sample_agg``
    (the group's whole sample, as ``sketch_column``/``sketch_by``). In Python: ungrouped, the ``P`` key-hash pieces
    of :func:`python_pieces`; grouped, the rows are repartitioned by the ``by`` columns so that one task holds a
    group's every row and builds its whole sample (its exact totals: memory grows with the group's distinct keys)."""
    _template(sample)
    if _use_native(df, column, sample, weight, "auto"):
        agg = _aggregate(df, column, sample, weight).alias(_SKETCH_COL)
        return df.groupBy(*by).agg(agg) if by else df.agg(agg)
    if not by:
        require_python(df.sparkSession, f"building the sample of {column!r} on the Python path")
        return python_pieces(df, column, sample, weight)
    return None  # the caller routes the groups to tasks (spark_udaf.build.sketch_partials)


def sample_column(df, column: str, sample, weight: str | None = None, path: str = "auto") -> ss.JoinSample:
    """The ``JoinSample`` of ``df[column]`` (weighted by ``df[weight]``) shaped like the empty template
    ``sample`` (its budget, seed and dtype), finished (as read from its bytes); ``path`` as in
    :func:`spark_udaf.build.sketch_column`."""
    _template(sample)
    if _use_native(df, column, sample, weight, path):
        with worker_errors():
            blob = df.agg(_aggregate(df, column, sample, weight)).collect()[0][0]
        return ss.JoinSample.from_bytes(bytes(blob))
    return _python(df, column, sample, weight)


def sample_by(df, column: str, sample, by: list, weight: str | None = None, path: str = "auto"):
    """One sample per group of ``by``: a DataFrame (``by`` columns, ``sketch`` bytes), built on the JVM
    (Spark's shuffle groups the rows by (group, key) first); ``None`` for the Python path (no jar, or
    ``path="python"``: the caller routes each group's rows to one task, which builds the group's sample from
    its exact totals, so a task's memory grows with its groups' distinct keys)."""
    _template(sample)
    if not _use_native(df, column, sample, weight, path):
        return None
    return df.groupBy(*by).agg(_aggregate(df, column, sample, weight).alias("sketch"))


def use_sample(summary: str, template, width, depth) -> bool:
    """Whether estimate_join_size summarises with a join sample: a template decides by its type; without
    one, ``"auto"`` is the sample (docs/sample.md: 3-4000x more accurate on skewed and low-overlap joins,
    at most 1.15x less where it loses: flat real keys at 4 KB) unless ``width``/``depth`` shape a sketch."""
    if summary not in SUMMARIES:
        raise ValueError(f"summary must be one of {SUMMARIES}, got {summary!r}")
    if template is not None:
        is_sample = isinstance(template, ss.JoinSample)
        if summary != "auto" and (summary == "sample") != is_sample:
            raise ValueError(f"summary={summary!r} but the template is a {type(template).__name__}")
        return is_sample
    if width is not None or depth is not None:
        if summary == "sample":
            raise ValueError("width/depth shape a sketch, not a join sample: give nbytes with summary='sample'")
        return False
    return summary != "sketch"


def build_plan(df, column: str, sample, weight: str | None = None) -> str | None:
    """How the JVM builds ``sample`` of ``df[column]`` (the note the plan of ``skim_sample_agg`` carries):
    ``"bucketed build: <P> fingerprint buckets of sorted runs"`` (per-task sorted runs of the keys' totals),
    ``"Spark GROUP BY key: <why the bucketed build did not apply>"``, or the raw form; ``None`` when the
    session cannot show its plan (no native jar, or Spark Connect)."""
    if _native_reason(df, column, sample, weight) is not None or getattr(df, "_jdf", None) is None:
        return None
    plan = df.agg(_aggregate(df, column, sample, weight))._jdf.queryExecution().optimizedPlan().toString()
    for mark in ("bucketed build: ", "Spark GROUP BY key: ", "raw rows: "):
        i = plan.find(mark)
        if i >= 0:
            return plan[i:plan.find(",", i + len(mark)) if mark != "Spark GROUP BY key: " else plan.find(", _skim", i)]
    return None


def native_sides(left, lcol, lweight, right, rcol, rweight, template) -> bool:
    """Whether both sides' samples are built on the JVM."""
    return all(_native_reason(df, c, template, w) is None for df, c, w in ((left, lcol, lweight),
                                                                           (right, rcol, rweight)))
