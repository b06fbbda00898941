"""Every builder that takes a JoinSample template builds the core's sample at scale (issue 33 item 3).

``sketch_pair``, ``sketch_parquet`` and ``sketch_partials`` used to fill one whole sample per task and merge
the finished samples: fine on 40 keys, ``SampleMergeError`` once a task's sample dropped keys. They now route
samples as ``sketch_column`` does (``skim_sample_agg`` on the JVM, else key-hash pieces in Python); the bytes
equal ``JoinSample.for_bytes(n, seed).update(all keys, weights)`` in memory, on 100K rows, both paths."""

import logging

import numpy as np
import pytest

import skimsketch as ss
import spark_udaf
from spark_udaf import native
from spark_udaf._common import merge_blobs
from spark_udaf.build import sample as sample_build

pytestmark = pytest.mark.spark

SEED = 11
#: (rows, nbytes): the issue's 100K rows (slow on a loaded 2-core machine), and a fast sibling whose per-task
#: samples drop keys too (the condition the old builders failed on)
SIZES = [pytest.param((6_000, 200), id="6K"), pytest.param((100_000, 1024), id="100K", marks=pytest.mark.slow)]
_KEY = "CASE WHEN id % 997 = 0 THEN NULL WHEN id % 10 = 0 THEN id % 13 ELSE pmod(id * 7919, 30011) END"
ROWS = NBYTES = None  # set by the size fixture


@pytest.fixture(scope="module", params=SIZES)
def size(request):
    global ROWS, NBYTES
    ROWS, NBYTES = request.param
    yield request.param


def _columns():
    """The keys (NULL-free numpy ints, with their null mask), string keys and weights the table holds."""
    i = np.arange(ROWS, dtype=np.int64)
    k = np.where(i % 10 == 0, i % 13, (i * 7919) % 30011)
    null = i % 997 == 0
    ks = np.char.add("u", k.astype(str)).astype(object)
    return k, null, ks, i % 5 + 1, i % 3


def _want(keys, null, weights=None, template=None, rows=None):
    t = template or ss.JoinSample.for_bytes(NBYTES, seed=SEED)
    rows = np.ones(ROWS, bool) if rows is None else rows
    ks = list(np.where(null, None, keys.astype(object))[rows])
    return t.empty_like().update(ks, weights=None if weights is None else weights[rows]).to_bytes()


@pytest.fixture(scope="module")
def table(spark, size):
    return spark.range(size[0]).selectExpr(f"CAST({_KEY} AS BIGINT) AS k", f"concat('u', CAST({_KEY} AS STRING)) AS ks",
                                        "id % 5 + 1 AS w", "id % 3 AS g").repartition(4)


@pytest.fixture(params=["native", "python"])
def path(request, spark, monkeypatch, caplog):
    """The JVM path (the jar) or the Python fallback (the session as if without the jar)."""
    if request.param == "native" and not native.loaded(spark):
        pytest.skip("the session's JVM has no native jar")
    if request.param == "python":
        monkeypatch.setattr(sample_build, "_has_function", lambda spark: False)
    caplog.set_level(logging.INFO, logger="spark_udaf")
    yield request.param
    said = " ".join(r.getMessage() for r in caplog.get_records("call"))
    native_run = request.param == "native"
    assert ("native path (JVM)" in said) == native_run and ("Python path" in said) == (not native_run)


def test_the_data_drops_keys(size):
    k, null, ks, w, g = _columns()
    s = ss.from_bytes(_want(k, null))
    assert s.tau < float("inf") and s.n_keys > 20 * len(s.sample_items()[0])  # far beyond one sample's keys


def test_sketch_pair_builds_both_sides_as_the_core(table, path):
    k, null, ks, w, g = _columns()
    t = ss.JoinSample.for_bytes(NBYTES, seed=SEED)
    a, b = spark_udaf.sketch_pair(table, "ks", table.select("ks"), "ks", t, lweight="w")  # (integer keys: partials)
    assert (a.to_bytes(), b.to_bytes()) == (_want(ks, null, w), _want(ks, null))
    assert t.is_empty and not t.finished  # the template never changes


def test_sketch_partials_merge_into_the_core_sample(table, path):
    k, null, ks, w, g = _columns()
    t = ss.JoinSample.for_bytes(NBYTES, seed=SEED)
    for col, keys, weight in (("k", k, None), ("ks", ks, "w")):
        rows = spark_udaf.sketch_partials(table, col, t, weight).collect()
        assert len(rows) == (1 if path == "native" else sample_build.parts_of(table))
        want = _want(keys, null, None if weight is None else w)
        assert merge_blobs([r.sketch for r in rows]).to_bytes() == want
        assert merge_blobs([r.sketch for r in reversed(rows)]).to_bytes() == want  # in any order
    by = spark_udaf.sketch_partials(table, "k", t, "w", by="g").collect()
    assert sorted(r.g for r in by) == [0, 1, 2]  # one row per group, whichever the path
    for r in by:
        assert bytes(r.sketch) == _want(k, null, w, rows=g == r.g), r.g
    days = spark_udaf.sketch_by(table, "ks", t, "g").collect()  # sketch_by too: the JVM, or Python without it
    assert sorted(r.g for r in days) == [0, 1, 2]
    for r in days:
        assert bytes(r.sketch) == _want(ks, null, rows=g == r.g), r.g


def test_sketch_parquet_builds_the_core_sample(spark, table, path, tmp_path):
    k, null, ks, w, g = _columns()
    where = str(tmp_path / "t.parquet")
    table.write.parquet(where)
    t = ss.JoinSample.for_bytes(NBYTES, seed=SEED)
    assert spark_udaf.sketch_parquet(spark, where, "ks", t, weight="w").to_bytes() == _want(ks, null, w)
    floats = ss.JoinSample.for_bytes(NBYTES, seed=SEED, dtype="float64")
    assert spark_udaf.sketch_parquet(spark, [where], "k", floats, weight="w", tasks=3).to_bytes() == \
        _want(k, null, w.astype(float), floats)


def test_python_pieces_cover_every_partition_even_on_few_keys(spark):
    """A key-hash piece per partition, empty ones included (a marker row each): 2 keys, 4 pieces."""
    df = spark.createDataFrame([(1,), (2,), (2,), (None,)], "k bigint")
    t = ss.JoinSample.for_bytes(512, seed=SEED)
    rows = sample_build.python_pieces(df, "k", t).collect()
    pieces = [ss.from_bytes(bytes(r.sketch)) for r in rows]
    assert sorted(p.partition[0][0] for p in pieces) == list(range(sample_build.parts_of(df)))
    assert merge_blobs([r.sketch for r in rows]).to_bytes() == t.empty_like().update([1, 2, 2, None]).to_bytes()
