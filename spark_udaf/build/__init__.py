"""Distributed sketch building: one partial sketch per partition, merged.

Every builder takes a *template* -- an empty sketch giving the kind, shape,
seed and parameters -- and returns new sketches; the template never changes,
so one template serves any number of tables (a template holding data is
refused: :func:`~spark_udaf.build.parquet.require_template`).

Every function here runs ``mapInArrow`` over the DataFrame: each Python worker
fills an empty copy of the caller's sketch from the Arrow batches of its
partition (vectorised core ``update``) and emits the sketch's bytes as a single
binary row. Only those bytes leave the executors; rows are never collected to
the driver and never shuffled. Sketches are linear and integer merges are
exact, so with integer weights the merged sketch is byte-identical to the one
built in memory from the same keys, whatever the partitioning.
"""

from __future__ import annotations

import skimsketch as ss

from .._common import (
    check_columns, check_key_field, check_weight_field, field_of, keys_join, merge_blobs, resolve_column,
    worker_errors,
)
from . import native as native_build, sample as sample_build
from ..cluster import require_python
from .parquet import counted, plain_parquet_scan, require_template, sketch_parquet_scan
from .partials import CHUNK_ROWS, PartialAccumulator
from ..sql.udfs import skim_merge_udf

__all__ = ["sketch_column", "sketch_pair", "sketch_parquet", "sketch_partials", "sketch_by", "merge_sketch_column",
           "PartialAccumulator", "plain_parquet_scan"]  # re-exported from spark_udaf.build.partials and .parquet

_SKETCH_COL = "sketch"


def _selected(df, column, weight, by):
    check_key_field(df, column)
    cols = [column]
    if weight is not None:
        check_weight_field(df, weight)
        cols.append(weight)
    for b in by:
        field_of(df, b)
        if b in cols:
            raise ValueError(f"group column {b!r} is also the key or weight column")
        cols.append(b)
    if len(set(cols)) != len(cols):
        raise ValueError(f"key and weight must be different columns, got {column!r} twice")
    return df.select(*cols)


def _normalise_by(by):
    if by is None:
        return []
    if isinstance(by, str):
        return [by]
    by = list(by)
    if not all(isinstance(b, str) for b in by):
        raise TypeError("by must be a column name or a list of column names")
    return by


def _partition_builder(template: bytes, weighted: bool, n_by: int, chunk_rows: int):
    """The ``mapInArrow`` function: Arrow batches of a partition -> partial sketch bytes."""

    def build(batches):
        import pyarrow as pa

        acc = PartialAccumulator(template, chunk_rows)
        first = 2 if weighted else 1
        names = None
        for batch in batches:
            names = batch.schema.names
            acc.add(batch.column(0), batch.column(1) if weighted else None,
                    [batch.column(j) for j in range(first, first + n_by)])
        out = acc.results()
        if not out:
            return
        cols = [pa.concat_arrays([g[j] for g, _ in out]) for j in range(n_by)]
        cols.append(pa.array([b for _, b in out], pa.binary()))
        yield pa.RecordBatch.from_arrays(cols, names=(names[first:first + n_by] if n_by else []) + [_SKETCH_COL])

    return build


def resolved(df, column, weight=None):
    """``(df, column name, weight name or None)``: the key and weight given as names (resolved as
    Spark resolves names, case-insensitively by default) or as ``Column`` expressions
    (:func:`spark_udaf._common.resolve_column`)."""
    df, column = _resolve(df, column)
    if weight is not None:
        df, weight = _resolve(df, weight)
    return df, column, weight


def _resolve(df, column):
    """:func:`resolve_column`, except that a plain name matching no column (not a nested ``a.b`` nor a
    back-quoted name) is left for :func:`check_columns`, whose error names it and the columns there are."""
    if isinstance(column, str) and not any(c in column for c in ".`") and \
            column.lower() not in {f.name.lower() for f in df.schema.fields}:
        return df, column
    return resolve_column(df, column)


def sketch_partials(df, column: str, sketch, weight: str | None = None, by=None, *, chunk_rows: int = CHUNK_ROWS):
    """DataFrame of partial sketch bytes: one row per non-empty partition (and group).

    The columns are the ``by`` columns (if any) and ``sketch`` (binary): each
    row is the template ``sketch`` (empty; unchanged) filled with the key column (weighted by
    ``weight``, default 1) of the rows of one partition (and group). Null keys
    count in the sketch's ``null_weight`` and never join; rows with a null
    weight are skipped. Lazy: nothing runs until the result is consumed.
    Merging all rows (of a group) gives the sketch of the whole column.

    A :class:`~skimsketch.JoinSample` template gives rows that merge exactly too
    (:func:`spark_udaf.build.sample.sample_partials`): on the JVM one row per group
    (``skim_sample_agg``); in Python the ``P`` key-hash pieces of the column (a shuffle
    routes each key to its piece), or with ``by`` one row per group (a shuffle routes each
    group to one task, which holds the group's exact totals).
    """
    from pyspark.sql.types import BinaryType, StructField, StructType

    require_template(sketch)
    df, column, weight = resolved(df, column, weight)
    by = _normalise_by(by)
    if chunk_rows < 1:
        raise ValueError(f"chunk_rows must be positive, got {chunk_rows}")
    check_columns(df, column, sketch, weight)
    selected = _selected(df, column, weight, by)
    if isinstance(sketch, ss.JoinSample):  # partial samples must be pieces of disjoint keys to merge exactly
        built = sample_build.sample_partials(df, column, sketch, weight, by)
        if built is not None:
            return built
        selected = selected.repartition(sample_build.parts_of(df), *by)  # a group's rows in one task: its sample
    require_python(df.sparkSession, f"building the sketch of {column!r} on the Python path")
    out = StructType([field_of(df, b) for b in by] + [StructField(_SKETCH_COL, BinaryType(), False)])
    template = sketch.empty_like().to_bytes()
    return selected.mapInArrow(_partition_builder(template, weight is not None, len(by), chunk_rows), out)


def _group_samples(df, column, sketch, weight, by, chunk_rows):
    """The Python path of ``sketch_by`` for a join sample: :func:`sketch_partials` forced to Python (the rows
    repartitioned by ``by``, one whole sample per group, a row each)."""
    from pyspark.sql.types import BinaryType, StructField, StructType

    check_columns(df, column, sketch, weight)
    selected = _selected(df, column, weight, by).repartition(sample_build.parts_of(df), *by)
    require_python(df.sparkSession, f"building the samples of {column!r} by {by} on the Python path")
    out = StructType([field_of(df, b) for b in by] + [StructField(_SKETCH_COL, BinaryType(), False)])
    template = sketch.empty_like().to_bytes()
    return selected.mapInArrow(_partition_builder(template, weight is not None, len(by), chunk_rows), out)


def sketch_column(df, column: str, sketch, weight: str | None = None, *, merge: str = "driver",
                  chunk_rows: int = CHUNK_ROWS, parquet_fast_path: bool = True, path: str = "auto"):
    """A new sketch of ``df[column]`` (weighted by ``df[weight]``), shaped like the template ``sketch``.

    Partial sketches are built per partition on the executors
    (:func:`sketch_partials`) and merged into ``sketch.empty_like()``, which is
    returned. ``sketch`` is a template: it must be empty and never changes, so
    the same template builds both sides of a join (to add a column to a sketch
    that holds data, merge: ``s.merge(sketch_column(df, col, s.empty_like()))``).
    ``merge="driver"`` collects the partials (driver memory: one sketch per
    non-empty partition); ``merge="tree"`` merges them on the executors with
    ``treeReduce`` first, so the driver receives a single sketch. Null keys add
    to ``sketch.null_weight``; rows with a null weight are skipped.

    When ``df`` is exactly a scan of Parquet files (``spark.read.parquet(...)``,
    possibly with plain column selections — no filter, no derived column, no
    repartition; see :func:`plain_parquet_scan`) the columns are read with
    pyarrow on the executors instead (:mod:`spark_udaf.build.parquet`), skipping
    Spark's row-to-Arrow conversion; the result is the same sketch (the fast
    path declines whatever it cannot read exactly as Spark does).
    ``parquet_fast_path=False`` always uses ``mapInArrow``.
    ``path="auto"`` uses the Parquet fast path on a plain Parquet scan (measured
    fastest) where the executors can run the library's Python, else builds on the
    JVM when the native jar is loaded and the sketch and columns allow it
    (:mod:`spark_udaf.build.native`; the same bytes; the executors need no Python),
    ``"native"`` requires the JVM, ``"python"`` never uses it; the ``spark_udaf``
    logger says which path ran. A Python path checks first that the executors can
    run it (:mod:`spark_udaf.cluster`: their interpreter fixed, the sources shipped
    when needed), else raises :class:`~spark_udaf.cluster.ExecutorPythonError`
    before any task runs.
    """
    if merge not in ("driver", "tree"):
        raise ValueError(f"merge must be 'driver' or 'tree', got {merge!r}")
    require_template(sketch)
    df, column, weight = resolved(df, column, weight)
    if isinstance(sketch, ss.JoinSample):  # a join sample: its own builders
        return sample_build.sample_column(df, column, sketch, weight, path)
    native_build.check_path(path)
    # a plain Parquet scan is read fastest by pyarrow on the executors (benchmarks/results/bench_spark.txt:
    # 0.42-0.57x Spark's count_min_sketch, the JVM aggregate 0.94x), so "auto" tries that first
    if path != "native" and parquet_fast_path:
        built = sketch_parquet_scan(df, column, sketch, weight, chunk_rows=chunk_rows)
        if built is not None:
            native_build.log_path(column, "Python path (Parquet fast path: pyarrow reads)")
            return built
    built = native_build.sketch_column(df, column, sketch.empty_like(), weight, path)
    if built is not None:
        return counted(sketch, built)
    parts = sketch_partials(df, column, sketch, weight, chunk_rows=chunk_rows)
    with worker_errors():
        if merge == "driver":
            blobs = [r[0] for r in parts.collect()]
        else:
            blob = parts.rdd.map(lambda r: bytes(r[0])).treeAggregate(None, _merge_two, _merge_two, depth=2)
            blobs = [] if blob is None else [blob]
    return counted(sketch, merge_blobs(blobs, "partial sketch"))


def _merge_two(a, b):
    """Combine two serialised sketches (either may be ``None``) -> bytes or ``None``."""
    if a is None:
        return b
    if b is None:
        return a
    return merge_blobs([a, b], "partial sketch").to_bytes()


def merge_sketch_column(df, column: str = _SKETCH_COL, by=None):
    """Merge a column of sketch bytes, per group of ``by`` (or overall).

    Returns a DataFrame (``by`` columns, ``sketch`` binary). Uses the
    ``skim_merge`` Arrow aggregate: the few small sketch rows of each group go
    to one worker, never any data rows. Null sketches are skipped.
    """
    by = _normalise_by(by)
    f = field_of(df, column)
    if f.dataType.simpleString() != "binary":
        raise ss.KeyTypeError(f"column {column!r} must hold sketch bytes (binary), got {f.dataType.simpleString()}")
    require_python(df.sparkSession, "merging sketch bytes with the skim_merge Arrow aggregate")
    agg = skim_merge_udf()(df[column]).alias(_SKETCH_COL)
    return df.groupBy(*by).agg(agg)


def sketch_by(df, column: str, sketch, by, weight: str | None = None, *, chunk_rows: int = CHUNK_ROWS,
              path: str = "auto"):
    """One sketch per group of ``by`` as a DataFrame (``by`` columns, ``sketch`` bytes).

    Map-side: partial sketches per (partition, group) are built on the
    executors, then only those partials are shuffled and merged per group —
    the scalable way to build, e.g., one stored sketch per day. Each group's
    bytes equal the in-memory sketch of that group's keys (integer weights).
    ``path`` as in :func:`sketch_column` (natively, a group whose rows all have
    NULL weights gets an empty sketch instead of no row).
    """
    require_template(sketch)
    df, column, weight = resolved(df, column, weight)
    by = _normalise_by(by)
    if not by:
        raise ValueError("sketch_by needs at least one group column")
    if isinstance(sketch, ss.JoinSample):  # a join sample: its own builders
        built = sample_build.sample_by(df, column, sketch, by, weight, path)
        return built if built is not None else _group_samples(df, column, sketch, weight, by, chunk_rows)
    built = native_build.sketch_by(df, column, sketch, by, weight, path)
    if built is not None:
        return built
    return merge_sketch_column(sketch_partials(df, column, sketch, weight, by, chunk_rows=chunk_rows), _SKETCH_COL, by)


def sketch_pair(left, lcol: str, right, rcol: str, template, lweight: str | None = None,
                rweight: str | None = None, *, chunk_rows: int = CHUNK_ROWS):
    """Sketches ``(a, b)`` of ``left[lcol]`` and ``right[rcol]``, both from ``template.empty_like()``.

    One Spark job: the two tables' partial sketches (:func:`sketch_partials`,
    tagged by side) are unioned and collected together, so both scans run in
    one stage and only partial sketches reach the driver. Each result is
    byte-identical to :func:`sketch_column` of its side (integer weights).
    Integer keys only pair with integer keys, string/binary with string/binary.
    A :class:`~skimsketch.JoinSample` template builds each side as :func:`sketch_column` does
    (``skim_sample_agg`` on the JVM, else key-hash pieces in Python): two jobs, the core's bytes.
    """
    from pyspark.sql import functions as F

    require_template(template, "template")
    left, lcol, lweight = resolved(left, lcol, lweight)
    right, rcol, rweight = resolved(right, rcol, rweight)
    lt = check_key_field(left, lcol).dataType.simpleString()
    rt = check_key_field(right, rcol).dataType.simpleString()
    if not keys_join(lt, rt):
        raise ValueError(f"key columns {lcol!r} and {rcol!r} have incompatible types {lt} and {rt}")
    if isinstance(template, ss.JoinSample):  # a join sample: each side as sketch_column builds it
        return (sample_build.sample_column(left, lcol, template, lweight),
                sample_build.sample_column(right, rcol, template, rweight))
    side = "__skim_side"
    parts = (sketch_partials(left, lcol, template, lweight, chunk_rows=chunk_rows).withColumn(side, F.lit(0))
             .unionByName(sketch_partials(right, rcol, template, rweight, chunk_rows=chunk_rows)
                          .withColumn(side, F.lit(1))))
    with worker_errors():
        parts = parts.collect()
    return tuple(counted(template, merge_blobs([r[_SKETCH_COL] for r in parts if r[side] == tag], "partial sketch"))
                 for tag in (0, 1))


def sketch_parquet(spark, path, column: str, sketch, weight: str | None = None, *, tasks: int | None = None,
                   chunk_rows: int = CHUNK_ROWS):
    """A new sketch (shaped like the template ``sketch``, which never changes) of a column of Parquet files.

    The fast path for a column stored in Parquet
    (:func:`spark_udaf.build.parquet.sketch_parquet_scan`): Spark lists the files of
    ``path`` (a path or list of paths, as ``spark.read.parquet``) and
    distributes them (or, with fewer files than ``tasks``, their row groups);
    each task reads only ``column`` (and ``weight``) with pyarrow and updates a
    partial sketch, skipping Spark's row-to-Arrow conversion. Only partial
    sketches reach the driver; no rows move. Always the same result as
    :func:`sketch_column` over ``spark.read.parquet(path)`` (byte-identical
    when the weights' sums are exact, e.g. integer weights): where the fast
    path cannot prove it reads what Spark reads (a partition-directory column,
    a stored type Spark would convert, an unreadable file) it declines and
    that general path runs instead. Needs the files readable with pyarrow's
    filesystems (local, ``hdfs://``, ``s3://``/``s3a://``, ``gs://``) from the
    driver and the executors. A :class:`~skimsketch.JoinSample` template is built as
    :func:`sketch_column` builds it (``tasks`` and ``chunk_rows`` do not apply).
    """
    require_template(sketch)
    paths = [path] if isinstance(path, str) else list(path)
    df = spark.read.parquet(*paths)
    if isinstance(sketch, ss.JoinSample):  # per-file partial samples would not merge: sketch_column's builders
        return sketch_column(df, column, sketch, weight)
    built = sketch_parquet_scan(df, column, sketch, weight, tasks=tasks, chunk_rows=chunk_rows)
    if built is None:
        built = sketch_column(df, column, sketch, weight, chunk_rows=chunk_rows, parquet_fast_path=False)
    return built
