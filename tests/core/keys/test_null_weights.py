"""Null weights (None, NaN, pandas NA, Arrow null) skip their row everywhere, as SQL SUM skips them.

``update`` on sketches, windows (estimated and exact), stream sketches and
``PairSketch`` treat such a row as absent: its key is not sketched, it is not
a null key (``null_weight``), not an event, not late, and its timestamp does
not move the clock.
"""

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

import skimsketch as ss
from skimsketch.stream import ExactWindowedJoin, SketchStream, WindowedJoin, WindowedSketch


def _hash():
    return ss.HashSketch(64, 3, seed=1)


NULL_WEIGHTS = [
    [2, None, 5, None],
    [2.0, float("nan"), 5.0, None],
    np.array([2.0, np.nan, 5.0, np.nan]),
    pd.Series([2, None, 5, None], dtype="Int64"),
    pa.array([2, None, 5, None], pa.int64()),
]
KEYS = [1, 2, None, 3]  # kept rows: key 1 (weight 2) and a null key (weight 5)


@pytest.mark.parametrize("weights", NULL_WEIGHTS, ids=["list", "float-list", "numpy", "pandas", "arrow"])
def test_windows_skip_null_weight_rows_like_update(weights):
    want = _hash().update([1, None], weights=[2, 5])
    assert _hash().update(KEYS, weights=weights).to_bytes() == want.to_bytes()
    w = WindowedSketch(_hash(), window=10).update(KEYS, timestamps=[0, 7, 1, 9], weights=weights)
    assert w.sketch_at().to_bytes() == want.to_bytes()
    assert (w.now, w.stats()["events"]) == (1, 2)  # the skipped rows' timestamps 7 and 9 were never seen
    late = WindowedSketch(_hash(), window=10).update([5], timestamps=[20])
    late.update(KEYS, timestamps=[0, 1, 2, 3], weights=weights)
    assert (late.late_count, late.late_weight) == (2, 7)


def test_stream_sketch_skips_null_weight_rows_in_its_counts():
    s = SketchStream(_hash())
    s.apply(KEYS, weights=[2, None, 5, float("nan")], batch_id=0)
    s.apply([1], weights=[-1], batch_id=1)
    assert s.sketch.to_bytes() == _hash().update([1, None, 1], weights=[2, 5, -1]).to_bytes()
    assert (s.events, s.inserted_weight, s.deleted_weight) == (3, 7, 1)


def test_windowed_joins_skip_null_weight_rows():
    j = WindowedJoin(_hash(), window_a=10)
    j.update_a([7, 7, 8], [0, 1, 2], weights=[1, None, 2]).update_b([7, 8], [3, 3], weights=[3, float("nan")])
    assert float(j.join_size().value) == 3.0  # 7: 1 * 3; 8: 2 * (skipped)
    x = ExactWindowedJoin(window_a=10, window_b=10, slide=10)
    x.update_a([7, 7, 8], [0, 1, 2], weights=[1, None, 2]).update_b([7, 8], [3, 3], weights=[3, None])
    assert x.join_size == 3


def test_pair_sketch_skips_null_weight_rows():
    make = lambda: ss.PairSketch(16, 16, 3, seed_a=1, seed_b=2)  # noqa: E731
    got = make().update([1, 2, None, 4], ["a", "b", "c", None], weights=[3, None, 5, float("nan")])
    want = make().update([1, None], ["a", "c"], weights=[3, 5])
    assert got == want and (got.total_weight, got.null_weight) == (3, 5)
    got = ss.exact_chain_join_size([1, 2], [1, 2, 2], ["x", "y", "y"], ["x", "y"], weights_s=[4, None, 1])
    assert got == ss.exact_chain_join_size([1, 2], [1, 2], ["x", "y"], ["x", "y"], weights_s=[4, 1]) == 5
