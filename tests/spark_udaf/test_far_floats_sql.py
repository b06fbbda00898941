"""Joins of float sketches whose weights are far from 1 (issue 36) through Spark SQL: the JVM's
``skim_join_size_bounds`` rescales the counters by an exact power of two as the core does
(skimsketch/sketch/signed_join.py), so it gives the core's value and interval on the same bytes (it gave
``[0, inf]`` at 1e100 before). Sketches built in SQL: skimmed and hash, non-negative and signed weights."""

import math

import pytest

import skimsketch as ss

pytestmark = pytest.mark.spark

#: (alias, scale of the weights): 1 is the reference the far scales are compared with
SCALES = (("one", "1D"), ("big", "1e100D"), ("tiny", "1e-100D"))
BUILDERS = {"skim": "skim_sketch_agg(k, w * {s}, 4096, 3)", "hash": "skim_hash_sketch_agg(k, w * {s}, 128, 5, 3)"}


def _close(want: float, got: float, rel: float = 1e-9) -> bool:
    return want == got or (math.isfinite(want) and math.isfinite(got)
                           and abs(want - got) <= rel * max(abs(want), abs(got)))


def _far_sketches(spark) -> dict:
    """Sketch bytes by builder_side_scale: side f of non-negative weights, side g of signed ones."""
    rows = """SELECT id % 3000 * 7 AS k, CASE WHEN id < 6000 THEN 'f' ELSE 'g' END AS side,
                     CASE WHEN id < 6000 THEN 0.5D + id % 5 ELSE 2.5D - id % 4 END AS w FROM range(10000)"""
    cols = [f"{expr.format(s=s)} FILTER (WHERE side = '{side}') AS {b}_{side}_{name}"
            for b, expr in BUILDERS.items() for side in "fg" for name, s in SCALES]
    got = spark.sql(f"SELECT {', '.join(cols)} FROM ({rows})").collect()[0].asDict()
    return {name: bytes(v) for name, v in got.items()}


# each builder: non-negative x non-negative (both scales far), non-negative x signed, one side huge and one tiny
PAIRS = [("f_big", "f_big"), ("f_tiny", "f_tiny"), ("f_big", "g_big"), ("g_tiny", "f_tiny"), ("f_big", "f_tiny"),
         ("g_tiny", "f_big")]


def test_sql_joins_of_far_float_sketches_equal_the_cores(native_sql):
    sk = _far_sketches(native_sql)
    assert all(ss.from_bytes(v).float_counters and not ss.from_bytes(v).exact_mode for v in sk.values())
    queries = [(b, x, y) for b in BUILDERS for x, y in PAIRS]
    exprs = [f"skim_join_size_bounds(X'{sk[f'{b}_{x}'].hex()}', X'{sk[f'{b}_{y}'].hex()}') AS c{i}"
             for i, (b, x, y) in enumerate(queries)]
    row = native_sql.sql("SELECT " + ", ".join(exprs)).collect()[0]
    scale = {"big": 1e100, "tiny": 1e-100}
    for i, (b, x, y) in enumerate(queries):
        got = row[i]
        a, c = ss.from_bytes(sk[f"{b}_{x}"]), ss.from_bytes(sk[f"{b}_{y}"])
        want = a.join_size(c)
        vals = [got.value, got.low, got.high]
        assert all(_close(w, g) for w, g in zip([want.value, want.low, want.high], vals)), (b, x, y, want, vals)
        assert got.method == want.method == ("skimmed" if b == "skim" else "hash") and got.confidence == 0.95
        assert all(math.isfinite(v) for v in vals) and got.low < got.high, (b, x, y, vals)
        # the answer at scale 1 times the product of the scales (exact powers of two apart, up to rounding)
        one = ss.from_bytes(sk[f"{b}_{x[0]}_one"]).join_size(ss.from_bytes(sk[f"{b}_{y[0]}_one"]))
        m = scale[x[2:]] * scale[y[2:]]
        assert all(_close(w * m, g, 1e-6) for w, g in zip([one.value, one.low, one.high], vals)), (b, x, y, one, vals)
