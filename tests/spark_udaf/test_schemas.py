"""The result schemas are declared once (spark_udaf.schemas) and every producer uses them."""

from decimal import Decimal

import pyarrow as pa
import pytest

import skimsketch as ss
from spark_udaf import schemas, sql
from spark_udaf.schemas import ESTIMATE, INFO, SKETCH, STATE_VIEW, arrow_schema, arrow_type, ddl

ALL = {"ESTIMATE": ESTIMATE, "INFO": INFO, "STATE_VIEW": STATE_VIEW}


def test_sql_declares_the_schemas_of_the_module():
    assert sql.ESTIMATE_TYPE == ddl(ESTIMATE) == (
        "struct<value: double, low: double, high: double, confidence: double, method: string>")
    assert sql.INFO_TYPE == ddl(INFO) == ("struct<kind: string, width: int, depth: int, seed: decimal(20,0), "
                                          "total_weight: double, null_weight: double, nbytes: bigint>")


@pytest.mark.parametrize("name", sorted(ALL))
def test_one_seed_type_and_one_type_per_field_name(name):
    fields = ALL[name]
    assert len({n for n, _ in fields}) == len(fields)
    for n, t in fields:
        for other in ALL.values():
            assert all(t2 == t for n2, t2 in other if n2 == n), (n, t)
    if dict(fields).get("seed"):
        assert dict(fields)["seed"] == "decimal(20,0)"


@pytest.mark.parametrize("name", sorted(ALL))
def test_arrow_and_spark_twins_follow_the_declaration(name):
    pytest.importorskip("pyspark")
    fields = ALL[name]
    st = schemas.spark_schema(fields)
    assert [f.name for f in st.fields] == [n for n, _ in fields] == arrow_schema(fields).names
    assert st.simpleString() == ddl(fields).replace(": ", ":").replace(", ", ",")
    assert arrow_type(fields) == pa.struct(list(arrow_schema(fields)))


def test_info_rows_hold_every_u64_seed_exactly():
    for seed in (0, 7, 2**63 - 1, 2**63, 2**64 - 1):
        sk = ss.HashSketch(16, 3, seed=seed).update([1, 2, None])
        got = sql.info_impl([sk.to_bytes(), None])
        arr = pa.array(got, arrow_type(INFO))  # what skim_sketch_info returns to Spark
        row = arr.to_pylist()[0]
        assert row["seed"] == Decimal(seed) and row["kind"] == "HashSketch" and row["null_weight"] == 1.0
        assert (row["width"], row["depth"], row["total_weight"], row["nbytes"]) == (16, 3, 2.0, sk.nbytes)
        assert arr.to_pylist()[1] is None
        assert set(row) == {n for n, _ in INFO} and set(schemas.sketch_row(sk)) == {n for n, _ in SKETCH}


def test_estimate_rows_fit_the_estimate_struct():
    a = ss.HashSketch(64, 3, seed=1).update([1, 1, 2])
    rows = sql.join_impl([a.to_bytes()], [a.to_bytes()], True, 0.9)
    got = pa.array(rows, arrow_type(ESTIMATE)).to_pylist()[0]
    e = a.join_size(a, confidence=0.9)
    assert got == {"value": e.value, "low": e.low, "high": e.high, "confidence": 0.9, "method": e.method}


def test_scalar_functions_refuse_a_pair_sketch_by_name():
    pair = ss.PairSketch(8, 4, 3, 1, 2).update([1], ["x"]).to_bytes()
    with pytest.raises(TypeError, match=r"skim_sketch_info\(a\): a PairSketch has no two-way join"):
        sql.info_impl([pair])
    with pytest.raises(TypeError, match=r"skim_join_size\(b\): a PairSketch"):
        sql.join_impl([ss.HashSketch(8, 3).to_bytes()], [pair], False)
