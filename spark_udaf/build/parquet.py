"""The Parquet fast path: sketch a column by reading Parquet files with pyarrow on the executors.

For a DataFrame that is nothing but a scan of Parquet files
(:func:`plain_parquet_scan`), :func:`sketch_parquet_scan` distributes the
files (or their row groups) over Spark tasks; each task reads only the key
(and weight) column with pyarrow and fills a partial sketch, skipping Spark's
row-to-Arrow conversion. Only partial sketches reach the driver.

It must give the bytes Spark's own read would give (the ``mapInArrow`` path of
:func:`spark_udaf.build.sketch_column`), so it reads a file only when it can
prove the values are the ones Spark reads, and otherwise *declines*: the
caller then runs the general path, which is Spark's read by definition.

* A column absent from a file is read as nulls, as Spark does when the
  DataFrame's schema has it (``mergeSchema``, an evolved schema, a schema
  given by the user): null keys add to ``null_weight``, null weights skip
  their row.
* A stored type is accepted only when every stored value is read as the
  same value under the DataFrame's type: integers of the same or a narrower
  width (unsigned ones at most half as wide), floats into ``float``/``double``
  of at least their width, decimals whose integer and fraction digits both
  fit, strings into ``string`` and binaries into ``binary``; dictionary
  encoding is decoded. Anything else (another type, a nested type, a column
  matched only case-insensitively) declines.
* A partition-directory column, Parquet field-id matching, or a file pyarrow
  cannot open (corrupt, missing, not Parquet) declines.

Declines are decided on the driver from the plan and the schema, and on the
executors per file (a task that declines sends a marker instead of a sketch);
the result exists only when every task succeeded, and the caller's template never changes.
"""

from __future__ import annotations

import logging

import pyarrow as pa

import skimsketch as ss

from .._common import check_columns, field_of, merge_blobs, require_sketch, worker_errors
from ..cluster import python_usable
from .partials import CHUNK_ROWS, PartialAccumulator

__all__ = ["counted", "plain_parquet_scan", "require_template", "sketch_parquet_scan", "stored_type_reads_as"]

_LOG = logging.getLogger(__name__)
_DECLINE = "decline"
_SKETCH = "sketch"


def require_template(template, what: str = "sketch"):
    """``template`` if it is an empty core sketch; else ``TypeError`` / ``ValueError`` naming ``what``.

    Every builder takes a template (its kind, shape, seed and parameters) and
    returns a new sketch; none changes the template, so one template serves
    any number of tables. A template holding data is refused rather than
    ignored or mutated: its data would otherwise be lost, or joined with
    itself when the same object serves both sides of a join.
    """
    require_sketch(template, what)
    if not template.is_empty:
        raise ValueError(
            f"{what} holds data (total weight {template.total_weight}, null weight {template.null_weight}): "
            "builders take an empty template and return a new sketch, never filling the one given; "
            f"pass {what}.empty_like() and merge the result into it ({what}.merge(result))")
    return template


def counted(template, total):
    """``template.empty_like()`` plus the merged partials ``total`` (or ``None``): the builders' result.

    The partials' bytes carry the sign rule (``Sketch.nonnegative``, format version 4): a
    build of row counts, or of non-negative weights, knows its frequencies are >= 0, so its
    joins are clipped at 0 as the same sketch built in memory is.
    """
    return template.empty_like() if total is None else template.empty_like().merge(total)


def _relation(df):
    """The Parquet ``HadoopFsRelation`` under ``df``'s attribute-only projections, else ``None``."""
    try:
        plan = df._jdf.queryExecution().optimizedPlan()
        while plan.getClass().getSimpleName() == "Project":
            exprs = plan.projectList()
            if any(exprs.apply(i).getClass().getSimpleName() != "AttributeReference" for i in range(exprs.size())):
                return None
            plan = plan.child()
        if plan.getClass().getSimpleName() != "LogicalRelation":
            return None
        relation = plan.relation()
        if relation.fileFormat().getClass().getSimpleName() != "ParquetFileFormat":
            return None
        return relation
    except Exception:  # not classic Spark, or a relation without a file format
        return None


def plain_parquet_scan(df):
    """The Parquet files ``df`` reads if it is nothing but a scan of them, else ``None``.

    "Nothing but a scan": the optimized plan is a Parquet file relation, under
    at most projections that only select columns (no filter, cast, derived
    column, join, repartition or sample). Reads the plan through the classic
    (py4j) API; for anything else (Spark Connect included) returns ``None``.

    A file appears as many times as Spark's scan reads it: the relation's file
    index lists each root path's files, so ``spark.read.parquet(P, P)``, a
    file and its folder, or overlapping globs list (and read) a file twice
    (``DataFrame.inputFiles()`` would list it once). ``None`` when that list
    cannot be read.
    """
    relation = _relation(df)
    if relation is None:
        return None
    try:
        listed = relation.location().allFiles()  # what the scan reads (FileIndex.listFiles without filters)
        files = [str(listed.apply(i).getPath().toUri().toString()) for i in range(listed.size())]
    except Exception:  # a file index without allFiles: cannot tell how often Spark reads each file
        return None
    return files or None


def _partition_columns(df) -> set | None:
    """Names of the partition-directory columns of ``df``'s relation (``None``: cannot tell)."""
    try:
        return set(_relation(df).partitionSchema().fieldNames())
    except Exception:
        return None


# -- which stored types read as the same values ---------------------------------

_INT_BITS = {"tinyint": 8, "smallint": 16, "int": 32, "bigint": 64}
_FLOAT_BITS = {"float": 32, "double": 64}


def _spec(dtype) -> tuple:
    """A picklable description of a Spark type the fast path can check stored types against."""
    name = dtype.simpleString()
    if name in _INT_BITS:
        return ("int", _INT_BITS[name])
    if name in _FLOAT_BITS:
        return ("float", _FLOAT_BITS[name])
    if name.startswith("decimal("):
        return ("decimal", dtype.precision, dtype.scale)
    return (name,)


def stored_type_reads_as(stored, spec: tuple) -> bool:
    """Whether every value of Arrow type ``stored`` reads as the same value under Spark type ``spec``."""
    if pa.types.is_dictionary(stored):
        stored = stored.value_type
    kind = spec[0]
    if kind == "int":
        if pa.types.is_signed_integer(stored):
            return stored.bit_width <= spec[1]
        return pa.types.is_unsigned_integer(stored) and 2 * stored.bit_width <= spec[1]
    if kind == "float":
        return pa.types.is_floating(stored) and 32 <= stored.bit_width <= spec[1]
    if kind == "decimal":
        if not pa.types.is_decimal(stored):
            return False
        _, p, s = spec
        return 0 <= stored.scale <= s and stored.precision - stored.scale <= p - s
    if kind == "string":
        return pa.types.is_string(stored) or pa.types.is_large_string(stored)
    if kind == "binary":
        return pa.types.is_binary(stored) or pa.types.is_large_binary(stored)
    return False


def _arrow_type(spec: tuple):
    """One Arrow type per Spark type, holding every stored type it accepts without loss."""
    if spec[0] == "decimal":
        return pa.decimal128(spec[1], spec[2])
    return {"int": pa.int64(), "float": pa.float64(), "string": pa.large_string(),
            "binary": pa.large_binary(), "void": pa.null()}[spec[0]]


def _arrow_uri(uri: str) -> str:
    """Hadoop-style URIs Spark lists -> URIs pyarrow's filesystems understand."""
    for hadoop in ("s3a://", "s3n://"):
        if uri.startswith(hadoop):
            return "s3://" + uri[len(hadoop):]
    return uri


class _Decline(Exception):
    """A file the fast path cannot read exactly as Spark does."""


def _stored_fields(schema, columns, specs):
    """Per wanted column: its stored name, or ``None`` when the file lacks it; declines on doubt."""
    names = schema.names
    out = []
    for col, spec in zip(columns, specs):
        exact = [i for i, n in enumerate(names) if n == col]
        folded = [n for n in names if n.lower() == col.lower() and n != col]
        if folded or len(exact) > 1:  # Spark may match case-insensitively, or the name is ambiguous
            raise _Decline(f"column {col!r} is stored as {folded or names} (case or duplicate names)")
        if not exact:
            out.append(None)
            continue
        stored = schema.field(exact[0]).type
        if not stored_type_reads_as(stored, spec):
            raise _Decline(f"column {col!r} is stored as {stored}, read by Spark as {spec}")
        out.append(col)
    return out


def _as_read(arr, spec):
    """A stored column as one array of the Spark type's Arrow type (a lossless cast, checked before)."""
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    if pa.types.is_dictionary(arr.type):
        arr = arr.dictionary_decode()
    return arr.cast(_arrow_type(spec))


def _read_group(pf, rg: int, stored, specs):
    """The wanted columns of row group ``rg``: stored ones read, absent ones as nulls."""
    present = [c for c in stored if c is not None]
    table = pf.read_row_group(rg, columns=present) if present else None
    n = pf.metadata.row_group(rg).num_rows
    if table is not None and (table.num_rows != n or table.schema.names != present):
        raise _Decline(f"row group {rg} read as columns {table.schema.names}, expected {present}")
    return [pa.nulls(n, _arrow_type(spec)) if c is None else _as_read(table.column(c), spec)
            for c, spec in zip(stored, specs)]


def _split_builder(template: bytes, columns, specs, chunk_rows: int):
    """The ``mapPartitions`` function: (file, row groups) splits -> one (status, payload) row."""

    def build(splits):
        import pyarrow.fs as pafs
        import pyarrow.parquet as pq

        acc = PartialAccumulator(template, chunk_rows)
        for uri, row_groups in splits:
            try:
                fs, path = pafs.FileSystem.from_uri(_arrow_uri(uri))
                with fs.open_input_file(path) as f:
                    pf = pq.ParquetFile(f)
                    stored = _stored_fields(pf.schema_arrow, columns, specs)
                    groups = range(pf.num_row_groups) if row_groups is None else row_groups
                    for rg in groups:
                        cols = _read_group(pf, rg, stored, specs)
                        acc.add(cols[0], cols[1] if len(cols) > 1 else None)
            except _Decline as e:
                yield (_DECLINE, f"{uri}: {e}")
                return
            except (pa.ArrowException, OSError) as e:  # unreadable here: let Spark's reader decide
                yield (_DECLINE, f"{uri}: {type(e).__name__}: {e}")
                return
        out = acc.results()
        if out:
            yield (_SKETCH, out[0][1])

    return build


def _splits(files, n: int):
    """Whole files per task, or (with fewer files than tasks) their row groups split across tasks."""
    import pyarrow.fs as pafs
    import pyarrow.parquet as pq

    if len(files) >= n:
        return [(f, None) for f in files]
    splits = []
    for f in files:  # reads the footers on the driver
        fs, path = pafs.FileSystem.from_uri(_arrow_uri(f))
        with fs.open_input_file(path) as fh:
            groups = pq.ParquetFile(fh).metadata.num_row_groups
        per = max(1, -(-groups // max(1, n // len(files))))
        splits += [(f, list(range(i, min(i + per, groups)))) for i in range(0, groups, per)]
    return splits


def _driver_decline(df, columns) -> str | None:
    """Why the driver already knows the fast path cannot match Spark's read (``None``: it may)."""
    parts = _partition_columns(df)
    if parts is None:
        return "the relation's partition columns are unknown"
    inside = [c for c in columns if c in parts or c.lower() in {p.lower() for p in parts}]
    if inside:
        return f"{inside} are partition-directory columns"
    conf = df.sparkSession.conf
    if (conf.get("spark.sql.parquet.fieldId.read.enabled", "false") or "false").lower() == "true":
        return "Spark matches Parquet columns by field id"
    return None


def sketch_parquet_scan(df, column: str, template, weight: str | None = None, *, tasks: int | None = None,
                        chunk_rows: int = CHUNK_ROWS):
    """A new sketch of ``df[column]`` (weighted) built by the fast path, or ``None`` if it declined.

    The result is ``template.empty_like()`` filled with the column; ``template``
    (which must be empty: :func:`~spark_udaf._common.require_template`) never
    changes. ``df`` must be a plain Parquet scan (:func:`plain_parquet_scan`),
    otherwise this declines at once; it declines too where the executors cannot
    run the library's Python (:func:`spark_udaf.cluster.python_usable`). The caller checks nothing else: the
    column checks are those of the general path, raised on the driver. On a
    decline the caller runs the general path.
    """
    require_template(template)
    if isinstance(template, ss.JoinSample):  # a join sample: per-file samples would not merge (sketch_column)
        _LOG.info("Parquet fast path declined: a JoinSample is built by spark_udaf.build.sample")
        return None
    files = plain_parquet_scan(df)
    if not files:
        return None
    check_columns(df, column, template, weight)
    columns = [column] + ([weight] if weight is not None else [])
    why = _driver_decline(df, columns)
    if why is None and not python_usable(df.sparkSession):  # probed once per application (spark_udaf.cluster)
        why = "the executors cannot run the library's Python"
    if why is None:
        sc = df.sparkSession.sparkContext
        n = tasks or sc.defaultParallelism
        if n < 1:
            raise ValueError(f"tasks must be positive, got {tasks}")
        try:
            splits = _splits(sorted(files), n)  # a file Spark reads twice is read (and counted) twice
        except (pa.ArrowException, OSError) as e:
            splits, why = None, f"a footer could not be read: {e}"
    if why is not None:
        _LOG.info("Parquet fast path declined: %s", why)
        return None
    specs = [_spec(field_of(df, c).dataType) for c in columns]
    build = _split_builder(template.empty_like().to_bytes(), columns, specs, chunk_rows)
    with worker_errors():
        rows = sc.parallelize(splits, max(1, min(n, len(splits)))).mapPartitions(build).collect()
    declined = [payload for status, payload in rows if status == _DECLINE]
    if declined:
        _LOG.info("Parquet fast path declined: %s", declined[0])
        return None
    return counted(template, merge_blobs([payload for _, payload in rows], "partial sketch"))
