"""Hostile inputs, third pass (issue 27, the Python half): each case through every interface that takes it.

Interfaces: the core (``skimsketch``), the CLI (``skimsketch.cli.main``), the Spark
Python API (``sketch_column`` on both build paths, ``estimate_join_size``), native SQL
(the jar's functions) and the Python SQL functions (what a session without the jar
registers). For one input every interface must give the same number (sketch bytes,
estimate), or every one must refuse it with a message matching the case's pattern
(:func:`tests.test_hostile_inputs._agree`). The one documented difference
(docs/spark.md): a call whose reading depends on whether an argument is a constant
(``skim_sketch_agg(k, price)``, ``price`` an INT column) is answered natively and
refused by the Python SQL functions, naming ``weight =>``; with the weight named,
both give the same bytes.

The cases: windowed joins over every sketch template (exact mode, float counters),
bool keys in every container, float keys past their type's exact integers (float32
above 2**24, float16 above 2**11, with no numpy warning), CSV rows longer than
pyarrow's block, numpy integers as sizes, one smallest budget everywhere, and
positional integer weights of every integer type in SQL.
"""

from __future__ import annotations

import re
import warnings

import numpy as np
import pytest

import skimsketch as ss
from skimsketch.sketch.sizing import check_nbytes, check_width
from skimsketch.stream import ExactWindowedJoin, WindowedJoin
from tests.test_hostile_inputs import _agree, _cli, _outcome

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")
pd = pytest.importorskip("pandas")


class CliRefused(Exception):
    """The CLI exited with status 2 and one line on stderr."""


def _cli_sketch(paths, out, *flags) -> bytes:
    """The sketch bytes ``skimsketch sketch`` writes, or CliRefused with its one-line message."""
    out.unlink(missing_ok=True)
    rc, _, err = _cli("sketch", *paths, "--no-progress", *flags, "-o", out)
    if rc != 0:
        assert rc == 2 and err.count("\n") == 1 and "Traceback" not in err, err
        assert not out.exists()
        raise CliRefused(err.strip())
    return out.read_bytes()


# -- windowed joins over every template ------------------------------------------------------------

TEMPLATES = {
    "default (exact mode)": lambda: ss.SkimmedSketch.for_bytes(16384, seed=1),
    "default, float counters": lambda: ss.SkimmedSketch.for_bytes(16384, seed=1, dtype="float64"),
    "default, counter mode": lambda: ss.SkimmedSketch.for_bytes(16384, seed=1, exact=False),
    "default, prefix search": lambda: ss.SkimmedSketch.for_bytes(16384, seed=1, search="prefix"),
    "hash": lambda: ss.HashSketch(256, 5, seed=3),
    "hash, exact mode": lambda: ss.HashSketch(256, 5, seed=3, exact=True),
    "hash, float exact mode": lambda: ss.HashSketch(256, 5, seed=3, dtype="float64", exact=True),
    "agms": lambda: ss.AGMSSketch(32, 5, seed=3),
    "agms, exact mode": lambda: ss.AGMSSketch(32, 5, seed=3, exact=True),
    "skimmed with a domain": lambda: ss.SkimmedSketch(64, 5, seed=3, domain=1000),
    "skimmed, exact mode": lambda: ss.SkimmedSketch(64, 5, seed=3, exact=True),
}


def _events(seed: int, n: int):
    rng = np.random.default_rng(seed)
    return rng.integers(0, 40, n), np.sort(rng.integers(0, 30, n)), rng.integers(1, 4, n) * 0.5


@pytest.mark.parametrize("name", sorted(TEMPLATES))
def test_windowed_joins_take_every_template(name):
    """join_size is the template's join of the two windows (exact while the windows are in exact mode); the
    running total of results is the counter-mode twin's (the same counters); the state survives its bytes."""
    template = TEMPLATES[name]()
    floats = template.float_counters
    (ka, ta, wa), (kb, tb, wb) = _events(1, 400), _events(2, 300)
    wa, wb = (wa, wb) if floats else (None, None)
    twin_params = {k: v for k, v in template.params.items() if k != "exact"}
    late = {"allowed_lateness": 30}  # no event is late: the windows at the end hold every event of their range
    joins = [WindowedJoin(t, window_a=6, window_b=3, slide=1, **late)
             for t in (template, type(template)(**twin_params))]
    exact = ExactWindowedJoin(window_a=6, window_b=3, slide=1, **late)
    for lo in range(0, 400, 50):  # batches in time order, the two sides interleaved
        sa, sb = slice(lo, lo + 50), slice(lo * 3 // 4, (lo + 50) * 3 // 4)
        for j in joins + [exact]:
            j.update_a(ka[sa], ta[sa], None if wa is None else wa[sa])
            j.update_b(kb[sb], tb[sb], None if wb is None else wb[sb])
    j, twin = joins
    t = j.now
    in_a, in_b = (ta > t - 6) & (ta <= t), (tb > t - 3) & (tb <= t)
    a = template.empty_like().update(ka[in_a], weights=None if wa is None else wa[in_a])
    b = template.empty_like().update(kb[in_b], weights=None if wb is None else wb[in_b])
    got = j.join_size()
    assert got.value == a.join_size(b).value, (name, got)
    if template.exact_mode and a.exact_mode and b.exact_mode:
        assert got.value == exact.join_size and got.method == "exact", (name, got, exact.join_size)
    assert j.total_results_estimate == twin.total_results_estimate
    assert np.isfinite(j.total_results_estimate) and exact.total_results > 0
    back = WindowedJoin.from_bytes(j.to_bytes())
    assert back == j and back.total_results_estimate == j.total_results_estimate


# -- edge keys -------------------------------------------------------------------------------------

BOOL = r"bool keys are not supported: cast them to int explicitly"
BOOL_CONTAINERS = {
    "a list of ints with True": lambda: [1, True, 2],
    "a tuple with False": lambda: (0, False),
    "a list with numpy True": lambda: [3, np.True_],
    "a generator": lambda: (x for x in [1, True]),
    "an object array": lambda: np.array([1, True], dtype=object),
    "a numpy bool array": lambda: np.array([True, False]),
    "a pandas object Series": lambda: pd.Series([1, True], dtype=object),
    "a pandas bool Series": lambda: pd.Series([True, False]),
    "a pandas boolean Series": lambda: pd.Series([True, None], dtype="boolean"),
    "a pyarrow bool array": lambda: pa.array([True, False]),
    "a pyarrow chunked bool array": lambda: pa.chunked_array([[True], [False]]),
    "one True": lambda: True,
}


@pytest.mark.parametrize("name", sorted(BOOL_CONTAINERS))
@pytest.mark.parametrize("make", [lambda: ss.SkimmedSketch.for_bytes(4096), lambda: ss.HashSketch(64, 3),
                                  lambda: ss.AGMSSketch(16, 3)], ids=["default", "hash", "agms"])
def test_bool_keys_are_refused_in_every_container(name, make):
    sk = make()
    with pytest.raises(ss.KeyTypeError, match=BOOL):
        sk.update(BOOL_CONTAINERS[name]())
    assert sk.is_empty
    with pytest.raises(ss.KeyTypeError, match=BOOL):
        ss.HashSketch(64, 3).update([5, 6]).frequency(True)


def _float_limit_message(name: str, value: float, exponent: int) -> str:
    what = "floats" if name == "float" else f"{name} values"
    return (rf"{name} key {value!r} is not below 2\*\*{exponent} in magnitude, where {what} cannot tell "
            r"neighbouring integers apart")


# (dtype, largest accepted integer, smallest refused one, exponent)
FLOAT_EDGES = [(np.float64, 2.0**53 - 1, 2.0**53, 53), (np.float32, 2.0**24 - 1, 2.0**24 + 2, 24),
               (np.float16, 2047.0, 2048.0, 11)]
FLOAT_CONTAINERS = {
    "numpy": lambda v, dt: np.array([v, 3], dtype=dt),
    "numpy with NaN": lambda v, dt: np.array([np.nan, v], dtype=dt),
    "a list of numpy scalars": lambda v, dt: [dt(v), dt(3)],
    "one numpy scalar": lambda v, dt: dt(v),
    "pyarrow": lambda v, dt: pa.array(np.array([v, 3], dtype=dt)),
    "pandas": lambda v, dt: pd.Series(np.array([v, 3], dtype=dt)),
    "pandas nullable": lambda v, dt: (pd.Series([v, None], dtype={np.float64: "Float64", np.float32: "Float32"}[dt])
                                      if dt is not np.float16 else pd.Series(np.array([v, np.nan], dtype=dt))),
}


def _python_ints(x) -> list:
    """The keys of float container ``x`` as Python ints (None for NaN/NA)."""
    if isinstance(x, pd.Series):
        arr = x.to_numpy(dtype=np.float64, na_value=np.nan)
    elif isinstance(x, pa.Array):
        arr = x.to_numpy(zero_copy_only=False).astype(np.float64)
    else:
        arr = np.atleast_1d(np.asarray(x, dtype=np.float64))
    return [None if np.isnan(v) else int(v) for v in arr]


@pytest.mark.parametrize("dtype, ok, bad, exponent", FLOAT_EDGES, ids=["float64", "float32", "float16"])
@pytest.mark.parametrize("container", sorted(FLOAT_CONTAINERS))
def test_float_keys_stop_at_their_own_types_exact_integers_without_warnings(dtype, ok, bad, exponent, container):
    """A float key is its integer while the type holds every integer up to it; at and beyond its limit it is
    refused (float32 16777217 is already 16777216), with the type named, and never a numpy warning."""
    make = FLOAT_CONTAINERS[container]
    name = "float" if dtype is np.float64 else np.dtype(dtype).name
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # float16 keys warned of an overflow in the limit's cast
        got = ss.HashSketch(64, 3, seed=1).update(make(ok, dtype))
        assert got == ss.HashSketch(64, 3, seed=1).update(_python_ints(make(ok, dtype)))
        assert int(ok) in _python_ints(make(ok, dtype))
        for value in (bad, -bad):
            with pytest.raises(ss.KeyTypeError, match=_float_limit_message(name, float(value), exponent)):
                ss.HashSketch(64, 3).update(make(value, dtype))
        with pytest.raises(ss.KeyTypeError, match=r"float key 1.5 is not integral"):
            ss.HashSketch(64, 3).update(make(1.5, dtype))


def test_float32_keys_refused_by_the_cli_as_by_the_core(tmp_path):
    ok, bad = tmp_path / "ok.parquet", tmp_path / "bad.parquet"
    pq.write_table(pa.table({"k": pa.array([16777215.0, 3.0], pa.float32())}), ok)
    pq.write_table(pa.table({"k": pa.array([3.0, 16777218.0], pa.float32())}), bad)
    flags = ["-c", "k", "--kind", "hash", "--width", "64", "--depth", "3", "--seed", "1"]
    assert _cli_sketch([ok], tmp_path / "o.sks", *flags) == \
        ss.HashSketch(64, 3, seed=1).update([16777215, 3]).to_bytes()
    outcomes = {"core": _outcome(lambda: ss.HashSketch(64, 3, seed=1).update(pq.read_table(bad).column("k"))),
                "cli": _outcome(lambda: _cli_sketch([bad], tmp_path / "o.sks", *flags))}
    _agree(outcomes, _float_limit_message("float32", 16777218.0, 24))


# -- CSV rows longer than pyarrow's block ----------------------------------------------------------

def test_the_cli_reads_csv_keys_of_several_megabytes_as_parquet(tmp_path):
    """A 3 MB key (longer than the 1 MB CSV block) first, in the middle and last: the CSV and Parquet sketches
    are the core's sketch of the same keys, weights too."""
    from skimsketch import cli

    big = "x" * (3 << 20)
    keys = [big + "first"] + [f"k{i % 97}" for i in range(60_000)] + [big] + [f"k{i}" for i in range(300)] + [big]
    weights = [float(i % 5) for i in range(len(keys))]
    csv, parquet = tmp_path / "big.csv", tmp_path / "big.parquet"
    csv.write_text("k,w\n" + "".join(f"{k},{w}\n" for k, w in zip(keys, weights)))
    pq.write_table(pa.table({"k": keys, "w": weights}), parquet)
    assert csv.stat().st_size > 3 * cli.CSV_BLOCK
    for flags, core in ((["-c", "k"], ss.SkimmedSketch.for_bytes(16384).update(keys)),
                        (["-c", "k", "--weight", "w"],  # float counters of the count sketch's shape (cli doc)
                         ss.SkimmedSketch(**dict(ss.SkimmedSketch.for_bytes(16384).params, dtype="float64"))
                         .update(keys, weights=weights))):
        outcomes = {"core": ("ok", core.to_bytes()),
                    "cli csv": _outcome(lambda f=flags: _cli_sketch([csv], tmp_path / "c.sks", *f)),
                    "cli parquet": _outcome(lambda f=flags: _cli_sketch([parquet], tmp_path / "p.sks", *f))}
        _agree(outcomes)


# -- sizes: numpy integers, one smallest budget ----------------------------------------------------

MIN_BUDGET = r"nbytes must be at least 1024 \(smaller sketches' errors swamp their estimates\), got "


@pytest.mark.parametrize("n", [np.int64(8192), np.int32(8192), np.uint16(8192), 8192])
def test_numpy_integers_are_sizes_and_seeds_in_the_core(n):
    want = ss.SkimmedSketch.for_bytes(8192, seed=3)
    assert ss.SkimmedSketch.for_bytes(n, seed=np.uint64(3)) == want
    assert ss.HashSketch.for_bytes(n, depth=np.int8(5)) == ss.HashSketch.for_bytes(8192)
    assert check_nbytes(n) == 8192 and type(check_nbytes(n)) is int


@pytest.mark.parametrize("nbytes, error", [(100, MIN_BUDGET + "100"), (1023, MIN_BUDGET + "1023"), (1024, None)])
def test_one_smallest_budget_in_the_cli_and_the_core_check(nbytes, error, tmp_path):
    path = tmp_path / "k.parquet"
    pq.write_table(pa.table({"k": np.arange(50)}), path)
    outcomes = {"core check": _outcome(lambda: ss.SkimmedSketch.for_bytes(
                    check_nbytes(nbytes)).update(np.arange(50)).to_bytes()),
                "cli": _outcome(lambda: _cli_sketch([path], tmp_path / "o.sks", "-c", "k", "--nbytes", nbytes))}
    _agree(outcomes, error)


@pytest.mark.parametrize("width, error", [(8, r"width must be at least 16 \(narrower tables' errors swamp their "
                                                r"estimates\), got 8"), (16, None)])
def test_one_narrowest_width_in_the_cli_and_the_core_check(width, error, tmp_path):
    # the CLI took --width 8 where SQL refuses anything under 16 (SkimFunctions.MIN_WIDTH; Spark: test_sql_surface)
    path = tmp_path / "k.parquet"
    pq.write_table(pa.table({"k": np.arange(50)}), path)
    outcomes = {"core check": _outcome(lambda: ss.HashSketch(check_width(width), 3, 0).update(np.arange(50)).to_bytes()),
                "cli": _outcome(lambda: _cli_sketch([path], tmp_path / "o.sks", "-c", "k", "--kind", "hash",
                                                    "--width", width, "--depth", 3))}
    _agree(outcomes, error)


# -- Spark: every interface --------------------------------------------------------------------------

BUILDERS = ("skim_sketch_agg", "skim_hash_sketch_agg", "skim_union_agg")


def _python_builders(spark):
    """Put the Python builders (a session without the jar) under the family's names."""
    from spark_udaf import native
    from spark_udaf.sql import python_functions

    fns = python_functions()
    native.drop_injected(spark, BUILDERS)
    for name in BUILDERS:
        spark.udf.register(name, fns[name])


def _sql(spark, query):
    return [tuple(bytes(v) if isinstance(v, (bytes, bytearray)) else v for v in r) for r in spark.sql(query).collect()]


def _both_sql(spark, query) -> dict:
    """{"native sql": outcome, "python sql": outcome} of one query (native only when the jar is there)."""
    import spark_udaf
    from spark_udaf import native

    out = {}
    spark_udaf.register(spark)
    if native.loaded(spark):
        out["native sql"] = _outcome(lambda: _sql(spark, query))
    try:
        _python_builders(spark)
        out["python sql"] = _outcome(lambda: _sql(spark, query))
    finally:
        spark_udaf.register(spark)
    return out


WEIGHT_TYPES = ["int"] + [pytest.param(t, marks=pytest.mark.slow)
                           for t in ("double", "bigint", "smallint", "tinyint", "decimal(10,0)", "float")]
REMEDY = r"give a weight column by name, skim_\w+\(key, weight => column, \.\.\.\)"


@pytest.fixture(scope="module")
def priced(spark):
    """Three groups, each with one price (2000, 3000, 4000: constant within the group), keys id % 97."""
    spark.sql("SELECT id % 97 AS k, CAST(2000 + 1000 * (id % 3) AS BIGINT) AS price, id % 3 AS g "
              "FROM range(0, 1500, 1, 3)").createOrReplaceTempView("hostile3_priced")
    rows = spark.sql("SELECT k, price, g FROM hostile3_priced").collect()
    return spark, rows


def _core_weighted(rows, make, scale=1):
    """{g: the core's sketch bytes of the group's keys weighted by price * scale}."""
    out = {}
    for g in sorted({r.g for r in rows}):
        mine = [r for r in rows if r.g == g]
        out[g] = make().update([r.k for r in mine], weights=[r.price * scale for r in mine]).to_bytes()
    return out


@pytest.mark.spark
@pytest.mark.parametrize("wtype", WEIGHT_TYPES)
def test_a_positional_weight_is_never_read_as_a_size(priced, wtype):
    """``skim_sketch_agg(k, price)``: native reads the column as the weight; the Python functions read the same
    SUM sketch from a fractional type and refuse an integer one, naming ``weight =>``. Named, every interface
    gives the core's bytes. Also with sizes after it, and the hash builder."""
    spark, rows = priced
    scale = 1 if wtype != "tinyint" else 0.01  # tinyint holds 20, 30, 40
    floats = wtype in ("double", "float")
    w = f"CAST(price * {scale} AS {wtype})" if scale != 1 else f"CAST(price AS {wtype})"
    cases = [  # (SQL call, the core's sketch of each group)
        (f"skim_sketch_agg(k, {w})", lambda: ss.SkimmedSketch.for_bytes(16384, dtype="float64" if floats else "int64")),
        (f"skim_sketch_agg(k, weight => {w})", None),
        (f"skim_sketch_agg(k, {w}, 4096)", lambda: ss.SkimmedSketch.for_bytes(4096, dtype="float64" if floats
                                                                             else "int64")),
        (f"skim_sketch_agg(k, weight => {w}, nbytes => 4096)", None),
        (f"skim_sketch_agg(k, {w}, 64, 5, 1)", lambda: ss.SkimmedSketch(64, 5, 1, dtype="float64" if floats
                                                                         else "int64")),
        (f"skim_hash_sketch_agg(k, {w}, 64, 5)", lambda: ss.HashSketch(64, 5, dtype="float64" if floats else "int64")),
        (f"skim_hash_sketch_agg(k, weight => {w}, width => 64, depth => 5)", None),
    ]
    make = None
    for call, core_make in cases:
        make = core_make or make  # a named call has the positional call's sketch
        core = _core_weighted(rows, make, scale)
        outcomes = _both_sql(spark, f"SELECT g, {call} AS s FROM hostile3_priced GROUP BY g ORDER BY g")
        outcomes["core"] = ("ok", [(g, b) for g, b in sorted(core.items())])
        python = outcomes.get("python sql")
        named = "weight =>" in call
        if python[0] == "error" and not named and not floats:
            # the documented difference: refused with the remedy (a size parameter otherwise)
            assert re.search(REMEDY, python[1]), (call, python[1][:800])
            del outcomes["python sql"]
        _agree(outcomes)
    positional = _both_sql(spark, f"SELECT g, skim_sketch_agg(k, {w}) AS s FROM hostile3_priced GROUP BY g")
    assert (positional["python sql"][0] == "ok") == (wtype in ("double", "float", "decimal(10,0)")), positional


@pytest.mark.spark
def test_sizes_in_the_spark_api_and_sql_take_numpy_integers_and_one_smallest_budget(priced):
    import spark_udaf
    from spark_udaf.estimate import default_sketch

    spark, _ = priced
    df = spark.table("hostile3_priced")
    want = spark_udaf.estimate_join_size(df, "k", df, "k", nbytes=8192, path="python")
    got = spark_udaf.estimate_join_size(df, "k", df, "k", nbytes=np.int64(8192), seed=np.uint64(0), path="python")
    assert (got.value, got.low, got.high) == (want.value, want.low, want.high)
    assert default_sketch(np.int32(8192)) == ss.SkimmedSketch.for_bytes(8192)
    from spark_udaf import functions as SF  # the Column helpers take numpy sizes and seeds as the API does

    helper = df.agg(SF.skim_sketch_agg("k", nbytes=np.int64(8192), seed=np.uint64(3)).alias("s")).first().s
    plain = df.agg(SF.skim_sketch_agg("k", nbytes=8192, seed=3).alias("s")).first().s
    assert bytes(helper) == bytes(plain) and len(bytes(plain)) <= 8192
    for nbytes in (100, 1023):
        outcomes = {"spark api": _outcome(lambda n=nbytes: spark_udaf.estimate_join_size(df, "k", df, "k", nbytes=n)),
                    "default sketch": _outcome(lambda n=nbytes: default_sketch(n))}
        outcomes.update(_both_sql(spark, f"SELECT skim_sketch_agg(k, nbytes => {nbytes}) AS s FROM hostile3_priced"))
        _agree(outcomes, MIN_BUDGET + str(nbytes))
    ok = _both_sql(spark, "SELECT skim_sketch_agg(k, nbytes => 1024) AS s FROM hostile3_priced")
    ok["core"] = ("ok", [(ss.SkimmedSketch.for_bytes(1024).update(
        [r.k for r in spark.table("hostile3_priced").collect()]).to_bytes(),)])
    _agree(ok)


@pytest.mark.spark
@pytest.mark.parametrize("value, error", [
    (16777215, None), pytest.param(-16777215, None, marks=pytest.mark.slow),
    (16777218, _float_limit_message("float32", 16777218.0, 24)),
    pytest.param(-16777216, _float_limit_message("float32", -16777216.0, 24), marks=pytest.mark.slow)])
def test_float_keys_past_float32s_integers_everywhere(spark, value, error):
    """FLOAT keys: the same bytes below 2**24, the same refusal from it on: the core on Spark's Arrow column,
    the Spark API on both paths, native SQL and the Python SQL functions; skim_frequency likewise."""
    import spark_udaf
    from spark_udaf import native

    spark.sql(f"SELECT CAST(k AS FLOAT) AS k FROM VALUES ({value}), (3), (3), (NULL) AS t(k)") \
        .createOrReplaceTempView("hostile3_floats")
    df = spark.table("hostile3_floats")
    template = ss.HashSketch(64, 3, seed=1)
    outcomes = {"core": _outcome(lambda: [(template.empty_like().update(df.toArrow().column("k")).to_bytes(),)]),
                "spark api, python path": _outcome(lambda: [(spark_udaf.sketch_column(
                    df, "k", template.empty_like(), path="python").to_bytes(),)])}
    if native.loaded(spark):
        outcomes["spark api, native path"] = _outcome(lambda: [(spark_udaf.sketch_column(
            df, "k", template.empty_like(), path="native").to_bytes(),)])
    outcomes.update(_both_sql(spark, "SELECT skim_hash_sketch_agg(k, 64, 3, 1) AS s FROM hostile3_floats"))
    _agree(outcomes, error)
    if native.loaded(spark):  # the join sample keeps FLOAT keys float32 too, with and without the GROUP BY rewrite
        sample = ss.JoinSample.for_bytes(4096, seed=1)
        samples = {"core": _outcome(lambda: [(sample.empty_like().update(df.toArrow().column("k")).to_bytes(),)])}
        for name, q in (("sample sql", "SELECT skim_sample_agg(k, 4096, 1) AS s FROM hostile3_floats"),
                        ("sample sql, raw", "SELECT skim_sample_agg(k, 4096, 1) AS s, avg(k) AS a FROM hostile3_floats")):
            samples[name] = _outcome(lambda q=q: [(bytes(r.s),) for r in spark.sql(q).collect()])
        _agree(samples, error)
    exact = {"core": _outcome(lambda: ss.exact_self_join_size(df.toArrow().column("k"))),
             "spark api": _outcome(lambda: spark_udaf.exact_self_join_size(df, "k"))}
    _agree(exact, error and r"float32 key .*below 2\*\*24 in magnitude")
    blob = ss.HashSketch(64, 3, seed=1).update([3, 3]).to_bytes().hex()
    query = f"SELECT skim_frequency(X'{blob}', CAST({value} AS FLOAT)) AS f"
    spark_udaf.register(spark, estimates="python")
    freq = {"python sql": _outcome(lambda: [tuple(r) for r in spark.sql(query).collect()]),
            "core": _outcome(lambda: [(ss.from_bytes(bytes.fromhex(blob)).frequency(np.float32(value)).value,)])}
    if native.loaded(spark):
        native.register(spark)
        freq["native sql"] = _outcome(lambda: [tuple(r) for r in spark.sql(query).collect()])
    spark_udaf.register(spark)
    _agree(freq, error)


@pytest.mark.spark
def test_bool_keys_everywhere(spark, tmp_path):
    import spark_udaf

    path = tmp_path / "b.parquet"
    pq.write_table(pa.table({"k": [True, False, True]}), path)
    df = spark.read.parquet(str(path))
    template = ss.HashSketch(64, 3, seed=1)
    outcomes = {"core": _outcome(lambda: template.empty_like().update(pq.read_table(path).column("k"))),
                "cli": _outcome(lambda: _cli_sketch([path], tmp_path / "o.sks", "-c", "k")),
                "spark api": _outcome(lambda: spark_udaf.sketch_column(df, "k", template.empty_like()))}
    df.createOrReplaceTempView("hostile3_bools")
    outcomes.update(_both_sql(spark, "SELECT skim_hash_sketch_agg(k, 64, 3, 1) AS s FROM hostile3_bools"))
    _agree(outcomes, r"(?i)bool")
