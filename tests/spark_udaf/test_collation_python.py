"""Collated string keys on the Python paths (issue 33 item 1, the Python half): refused as the jar refuses them.

A STRING in a collation other than UTF8_BINARY holds keys its collation calls equal ('Alice' and 'alice' under
UTF8_LCASE) in different bytes; the summaries hash bytes. Spark hands a Python function such a string as plain
text, so the Python SQL functions (a session without the jar) would count them as two keys: the column helpers
(``spark_udaf.functions``) guard their key there, and every Python path that reads a column's type (the builders,
``estimate_join_size``, ``exact_join_size``, a nested key ``s.a``) refuses it, naming the column, its collation
and the remedy ``lower(key) COLLATE UTF8_BINARY``.
"""

import pytest

import skimsketch as ss
import spark_udaf
from spark_udaf import functions as SF
from spark_udaf import native
from spark_udaf.sql import python_functions

pytestmark = pytest.mark.spark

#: UTF8_LCASE and an RTRIM one (Spark's own), ICU's root and a locale (en_CI), case-insensitive or not.
COLLATIONS = ["UTF8_LCASE", "UNICODE", "UNICODE_CI", "en_CI", "UTF8_LCASE_RTRIM"]
NAMES = "SELECT * FROM VALUES ('Alice'), ('alice'), ('ALICE'), ('bob'), ('Bob') AS t(k)"
KEYS = ["Alice", "alice", "ALICE", "bob", "Bob"]
#: The Python SQL functions the column helpers below call (registered as a session without the jar has them).
FALLBACKS = ("skim_sketch_agg", "skim_hash_sketch_agg", "skim_frequency", "skim_join_size")


def _refusal(column: str, collation: str) -> str:
    return (f"key column '{column}': key has type string collate {collation}: keys equal under collation "
            f"{collation} .*lower\\(key\\) COLLATE UTF8_BINARY")


@pytest.fixture(scope="module")
def fallback(spark):
    """The session with the Python SQL functions under the jar's names (what a session without the jar
    registers); the default registration is restored afterwards."""
    fns = python_functions()
    native.drop_injected(spark, FALLBACKS)
    for name in FALLBACKS:
        spark.udf.register(name, fns[name])
    yield spark
    spark_udaf.register(spark)


def _collated(spark, collation: str):
    return spark.sql(f"SELECT k COLLATE {collation} AS k, named_struct('a', k COLLATE {collation}) AS s "
                     f"FROM ({NAMES})")


@pytest.mark.parametrize("collation", COLLATIONS)
def test_the_python_sql_functions_refuse_a_collated_key_through_the_column_helpers(fallback, collation):
    df = _collated(fallback, collation)
    calls = {"skim_sketch_agg": SF.skim_sketch_agg("k", nbytes=4096),
             "skim_hash_sketch_agg": SF.skim_hash_sketch_agg("k", 64, 3)}
    for fn, call in calls.items():
        with pytest.raises(Exception, match=f"KeyTypeError: {fn}: " + _refusal("k", collation)):
            df.agg(call).collect()
    sk = fallback.sql(f"SELECT skim_sketch_agg(k, nbytes => 4096) AS sk FROM ({NAMES})")
    with pytest.raises(Exception, match="KeyTypeError: skim_frequency: " + _refusal("k", collation)):
        sk.crossJoin(df).select(SF.skim_frequency("sk", df.k)).collect()


def test_binary_strings_and_other_keys_pass_the_guard_unchanged(fallback):
    """Plain strings, explicit UTF8_BINARY (the remedy) and integers give the core's bytes through the guard."""
    lower = fallback.sql(f"SELECT lower(k) COLLATE UTF8_BINARY AS k, k AS plain, length(k) AS n FROM ({NAMES})")
    row = lower.agg(SF.skim_sketch_agg("k", nbytes=4096).alias("l")).collect()[0]
    assert bytes(row.l) == ss.SkimmedSketch.for_bytes(4096).update([k.lower() for k in KEYS]).to_bytes()
    plain = lower.agg(SF.skim_hash_sketch_agg("plain", 64, 3).alias("p")).collect()[0].p
    assert bytes(plain) == ss.HashSketch(64, 3).update(KEYS).to_bytes()
    ints = lower.agg(SF.skim_sketch_agg(lower.n, nbytes=4096).alias("i")).collect()[0].i
    assert bytes(ints) == ss.SkimmedSketch.for_bytes(4096).update([len(k) for k in KEYS]).to_bytes()
    sk = lower.agg(SF.skim_sketch_agg("k", nbytes=4096).alias("sk"))
    probe = fallback.sql("SELECT 'alice' AS q")
    freq = sk.crossJoin(probe).select(SF.skim_frequency("sk", probe.q).alias("f")).collect()[0].f
    assert freq == 3.0  # 'alice' three times: the remedy counts the collation's equal keys as one


def test_the_jar_s_functions_keep_their_names_without_the_guard(spark):
    if not native.loaded(spark):
        pytest.skip("the session's JVM has no native jar")
    spark_udaf.register(spark)
    df = spark.sql(f"SELECT k FROM ({NAMES})")
    assert df.agg(SF.skim_sketch_agg("k")).columns == ["skim_sketch_agg(k)"]


@pytest.mark.parametrize("collation", COLLATIONS)
def test_every_python_path_reading_the_column_type_refuses_it(spark, collation):
    df = _collated(spark, collation)
    template = ss.JoinSample.for_bytes(4096)
    for column in ("k", "s.a"):  # a top-level key, and a key nested in a struct (named as given)
        with pytest.raises(ss.KeyTypeError, match=_refusal(column, collation)):
            spark_udaf.sketch_column(df, column, template, path="python")
    from pyspark.sql import functions as F

    with pytest.raises(ss.KeyTypeError, match=_refusal("s.a", collation)):
        spark_udaf.sketch_column(df, F.col("s.a"), ss.HashSketch(64, 3), path="python")
    with pytest.raises(ss.KeyTypeError, match=_refusal("k", collation)):
        spark_udaf.estimate_join_size(df, "k", df, "k", path="python")
    with pytest.raises(ss.KeyTypeError, match=_refusal("k", collation)):
        spark_udaf.exact_join_size(df, "k", df, "k")
    with pytest.raises(ss.KeyTypeError, match=r"key column 's' has type struct<a:string collate"):
        spark_udaf.sketch_column(df, "s", template, path="python")  # a struct key: not a key type at all
