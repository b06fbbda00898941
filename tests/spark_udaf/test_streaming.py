"""Structured Streaming maintenance (spark_udaf.streaming) against one-shot builds."""

import os
import shutil

import numpy as np
import pytest

import skimsketch as ss
from skimsketch.stream import ExactlyOnceError, WindowedSketch

pytestmark = pytest.mark.spark

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")
pd = pytest.importorskip("pandas")


def _write(src, name, keys, ts, w, mtime):
    """One Parquet file with a fixed modification time (the file source orders files by it)."""
    path = os.path.join(src, name)
    pq.write_table(pa.table({"k": pa.array(keys, pa.int64()), "ts": pa.array(ts, pa.int64()),
                             "w": pa.array(w, pa.int64())}), path)
    os.utime(path, (mtime, mtime))
    return keys, ts, w


def _files(seed, n, t0, t1, late=0, nulls=0):
    rng = np.random.default_rng(seed)
    keys = ((rng.zipf(1.3, n) - 1) % 3000).astype(object)
    keys[:nulls] = None
    ts = rng.integers(t0, t1, n)
    ts[:late] = rng.integers(-100, 0, late)  # far behind any watermark
    w = np.where(rng.random(n) < 0.15, -1, 1)
    return keys.tolist(), ts.tolist(), w.tolist()


def _stream(spark, src):
    return (spark.readStream.schema("k BIGINT, ts BIGINT, w BIGINT")
            .option("maxFilesPerTrigger", 1).parquet(str(src)))


def test_stop_restart_equals_one_shot_build_and_sql_view(spark, tmp_path):
    from spark_udaf.streaming import StreamingSketch, read_state

    src, ckpt, state = tmp_path / "src", tmp_path / "ckpt", tmp_path / "state"
    src.mkdir()
    tmpl = ss.HashSketch(width=256, depth=5, seed=21)
    data = [_write(src, f"f{i}.parquet", *_files(i, 400, 0, 100, nulls=3), mtime=1_000_000 + i) for i in range(2)]

    h = StreamingSketch(tmpl, "k", state, weight="w", view_name="skim_stream_state", spark=spark)
    first = spark.sql("SELECT batch_id, sketch FROM skim_stream_state").first()  # published before any batch
    assert first["batch_id"] is None and ss.from_bytes(bytes(first["sketch"])).is_empty
    q = h.start(_stream(spark, src), ckpt)
    q.awaitTermination(120)
    assert q.exception() is None
    assert h.last_batch_id == 1 and h.applied_batches == 2

    # more data arrives while stopped; a new process resumes from the checkpoint and the state dir
    data += [_write(src, f"f{i}.parquet", *_files(i, 400, 100, 200), mtime=1_000_000 + i) for i in range(2, 4)]
    h2 = StreamingSketch(tmpl, "k", state, weight="w", view_name="skim_stream_state", spark=spark)
    assert h2.last_batch_id == 1
    q = h2.start(_stream(spark, src), ckpt)
    q.awaitTermination(120)
    assert q.exception() is None
    assert (h2.last_batch_id, h2.applied_batches, h2.skipped_batches) == (3, 2, 0)

    one_shot = tmpl.empty_like()
    for keys, _, w in data:
        one_shot.update(keys, weights=w)
    assert h2.sketch().to_bytes() == one_shot.to_bytes()
    assert read_state(state)[1].to_bytes() == one_shot.to_bytes()
    assert h2.sketch().null_weight == sum(w[i] for _, _, w in data[:2] for i in range(3))

    row = spark.sql("SELECT batch_id, sketch, kind, total_weight FROM skim_stream_state").first()
    assert row["batch_id"] == 3 and row["kind"] == "HashSketch"
    assert ss.from_bytes(bytes(row["sketch"])).to_bytes() == one_shot.to_bytes()
    assert row["total_weight"] == one_shot.total_weight


def test_replayed_batch_id_is_not_counted_twice(spark, tmp_path):
    from spark_udaf.streaming import StreamingSketch

    tmpl = ss.HashSketch(width=64, depth=3, seed=2)
    b0 = spark.createDataFrame([(1,), (2,), (2,)], "k BIGINT")
    b1 = spark.createDataFrame([(3,)], "k BIGINT")
    h = StreamingSketch(tmpl, "k", tmp_path / "state", table_path=tmp_path / "tbl" / "sketch.parquet")
    h(b0, 0)
    h(b0, 0)  # replay after a failure: same id, same data
    h(b1, 1)
    h(b1.repartition(3), 1)  # replay of the last batch (same rows, other partitioning)
    assert (h.applied_batches, h.skipped_batches) == (2, 2)
    with pytest.raises(ExactlyOnceError, match="batch 1 replays the last committed batch .* with other data"):
        h(b0, 1)  # the last id with other rows is not a replay
    with pytest.raises(ExactlyOnceError, match="batch 0 is before the last committed batch 1"):
        h(b0, 0)
    expected = tmpl.empty_like().update([1, 2, 2, 3])
    assert h.sketch() == expected
    h(b0.limit(0), 2)  # an empty micro-batch is committed and changes nothing
    assert h.last_batch_id == 2 and h.sketch() == expected
    # a crash after our commit: a new handler sees the committed id and skips Spark's replay
    h2 = StreamingSketch(tmpl, "k", tmp_path / "state")
    h2(b0.limit(0), 2)
    assert h2.skipped_batches == 1 and h2.sketch() == expected
    row = spark.read.parquet(str(tmp_path / "tbl" / "sketch.parquet")).first()
    assert row["batch_id"] == 2 and ss.from_bytes(bytes(row["sketch"])) == expected


def test_windowed_streaming_matches_in_memory_windowed_sketch(spark, tmp_path):
    from spark_udaf.streaming import StreamingSketch

    src, ckpt, state = tmp_path / "src", tmp_path / "ckpt", tmp_path / "state"
    src.mkdir()
    tmpl = ss.HashSketch(width=128, depth=3, seed=5)
    kw = dict(window=40, slide=10, allowed_lateness=15)
    specs = [(0, 0, 50, 0), (1, 40, 90, 0), (2, 80, 130, 20), (3, 120, 170, 0)]  # (seed, t0, t1, late rows)
    data = []
    for i, (seed, t0, t1, late) in enumerate(specs[:2]):
        data.append(_write(src, f"f{i}.parquet", *_files(seed, 300, t0, t1, late=late), mtime=2_000_000 + i))
    h = StreamingSketch(tmpl, "k", state, weight="w", timestamp="ts", **kw)
    h.start(_stream(spark, src), ckpt).awaitTermination(120)
    for i, (seed, t0, t1, late) in enumerate(specs[2:], start=2):
        data.append(_write(src, f"f{i}.parquet", *_files(seed, 300, t0, t1, late=late), mtime=2_000_000 + i))
    h = StreamingSketch(tmpl, "k", state, weight="w", timestamp="ts", **kw)  # restart
    q = h.start(_stream(spark, src), ckpt)
    q.awaitTermination(120)
    assert q.exception() is None and h.last_batch_id == 3

    ref = WindowedSketch(tmpl, **kw)
    for keys, ts, w in data:  # one file per micro-batch, in file order
        ref.update(keys, ts, w)
    assert h.state.to_bytes() == ref.to_bytes()
    assert h.state.late_count == 20 and h.state.now == ref.now
    assert h.sketch() == ref.sketch_at()


def test_reject_cases(spark, tmp_path):
    from spark_udaf.streaming import StreamingSketch

    tmpl = ss.HashSketch(width=64, depth=3, seed=2)
    with pytest.raises(ValueError, match="timestamp and window go together"):
        StreamingSketch(tmpl, "k", tmp_path / "s", window=10)
    with pytest.raises(TypeError, match="sketch must be a skimsketch sketch"):
        StreamingSketch("not a sketch", "k", tmp_path / "s")
    h = StreamingSketch(tmpl, "k", tmp_path / "s")
    h(spark.createDataFrame([(1,)], "k BIGINT"), 0)
    with pytest.raises(ss.IncompatibleSketchError, match="seed differs"):
        StreamingSketch(ss.HashSketch(width=64, depth=3, seed=3), "k", tmp_path / "s")
    with pytest.raises(ss.IncompatibleSketchError, match="state differs"):
        StreamingSketch(tmpl, "k", tmp_path / "s", timestamp="ts", window=10)
    hw = StreamingSketch(tmpl, "k", tmp_path / "w", timestamp="ts", window=10, on_late="raise")
    with pytest.raises(TypeError, match="use a numeric event time"):
        hw(spark.sql("SELECT 1L AS k, current_timestamp() AS ts"), 0)
    hw(spark.createDataFrame([(1, 100)], "k BIGINT, ts BIGINT"), 0)
    hw(spark.createDataFrame([], "k BIGINT, ts BIGINT"), 1)  # empty batch: no data, clock unchanged
    assert hw.state.now == 100 and hw.last_batch_id == 1
    with pytest.raises(LateError(), match="older than the watermark"):
        hw(spark.createDataFrame([(1, 5)], "k BIGINT, ts BIGINT"), 2)
    with pytest.raises(ValueError, match="null timestamp"):
        hw(spark.createDataFrame([(1, None)], "k BIGINT, ts BIGINT"), 2)
    assert hw.last_batch_id == 1  # failed batches are not committed


def LateError():
    from skimsketch.stream import LateElementError

    return LateElementError


def test_stream_against_table_built_with_spark_builder_and_sql(spark, tmp_path):
    from skimsketch.stream import StreamTableJoin
    from spark_udaf.build import sketch_column
    from spark_udaf.sql import register
    from spark_udaf.streaming import StreamingSketch

    rng = np.random.default_rng(7)
    table_keys = ((rng.zipf(1.2, 20_000) - 1) % 2000).tolist()
    tmpl = ss.HashSketch(width=512, depth=5, seed=13)
    table_df = spark.createDataFrame(pd.DataFrame({"k": table_keys})).repartition(3)
    table = sketch_column(table_df, "k", tmpl.empty_like())  # built once, on the executors
    assert table == tmpl.empty_like().update(table_keys)

    h = StreamingSketch(tmpl, "k", tmp_path / "state", view_name="skim_stream_vs_table", spark=spark)
    j = StreamTableJoin(table)
    seen = []
    for batch_id in range(2):
        keys = ((rng.zipf(1.2, 500) - 1) % 2000).tolist()
        h(spark.createDataFrame(pd.DataFrame({"k": keys})), batch_id)
        j.update(keys, batch_id=batch_id)
        seen += keys
        exact = ss.exact_join_size(seen, table_keys)
        est = j.join_size()
        assert h.sketch() == j.stream_sketch()
        assert est.value == table.join_size(h.sketch()).value and est.contains(exact), (batch_id, est, exact)

    register(spark)
    spark.createDataFrame([(bytearray(table.to_bytes()),)], "sketch BINARY").createOrReplaceTempView("skim_table_sketch")
    got = spark.sql(
        "SELECT skim_join_size(s.sketch, t.sketch) AS j FROM skim_stream_vs_table s CROSS JOIN skim_table_sketch t"
    ).first()["j"]
    assert got == pytest.approx(j.join_size().value)


def test_crash_before_and_after_commit_is_exactly_once(spark, tmp_path):
    from pyspark.errors import StreamingQueryException

    from spark_udaf.streaming import StreamingSketch

    class Crashing(StreamingSketch):
        """Dies once at ``batch`` — ``before`` or ``after`` committing its state."""

        def __init__(self, *a, crash=None, **kw):
            super().__init__(*a, **kw)
            self.crash = crash

        def __call__(self, df, batch_id):
            if self.crash == ("before", batch_id):
                raise RuntimeError("simulated crash before commit")
            super().__call__(df, batch_id)
            if self.crash == ("after", batch_id):
                raise RuntimeError("simulated crash after commit")

    src, ckpt, state = tmp_path / "src", tmp_path / "ckpt", tmp_path / "state"
    src.mkdir()
    tmpl = ss.HashSketch(width=128, depth=3, seed=8)
    data = [_write(src, f"f{i}.parquet", *_files(30 + i, 200, 0, 50), mtime=3_000_000 + i) for i in range(3)]
    runs = []
    for crash in (("after", 0), ("before", 1), None):  # three runs of the same query
        h = Crashing(tmpl, "k", state, weight="w", crash=crash)
        runs.append(h)
        q = h.start(_stream(spark, src), ckpt)
        if crash is None:
            q.awaitTermination(120)
            assert q.exception() is None
        else:
            with pytest.raises(StreamingQueryException, match="simulated crash"):
                q.awaitTermination(120)
    # run 2: Spark replays batch 0 (committed by us, not by Spark): skipped; then dies before committing 1
    assert [(r.applied_batches, r.skipped_batches) for r in runs] == [(1, 0), (0, 1), (2, 0)]
    assert h.last_batch_id == 2
    one_shot = tmpl.empty_like()
    for keys, _, w in data:
        one_shot.update(keys, weights=w)
    assert h.sketch().to_bytes() == one_shot.to_bytes()


def test_windowed_handler_with_double_timestamps_matches_in_memory(spark, tmp_path):
    from spark_udaf.streaming import StreamingSketch

    tmpl = ss.HashSketch(width=64, depth=3, seed=9)
    kw = dict(window=1.5, slide=0.5, allowed_lateness=0.25)
    batches = [
        pd.DataFrame({"k": ["a", "b", None, "c"], "ts": [0.1, 0.6, 0.7, -0.2], "w": [1, 2, 3, -1]}),
        pd.DataFrame({"k": ["a", "d", "e"], "ts": [1.9, 0.4, 1.7], "w": [5, 1, 1]}),  # 0.4 < 0.7 - 0.25: late
    ]
    h = StreamingSketch(tmpl, "k", tmp_path / "s", weight="w", timestamp="ts", **kw)
    ref = WindowedSketch(tmpl, **kw)
    for i, b in enumerate(batches):
        h(spark.createDataFrame(b, "k STRING, ts DOUBLE, w BIGINT"), i)
        ref.update(b["k"].tolist(), b["ts"].to_numpy(), b["w"].to_numpy())
    assert (h.state.late_count, h.state.late_weight) == (1, 1)
    assert h.state.to_bytes() == ref.to_bytes()
    assert h.sketch() == tmpl.empty_like().update(["b", None, "a", "e"], weights=[2, 3, 5, 1])


def _run_query(handler, src, ckpt):
    """Run ``handler`` over the files of ``src`` (one per micro-batch) to the end; the query's exception or None."""
    from pyspark.errors import StreamingQueryException
    from pyspark.sql import SparkSession

    q = handler.start(_stream(SparkSession.getActiveSession(), src), ckpt)
    try:
        q.awaitTermination(120)
    except StreamingQueryException as e:
        return e
    return q.exception()


def test_new_checkpoint_with_old_state_fails_instead_of_skipping(spark, tmp_path):
    """The reported bug: a fresh checkpoint restarts batch ids at 0 against old state. Even when the old
    state's last batch is 0 (ids alone would call the new batch 0 a replay) the query id tells them apart."""
    from spark_udaf.streaming import StreamingSketch

    src, state = tmp_path / "src", tmp_path / "state"
    src.mkdir()
    tmpl = ss.HashSketch(width=64, depth=3, seed=3)
    data = [_write(src, "f0.parquet", *_files(40, 300, 0, 50), mtime=4_000_000)]
    h = StreamingSketch(tmpl, "k", state, weight="w")
    assert _run_query(h, src, tmp_path / "ckpt") is None and h.last_batch_id == 0
    committed = (state / "sketch.state").read_bytes()

    data.append(_write(src, "f1.parquet", *_files(41, 300, 0, 50), mtime=4_000_001))
    h2 = StreamingSketch(tmpl, "k", state, weight="w")
    err = _run_query(h2, src, tmp_path / "new-ckpt")  # a new query: its batch 0 holds both files
    assert err is not None and "belongs to query" in str(err) and "needs its own state path" in str(err)
    assert h2.applied_batches == h2.skipped_batches == 0
    assert (state / "sketch.state").read_bytes() == committed  # nothing applied, nothing lost silently

    h3 = StreamingSketch(tmpl, "k", tmp_path / "new-state", weight="w")  # the remedy: a state path of its own
    assert _run_query(h3, src, tmp_path / "new-ckpt-2") is None
    one_shot = tmpl.empty_like()
    for keys, _, w in data:
        one_shot.update(keys, weights=w)
    assert h3.sketch() == one_shot


def test_old_checkpoint_with_new_state_fails(spark, tmp_path):
    """An older copy of the checkpoint against newer state, and the checkpoint with a new (empty) state path."""
    from spark_udaf.streaming import StreamingSketch

    src, ckpt, state = tmp_path / "src", tmp_path / "ckpt", tmp_path / "state"
    src.mkdir()
    tmpl = ss.HashSketch(width=64, depth=3, seed=3)
    for i in range(2):
        _write(src, f"f{i}.parquet", *_files(50 + i, 100, 0, 50), mtime=5_000_000 + i)
    assert _run_query(StreamingSketch(tmpl, "k", state), src, ckpt) is None  # batches 0, 1
    shutil.copytree(ckpt, tmp_path / "ckpt-backup")
    for i in range(2, 4):
        _write(src, f"f{i}.parquet", *_files(50 + i, 100, 0, 50), mtime=5_000_000 + i)
    h = StreamingSketch(tmpl, "k", state)
    assert _run_query(h, src, ckpt) is None and h.last_batch_id == 3
    committed = (state / "sketch.state").read_bytes()

    old = StreamingSketch(tmpl, "k", state)
    err = _run_query(old, src, tmp_path / "ckpt-backup")  # the backup plans batch 2 again
    assert err is not None and "batch 2 is before the last committed batch 3" in str(err)
    _write(src, "f4.parquet", *_files(54, 100, 0, 50), mtime=5_000_004)
    lost = StreamingSketch(tmpl, "k", tmp_path / "empty-state")
    err = _run_query(lost, src, ckpt)  # the checkpoint goes on at batch 4, the state has nothing
    assert err is not None and "no committed batch, but batch 4 arrived: batches 0..3" in str(err)
    assert old.applied_batches == lost.applied_batches == 0
    assert (state / "sketch.state").read_bytes() == committed and not (tmp_path / "empty-state").exists()


def test_two_running_queries_sharing_a_state_dir_are_detected(spark, tmp_path):
    """Two queries started side by side on one state dir: the second commit finds the first's and fails."""
    from pyspark.errors import StreamingQueryException

    from spark_udaf.streaming import StreamingSketch, read_state

    tmpl, state = ss.HashSketch(width=64, depth=3, seed=3), tmp_path / "state"
    handlers, queries, data = [], [], []
    for name in ("a", "b"):
        src = tmp_path / f"src-{name}"
        src.mkdir()
        data.append(_write(src, "f0.parquet", *_files(60 + len(data), 200, 0, 50), mtime=6_000_000))
        handlers.append(StreamingSketch(tmpl, "k", state, weight="w"))  # both load the (empty) state
        queries.append((src, tmp_path / f"ckpt-{name}"))
    started = [h.start(_stream(spark, src), ckpt) for h, (src, ckpt) in zip(handlers, queries)]
    errors = []
    for q in started:
        try:
            q.awaitTermination(120)
            errors.append(q.exception())
        except StreamingQueryException as e:
            errors.append(e)
    failed = [i for i, e in enumerate(errors) if e is not None]
    assert len(failed) == 1 and "another query or process writes the same state" in str(errors[failed[0]])
    ok = 1 - failed[0]
    keys, _, w = data[ok]
    assert handlers[ok].sketch() == tmpl.empty_like().update(keys, weights=w)
    assert read_state(state)[1] == handlers[ok].sketch() and handlers[failed[0]].applied_batches == 0
