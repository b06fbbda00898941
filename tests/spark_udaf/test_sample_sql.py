"""skim_sample_agg and the SQL functions on join samples (format kind 5), in a real local Spark session.

Raw rows spread over many partitions give the core's bytes, whichever plan runs (SampleRule's GROUP BY of
the key with bounded partials, or the raw aggregate of exact totals); the estimate functions give the
core's answers; unions obey the core's merge rule, refusing finished samples whose keys may overlap.
"""

import math
import random
from pathlib import Path

import pytest

import skimsketch as ss
from spark_udaf import native

from .test_golden import _close, _expr
from .test_native import _core, SCHEMA

pytestmark = pytest.mark.spark

GOLDEN = Path(__file__).parents[1] / "core" / "sample" / "golden" / "compact_estimates.tsv"  # layout 2
JAR_COPY = native.SOURCES / "io" / "skimsketch" / "spark" / "selftest" / "golden-sample-estimates.tsv"
JAR_PREFLAG = JAR_COPY.parent / "golden-sample-preflag.tsv"


def _rows(seed=5, n=3000):
    """test_native's rows (NULL keys and weights, deletes, dyadic floats) over about 900 distinct keys."""
    rnd = random.Random(seed)
    rows = []
    for i in range(n):
        k = int(rnd.paretovariate(0.5)) % 3000 - 20 if i % 97 else None
        wi = rnd.randint(-3, 9) if i % 89 else None
        wd = rnd.randint(-8, 40) / 4 if i % 83 else None
        rows.append((k, k, None if k is None else f"k{k}é", None if k is None else f"b{k}".encode(), wi, wd))
    return rows


@pytest.fixture(scope="module")
def sspark(spark):
    if not native.available():
        pytest.skip("no JDK: the native jar cannot be built here (javac not found)")
    assert native.loaded(spark), "the test session was built without spark_udaf.native.configure"
    spark.createDataFrame(_rows(), SCHEMA).repartition(7).createOrReplaceTempView("sample_rows")
    return spark



def _plan(spark, query: str) -> str:
    return spark.sql(query)._jdf.queryExecution().optimizedPlan().toString()


@pytest.mark.parametrize("key", ["ki", "kb", "ks", "kx"])
def test_sql_samples_over_raw_rows_equal_the_core_in_both_plans(sspark, key):
    """Counts, integer SUMs with deletes and dyadic float SUMs (exact in any order), NULL keys and weights,
    seven partitions: the rewritten plan (one key, bounded partials) and the raw one (beside avg)."""
    rows = _rows()
    query = (f"SELECT skim_sample_agg({key}, nbytes => 1024, seed => 3) AS c, skim_sample_agg({key}, wi, 1024, 3) "
             f"AS i, skim_sample_agg({key}, wd, 1024, 3) AS d{{extra}} FROM sample_rows")
    want = [_core(rows, key, w, lambda dt: ss.JoinSample.for_bytes(1024, 3, dtype=dt)) for w in (None, "wi", "wd")]
    assert "_skim_key" in _plan(sspark, query.format(extra=""))  # SampleRule rewrote it (float weights: GROUP BY key)
    assert "_skim_key" not in _plan(sspark, query.format(extra=", avg(ki) AS n"))  # the raw aggregate
    for extra in ("", ", avg(ki) AS n"):
        got = sspark.sql(query.format(extra=extra)).collect()[0]
        assert [bytes(got.c), bytes(got.i), bytes(got.d)] == want, extra
    assert ss.from_bytes(want[0]).tau < float("inf")  # the budget drops keys: the selection is exercised


def test_group_by_an_expression_gives_each_group_the_core_sample(sspark):
    rows = [r for r in _rows() if r[4] is not None]
    got = {r.g: bytes(r.s) for r in sspark.sql(
        "SELECT kb % 3 AS g, skim_sample_agg(kb, wi, 1024) AS s FROM sample_rows GROUP BY kb % 3").collect()}
    assert "_skim_key" in _plan(sspark, "SELECT kb % 3 AS g, skim_sample_agg(kb, wi, 1024) FROM sample_rows "
                                       "GROUP BY kb % 3")
    for g in got:
        part = [r for r in rows if (None if r[1] is None else int(r[1] - 3 * int(r[1] / 3))) == g]
        want = ss.JoinSample.for_bytes(1024).update([r[1] for r in part], weights=[r[4] for r in part]).to_bytes()
        assert got[g] == want, g


def test_count_sum_min_max_beside_the_sample_keep_the_rewrite_and_their_answers(sspark):
    q = ("SELECT kb % 3 AS g, {s}count(*) AS n, count(wi) AS nw, sum(wi) AS sw, sum(CAST(wi AS DECIMAL(9, 2))) AS sd, "
         "min(wd) AS mn, max(ks) AS mx FROM sample_rows GROUP BY kb % 3")
    with_sample = q.format(s="skim_sample_agg(kb, wi, 1024) AS s, ")
    assert "_skim_key" in _plan(sspark, with_sample)
    got = {r.g: r for r in sspark.sql(with_sample).collect()}
    want = {r.g: r for r in sspark.sql(q.format(s="")).collect()}
    assert set(got) == set(want)
    rows = [r for r in _rows() if r[4] is not None]
    for g, r in got.items():
        assert [r.n, r.nw, r.sw, r.sd, r.mn, r.mx] == [want[g][c] for c in ("n", "nw", "sw", "sd", "mn", "mx")], g
        part = [x for x in rows if (None if x[1] is None else int(x[1] - 3 * int(x[1] / 3))) == g]
        assert bytes(r.s) == ss.JoinSample.for_bytes(1024).update([x[1] for x in part],
                                                                  weights=[x[4] for x in part]).to_bytes()
    assert sspark.sql("SELECT skim_sample_agg(id) AS s, count(*) AS n FROM range(0)").collect()[0].n == 0


def test_double_keys_decimal_weights_zero_rows_and_errors(sspark):
    rows = [(float(i % 130), i % 5 - 1, f"{(i % 7) / 4:.2f}") for i in range(900)] + [(float("nan"), 2, "1.00")]
    df = sspark.createDataFrame(rows, "d double, w int, f string").repartition(5).selectExpr(
        "d", "CAST(w AS DECIMAL(12, 0)) AS w", "CAST(f AS DECIMAL(6, 2)) AS f")
    got = df.selectExpr("skim_sample_agg(d, w, 1024) AS i", "skim_sample_agg(d, f, 1024) AS f").collect()[0]
    keys = [r[0] for r in rows]
    assert bytes(got.i) == ss.JoinSample.for_bytes(1024).update(keys, weights=[r[1] for r in rows]).to_bytes()
    want = ss.JoinSample.for_bytes(1024, dtype="float64").update(keys, weights=[float(r[2]) for r in rows])
    assert bytes(got.f) == want.to_bytes()  # quarters: float sums are exact in any order
    empty = sspark.sql("SELECT skim_sample_agg(id, id, 4096, 5) AS s FROM range(0)").collect()[0].s
    assert bytes(empty) == ss.JoinSample.for_bytes(4096, 5).to_bytes()
    with pytest.raises(Exception, match=r"KeyTypeError: float key [0-9]\.5 is not integral"):
        sspark.sql("SELECT skim_sample_agg(CAST(id AS DOUBLE) + 0.5) FROM range(3)").collect()
    with pytest.raises(Exception, match="ARITHMETIC_OVERFLOW|overflow"):  # an int64 total never wraps
        sspark.sql("SELECT skim_sample_agg(id % 2, id * 0 + 9000000000000000000) FROM range(4)").collect()
    with pytest.raises(Exception, match="weights contain NaN or infinity"):
        sspark.sql("SELECT skim_sample_agg(id, id * 0 + CAST('Infinity' AS DOUBLE)) FROM range(4)").collect()


def test_analysis_errors_name_the_argument(sspark):
    from pyspark.errors import AnalysisException

    with pytest.raises(AnalysisException, match=r"key has type date"):
        sspark.sql("SELECT skim_sample_agg(current_date())").collect()
    with pytest.raises(AnalysisException, match="weight has type string"):
        sspark.sql("SELECT skim_sample_agg(id, CAST(id AS STRING)) FROM range(2)").collect()
    with pytest.raises(AnalysisException, match=r"nbytes must be in \[148, 1073741824\], got 100"):
        sspark.sql("SELECT skim_sample_agg(id, 100) FROM range(2)").collect()
    with pytest.raises(AnalysisException, match="unknown parameter bytes"):
        sspark.sql("SELECT skim_sample_agg(id, bytes => 4096) FROM range(2)").collect()


def test_estimate_functions_on_sql_samples_give_the_core_answers(sspark):
    q = ("SELECT skim_sample_agg(kb, 2048) AS a, skim_sample_agg(kb + 3, 2048) AS b FROM sample_rows "
         "WHERE kb IS NOT NULL")
    r = sspark.sql(q).collect()[0]
    a, b = ss.from_bytes(bytes(r.a)), ss.from_bytes(bytes(r.b))
    sspark.createDataFrame([(r.a, r.b)], "a binary, b binary").createOrReplaceTempView("sample_pair")
    got = sspark.sql("SELECT skim_join_size_bounds(a, b, 0.9) AS j, skim_self_join_size_bounds(a) AS s, "
                     "skim_frequency(a, 1) AS f, skim_frequency(a, 499) AS f2, skim_sketch_info(a) AS i "
                     "FROM sample_pair").collect()[0]
    for e, want in ((got.j, a.join_size(b, 0.9)), (got.s, a.self_join_size())):
        assert [e.value, e.low, e.high, e.confidence] == pytest.approx(
            [want.value, want.low, want.high, want.confidence], rel=1e-9) and e.method == want.method == "sample"
    assert a.join_size(b).low < a.join_size(b).high  # the samples dropped keys: a real interval
    assert got.f == a.frequency(1).value and got.f2 == a.frequency(499).value
    assert (got.i.kind, got.i.width, got.i.total_weight, got.i.nbytes) == ("JoinSample", a.budget,
                                                                          a.total_weight, len(r.a))


def test_unions_obey_the_core_merge_rule(sspark):
    from pyspark.errors import AnalysisException  # noqa: F401  (errors of SQL functions arrive as Spark errors)

    a = ss.JoinSample.for_bytes(1024, 1).update(range(500))
    b = ss.JoinSample.for_bytes(1024, 1).update(range(250, 800))
    small = [ss.JoinSample.for_bytes(1024, 1).update(range(i, i + 20)) for i in (0, 10)]  # kept every key
    keys = list(range(3000))
    part = ss.JoinSample.partition_of(keys, 3, seed=1)
    pieces = [ss.JoinSample.for_bytes(1024, 1, partition=(i, 3)).update([k for k, p in zip(keys, part) if p == i])
              for i in range(3)]
    sketch = ss.SkimmedSketch.for_bytes(4096).update([1, 2])

    def union_agg(samples):
        df = sspark.createDataFrame([(s.to_bytes(),) for s in samples], "s binary").repartition(len(samples))
        return bytes(df.selectExpr("skim_union_agg(s) AS u").collect()[0].u)

    with pytest.raises(Exception, match="their keys may overlap.*refused even when both kept every key"):
        union_agg(small)  # finished samples holding keys, complete or not (issue 33 item 7)
    assert union_agg([small[0], ss.JoinSample.for_bytes(1024, 1).update([None])]) == \
        small[0].copy().update([None]).to_bytes()  # a sample without keys adds its weights only
    assert union_agg(pieces) == ss.JoinSample.for_bytes(1024, 1).update(keys).to_bytes()  # disjoint pieces
    with pytest.raises(Exception, match=r"SampleMergeError|IncompatibleSketchError: cannot merge finished join "
                                        r"samples: their keys may overlap .* partition=\(i, P\)"):
        union_agg([a, b])
    with pytest.raises(Exception, match=r"cannot merge finished join samples: both cover partitions \[1\] of 3"):
        union_agg([pieces[1], pieces[1]])
    with pytest.raises(Exception, match="cannot merge finished join samples: their keys may overlap"):
        sspark.sql(f"SELECT skim_union(X'{a.to_bytes().hex()}', X'{b.to_bytes().hex()}') FROM range(1)").collect()
    with pytest.raises(Exception, match=r"cannot merge sketches: type differs \('(JoinSample|SkimmedSketch)' != "
                                        r"'(SkimmedSketch|JoinSample)'\)"):  # (the rows' order is the tasks')
        union_agg([a, sketch])
    with pytest.raises(Exception, match=r"cannot join sketches: type differs \('JoinSample' != 'SkimmedSketch'\)"):
        sspark.sql(f"SELECT skim_join_size(X'{a.to_bytes().hex()}', CASE WHEN id >= 0 THEN "
                   f"X'{sketch.to_bytes().hex()}' END) FROM range(1)").collect()


def _golden():
    blobs, queries = {}, []
    for line in GOLDEN.read_text().splitlines():
        if not line or line.startswith("#"):
            continue
        f = line.split("\t")
        if f[0] == "sample":
            blobs[f[1]] = bytes.fromhex(f[2])
        else:
            queries.append(f)
    return blobs, queries


def test_the_jar_carries_the_core_s_golden_sample_vectors():
    assert JAR_COPY.read_bytes() == GOLDEN.read_bytes(), "copy tests/core/sample/golden/estimates.tsv into the jar"


def test_the_jar_carries_the_pre_flag_samples():
    """golden-sample-preflag.tsv: the frozen preflag_<name>.bin blobs (SampleSelfTest reads them back)."""
    lines = [ln.split("\t") for ln in JAR_PREFLAG.read_text().splitlines() if ln.startswith("sample\t")]
    files = sorted(GOLDEN.parent.glob("preflag_*.bin"))
    assert len(files) >= 12 and {n: bytes.fromhex(h) for _, n, h in lines} == {
        p.stem.removeprefix("preflag_"): p.read_bytes() for p in files}


@pytest.mark.skipif(not native.available(), reason="no JDK: the jar cannot be built here")
def test_the_jar_self_test_checks_every_golden_sample_vector(jar_self_test):
    """Besides the vectors: every golden blob read and written back, three rebuilt from rows, and 3,000 altered
    blobs either read back exactly or refused with CorruptSketchError (SampleSelfTest.java)."""
    assert f"({len(_golden()[1])} golden sample vectors)" in jar_self_test


def test_golden_sample_vectors_through_the_sql_functions(sspark):
    blobs, queries = _golden()

    def expr(q, runtime=False):
        return _expr(q, blobs, runtime)

    good = [q for q in queries if not q[5].startswith("!")]
    row = sspark.sql("SELECT " + ", ".join(f"{expr(q)} AS c{i}" for i, q in enumerate(good))).collect()[0]
    for i, q in enumerate(good):
        got, want = row[i], q[5].split(" ")
        if q[0] == "info":
            assert [got.kind, str(got.width), str(got.depth), str(got.seed), got.nbytes] == [*want[:4], int(want[6])]
            assert _close(float(want[4]), got.total_weight) and _close(float(want[5]), got.null_weight)
        elif q[0] == "freq":
            assert _close(float(want[0]), got), (q[:5], want, got)
        else:
            vals = [got.value, got.low, got.high, got.confidence]
            assert all(_close(float(w), g) for w, g in zip(want[:4], vals)) and got.method == want[4], (q, vals)
    bad = [q for q in queries if q[5].startswith("!")]
    assert bad
    for q in bad:
        name, msg = q[5][1:].split(" ", 1)
        with pytest.raises(Exception) as err:
            sspark.sql(f"SELECT {expr(q, runtime=True)} FROM range(1)").collect()
        assert f"io.skimsketch.spark.{name}: {msg}" in str(err.value), (q[:5], str(err.value)[:1000])


def test_a_layout1_sample_joins_only_layout1_samples_in_sql(sspark):
    """A blob of the previous release reads as a legacy sample (its ranks came from h >> 12): with another
    legacy blob it answers as the core; with a layout-2 sample the core's refusal, by name."""
    legacy = (Path(__file__).parents[1] / "core" / "sample" / "golden" / "v4_zipf.bin").read_bytes()
    old = ss.from_bytes(legacy)
    new = ss.JoinSample.for_bytes(old.budget, seed=old.seed).update([1, 2, 3]).to_bytes()  # equal nbytes and seed
    got = sspark.sql(f"SELECT skim_join_size(X'{legacy.hex()}', X'{legacy.hex()}') AS j").collect()[0].j
    assert _close(got, ss.from_bytes(legacy).self_join_size().value)
    for a, b in ((legacy, new), (new, legacy)):
        for fn in ("skim_join_size", "skim_union"):
            with pytest.raises(Exception, match=r"rank hash differs \('layout (1|2)' != 'layout (1|2)'\)"):
                sspark.sql(f"SELECT {fn}(X'{a.hex()}', X'{b.hex()}')").collect()


def test_string_keys_shuffle_as_their_fingerprint(sspark):
    """SampleRule groups string and binary keys by their 64-bit canonical key, not the string (Spark's GROUP BY
    of the key), or by buckets of their sample fingerprints (the bucketed build)."""
    plan = _plan(sspark, "SELECT length(ks) AS g, skim_sample_agg(ks, 1024) FROM sample_rows GROUP BY length(ks)")
    assert "_skim_key" in plan and "fingerprint" in plan, plan
    plan = _plan(sspark, "SELECT skim_sample_agg(ks, 1024) FROM sample_rows")
    assert "SampleFastKeys.bucket" in plan and "SampleFastKeys.fp(cast(ks" in plan, plan


@pytest.mark.parametrize("dtype", ["int64", "float64"])
def test_the_sign_flag_follows_the_core_row_rule_in_both_plans(sspark, dtype):
    """Header bit 4 (no weight of a non-null key was negative): a delete that leaves every key's total positive
    clears it, a negative weight of a NULL key does not; both plans give the core's bytes; unions AND it; the
    interval of a signed pair is the core's."""
    cast = "DOUBLE" if dtype == "float64" else "BIGINT"
    rows = {"flagged": [(k % 400, 3) for k in range(1200)] + [(None, -7)],
            "deleted": [(k % 400, 3) for k in range(1200)] + [(5, -1), (None, -7)]}
    got = {}
    for name, data in rows.items():
        sspark.createDataFrame(data, "k bigint, w bigint").repartition(3).createOrReplaceTempView("sign_rows")
        q = f"SELECT skim_sample_agg(k, CAST(w AS {cast}), 400){{extra}} FROM sign_rows"
        plan = _plan(sspark, q.format(extra=""))
        assert ("SampleFastKeys.bucket" if dtype == "int64" else "_skim_key") in plan, plan
        want = ss.JoinSample.for_bytes(400, dtype=dtype).update([r[0] for r in data], weights=[r[1] for r in data])
        assert want.tau < float("inf") and want.nonnegative == (name == "flagged")
        for extra in ("", ", avg(k)"):
            blob = bytes(sspark.sql(q.format(extra=extra)).collect()[0][0])
            assert blob == want.to_bytes() and bool(blob[7] & 16) == (name == "flagged"), (name, extra)
        got[name] = want
    a, b = got["deleted"], got["flagged"]
    r = sspark.sql(f"SELECT skim_join_size_bounds(X'{a.to_bytes().hex()}', X'{b.to_bytes().hex()}', 0.9) AS j"
                   ).collect()[0].j
    want = a.join_size(b, 0.9)
    assert [r.value, r.low, r.high] == pytest.approx([want.value, want.low, want.high], rel=1e-9)
    keys = list(range(3000))
    part = ss.JoinSample.partition_of(keys, 2, seed=1)
    pieces = [ss.JoinSample.for_bytes(1024, 1, dtype=dtype, partition=(i, 2)).update(
        [k for k, p in zip(keys, part) if p == i], weights=[(-1 if i and k % 7 == 0 else 2) for k, p in zip(keys, part)
                                                            if p == i]) for i in range(2)]
    df = sspark.createDataFrame([(s.to_bytes(),) for s in pieces], "s binary").repartition(2)
    union = bytes(df.selectExpr("skim_union_agg(s) AS u").collect()[0].u)
    assert union == (pieces[0] + pieces[1]).to_bytes() and not union[7] & 16 and pieces[0].to_bytes()[7] & 16


@pytest.mark.parametrize("shift, drop", [(-540, 0), (600, 0), (600, 1000)])
def test_float_totals_of_any_magnitude_give_the_core_bytes_and_answers(sspark, shift, drop):
    """Issue 36 (skimsketch/sample/scale.py): totals (k % 37 + 1) 2^shift (about 1e-161 or 1e181, beyond the
    old 2^-511 .. 2^511; two dyadic rows a key: exact sums in any order; ``drop``: every third key 2^drop
    smaller, a table no one scale of doubles ranks) give the core's layout-3 bytes in both plans, its
    interval, and the core's merge of pieces at different scale exponents."""
    rows = [(k, math.ldexp(k % 37 + 1, shift - 1 - (drop if k % 3 == 0 else 0)) * (-1 if k % 5 == 0 else 1))
            for k in range(1500) for _ in (0, 1)]
    sspark.createDataFrame(rows, "k bigint, w double").repartition(3).createOrReplaceTempView("scaled_rows")
    want = ss.JoinSample.for_bytes(600, 5, dtype="float64").update([r[0] for r in rows], weights=[r[1] for r in rows])
    assert want.scale != 0 and want.tau < float("inf") and want.to_bytes()[68] == 3
    q = "SELECT skim_sample_agg(k, w, 600, 5){extra} FROM scaled_rows"
    for extra in ("", ", avg(k)"):
        assert bytes(sspark.sql(q.format(extra=extra)).collect()[0][0]) == want.to_bytes(), extra
    other = ss.JoinSample.for_bytes(600, 5, dtype="float64").update(range(700, 2200), weights=[
        math.ldexp(k % 11 + 1, -shift) for k in range(700, 2200)])
    r = sspark.sql(f"SELECT skim_join_size_bounds(X'{want.to_bytes().hex()}', X'{other.to_bytes().hex()}', 0.9) AS j"
                   ).collect()[0].j
    e = want.join_size(other, 0.9)
    assert [r.value, r.low, r.high] == pytest.approx([e.value, e.low, e.high], rel=1e-9) and e.low < e.value < e.high
    keys = list(range(3000))
    part = ss.JoinSample.partition_of(keys, 2, seed=5)
    pieces = [ss.JoinSample.for_bytes(600, 5, dtype="float64", partition=(i, 2)).update(
        [k for k, p in zip(keys, part) if p == i], weights=[math.ldexp(k % 37 + 1, shift - 400 * i) for k, p in
                                                           zip(keys, part) if p == i]) for i in range(2)]
    assert pieces[0].scale != pieces[1].scale
    df = sspark.createDataFrame([(p.to_bytes(),) for p in pieces], "s binary").repartition(2)
    assert bytes(df.selectExpr("skim_union_agg(s) AS u").collect()[0].u) == (pieces[0] + pieces[1]).to_bytes()


def test_float_totals_beyond_one_scale_are_the_core_error(sspark):
    """Totals 1.0 and 1e-300 kept together cannot be ranked at one scale of doubles: both plans refuse them with
    the core's CounterOverflowError message."""
    want = "a JoinSample of float totals keeps totals from 1e-300 to 1.0 in magnitude"
    with pytest.raises(ss.CounterOverflowError, match=want):
        ss.JoinSample.for_bytes(1024, dtype="float64").update([1, 2], weights=[1.0, 1e-300]).to_bytes()
    for extra in ("", ", avg(id)"):
        with pytest.raises(Exception, match="CounterOverflowError: " + want):
            sspark.sql(f"SELECT skim_sample_agg(id, IF(id = 1, CAST(1e-300 AS DOUBLE), 1.0D), 1024){extra} "
                       "FROM range(3)").collect()
