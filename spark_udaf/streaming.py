"""Spark Structured Streaming: a sketch of a streaming column, maintained exactly once.

:class:`StreamingSketch` is a ``foreachBatch`` handler. For every micro-batch
it builds the batch's sketch on the executors (``spark_udaf.build``: one
partial sketch per partition, merged; rows never reach the driver), adds it
to the current state and commits ``(query id, batch_id, state bytes)``
atomically to a single file in ``state_dir``, by the exactly-once rules of
:class:`skimsketch.stream.ExactlyOnce` (the ones ``SketchStream`` follows).
Spark numbers micro-batches ``0, 1, 2, ...`` and re-runs the last one after a
failure with the same id and the same data (replayable sources +
``checkpointLocation``); its query id is kept in the checkpoint and does not
change across restarts. So:

* crash before our commit: Spark replays the batch, we apply it once;
* crash after our commit but before Spark's: Spark replays it, we skip it;
* stop and restart with the same checkpoint: batch ids continue, and the
  state is reloaded from ``state_dir``;
* every other pairing of checkpoint and state raises
  :class:`skimsketch.stream.ExactlyOnceError` before anything is applied,
  naming both batch ids (or both query ids) and the remedy: a new
  checkpoint (or a second query) with an old ``state_dir``, an older
  checkpoint copy with newer state, an existing checkpoint with a new or
  lost ``state_dir``, and two running queries writing one ``state_dir``.

The final state is exactly (byte for byte, integer weights) the sketch a
one-shot batch build of all the data gives. ``state_dir`` must be a
driver-local (or mounted) path, one per query.

With ``timestamp``/``window`` the state is a
:class:`skimsketch.stream.WindowedSketch` (sliding or tumbling event-time
window, watermark and late-element accounting as documented there): per batch,
late rows are counted on the executors and the accepted rows are sketched per
pane (``spark_udaf.build.sketch_by``), then committed with
``WindowedSketch.merge_panes``.

SQL: after every batch the current sketch's bytes are published as a
one-row temporary view (``view_name``) and/or a one-row Parquet file
(``table_path``), columns ``batch_id, sketch, kind, width, depth, seed,
total_weight, null_weight, now, watermark, late_count, updated_at``; the
bytes load with ``ss.from_bytes`` and work with the SQL functions of
``spark_udaf.sql`` (``skim_join_size(sketch, other)``). Classic (non-Connect)
PySpark: the handler runs on the driver.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import os

import skimsketch as ss
from skimsketch.stream import (
    ExactlyOnce,
    LateElementError,
    StateFile,
    WindowedSketch,
    load_state,
)
from skimsketch.stream.checkpoint import sketch_digest

from ._common import check_columns, field_of
from .build import sketch_by, sketch_column

__all__ = ["STATE_FILE", "StreamingSketch", "read_state"]

#: Name of the state file inside ``state_dir``.
STATE_FILE = "sketch.state"
_PANE = "__skim_pane"
_INTEGRAL = ("tinyint", "smallint", "int", "bigint")


def read_state(state_dir):
    """``(batch_id, state)`` committed in ``state_dir`` (state: sketch or ``WindowedSketch``), or ``None``."""
    saved = StateFile(os.path.join(os.fspath(state_dir), STATE_FILE)).load()
    if saved is None:
        return None
    return saved[0], load_state(saved[1])


def _view_schema():
    from pyspark.sql.types import (
        BinaryType,
        DoubleType,
        LongType,
        StringType,
        StructField,
        StructType,
        TimestampType,
    )

    return StructType([
        StructField("batch_id", LongType()),
        StructField("sketch", BinaryType()),
        StructField("kind", StringType()),
        StructField("width", LongType()),
        StructField("depth", LongType()),
        StructField("seed", StringType()),  # u64 does not fit a signed BIGINT
        StructField("total_weight", DoubleType()),
        StructField("null_weight", DoubleType()),
        StructField("now", DoubleType()),
        StructField("watermark", DoubleType()),
        StructField("late_count", LongType()),
        StructField("updated_at", TimestampType()),
    ])


def _query_id(batch_df):
    """The running streaming query's id (stable across restarts of one checkpoint), ``None`` outside a query."""
    try:
        return batch_df.sparkSession.sparkContext.getLocalProperty("sql.streaming.queryId")
    except (AttributeError, NotImplementedError):  # Spark Connect: no SparkContext; batch ids alone are checked
        return None


class StreamingSketch:
    """``foreachBatch`` handler keeping a checkpointed sketch of ``column``.

    Parameters: ``sketch`` (kind, shape and seed; its contents are the
    initial state when ``state_dir`` holds none, and a saved state must match
    it), ``column`` (integer, string or binary key
    column), ``state_dir``, optional ``weight`` column (deletes = negative
    weights; rows with a null weight are skipped, as SQL ``SUM`` does), and
    for windows ``timestamp`` (numeric event-time column), ``window``,
    ``slide``, ``allowed_lateness``, ``on_late``. ``view_name`` /
    ``table_path`` publish the current bytes to SQL; ``spark`` is the session
    owning the view (default: the active one).
    """

    def __init__(self, sketch, column: str, state_dir, weight: str | None = None, *, timestamp: str | None = None,
                 window=None, slide=None, allowed_lateness=0, on_late: str = "count",
                 view_name: str | None = None, table_path=None, spark=None):
        if not isinstance(sketch, ss.Sketch):
            raise TypeError(f"sketch must be a skimsketch sketch, got {type(sketch).__name__}")
        if not isinstance(column, str):
            raise TypeError("column must be a column name (str)")
        if (timestamp is None) != (window is None):
            raise ValueError("timestamp and window go together: give both for a windowed sketch, or neither")
        self.column, self.weight, self.timestamp = column, weight, timestamp
        self.view_name, self.table_path = view_name, (None if table_path is None else os.fspath(table_path))
        self._template = sketch.empty_like()
        if window is not None:
            fresh = WindowedSketch(self._template, window, slide, allowed_lateness, on_late)
        else:
            fresh = sketch.copy()
        self._once = ExactlyOnce(os.path.join(os.fspath(state_dir), STATE_FILE), consecutive=True)
        if self._once.saved is None:
            self._state = fresh
        else:
            self._state = load_state(self._once.saved)
            self._check_resume(fresh)
        self.applied_batches = 0
        self.skipped_batches = 0
        if spark is None and view_name is not None:
            from pyspark.sql import SparkSession

            spark = SparkSession.getActiveSession()
            if spark is None:
                raise ValueError("view_name needs a SparkSession: pass spark= or create one first")
        self._spark = spark
        if view_name is not None:  # the view exists (restored or initial state) before the first batch
            self.to_dataframe().createOrReplaceTempView(view_name)

    def _check_resume(self, fresh) -> None:
        st = self._state
        if isinstance(fresh, WindowedSketch):
            if not isinstance(st, WindowedSketch):
                raise ss.IncompatibleSketchError("state", "windowed", "unwindowed", "resume")
            for f in ("window", "slide", "allowed_lateness", "on_late"):
                if getattr(st, f) != getattr(fresh, f):
                    raise ss.IncompatibleSketchError(f, getattr(fresh, f), getattr(st, f), "resume")
            inner = st.template
        else:
            if isinstance(st, WindowedSketch):
                raise ss.IncompatibleSketchError("state", "unwindowed", "windowed", "resume")
            inner = st
        self._template.check_compatible(inner, "resume from state with")

    # -- state ------------------------------------------------------------------------
    @property
    def last_batch_id(self):
        """The last committed batch id (``None`` before the first commit)."""
        return self._once.last_batch_id

    @property
    def query_id(self):
        """The id of the streaming query whose batches the state holds (``None`` when unknown)."""
        return self._once.committed_query_id

    @property
    def state(self):
        """The committed state: a sketch, or a ``WindowedSketch`` (do not modify)."""
        return self._state

    @property
    def windowed(self) -> bool:
        return isinstance(self._state, WindowedSketch)

    def sketch(self, t=None):
        """A copy of the current sketch (for windows: the window at ``t``, default ``now``)."""
        if self.windowed:
            return self._state.sketch_at(t)
        if t is not None:
            raise ValueError("t is only meaningful for a windowed sketch")
        return self._state.copy()

    # -- the batch handler ----------------------------------------------------------
    def __call__(self, batch_df, batch_id: int) -> None:
        batch_id = int(batch_id)
        query_id = _query_id(batch_df)
        if not self._once.admit(batch_id, query_id):
            self._once.verify_replay(self._replay_digest(batch_df))  # a replay carries the same rows
            self.skipped_batches += 1
            self._publish()
            return
        new, digest = self._windowed_batch(batch_df) if self.windowed else self._plain_batch(batch_df)
        self._once.commit(batch_id, new.to_bytes(), query_id, digest)  # the commit point
        self._state = new
        self.applied_batches += 1
        self._publish()

    def _plain_batch(self, df):
        """The new state and the batch digest (of the batch's sketch)."""
        delta = sketch_column(df, self.column, self._template.empty_like(), self.weight)
        return self._state.copy().merge(delta), sketch_digest(delta)

    def _fingerprint(self, df):
        """Aggregates identifying the batch's rows as a multiset (windowed batches: no extra scan)."""
        from pyspark.sql import functions as F

        cols = [self.column, self.timestamp] + ([] if self.weight is None else [self.weight])
        h = F.xxhash64(*[F.col(c) for c in cols])
        return [F.count(F.lit(1)).alias("fp_n"), F.bit_xor(h).alias("fp_xor"),
                F.sum(h.bitwiseAND(F.lit(0xFFFFFFFF))).alias("fp_sum")]

    @staticmethod
    def _fingerprint_digest(row) -> bytes:
        return hashlib.blake2b(repr((row["fp_n"], row["fp_xor"], row["fp_sum"])).encode(), digest_size=16).digest()

    def _replay_digest(self, df) -> bytes:
        if not self.windowed:
            return sketch_digest(sketch_column(df, self.column, self._template.empty_like(), self.weight))
        self._timestamp_type(df.schema)
        return self._fingerprint_digest(df.agg(*self._fingerprint(df)).first())

    def _windowed_batch(self, df):
        from pyspark.sql import functions as F

        st: WindowedSketch = self._state
        integral = self.check_schema(df) in _INTEGRAL
        ts = F.col(self.timestamp).cast("bigint" if integral else "double")
        w = F.lit(1).cast("bigint") if self.weight is None else F.col(self.weight)
        seen = self._weighted_row(df)  # rows with a null weight are skipped: no event, not late, no time
        wm = st.watermark
        late = F.lit(False) if wm is None else ts < F.lit(wm)
        row = df.agg(
            F.sum(F.when(seen & ts.isNull(), 1).otherwise(0)).alias("null_ts"),
            F.sum(F.when(seen & late, 1).otherwise(0)).alias("late"),
            F.sum(F.when(seen & late, w)).alias("late_w"),
            F.sum(F.when(seen & ~late, 1).otherwise(0)).alias("acc"),
            F.max(F.when(seen & ~late, ts)).alias("max_ts"),
            *self._fingerprint(df),
        ).first()
        if row["null_ts"]:
            raise ValueError(f"{row['null_ts']} row(s) have a null timestamp in {self.timestamp!r}: they belong to no window")
        n_late = int(row["late"] or 0)
        if n_late and st.on_late == "raise":
            raise LateElementError(f"{n_late} row(s) older than the watermark {wm!r}")
        panes = {}
        if row["acc"]:
            slide = st.slide
            acc = df.where(seen) if wm is None else df.where(seen & (ts >= F.lit(wm)))
            acc = acc.withColumn(_PANE, ts)  # exact floor division, as pane_index does
            if integral and isinstance(slide, int):
                pane = F.expr(f"(`{_PANE}` - pmod(`{_PANE}`, {slide}L)) div {slide}L")
            else:
                pane = F.floor(F.col(_PANE) / F.lit(float(slide))).cast("bigint")
            acc = acc.withColumn(_PANE, pane)
            for r in sketch_by(acc, self.column, self._template, _PANE, self.weight).collect():
                panes[int(r[_PANE])] = ss.from_bytes(bytes(r["sketch"]))
        max_ts = row["max_ts"]
        late_w = row["late_w"] or 0
        new = WindowedSketch.from_bytes(st.to_bytes())
        new.merge_panes(panes, max_ts, late_count=n_late, late_weight=late_w, events=int(row["acc"] or 0))
        return new, self._fingerprint_digest(row)

    def _weighted_row(self, df):
        """Column: the row's weight is not null (NULL, or NaN in a float column), i.e. the row counts."""
        from pyspark.sql import functions as F

        if self.weight is None:
            return F.lit(True)
        w = F.col(self.weight)
        if field_of(df, self.weight).dataType.simpleString() in ("float", "double"):
            return w.isNotNull() & ~F.isnan(w)
        return w.isNotNull()

    def check_schema(self, df) -> str | None:
        """Check the key, weight and event-time columns of ``df``'s schema (no scan); the timestamp type.

        Raises what the first batch would raise (``KeyTypeError`` naming the
        column and its type, ``ValueError`` for a missing column).
        :meth:`start` calls it before the query starts; call it yourself on
        the streaming DataFrame when passing the handler to ``foreachBatch``.
        Every batch is checked again before it is read.
        """
        check_columns(df, self.column, self._template, self.weight)
        return None if self.timestamp is None else self._timestamp_type(df.schema)

    def _timestamp_type(self, schema) -> str:
        """The event-time column's type name; raises unless it is numeric."""
        ts_field = next((f for f in schema.fields if f.name == self.timestamp), None)
        if ts_field is None:
            raise ValueError(f"timestamp column {self.timestamp!r} not found in {schema.fieldNames()}")
        tname = ts_field.dataType.simpleString()
        if tname not in _INTEGRAL + ("float", "double"):
            raise TypeError(
                f"timestamp column {self.timestamp!r} has type {tname}; use a numeric event time "
                f"(e.g. unix_micros({self.timestamp}) for TIMESTAMP columns)"
            )
        return tname

    # -- SQL exposure -------------------------------------------------------------------
    def _row(self):
        sk = self.sketch()
        st = self._state
        win = self.windowed
        f = lambda x: None if x is None else float(x)
        return (
            self.last_batch_id, bytearray(sk.to_bytes()), type(sk).__name__, sk.width, sk.depth, str(sk.seed),
            float(sk.total_weight), float(sk.null_weight),
            f(st.now) if win else None, f(st.watermark) if win else None,
            st.late_count if win else 0,
            _dt.datetime.now(_dt.timezone.utc).replace(tzinfo=None),
        )

    def to_dataframe(self, spark=None):
        """The current state as a one-row DataFrame (the view's contents)."""
        spark = spark or self._spark
        if spark is None:
            from pyspark.sql import SparkSession

            spark = SparkSession.getActiveSession()
        return spark.createDataFrame([self._row()], _view_schema())

    def _publish(self) -> None:
        if self.view_name is not None:
            self.to_dataframe().createOrReplaceTempView(self.view_name)
        if self.table_path is not None:
            self._write_table()

    def _write_table(self) -> None:
        import tempfile

        import pyarrow as pa
        import pyarrow.parquet as pq

        names = [f.name for f in _view_schema().fields]
        row = self._row()
        table = pa.table({n: [v] for n, v in zip(names, row)}).cast(pa.schema([
            ("batch_id", pa.int64()), ("sketch", pa.binary()), ("kind", pa.string()), ("width", pa.int64()),
            ("depth", pa.int64()), ("seed", pa.string()), ("total_weight", pa.float64()),
            ("null_weight", pa.float64()), ("now", pa.float64()), ("watermark", pa.float64()),
            ("late_count", pa.int64()), ("updated_at", pa.timestamp("us")),
        ]))
        d = os.path.dirname(os.path.abspath(self.table_path))
        os.makedirs(d, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".sketch-", suffix=".parquet", dir=d)
        os.close(fd)
        try:
            pq.write_table(table, tmp)
            os.replace(tmp, self.table_path)
        finally:
            if os.path.exists(tmp):
                os.unlink(tmp)

    # -- convenience ------------------------------------------------------------------
    def start(self, stream_df, checkpoint_location, trigger: dict | None = None, query_name: str | None = None):
        """Start ``stream_df.writeStream.foreachBatch(self)`` with ``checkpointLocation``.

        ``trigger`` is passed to ``DataStreamWriter.trigger`` (default
        ``{"availableNow": True}``: process what is there, then stop).
        Returns the ``StreamingQuery``. The key, weight and event-time
        columns' types are checked here (:meth:`check_schema`), before the
        query starts.
        """
        self.check_schema(stream_df)
        writer = stream_df.writeStream.foreachBatch(self).option("checkpointLocation", os.fspath(checkpoint_location))
        writer = writer.trigger(**(trigger or {"availableNow": True}))
        if query_name is not None:
            writer = writer.queryName(query_name)
        return writer.start()

    def stats(self) -> dict:
        out = {
            "last_batch_id": self.last_batch_id,
            "applied_batches": self.applied_batches,
            "skipped_batches": self.skipped_batches,
        }
        if self.windowed:
            out.update(self._state.stats())
        return out
