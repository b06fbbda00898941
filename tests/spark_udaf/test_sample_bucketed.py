"""skim_sample_agg's bucketed build (SampleFastPlan: per-task sorted runs of fingerprint totals, buckets of
fingerprints merged after the shuffle) gives the core's bytes, exact key count included, for every key type,
integer weight type and partitioning, and the plan says which path a sample took and why.
"""

import random

import pytest

import skimsketch as ss
from spark_udaf import native

from .test_native import SCHEMA, _core
from .test_sample_sql import _plan, _rows

pytestmark = pytest.mark.spark

# the default run keeps one partitioning per bucket count and one spread table; the rest run with -m slow
FAST_PARAMS = {"test_bucketed_build_equals_the_core_for_every_key_type_and_partitioning": {
    "1-random7", "3-spread", "64-by_key"}}

CONF = "spark.skimsketch.sample.bucketedBuild"


@pytest.fixture(scope="module")
def bspark(spark):
    if not native.available():
        pytest.skip("no JDK: the native jar cannot be built here (javac not found)")
    assert native.loaded(spark), "the test session was built without spark_udaf.native.configure"
    return spark


def _shuffle(spark, n):
    old = spark.conf.get("spark.sql.shuffle.partitions")
    spark.conf.set("spark.sql.shuffle.partitions", str(n))
    return old


def _both_paths(spark, query):
    """The query's first row with the bucketed build, then with Spark's GROUP BY of the key (the conf off)."""
    assert "SampleFastKeys.bucket" in _plan(spark, query), _plan(spark, query)
    fast = spark.sql(query).collect()[0]
    spark.conf.set(CONF, "false")
    try:
        assert "_skim_key" in _plan(spark, query)
        slow = spark.sql(query).collect()[0]
    finally:
        spark.conf.unset(CONF)
    return fast, slow


@pytest.mark.parametrize("layout", ["one", "random7", "by_key", "spread"])
@pytest.mark.parametrize("buckets", [1, 3, 64])
def test_bucketed_build_equals_the_core_for_every_key_type_and_partitioning(bspark, layout, buckets):
    """Counts and signed integer SUMs (deletes, NULL keys and weights) for int, bigint, string and binary keys;
    one partition, seven random ones, each key in one partition, or every key's rows spread over all eight."""
    rows = _rows(seed=11, n=2400)
    df = bspark.createDataFrame(rows, SCHEMA)
    if layout == "one":
        df = df.coalesce(1)
    elif layout == "random7":
        df = df.repartition(7)
    elif layout == "by_key":
        df = df.repartition(5, "kb")
    else:  # row i to partition i % 8, rows of a key consecutive: a frequent key's rows reach every partition
        order = sorted(range(len(rows)), key=lambda i: (rows[i][1] is None, rows[i][1] or 0))
        spread = [rows[i] for i in order]
        rdd = bspark.sparkContext.parallelize([(i % 8, r) for i, r in enumerate(spread)], 8)
        df = bspark.createDataFrame(rdd.partitionBy(8, lambda p: p).values(), SCHEMA)
        counts = df.groupBy("kb").count().orderBy("count", ascending=False).first()
        assert counts["count"] >= 8
        assert df.where(f"kb = {counts['kb']}").rdd.mapPartitions(lambda it: [any(True for _ in it)]).sum() == 8
    df.createOrReplaceTempView("bucketed_rows")
    old = _shuffle(bspark, buckets)
    try:
        for key in ("ki", "kb", "ks", "kx"):
            q = (f"SELECT skim_sample_agg({key}, nbytes => 600, seed => 3) AS c, "
                 f"skim_sample_agg({key}, wi, 600, 3) AS i FROM bucketed_rows")
            fast, slow = _both_paths(bspark, q)
            want = [_core(rows, key, w, lambda dt: ss.JoinSample.for_bytes(600, 3, dtype=dt)) for w in (None, "wi")]
            assert [bytes(fast.c), bytes(fast.i)] == want == [bytes(slow.c), bytes(slow.i)], key
            assert ss.from_bytes(want[0]).tau < float("inf")  # the budget drops keys
    finally:
        bspark.conf.set("spark.sql.shuffle.partitions", old)


def test_random_tables_keep_every_key_of_the_exact_sample(bspark):
    """Property: over random tables (sizes, skew, signed weights, zero totals, tiny budgets, bucket counts),
    the buckets' pieces never lose a key the exact sample keeps: the bytes (entries, tau, key count) equal the
    core's."""
    rnd = random.Random(2024)
    for trial in range(10):
        n = rnd.choice([1, 40, 700, 3000])
        domain = rnd.choice([3, 50, 2000, 10 ** 9])
        skew = rnd.choice([0.3, 1.0, 3.0])
        keys = [int(rnd.paretovariate(skew) * domain) % domain - domain // 3 for _ in range(n)]
        weights = [rnd.choice([-2, -1, 0, 1, 1, 3, 1000, None]) for _ in range(n)]
        nbytes = rnd.choice([148, 200, 512, 4096])
        seed = rnd.randrange(2 ** 64)
        parts = rnd.choice([1, 2, 5])
        df = bspark.createDataFrame(list(zip(keys, weights)), "k bigint, w bigint").repartition(parts)
        df.createOrReplaceTempView("prop_rows")
        old = _shuffle(bspark, rnd.choice([1, 2, 7, 64]))
        try:
            q = f"SELECT skim_sample_agg(k, w, {nbytes}, {seed}) AS s, skim_sample_agg(k, {nbytes}, {seed}) AS c " \
                "FROM prop_rows"
            assert "SampleFastKeys.bucket" in _plan(bspark, q)
            got = bspark.sql(q).collect()[0]
        finally:
            bspark.conf.set("spark.sql.shuffle.partitions", old)
        kept = [(k, w) for k, w in zip(keys, weights) if w is not None]
        want = ss.JoinSample.for_bytes(nbytes, seed).update([k for k, _ in kept], weights=[w for _, w in kept])
        assert bytes(got.s) == want.to_bytes(), trial
        assert bytes(got.c) == ss.JoinSample.for_bytes(nbytes, seed).update(keys).to_bytes(), trial


def test_double_keys_decimal_weights_and_aggregates_beside(bspark):
    rows = [(float(i % 130), i % 5 - 1, i % 7) for i in range(900)] + [(float("nan"), 2, 1), (None, 4, 2)]
    df = bspark.createDataFrame(rows, "d double, w int, v int").repartition(5).selectExpr(
        "d", "CAST(w AS DECIMAL(12, 0)) AS w", "v")
    df.createOrReplaceTempView("dec_rows")
    q = ("SELECT skim_sample_agg(d, w, 1024) AS s, count(*) AS n, sum(v) AS sv, min(v) AS mn, max(v) AS mx "
         "FROM dec_rows")
    fast, slow = _both_paths(bspark, q)
    keys = [r[0] for r in rows]
    want = ss.JoinSample.for_bytes(1024).update(keys, weights=[r[1] for r in rows]).to_bytes()
    assert bytes(fast.s) == want == bytes(slow.s)
    assert (fast.n, fast.sv, fast.mn, fast.mx) == (902, sum(r[2] for r in rows), 0, 6) == \
        (slow.n, slow.sv, slow.mn, slow.mx)
    empty = bspark.sql("SELECT skim_sample_agg(id, id, 4096, 5) AS s FROM range(0)").collect()[0].s
    assert bytes(empty) == ss.JoinSample.for_bytes(4096, 5).to_bytes()


def test_overflow_and_bad_keys_are_the_core_errors(bspark):
    with pytest.raises(Exception, match="overflow the int64 totals"):
        bspark.sql("SELECT skim_sample_agg(id % 2, id * 0 + 9000000000000000000) FROM range(4)").collect()
    with pytest.raises(Exception, match=r"KeyTypeError: float key [0-9]\.5 is not integral"):
        bspark.sql("SELECT skim_sample_agg(CAST(id AS DOUBLE) + 0.5) FROM range(3)").collect()


def test_the_plan_says_which_path_and_why(bspark):
    bspark.range(50).selectExpr("id AS k", "id % 3 AS g", "CAST(id AS DOUBLE) AS f").createOrReplaceTempView("pp")
    assert "bucketed build: " in _plan(bspark, "SELECT skim_sample_agg(k) FROM pp")
    assert "Spark GROUP BY key: float weights" in _plan(bspark, "SELECT skim_sample_agg(k, f) FROM pp")
    assert "Spark GROUP BY key: a grouped aggregate" in _plan(bspark,
                                                               "SELECT g, skim_sample_agg(k) FROM pp GROUP BY g")
    assert "Spark GROUP BY key: samples of different seeds" in _plan(
        bspark, "SELECT skim_sample_agg(k, 1024, 1), skim_sample_agg(k, 1024, 2) FROM pp")
    assert "raw rows: every key's exact total" in _plan(bspark, "SELECT skim_sample_agg(k), avg(k) FROM pp")
    bspark.conf.set(CONF, "false")
    try:
        assert f"Spark GROUP BY key: {CONF} is false" in _plan(bspark, "SELECT skim_sample_agg(k) FROM pp")
    finally:
        bspark.conf.unset(CONF)
