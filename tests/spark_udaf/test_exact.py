"""exact_join_size / exact_self_join_size on Spark equal the in-memory exact answers."""

import numpy as np
import pandas as pd
import pytest

import skimsketch as ss
import spark_udaf

pytestmark = pytest.mark.spark


@pytest.fixture(scope="module")
def tables(spark):
    rng = np.random.default_rng(5)
    f = pd.DataFrame({"k": pd.array(rng.zipf(1.5, 4000) % 300, dtype="Int64"), "x": rng.integers(-2, 9, 4000)})
    g = pd.DataFrame({"k": pd.array((rng.zipf(1.2, 3000) + 7) % 300, dtype="Int64"), "y": rng.integers(0, 5, 3000)})
    f.loc[::13, "k"] = None
    g.loc[::11, "k"] = None
    return f, g, spark.createDataFrame(f).repartition(3), spark.createDataFrame(g).repartition(2)


def test_join_size_equals_in_memory(tables):
    f, g, F, G = tables
    expected = ss.exact_join_size(f["k"], g["k"])
    assert expected > 0
    got = spark_udaf.exact_join_size(F, "k", G, "k")
    assert isinstance(got, int) and got == expected


def test_weighted_join_aggregate_equals_in_memory(tables):
    f, g, F, G = tables
    expected = ss.exact_join_size(f["k"], g["k"], weights_f=f["x"].to_numpy(), weights_g=g["y"].to_numpy())
    assert spark_udaf.exact_join_size(F, "k", G, "k", lweight="x", rweight="y") == expected


def test_self_join_size_equals_in_memory(tables):
    f, _, F, _ = tables
    assert spark_udaf.exact_self_join_size(F, "k") == ss.exact_self_join_size(f["k"])
    assert spark_udaf.exact_join_size(F, "k", F, "k") == ss.exact_self_join_size(f["k"])


def test_nulls_never_join(spark):
    a = spark.createDataFrame([(None,), (None,), (1,)], "k int")
    b = spark.createDataFrame([(None,), (1,), (1,)], "k bigint")
    assert spark_udaf.exact_join_size(a, "k", b, "k") == 2
    empty = spark.createDataFrame([], "k int")
    assert spark_udaf.exact_join_size(a, "k", empty, "k") == 0


def test_string_keys_join_binary_keys_like_the_sketches(spark):
    a = spark.createDataFrame([("x",), ("y",), ("x",)], "k string")
    b = spark.createDataFrame([(bytearray(b"x"),), (bytearray(b"z"),)], "k binary")
    assert spark_udaf.exact_join_size(a, "k", b, "k") == 2
    assert ss.exact_join_size(["x", "y", "x"], [b"x", b"z"]) == 2


def test_no_int64_overflow(spark):
    big = 2**40  # the product 2**80 does not fit in int64
    a = spark.createDataFrame([(1, big), (2, 3)], "k int, w bigint")
    b = spark.createDataFrame([(1, big), (2, 5)], "k int, w bigint")
    assert spark_udaf.exact_join_size(a, "k", b, "k", "w", "w") == big * big + 15


def test_float_weights_give_a_float(spark):
    a = spark.createDataFrame([(1, 0.5), (1, 0.25)], "k int, w double")
    b = spark.createDataFrame([(1, 4.0)], "k int, w double")
    got = spark_udaf.exact_join_size(a, "k", b, "k", "w", "w")
    assert isinstance(got, float) and got == 3.0


def test_mismatched_key_types_are_rejected(spark):
    a = spark.createDataFrame([(1,)], "k int")
    b = spark.createDataFrame([("1",)], "k string")
    with pytest.raises(ValueError, match=r"'k' \(int\) and 'k' \(string\) cannot join"):
        spark_udaf.exact_join_size(a, "k", b, "k")


def test_frequencies_columns_and_decimal_weights(spark):
    from decimal import Decimal

    df = spark.sql("SELECT * FROM VALUES (1, CAST(4.38 AS DECIMAL(10,2))), (2, CAST(1.99 AS DECIMAL(10,2))), "
                   "(2, CAST(1.00 AS DECIMAL(10,2))) AS t(k, w)")
    fr = spark_udaf.frequencies(df, "k")
    assert fr.columns == ["key", "count"]
    assert sorted((r["key"], int(r["count"])) for r in fr.collect()) == [(1, 1), (2, 2)]
    with pytest.raises(ValueError, match="as_float=True"):
        spark_udaf.frequencies(df, "k", "w")
    got = spark_udaf.exact_join_size(df, "k", df, "k", lweight="w")
    want = ss.exact_join_size([1, 2, 2], [1, 2, 2], weights_f=[Decimal("4.38"), Decimal("1.99"), Decimal("1.00")])
    assert isinstance(got, float) and got == want
