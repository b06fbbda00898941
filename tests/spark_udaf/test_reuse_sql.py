"""The reuse workflow in SQL: a table of stored summaries, every pair estimated by one self cross join.

Every pair's estimate (value and interval) equals the core's on the same bytes, for samples and sketches
alike, whichever task evaluates it and however often the JVM has seen the bytes (its estimate functions keep
decoded, prepared summaries keyed by content); a summary changed after a join (new bytes) answers anew, and
bytes that share a cached summary's length and checksum but differ are not taken for it.
"""

import numpy as np
import pytest

import skimsketch as ss
from spark_udaf import native

from .test_golden import _close

pytestmark = pytest.mark.spark

ALL_PAIRS = ("SELECT a.id AS a, b.id AS b, skim_join_size_bounds(a.s, b.s) AS e "
             "FROM summaries a JOIN summaries b ON a.id < b.id")


def _tables(n=6, seed=11):
    """Key columns of different shapes: Zipf facts, a dimension (every key once), shifted and small tables."""
    rng = np.random.default_rng(seed)
    out = [np.arange(4000), np.arange(500)]
    for i in range(n - 2):
        keys = rng.zipf(1.1 + 0.1 * i, 6000 + 2000 * i) % (3000 + 1500 * i) + 400 * i
        out.append(keys)
    return out


MAKERS = {
    "sample": lambda: ss.JoinSample.for_bytes(2048, seed=5),
    "skimmed": lambda: ss.SkimmedSketch.for_bytes(2048, seed=5),
    "hash": lambda: ss.HashSketch(64, 5, seed=5),
}


@pytest.fixture
def rspark(native_sql):
    if not native.available():
        pytest.skip("no JDK: the native jar cannot be built here (javac not found)")
    return native_sql


def _check_all_pairs(spark, blobs):
    spark.createDataFrame(list(enumerate(blobs)), "id INT, s BINARY").repartition(3) \
        .createOrReplaceTempView("summaries")
    got = spark.sql(ALL_PAIRS).collect()
    assert len(got) == len(blobs) * (len(blobs) - 1) // 2
    for r in got:
        want = ss.from_bytes(blobs[r.a]).join_size(ss.from_bytes(blobs[r.b]))
        for field in ("value", "low", "high"):
            assert _close(getattr(want, field), getattr(r.e, field)), (r.a, r.b, field, want, r.e)
        assert r.e.method == want.method
    return got


@pytest.mark.parametrize("kind", sorted(MAKERS))
def test_all_pairs_in_sql_equal_the_core_per_pair(rspark, kind):
    blobs = [MAKERS[kind]().update(keys).to_bytes() for keys in _tables()]
    if kind != "hash":  # the budget is exceeded: estimates, not exact answers
        assert sum(ss.from_bytes(b).join_size(ss.from_bytes(blobs[0])).method != "exact" for b in blobs[2:]) >= 3
    _check_all_pairs(rspark, blobs)
    _check_all_pairs(rspark, blobs)  # again: every summary now prepared in the JVM's cache


@pytest.mark.parametrize("kind", ["sample", "skimmed"])
def test_a_summary_changed_after_a_join_answers_anew(rspark, kind):
    tables = _tables()
    built = [MAKERS[kind]().update(keys) for keys in tables]
    blobs = [b.to_bytes() for b in built]
    before = {(r.a, r.b): r.e for r in _check_all_pairs(rspark, blobs)}
    built[2].update(tables[0][:3000])  # summary 2 now also holds most of the dimension's keys
    blobs[2] = built[2].to_bytes()
    after = {(r.a, r.b): r.e for r in _check_all_pairs(rspark, blobs)}
    assert after[(0, 2)].value != before[(0, 2)].value
    assert after[(0, 3)].value == before[(0, 3)].value


def test_bytes_with_a_cached_summarys_length_and_checksum_are_not_taken_for_it(rspark):
    blobs = [MAKERS["sample"]().update(keys).to_bytes() for keys in _tables()[:3]]
    _check_all_pairs(rspark, blobs)
    forged = bytearray(blobs[2])
    forged[len(forged) // 2] ^= 0x10  # same length, same trailing checksum bytes, different content
    rspark.createDataFrame([(0, blobs[1]), (1, bytes(forged))], "id INT, s BINARY") \
        .createOrReplaceTempView("summaries")
    with pytest.raises(Exception, match="CorruptSketchError|checksum|CRC"):
        rspark.sql(ALL_PAIRS).collect()
