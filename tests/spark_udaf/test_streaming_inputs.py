"""StreamingSketch inputs: the schema is checked before any query or scan; null weights skip their row."""

import pandas as pd
import pytest

import skimsketch as ss
from skimsketch.stream import WindowedSketch

pytestmark = pytest.mark.spark


def test_start_checks_key_weight_and_timestamp_types_before_the_query(spark, tmp_path):
    from spark_udaf.streaming import StreamingSketch

    tmpl = ss.HashSketch(width=64, depth=3, seed=2)
    rate = spark.readStream.format("rate").load()  # columns: timestamp TIMESTAMP, value BIGINT
    with pytest.raises(ss.KeyTypeError, match="key column 'timestamp' has type timestamp"):
        StreamingSketch(tmpl, "timestamp", tmp_path / "a").start(rate, tmp_path / "ca")
    with pytest.raises(ss.KeyTypeError, match="weight column 'timestamp' has type timestamp"):
        StreamingSketch(tmpl, "value", tmp_path / "b", weight="timestamp").start(rate, tmp_path / "cb")
    with pytest.raises(TypeError, match="use a numeric event time"):
        StreamingSketch(tmpl, "value", tmp_path / "c", timestamp="timestamp", window=10).check_schema(rate)
    money = spark.sql("SELECT 1L AS k, 4.38BD AS w, 5L AS ts")
    with pytest.raises(ss.KeyTypeError, match=r"decimal\(3,2\).*dtype='float64'"):
        StreamingSketch(tmpl, "k", tmp_path / "d", weight="w", timestamp="ts", window=10).check_schema(money)
    assert StreamingSketch(tmpl, "value", tmp_path / "e", timestamp="value", window=10).check_schema(rate) == "bigint"
    assert not any((tmp_path / d).exists() for d in ("ca", "cb"))  # no query started


def test_windowed_batches_skip_null_weight_rows_as_the_core_does(spark, tmp_path):
    from spark_udaf.streaming import StreamingSketch

    tmpl = ss.HashSketch(width=64, depth=3, seed=9, dtype="float64")
    batches = [  # null / NaN weights: the row is absent (its timestamp 50 does not move the clock)
        pd.DataFrame({"k": [1, 2, 3, 4], "ts": [0, 50, 3, 50], "w": [1.0, None, 2.0, float("nan")]}),
        pd.DataFrame({"k": [5, 6, 7], "ts": [12, 1, 40], "w": [1.0, 4.0, None]}),  # ts 1 is late (watermark 2)
    ]
    h = StreamingSketch(tmpl, "k", tmp_path / "s", weight="w", timestamp="ts", window=10, allowed_lateness=1)
    ref = WindowedSketch(tmpl, window=10, allowed_lateness=1)
    for i, b in enumerate(batches):
        h(spark.createDataFrame(b, "k BIGINT, ts BIGINT, w DOUBLE"), i)
        ref.update(b["k"].to_numpy(), b["ts"].to_numpy(), b["w"].to_numpy())
    assert (h.state.now, h.state.late_count, h.state.late_weight) == (12, 1, 4.0)
    assert h.state.to_bytes() == ref.to_bytes()
