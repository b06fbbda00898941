"""The Parquet fast path gives Spark's bytes on schema-evolved files, or declines to the general path.

Every case writes Parquet files with pyarrow, reads them with Spark the way a
user would, and compares the fast path (pyarrow on the executors) with the
general ``mapInArrow`` path byte for byte; where the values are easy to state
the in-memory sketch of what Spark reads is checked too. ``taken`` records
whether the fast path ran or declined (both must give the same bytes).
"""

from decimal import Decimal

import pytest

import skimsketch as ss
from spark_udaf.build import sketch_column, sketch_parquet
from spark_udaf.build.parquet import sketch_parquet_scan, stored_type_reads_as

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

pytestmark = pytest.mark.spark


def _write(dirpath, name, **cols):
    dirpath.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.table(cols), str(dirpath / name))


def _int(*v, t=None):
    return pa.array(list(v), t or pa.int64())


def _both(df, column, make, weight=None, *, taken):
    """Bytes of the fast and the general path (asserted equal); the fast path ran iff ``taken``."""
    template = make()
    fast = sketch_parquet_scan(df, column, template, weight, tasks=2)
    assert (fast is not None) is taken
    assert template.is_empty  # the template never changes
    if not taken:
        fast = sketch_column(df, column, make(), weight)
    slow = sketch_column(df, column, make(), weight, parquet_fast_path=False)
    assert fast.to_bytes() == slow.to_bytes()
    return slow


def _hash(dtype="int64"):
    return lambda: ss.HashSketch(64, 3, seed=7, dtype=dtype)


def test_merge_schema_with_a_file_missing_the_key_and_one_missing_the_weight(spark, tmp_path):
    d = tmp_path / "m"
    _write(d, "a.parquet", k=_int(1, 2, 3), w=_int(1, 1, 2))
    _write(d, "b.parquet", w=_int(5, 6))  # no key: its rows are null keys
    _write(d, "c.parquet", k=_int(2, 9), s=pa.array(["x", "y"]))  # no weight: its rows are skipped
    df = spark.read.option("mergeSchema", "true").parquet(str(d))
    got = _both(df, "k", _hash(), "w", taken=True)
    want = _hash()().update([1, 2, 3, None, None], weights=[1, 1, 2, 5, 6])
    assert got.to_bytes() == want.to_bytes() and got.null_weight == 11
    unweighted = _both(df, "k", _hash(), taken=True)
    assert unweighted.to_bytes() == _hash()().update([1, 2, 3, None, None, 2, 9]).to_bytes()
    _both(df.select("w", "k"), "k", _hash(), "w", taken=True)  # a plain projection of the scan


def test_user_schema_reads_missing_columns_as_nulls(spark, tmp_path):
    d = tmp_path / "u"
    _write(d, "a.parquet", k=_int(4, 5), w=_int(2, 3))
    _write(d, "b.parquet", other=_int(1, 2, 3))
    df = spark.read.schema("k bigint, w bigint").parquet(str(d))
    got = _both(df, "k", _hash(), "w", taken=True)
    assert got.to_bytes() == _hash()().update([4, 5], weights=[2, 3]).to_bytes()
    got = _both(df, "k", _hash(), taken=True)
    assert got.null_weight == 3 and got.total_weight == 2


def test_int32_and_int64_files_under_a_bigint_schema(spark, tmp_path):
    d = tmp_path / "i"
    _write(d, "a.parquet", k=_int(1, 2**40), w=_int(1, 2))
    _write(d, "b.parquet", k=_int(3, -7, t=pa.int32()), w=_int(4, 5, t=pa.int16()))
    _write(d, "c.parquet", k=_int(8, t=pa.uint32()), w=_int(1, t=pa.int8()))
    df = spark.read.schema("k bigint, w bigint").parquet(str(d))
    got = _both(df, "k", _hash(), "w", taken=True)
    assert got.to_bytes() == _hash()().update([1, 2**40, 3, -7, 8], weights=[1, 2, 4, 5, 1]).to_bytes()


def test_a_wider_file_than_the_schema_declines_and_errors_as_spark_does(spark, tmp_path):
    d = tmp_path / "n"
    _write(d, "a.parquet", k=_int(1, 2, t=pa.int32()))
    _write(d, "b.parquet", k=_int(2**40))
    df = spark.read.schema("k int").parquet(str(d))
    assert sketch_parquet_scan(df, "k", _hash()(), tasks=2) is None
    with pytest.raises(Exception, match="PARQUET_COLUMN_DATA_TYPE_MISMATCH|SchemaColumnConvertNotSupported"):
        sketch_column(df, "k", _hash()())


def test_nulls_and_empty_files(spark, tmp_path):
    d = tmp_path / "e"
    _write(d, "a.parquet", k=pa.array([1, None, 3, None], pa.int64()), w=pa.array([2, 5, None, None], pa.int64()))
    _write(d, "b.parquet", k=pa.array([], pa.int64()), w=pa.array([], pa.int64()))
    _write(d, "c.parquet", k=pa.nulls(3, pa.int64()), w=_int(1, 1, 1))
    df = spark.read.parquet(str(d))
    got = _both(df, "k", _hash(), "w", taken=True)
    assert got.to_bytes() == _hash()().update([1, None, None, None, None], weights=[2, 5, 1, 1, 1]).to_bytes()
    empty = tmp_path / "only_empty"
    _write(empty, "a.parquet", k=pa.array([], pa.int64()))
    assert _both(spark.read.parquet(str(empty)), "k", _hash(), taken=True).is_empty


def test_string_binary_and_dictionary_keys(spark, tmp_path):
    d = tmp_path / "s"
    _write(d, "a.parquet", s=pa.array(["ab", None, "cd"]))
    _write(d, "b.parquet", s=pa.array(["ab", "zz"]).dictionary_encode())  # stored Arrow type: dictionary
    df = spark.read.parquet(str(d))
    got = _both(df, "s", _hash(), taken=True)
    assert got.to_bytes() == _hash()().update(["ab", None, "cd", "ab", "zz"]).to_bytes()
    b = tmp_path / "b"
    _write(b, "a.parquet", s=pa.array([b"ab", b"\xff\x00"]))
    got = _both(spark.read.parquet(str(b)), "s", _hash(), taken=True)
    assert got.to_bytes() == _hash()().update([b"ab", b"\xff\x00"]).to_bytes() == \
        _both(spark.read.schema("s binary").parquet(str(b)), "s", _hash(), taken=True).to_bytes()
    # binary files read as STRING (binaryAsString-style user schema): Spark converts, the fast path declines
    _both(spark.read.schema("s string").parquet(str(b)), "s", _hash(), taken=False)


@pytest.mark.parametrize("schema, dtype, taken", [
    ("k bigint, w double", "float64", True),   # float32 and float64 files
    ("k bigint, w float", "float64", False),   # a float64 file under FLOAT: Spark's conversion decides
])
def test_float_weights(spark, tmp_path, schema, dtype, taken):
    d = tmp_path / "f"
    _write(d, "a.parquet", k=_int(1, 2, 3), w=pa.array([0.5, None, float("nan")], pa.float64()))
    _write(d, "b.parquet", k=_int(1, 4), w=pa.array([0.25, -1.75], pa.float32()))  # dyadic: sums are exact
    df = spark.read.schema(schema).parquet(str(d))
    if taken:
        got = _both(df, "k", _hash(dtype), "w", taken=True)
        assert got.to_bytes() == _hash(dtype)().update([1, 1, 4], weights=[0.5, 0.25, -1.75]).to_bytes()
    else:
        with pytest.raises(Exception, match="PARQUET_COLUMN_DATA_TYPE_MISMATCH|SchemaColumnConvertNotSupported"):
            sketch_column(df, "k", _hash(dtype)(), "w", parquet_fast_path=False)
        assert sketch_parquet_scan(df, "k", _hash(dtype)(), "w") is None


def test_decimal_weights_of_two_precisions(spark, tmp_path):
    d = tmp_path / "dec"
    _write(d, "a.parquet", k=_int(1, 2), w=pa.array([Decimal("4.38"), Decimal("1.99")], pa.decimal128(5, 2)))
    _write(d, "b.parquet", k=_int(3), w=pa.array([Decimal("2.5")], pa.decimal128(3, 1)))
    df = spark.read.schema("k bigint, w decimal(10,2)").parquet(str(d))
    got = _both(df, "k", _hash("float64"), "w", taken=True)
    want = _hash("float64")().update([1, 2, 3], weights=[Decimal("4.38"), Decimal("1.99"), Decimal("2.5")])
    assert got.to_bytes() == want.to_bytes()
    with pytest.raises(ss.KeyTypeError, match="fractional"):  # refused on the driver by both paths
        sketch_parquet_scan(df, "k", _hash()(), "w")


def test_columns_matched_case_insensitively_decline(spark, tmp_path):
    d = tmp_path / "c"
    _write(d, "a.parquet", K=_int(1, 2, 2))
    df = spark.read.schema("k bigint").parquet(str(d))
    got = _both(df, "k", _hash(), taken=False)
    assert got.to_bytes() == _hash()().update([1, 2, 2]).to_bytes()  # Spark matched K to k


def test_partition_columns_and_a_mismatched_type_decline(spark, tmp_path):
    d = tmp_path / "p"
    spark.createDataFrame([(1, 10), (2, 20), (3, 20)], "k bigint, day bigint").write.partitionBy("day").parquet(str(d))
    df = spark.read.parquet(str(d))
    _both(df, "day", _hash(), taken=False)
    _both(df, "k", _hash(), taken=True)
    got = sketch_parquet(spark, str(d), "day", _hash()())  # falls back instead of refusing
    assert got.to_bytes() == _hash()().update([10, 20, 20]).to_bytes()
    m = tmp_path / "mismatch"
    _write(m, "a.parquet", k=_int(1))
    _write(m, "b.parquet", k=pa.array(["x"]))
    assert sketch_parquet_scan(spark.read.schema("k bigint").parquet(str(m)), "k", _hash()()) is None


def test_an_unreadable_file_declines_to_spark(spark, tmp_path):
    d = tmp_path / "bad"
    _write(d, "a.parquet", k=_int(1, 2))
    (d / "b.parquet").write_bytes(b"not parquet at all")
    spark.conf.set("spark.sql.files.ignoreCorruptFiles", "true")
    try:
        df = spark.read.schema("k bigint").parquet(str(d))
        got = _both(df, "k", _hash(), taken=False)
    finally:
        spark.conf.unset("spark.sql.files.ignoreCorruptFiles")
    assert got.to_bytes() == _hash()().update([1, 2]).to_bytes()


@pytest.mark.parametrize("stored, spec, ok", [
    (pa.int32(), ("int", 64), True), (pa.int64(), ("int", 32), False), (pa.uint32(), ("int", 64), True),
    (pa.uint64(), ("int", 64), False), (pa.uint8(), ("int", 8), False), (pa.float32(), ("float", 64), True),
    (pa.float64(), ("float", 32), False), (pa.float16(), ("float", 64), False),
    (pa.decimal128(5, 2), ("decimal", 10, 2), True), (pa.decimal128(5, 3), ("decimal", 10, 2), False),
    (pa.decimal128(12, 2), ("decimal", 10, 2), False), (pa.string(), ("string",), True),
    (pa.large_string(), ("string",), True), (pa.binary(), ("string",), False), (pa.string(), ("binary",), False),
    (pa.dictionary(pa.int32(), pa.string()), ("string",), True), (pa.list_(pa.int64()), ("int", 64), False),
    (pa.int64(), ("float", 64), False), (pa.timestamp("us"), ("int", 64), False),
])
def test_stored_type_reads_as(stored, spec, ok):
    assert stored_type_reads_as(stored, spec) is ok
