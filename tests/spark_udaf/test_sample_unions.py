"""Daily unions of join samples (issue 33 item 7), in SQL and the Spark API, on the JVM and in Python.

A finished sample holding keys never merges, complete or not (the core's rule, tests/core/sample/
test_sample_unions.py), so a pipeline that unions daily samples is refused on its first run with the remedy,
not on its first big day; the documented patterns (docs/sample.md, "Unions over time") work every day: sample
the union of the days' per-key totals, or union skimmed sketches."""

import numpy as np
import pytest

import skimsketch as ss
import spark_udaf
from spark_udaf import native
from spark_udaf.build import sample as sample_build

pytestmark = pytest.mark.spark

NBYTES, SEED = 256, 3
REMEDY = r"cannot merge finished join samples: their keys may overlap.*refused even when both kept every key.*" \
         r"GROUP BY key.*skimmed sketches"
#: day -> rows: days 1-3 small (their samples keep every key), day 4 big (its sample drops keys)
_SIZES = {1: 12, 2: 30, 3: 7, 4: 6_000}


def _days():
    rows = []
    for day, n in _SIZES.items():
        i = np.arange(n)
        rows += [(day, int(k), int(w)) for k, w in zip((i * 37 + day) % (n // 2 + 3), i % 4 + 1)]
    return rows


@pytest.fixture(scope="module")
def events(spark):
    if not native.loaded(spark):
        pytest.skip("the session's JVM has no native jar")
    spark_udaf.register(spark)  # skim_merge: the Python union aggregate (the JVM keeps skim_union_agg)
    df = spark.createDataFrame(_days(), "day int, k bigint, w bigint").repartition(3)
    df.createOrReplaceTempView("events")
    for view, q, schema in (
            ("daily_samples", f"SELECT day, skim_sample_agg(k, w, {NBYTES}, {SEED}) AS s FROM events GROUP BY day",
             "day int, s binary"),
            ("daily_totals", "SELECT day, k, SUM(w) AS t FROM events GROUP BY day, k", "day int, k bigint, t bigint")):
        spark.createDataFrame(spark.sql(q).collect(), schema).createOrReplaceTempView(view)  # stored, as a pipeline's
    return df


def _core(days, weighted=True):
    rows = [r for r in _days() if r[0] in days]
    return ss.JoinSample.for_bytes(NBYTES, seed=SEED).update([r[1] for r in rows],
                                                             weights=[r[2] for r in rows] if weighted else None)


def test_the_small_days_kept_every_key_and_the_big_one_did_not(spark, events):
    got = {r.day: ss.from_bytes(bytes(r.s)) for r in spark.sql("SELECT * FROM daily_samples").collect()}
    assert {d: s.tau == float("inf") for d, s in got.items()} == {1: True, 2: True, 3: True, 4: False}
    assert all(s.to_bytes() == _core({d}).to_bytes() for d, s in got.items())


@pytest.mark.parametrize("fn", ["skim_union_agg", "skim_merge"])  # the JVM aggregate, the Python one
def test_sql_unions_of_daily_samples_are_refused_on_the_first_small_days(spark, events, fn):
    for days in ("1, 2", "3, 4"):  # small complete days as a big one
        with pytest.raises(Exception, match=REMEDY):
            spark.sql(f"SELECT {fn}(s) FROM daily_samples WHERE day IN ({days})").collect()
    one = spark.sql(f"SELECT {fn}(s) AS u FROM daily_samples WHERE day = 1").collect()[0].u  # one day: itself
    assert bytes(one) == _core({1}).to_bytes()
    with pytest.raises(Exception, match=REMEDY):
        spark.sql("SELECT skim_union(a.s, b.s) FROM daily_samples a, daily_samples b WHERE a.day = 1 AND b.day = 2"
                  ).collect()


def test_sql_samples_of_the_days_totals_are_exact_on_every_day(spark, events):
    for days in ((1, 2), (1, 2, 3), (3, 4), (1, 2, 3, 4)):
        q = f"SELECT skim_sample_agg(k, t, {NBYTES}, {SEED}) AS s FROM daily_totals WHERE day IN {days!r}"
        assert bytes(spark.sql(q.replace(",)", ")")).collect()[0].s) == _core(set(days)).to_bytes(), days
    sketches = spark.sql(f"SELECT skim_union_agg(s) AS u FROM (SELECT day, skim_sketch_agg(k, w, 4096, {SEED}) AS s "
                         "FROM events GROUP BY day)").collect()[0].u  # skimmed sketches: any days
    rows = _days()
    want = ss.SkimmedSketch.for_bytes(4096, seed=SEED).update([r[1] for r in rows], weights=[r[2] for r in rows])
    assert bytes(sketches) == want.to_bytes()


@pytest.mark.parametrize("path", ["native", "python"])
def test_the_spark_api_refuses_daily_unions_and_samples_the_days_totals(spark, events, path, monkeypatch):
    t = ss.JoinSample.for_bytes(NBYTES, seed=SEED)
    daily = {r.day: ss.from_bytes(bytes(r.sketch)) for r in spark_udaf.sketch_by(events, "k", t, "day").collect()}
    with pytest.raises(ss.SampleMergeError, match=REMEDY):
        daily[1].copy().merge(daily[2])  # complete days: refused as a big day is
    if path == "python":
        monkeypatch.setattr(sample_build, "_has_function", lambda spark: False)
    totals = spark.table("daily_totals")
    for days in ((1, 2), (2, 3, 4)):
        got = spark_udaf.sketch_column(totals.where(totals.day.isin(*days)), "k", t, weight="t")
        assert got.to_bytes() == _core(set(days)).to_bytes(), days
