"""The estimate functions' golden vectors (tests/spark_udaf/golden_estimates.py) in every implementation.

The core (regenerating the file gives the same answers), the jar's self-test (plain JVM), and the
native SQL functions in a real local Spark session (values within 1e-9 relative, same errors).
"""

import math

import pytest

from spark_udaf import native

from . import golden_estimates as golden


def _same_answer(want: str, got: str) -> bool:
    """Stored and regenerated answers: the same words, numbers within 1e-9 relative (a skimmed estimate
    sums with BLAS, whose order may differ on another CPU; any real change moves far more)."""
    if want == got:
        return True
    w, g = want.replace(":", " ").split(" "), got.replace(":", " ").split(" ")
    if len(w) != len(g):
        return False
    for x, y in zip(w, g):
        try:
            fx, fy = float(x), float(y)
        except ValueError:
            if x != y:
                return False
            continue
        if x != y and not _close(fx, fy):
            return False
    return True


def test_the_core_gives_the_stored_answers():
    blobs, queries = golden.read()
    assert len(queries) >= 150
    stored = golden.PATH.read_text().splitlines()[1:]
    fresh = golden.lines()
    assert len(fresh) == len(stored)
    for want, got in zip(stored, fresh):
        w, g = want.split("\t"), got.split("\t")
        assert w[:-1] == g[:-1], (w[:5], g[:5])  # sketch bytes, or the query itself
        if w[0] == "sketch":
            assert w == g, w[1]
        else:
            assert _same_answer(w[-1], g[-1]), (w, g)


def test_the_vectors_cover_every_query_and_ported_kind():
    _, queries = golden.read()
    ops = {q[0] for q in queries}
    assert ops == {"join", "self", "freq", "info", "skim", "search"}
    methods = {q[5].split(" ")[4] for q in queries
               if not q[5].startswith("!") and q[0] not in ("info", "skim", "search")}
    assert methods == {"hash", "agms", "exact", "skimmed"}
    errors = {q[5].split(" ")[0] for q in queries if q[5].startswith("!")}
    assert errors == {"!IncompatibleSketchError", "!KeyTypeError"}


@pytest.mark.skipif(not native.available(), reason="no JDK: the jar cannot be built here")
def test_the_jar_self_test_checks_every_vector(jar_self_test):
    out = jar_self_test
    assert f"({len(golden.read()[1])} golden estimate vectors)" in out


def _close(want: float, got: float) -> bool:
    """Equal, or both finite and within 1e-9 relative (an infinity is close only to itself)."""
    return want == got or (math.isfinite(want) and math.isfinite(got)
                           and abs(want - got) <= 1e-9 * max(abs(want), abs(got)))


def _key_sql(key: str) -> str:
    kind, v = key.split(":", 1)
    if kind == "int":
        return f"CAST({v} AS BIGINT)"
    if kind == "float":
        return f"CAST({v} AS DOUBLE)"
    if kind == "str":
        return "'" + bytes.fromhex(v).decode() + "'"
    return f"X'{v}'"


def _expr(q, blobs, runtime: bool = False) -> str:
    op, conf, a, b, key, _ = q
    ha = f"X'{blobs[a].hex()}'"
    if runtime:  # a value only a task knows (id of range(1)), so the optimizer cannot fold the call
        ha = f"CASE WHEN id >= 0 THEN {ha} END"
    c = "" if conf == "-" else f", {conf}D"
    if op == "join":
        return f"skim_join_size_bounds({ha}, X'{blobs[b].hex()}'{c})"
    if op == "self":
        return f"skim_self_join_size_bounds({ha}{c})"
    if op == "freq":
        return f"skim_frequency({ha}, {_key_sql(key)}{c})"  # a DOUBLE: the self-test checks the interval
    return f"skim_sketch_info({ha})"


@pytest.mark.spark
def test_native_sql_functions_give_the_stored_answers(native_sql):
    spark = native_sql
    blobs, queries = golden.read()
    good = [q for q in queries if not q[5].startswith("!") and q[0] not in ("skim", "search")]  # no SQL function
    exprs = [_expr(q, blobs) for q in good]
    row = spark.sql("SELECT " + ", ".join(f"{e} AS c{i}" for i, e in enumerate(exprs))).collect()[0]
    for i, q in enumerate(good):
        got, want = row[i], q[5].split(" ")
        if q[0] == "info":
            assert [got.kind, str(got.width), str(got.depth), str(got.seed)] == want[:4], q[:5]
            assert _close(float(want[4]), got.total_weight) and _close(float(want[5]), got.null_weight)
            assert got.nbytes == int(want[6]), q[:5]
        elif q[0] == "freq":
            assert _close(float(want[0]), got), (q[:5], want, got)
        else:
            vals = [got.value, got.low, got.high, got.confidence]
            assert all(_close(float(w), g) for w, g in zip(want[:4], vals)), (q[:5], want, vals)
            assert got.method == want[4]
    for q in (q for q in queries if q[5].startswith("!")):
        name, msg = q[5][1:].split(" ", 1)
        e = _expr(q, blobs, runtime=True)
        with pytest.raises(Exception) as err:  # in a task (not folded on the driver): the class is named
            spark.sql(f"SELECT {e} FROM range(1)").collect()
        assert f"io.skimsketch.spark.{name}: {msg}" in str(err.value), (q[:5], str(err.value)[:2000])


def test_vector_numbers_round_trip():
    _, queries = golden.read()
    for q in queries:
        if not q[5].startswith("!") and q[0] not in ("info", "skim", "search"):
            assert all(math.isfinite(float(x)) for x in q[5].split(" ")[:4])
