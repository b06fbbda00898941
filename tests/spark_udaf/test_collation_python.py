"""Collated string keys on the Python paths (issue 33 item 1, the Python half): refused as the jar refuses them.

A STRING in a collation other than UTF8_BINARY holds keys its collation calls equal ('Alice' and 'alice' under
UTF8_LCASE) in different bytes; the summaries hash bytes. Spark hands a Python function such a string as plain
text, so the Python SQL functions (a session without the jar) would count them as two keys: ``spark_udaf.register``
guards their builders (``spark_udaf.sql.guard``: refused when the query is analysed, SQL text and the column
helpers alike), and every Python path that reads a column's type (the builders, ``estimate_join_size``,
``exact_join_size``, a nested key ``s.a``) refuses it, naming the column, its collation and the remedy
``lower(key) COLLATE UTF8_BINARY``.
"""

import pytest

import skimsketch as ss
import spark_udaf
from spark_udaf import functions as SF
from spark_udaf import native
from spark_udaf.sql import python_functions
from spark_udaf.sql.guard import KEYED, guard
from spark_udaf.sql.udfs import partials_udtf

pytestmark = pytest.mark.spark

#: UTF8_LCASE and an RTRIM one (Spark's own), ICU's root and a locale (en_CI), case-insensitive or not.
COLLATIONS = ["UTF8_LCASE", "UNICODE", "UNICODE_CI", "en_CI", "UTF8_LCASE_RTRIM"]
NAMES = "SELECT * FROM VALUES ('Alice'), ('alice'), ('ALICE'), ('bob'), ('Bob') AS t(k)"
KEYS = ["Alice", "alice", "ALICE", "bob", "Bob"]
#: The Python SQL functions the column helpers below call (registered as a session without the jar has them).
FALLBACKS = ("skim_sketch_agg", "skim_hash_sketch_agg", "skim_frequency", "skim_join_size", "skim_sketch")


def _sql_refusal(fn: str, collation: str) -> str:
    """The jar's words (Args.requireBinaryCollation), which the guarded Python functions say too."""
    return (f"{fn}: key has type string collate {collation}: keys equal under collation {collation} "
            ".*lower\\(key\\) COLLATE UTF8_BINARY")


def _refusal(column: str, collation: str) -> str:
    return (f"key column '{column}': key has type string collate {collation}: keys equal under collation "
            f"{collation} .*lower\\(key\\) COLLATE UTF8_BINARY")


@pytest.fixture
def guarded(spark):
    """The Python SQL functions under the jar's names (what a session without the jar registers), their builders
    guarded as ``spark_udaf.register`` guards them; the default registration is restored afterwards."""
    fns = python_functions()
    native.drop_injected(spark, FALLBACKS)
    for name in FALLBACKS:
        spark.udf.register(name, fns[name])
    spark.udtf.register("skim_sketch_partials", partials_udtf())
    names = FALLBACKS + ("skim_sketch_partials",)
    assert sorted(guard(spark, names)) == sorted(set(names) & set(KEYED))
    yield spark
    spark_udaf.register(spark)


@pytest.mark.parametrize("collation", COLLATIONS)
def test_sql_text_calling_the_python_functions_is_refused_when_analysed(guarded, collation):
    """Spark drops the collation before Python: the guarded builders refuse it on the driver, with the jar's words
    (the first argument, a named key, the key of skim_frequency, an earlier Python name)."""
    calls = [f"skim_sketch_agg(k COLLATE {collation})", f"skim_sketch_agg(key => k COLLATE {collation}, nbytes => 4096)",
             f"skim_hash_sketch_agg(k COLLATE {collation}, width => 64, depth => 3)",
             f"skim_sketch(k COLLATE {collation}, 64, 3, 0)"]
    for call in calls:
        fn = call.split("(")[0]
        with pytest.raises(Exception, match="KeyTypeError: " + _sql_refusal(fn, collation)):
            guarded.sql(f"SELECT {call} FROM ({NAMES})")
    with pytest.raises(Exception, match=_sql_refusal("skim_frequency", collation)):
        guarded.sql(f"SELECT skim_frequency(s, 'alice' COLLATE {collation}) FROM (SELECT skim_sketch_agg(k) AS s "
                    f"FROM ({NAMES}))")
    table = f"TABLE(SELECT k COLLATE {collation} AS key, k AS grp FROM ({NAMES}))"
    with pytest.raises(Exception, match="KeyTypeError: " + _sql_refusal("skim_sketch_partials", collation)):
        guarded.sql(f"SELECT * FROM skim_sketch_partials({table}, 64, 3, 0)")
    row = guarded.sql(f"SELECT skim_sketch_agg(lower(k COLLATE {collation}) COLLATE UTF8_BINARY, nbytes => 4096) "
                      f"AS s FROM ({NAMES})").collect()[0]  # the remedy: the core's bytes of the lower-cased keys
    assert bytes(row.s) == ss.SkimmedSketch.for_bytes(4096).update([k.lower() for k in KEYS]).to_bytes()


def _collated(spark, collation: str):
    return spark.sql(f"SELECT k COLLATE {collation} AS k, named_struct('a', k COLLATE {collation}) AS s "
                     f"FROM ({NAMES})")


@pytest.mark.parametrize("collation", COLLATIONS)
def test_the_column_helpers_calling_the_python_functions_refuse_a_collated_key(guarded, collation):
    df = _collated(guarded, collation)
    calls = {"skim_sketch_agg": SF.skim_sketch_agg("k", nbytes=4096),
             "skim_hash_sketch_agg": SF.skim_hash_sketch_agg("k", 64, 3)}
    for fn, call in calls.items():
        with pytest.raises(Exception, match=_sql_refusal(fn, collation)):
            df.agg(call).collect()
    sk = guarded.sql(f"SELECT skim_sketch_agg(k, nbytes => 4096) AS sk FROM ({NAMES})")
    with pytest.raises(Exception, match=_sql_refusal("skim_frequency", collation)):
        sk.crossJoin(df).select(SF.skim_frequency("sk", df.k)).collect()


def test_binary_strings_and_other_keys_pass_the_guard_unchanged(guarded):
    """Plain strings, explicit UTF8_BINARY (the remedy) and integers give the core's bytes through the guard."""
    lower = guarded.sql(f"SELECT lower(k) COLLATE UTF8_BINARY AS k, k AS plain, length(k) AS n FROM ({NAMES})")
    row = lower.agg(SF.skim_sketch_agg("k", nbytes=4096).alias("l")).collect()[0]
    assert bytes(row.l) == ss.SkimmedSketch.for_bytes(4096).update([k.lower() for k in KEYS]).to_bytes()
    plain = lower.agg(SF.skim_hash_sketch_agg("plain", 64, 3).alias("p")).collect()[0].p
    assert bytes(plain) == ss.HashSketch(64, 3).update(KEYS).to_bytes()
    ints = lower.agg(SF.skim_sketch_agg(lower.n, nbytes=4096).alias("i")).collect()[0].i
    assert bytes(ints) == ss.SkimmedSketch.for_bytes(4096).update([len(k) for k in KEYS]).to_bytes()
    sk = lower.agg(SF.skim_sketch_agg("k", nbytes=4096).alias("sk"))
    probe = guarded.sql("SELECT 'alice' AS q")
    freq = sk.crossJoin(probe).select(SF.skim_frequency("sk", probe.q).alias("f")).collect()[0].f
    assert freq == 3.0  # 'alice' three times: the remedy counts the collation's equal keys as one


def test_the_column_helpers_keep_the_jar_s_names(spark):
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
