"""Hostile inputs: the core, the Spark Python API and Spark SQL give the same outcome.

Each case is a small table written in Spark SQL (so its Spark types are
exact). The same table goes through

* the core: ``HashSketch.update`` and ``exact_self_join_size`` on the Arrow
  columns Spark hands to Python (``DataFrame.toArrow``), and, where given, on
  plain Python values;
* the Spark Python API: ``sketch_column`` and ``exact_self_join_size``;
* SQL: ``skim_sketch`` / ``skim_sketch_weighted`` and ``skim_merge`` over
  ``skim_sketch_partials``;

and every path must give the same sketch bytes (and the same exact size), or
each must raise an error whose message matches the case's pattern (which
names the argument: key or weight). The rules are those of docs/inputs.md.
SQL picks its counters from the weight's type (float/double and fractional
DECIMAL: float64, otherwise int64); the other paths use that same ``dtype``.
A global SQL aggregate over zero rows returns no row, which counts as the
empty sketch.
"""

import re
from dataclasses import dataclass
from decimal import Decimal

import pytest

import skimsketch as ss
import spark_udaf

pa = pytest.importorskip("pyarrow")

pytestmark = pytest.mark.spark

# the default run keeps one case of each family (key types, weight types, NULLs, overflow, skimmed domains);
# these siblings run with -m slow (tests/conftest.py)
SLOW_PARAMS = {"test_core_spark_api_and_sql_agree": {
    "double key 2**53", "array keys", "double key infinity", "skimmed, string keys for a bounded domain",
    "double key 1.5", "map keys", "huge float weights overflow float64 counters",
    "all-NULL (void) weights skip every row", "string weights", "timestamp keys", "tiny float weights",
    "mixed int and double weights: Spark coerces to double", "tinyint keys", "smallint keys", "float key 2**24",
    "DECIMAL(38,0) weights within int64: exact integers", "sign: a delete then re-inserted",
    "skimmed, a key outside the domain", "binary keys hash as their bytes"}}

W, D, S = 64, 3, 7


@dataclass(frozen=True)
class Case:
    name: str
    query: str  # a SELECT giving column k (and w when weighted)
    weighted: bool = False
    dtype: str = "int64"
    error: str | None = None  # regex every path's error must match; None: every path succeeds
    python: tuple | None = None  # (keys, weights) as plain Python values giving the same bytes
    exact_error: str | None = None  # when the exact sizes fail differently from the sketches ("" : they succeed)
    skimmed: bool = False  # a SkimmedSketch (SQL: skim_skimmed_sketch) over keys in [0, domain), or unbounded
    domain: int | None = None
    knows: bool | None = None  # the sign flag of the bytes (docs/format.md); None: what ``python`` tells


def _vals(rows, ty):
    return "SELECT * FROM VALUES " + ", ".join(rows) + f" AS t({ty})"


CASES = [
    # -- keys ----------------------------------------------------------------------
    Case("bigint keys, nulls", _vals(["(1)", "(2)", "(2)", "(NULL)", "(-9223372036854775808)"], "k"),
         python=([1, 2, 2, None, -2**63], None)),
    Case("tinyint keys", "SELECT CAST(k AS TINYINT) AS k FROM VALUES (1), (-128), (127), (NULL) AS t(k)",
         python=([1, -128, 127, None], None)),
    Case("smallint keys", "SELECT CAST(k AS SMALLINT) AS k FROM VALUES (1), (-32768), (32767) AS t(k)",
         python=([1, -32768, 32767], None)),
    Case("int keys", "SELECT CAST(k AS INT) AS k FROM VALUES (5), (2147483647) AS t(k)",
         python=([5, 2**31 - 1], None)),
    Case("double keys, integral, NaN and NULL",
         "SELECT CAST(k AS DOUBLE) AS k FROM VALUES ('1'), ('-3'), ('NaN'), (NULL), ('9007199254740991') AS t(k)",
         python=([1, -3, None, None, 2**53 - 1], None)),
    Case("float keys, integral", "SELECT CAST(k AS FLOAT) AS k FROM VALUES (1), (16777215) AS t(k)",
         python=([1, 2**24 - 1], None)),
    Case("float key 2**24", "SELECT CAST(16777216 AS FLOAT) AS k", error=r"float32 key.*2\*\*24"),
    Case("double key 2**53", "SELECT CAST(9007199254740992 AS DOUBLE) AS k", error=r"float key.*2\*\*53"),
    Case("double key 1.5", "SELECT CAST(1.5 AS DOUBLE) AS k", error=r"float key.*(integral|2\*\*53)"),
    Case("double key infinity", "SELECT CAST('Infinity' AS DOUBLE) AS k", error=r"float key"),
    Case("string keys", _vals(["('a')", "('')", "(NULL)", "('é')"], "k"), python=(["a", "", None, "é"], None)),
    Case("binary keys hash as their bytes", "SELECT CAST(k AS BINARY) AS k FROM VALUES ('a'), (''), ('é') AS t(k)",
         python=(["a", "", "é"], None)),
    Case("bool keys", "SELECT true AS k", error=r"(?i)key.*bool"),
    Case("date keys", "SELECT DATE'2024-01-01' AS k", error=r"(?i)key.*date"),
    Case("timestamp keys", "SELECT TIMESTAMP'2024-01-01 00:00:00' AS k", error=r"(?i)key.*timestamp"),
    Case("decimal keys", "SELECT CAST(1 AS DECIMAL(10,0)) AS k", error=r"(?i)key.*decimal"),
    Case("array keys", "SELECT array(1, 2) AS k", error=r"(?i)key.*(array|list)"),
    Case("struct keys", "SELECT named_struct('a', 1) AS k", error=r"(?i)key.*struct"),
    Case("map keys", "SELECT map('a', 1) AS k", error=r"(?i)key.*map"),
    Case("all-NULL (void) keys", "SELECT NULL AS k FROM range(3)", python=([None, None, None], None)),
    Case("all-NULL bigint keys", "SELECT CAST(NULL AS BIGINT) AS k FROM range(2)", python=([None, None], None)),
    Case("empty table", "SELECT id AS k FROM range(0)", python=([], None)),
    Case("mixed int and string: Spark types the column first", "SELECT 1 AS k UNION ALL SELECT '2' AS k",
         python=([1, 2], None)),
    # -- weights -------------------------------------------------------------------
    Case("bigint weights, nulls skip their row, negatives delete",
         _vals(["(1, 3)", "(2, -1)", "(2, NULL)", "(NULL, 4)"], "k, w"), weighted=True,
         python=([1, 2, 2, None], [3, -1, None, 4]), knows=False),
    # -- the sign flag: every weight of a non-null key >= 0, ever (docs/format.md, version 4) ----------
    Case("sign: a delete then re-inserted", _vals(["(1, 1)", "(2, 1)", "(2, -1)", "(2, 1)"], "k, w"), weighted=True,
         python=([1, 2, 2, 2], [1, 1, -1, 1]), knows=False),
    Case("sign: a negative null weight and zero weights keep it", _vals(["(1, 2)", "(NULL, -4)", "(3, 0)"], "k, w"),
         weighted=True, python=([1, None, 3], [2, -4, 0]), knows=True),
    Case("sign: double weights, -0.0 is not negative",
         "SELECT k, CAST(w AS DOUBLE) AS w FROM VALUES (1, '0.5'), (2, '-0.0') AS t(k, w)", weighted=True,
         dtype="float64", python=([1, 2], [0.5, -0.0]), knows=True),
    Case("sign: a negative double weight", _vals(["(1, 0.5D)", "(2, -0.5D)", "(2, 0.5D)"], "k, w"), weighted=True,
         dtype="float64", python=([1, 2, 2], [0.5, -0.5, 0.5]), knows=False),
    Case("DECIMAL(10,2) weights: float counters", _vals(["(1, 4.38BD)", "(2, 1.99BD)", "(2, NULL)"], "k, w"),
         weighted=True, dtype="float64", python=([1, 2], [Decimal("4.38"), Decimal("1.99")])),
    Case("DECIMAL(10,0) weights: exact integers",
         "SELECT k, CAST(w AS DECIMAL(10,0)) AS w FROM VALUES (1, 4), (2, -7) AS t(k, w)", weighted=True,
         python=([1, 2], [4, -7])),
    Case("DECIMAL(38,0) weights within int64: exact integers",
         "SELECT k, CAST(w AS DECIMAL(38,0)) AS w FROM VALUES (1, 4611686018427387904), (2, -3) AS t(k, w)",
         weighted=True, python=([1, 2], [2**62, -3])),
    Case("DECIMAL(38,0) weight beyond int64",
         "SELECT 1 AS k, CAST('100000000000000000000' AS DECIMAL(38,0)) AS w", weighted=True,
         error=r"weights? value .*does not fit in int64"),
    Case("double weights: NaN and NULL skip their row",
         "SELECT k, CAST(w AS DOUBLE) AS w FROM VALUES (1, '0.5'), (2, 'NaN'), (3, NULL), (1, '-0.25') AS t(k, w)",
         weighted=True, dtype="float64", python=([1, 1], [0.5, -0.25])),
    Case("infinite weight", "SELECT 1 AS k, CAST('Infinity' AS DOUBLE) AS w", weighted=True, dtype="float64",
         error=r"(?i)weights?.*infinity"),
    Case("huge int weights overflow int64 counters",
         "SELECT 1 AS k, 4611686018427387904 AS w FROM range(2)", weighted=True, error=r"int64", exact_error=""),
    Case("huge float weights overflow float64 counters",
         "SELECT 1 AS k, CAST(1e308 AS DOUBLE) AS w FROM range(2)", weighted=True, dtype="float64",
         error=r"(?i)overflow|infinity", exact_error=""),
    Case("tiny float weights", "SELECT k, CAST(w AS DOUBLE) AS w FROM VALUES (1, 5e-324), (2, 1e-300) AS t(k, w)",
         weighted=True, dtype="float64", python=([1, 2], [5e-324, 1e-300])),
    Case("bool weights", "SELECT 1 AS k, true AS w", weighted=True, error=r"(?i)weights?.*bool"),
    Case("string weights", "SELECT 1 AS k, '1' AS w", weighted=True, error=r"(?i)weights?.*str"),
    Case("all-NULL (void) weights skip every row", "SELECT 1 AS k, NULL AS w FROM range(2)", weighted=True,
         python=([], [])),
    # -- bounded and unbounded skimmed sketches (skim_skimmed_sketch) ----------------------------
    Case("skimmed, keys inside the domain", _vals(["(0)", "(99)", "(5)", "(NULL)"], "k"), skimmed=True, domain=100,
         python=([0, 99, 5, None], None)),
    Case("skimmed, a key outside the domain", _vals(["(0)", "(100)"], "k"), skimmed=True, domain=100,
         error=r"key 100 is outside the declared domain \[0, 100\)", exact_error=""),
    Case("skimmed, string keys for a bounded domain", _vals(["('a')"], "k"), skimmed=True, domain=100,
         error=r"(?i)key.*domain", exact_error=""),
    Case("skimmed, unbounded string keys", _vals(["('a')", "('b')", "('a')"], "k"), skimmed=True,
         python=(["a", "b", "a"], None)),
    Case("mixed int and double weights: Spark coerces to double",
         "SELECT 1 AS k, 2 AS w UNION ALL SELECT 2 AS k, 0.5D AS w", weighted=True, dtype="float64",
         python=([1, 2], [2.0, 0.5])),
]


@pytest.fixture(scope="module")
def spark_sql(spark):
    spark_udaf.register(spark)
    return spark


def _outcome(fn):
    """("ok", value) or ("error", message)."""
    try:
        return ("ok", fn())
    except Exception as e:  # every path's error is compared by its message below
        return ("error", f"{type(e).__name__}: {e}")


def _sketch(case):
    if case.skimmed:
        return ss.SkimmedSketch(W, D, seed=S, domain=case.domain, dtype=case.dtype)
    return ss.HashSketch(W, D, seed=S, dtype=case.dtype)


def _sql_bytes(spark, case, partials: bool):
    domain = "NULL" if case.domain is None else case.domain
    if partials:
        cols = "k AS key, w AS weight" if case.weighted else "k AS key"
        params = f"{W}, {D}, {S}" + (f", {domain}" if case.skimmed else "")
        q = f"SELECT skim_merge(sketch) AS s FROM skim_sketch_partials(TABLE(SELECT {cols} FROM hostile), {params})"
    elif case.skimmed:
        q = f"SELECT skim_skimmed_sketch(k, {W}, {D}, {S}, {domain}) AS s FROM hostile"
    elif case.weighted:
        q = f"SELECT skim_sketch_weighted(k, w, {W}, {D}, {S}) AS s FROM hostile"
    else:
        q = f"SELECT skim_sketch(k, {W}, {D}, {S}) AS s FROM hostile"
    rows = spark.sql(q).collect()
    assert len(rows) <= 1
    if not rows or rows[0].s is None:  # no rows in: no sketch out (Spark), the empty sketch
        return _sketch(case).to_bytes()
    return bytes(rows[0].s)


def _check(case, outcomes):
    if case.error is None:
        assert all(kind == "ok" for kind, _ in outcomes.values()), outcomes
        values = {v for _, v in outcomes.values()}
        assert len(values) == 1, outcomes
        return values.pop()
    for path, (kind, msg) in outcomes.items():
        assert kind == "error", (path, msg)
        assert re.search(case.error, msg), (path, msg[:2000])
    return None


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_core_spark_api_and_sql_agree(spark_sql, case):
    spark = spark_sql
    df = spark.sql(case.query)
    df.createOrReplaceTempView("hostile")
    table = df.toArrow()
    keys = table.column("k").combine_chunks()
    weights = table.column("w").combine_chunks() if case.weighted else None
    weight = "w" if case.weighted else None
    sketches = {
        "core": _outcome(lambda: _sketch(case).update(keys, weights=weights).to_bytes()),
        "spark api": _outcome(lambda: spark_udaf.sketch_column(df, "k", _sketch(case), weight).to_bytes()),
        "sql aggregate": _outcome(lambda: _sql_bytes(spark, case, partials=False)),
        "sql partials": _outcome(lambda: _sql_bytes(spark, case, partials=True)),
    }
    if case.python is not None:
        sketches["core, Python values"] = _outcome(lambda: _sketch(case).update(*case.python).to_bytes())
    blob = _check(case, sketches)
    knows = case.knows
    if knows is None and case.python is not None:  # no weight of a non-null key is negative
        keys_, weights_ = case.python
        knows = weights_ is None or all(not w < 0 for k, w in zip(keys_, weights_) if k is not None and w is not None)
    if blob is not None and knows is not None:  # the sign flag, the same on every path (the bytes are)
        assert bool(blob[7] & 16) == knows and ss.from_bytes(blob).nonnegative == knows
    exact_case = case if case.exact_error is None else Case(case.name, case.query, error=case.exact_error or None)
    exact = {
        "core": _outcome(lambda: ss.exact_self_join_size(keys, weights)),
        "spark api": _outcome(lambda: spark_udaf.exact_self_join_size(df, "k", weight)),
    }
    if case.python is not None:
        exact["core, Python values"] = _outcome(lambda: ss.exact_self_join_size(*case.python))
    value = _check(exact_case, exact)
    if value is not None:  # the same number, and the same kind of number (int, or float for float weights)
        assert {type(v) for _, v in exact.values()} == {float if case.dtype == "float64" else int}, exact


def test_integer_sketches_refuse_fractional_decimal_columns_by_type(spark_sql):
    """A DECIMAL(p, s > 0) column is fractional by type: an integer-counter sketch refuses it in the core
    (Arrow decimals) and the API (on the driver), even when this batch's values are integral."""
    df = spark_sql.sql("SELECT 1 AS k, 4.00BD AS w")
    w = df.toArrow().column("w").combine_chunks()
    with pytest.raises(ss.KeyTypeError, match="fractional DECIMAL.*dtype='float64'"):
        ss.HashSketch(W, D, seed=S).update(pa.array([1]), weights=w)
    with pytest.raises(ss.KeyTypeError, match=r"decimal\(3,2\).*dtype='float64'"):
        spark_udaf.sketch_column(df, "k", ss.HashSketch(W, D, seed=S), weight="w")
    # untyped Python Decimals carry no type: integral values are exact integers
    assert ss.HashSketch(W, D, seed=S).update([1], weights=[Decimal("4.00")]).total_weight == 4


def test_core_only_inputs_spark_cannot_express():
    """Unsigned Arrow/numpy keys and mixed-type Python columns have no Spark column type."""
    import numpy as np

    want = ss.HashSketch(W, D, seed=S).update([1, 200, 70000]).to_bytes()
    for t in (pa.uint32(), pa.uint64(), pa.int32()):
        assert ss.HashSketch(W, D, seed=S).update(pa.array([1, 200, 70000], t)).to_bytes() == want
    assert ss.HashSketch(W, D, seed=S).update(np.array([1, 200, 70000], np.uint64)).to_bytes() == want
    with pytest.raises(ss.KeyTypeError, match="unsigned key 9223372036854775808 does not fit in int64"):
        ss.HashSketch(W, D, seed=S).update(pa.array([2**63], pa.uint64()))
    with pytest.raises(ss.KeyTypeError, match="keys mix integers and strings"):
        ss.HashSketch(W, D, seed=S).update([1, "a"])
    with pytest.raises(ss.KeyTypeError, match="non-integral weight"):
        ss.HashSketch(W, D, seed=S).update([1, 2], weights=[1, 2.5])


def test_what_the_schema_tells_is_raised_on_the_driver_before_any_scan(spark_sql):
    """Tables that fail when scanned: the schema errors must come first, from the driver."""
    spark = spark_sql
    poisoned = "CAST(CASE WHEN id >= 0 THEN raise_error('scanned') END AS {t})"
    strings = spark.sql(f"SELECT {poisoned.format(t='STRING')} AS k, 1L AS w FROM range(3)")
    ints = spark.sql(f"SELECT {poisoned.format(t='BIGINT')} AS k, 'x' AS s, 2.5BD AS m FROM range(3)")
    with pytest.raises(ss.KeyDomainError, match="key column 'k' has type string.*domain=None"):
        spark_udaf.sketch_column(strings, "k", ss.SkimmedSketch(W, D, seed=S, domain=1000))
    with pytest.raises(ss.KeyTypeError, match="weight column 's' has type string"):
        spark_udaf.estimate_join_size(ints, "k", ints, "k", rweight="s", sketch=ss.HashSketch(W, D, seed=S))
    with pytest.raises(ss.KeyTypeError, match=r"weight column 'm' has type decimal\(2,1\)"):
        spark_udaf.estimate_join_size(ints, "k", ints, "k", rweight="m", sketch=ss.HashSketch(W, D, seed=S))
    with pytest.raises(ValueError, match="key and weight must be different columns"):
        spark_udaf.sketch_column(ints, "k", ss.HashSketch(W, D, seed=S), weight="k")
    with pytest.raises(Exception, match="scanned"):  # the tables really fail when scanned
        spark_udaf.sketch_column(ints, "k", ss.HashSketch(W, D, seed=S))


def test_an_all_null_key_column_joins_any_key_column(spark_sql):
    nulls = spark_sql.sql("SELECT NULL AS k FROM range(2)")
    strings = spark_sql.sql("SELECT 'a' AS k")
    assert spark_udaf.exact_join_size(nulls, "k", strings, "k") == 0 == ss.exact_join_size([None, None], ["a"])
    a, b = spark_udaf.sketch_pair(nulls, "k", strings, "k", ss.HashSketch(W, D, seed=S))
    assert a.null_weight == 2 and a.join_size(b).value == 0
