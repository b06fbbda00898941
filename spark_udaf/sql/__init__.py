"""Spark SQL functions on sketch bytes, registered by :func:`register` (docs/spark.md).

One family of names, the same as the native (JVM) functions of the jar
(:mod:`spark_udaf.native`, docs/native.md), with the same argument lists
(positional or named, ``nbytes => 32768``) and defaults::

    skim_sketch_agg(key [, weight] [, nbytes [, seed] | width, depth, seed])  -- the library default
    skim_hash_sketch_agg(key [, weight], width, depth [, seed])
    skim_union_agg(sketch)            -- merge of sketch bytes (NULLs skipped)
    skim_union(a, b)                  -- merge of two sketches
    skim_join_size(a, b [, confidence])          DOUBLE   join-size estimate
    skim_join_size_bounds(a, b [, confidence])   STRUCT<value, low, high, confidence, method>
    skim_self_join_size(a [, confidence])        DOUBLE
    skim_self_join_size_bounds(a [, confidence]) STRUCT<...>
    skim_frequency(a, key [, confidence])        DOUBLE   point estimate of key's frequency
    skim_sketch_info(a)               STRUCT<kind, width, depth, seed, total_weight, null_weight, nbytes>

When the session's JVM has the jar, the builders and unions are the native
ones (map-side partial aggregation); the Python implementations here are
registered under those names only when it has not. The estimates are the
native ones too (every sketch kind, the core's answers: golden vectors), unless
``register(spark, estimates="python")`` or another default ``confidence``
asks for the Python functions below. The Python functions bind their
arguments as the native ones do and raise the same messages; the one
difference: a Python aggregate sees values, not whether an argument is a
constant, so an integer argument of the Python builders right after ``key``
that could be the weight or the first size parameter is refused: name it,
``weight => col`` (:func:`spark_udaf.sql.args.sketch_agg_spec`, docs/spark.md).
``DESCRIBE FUNCTION EXTENDED`` shows usage and examples for all of them
(:data:`USAGE`, :func:`describe`).

Modules: this one registers; :mod:`spark_udaf.sql.args` binds the arguments,
:mod:`spark_udaf.sql.guard` refuses collated keys,
:mod:`spark_udaf.sql.fallbacks` holds the plain-Python implementations,
:mod:`spark_udaf.sql.udfs` their Arrow UDF wrappers and :mod:`spark_udaf.sql.docs`
the DESCRIBE FUNCTION text.

Python-only functions, kept under their earlier names (documented aliases)::

    skim_sketch(key, width, depth, seed)                  -- = skim_hash_sketch_agg(key, width, depth, seed)
    skim_sketch_weighted(key, weight, width, depth, seed) -- HashSketch, weight per row
    skim_skimmed_sketch(key, width, depth, seed, domain)  -- SkimmedSketch, keys in [0, domain);
                                                             domain NULL: unbounded int/string keys
    skim_merge(sketch)                                    -- = skim_union_agg(sketch)
    skim_sketch_partials(TABLE(SELECT k AS key [, w AS weight] [, g AS grp] FROM t),
                         width, depth, seed [, domain])
      -> rows (grp STRING, sketch BINARY): one partial sketch per input partition
         (and grp value); merge them with skim_merge(sketch) [GROUP BY grp].

Scalar functions return NULL for NULL arguments.

Collated keys. The jar's functions refuse a STRING key in a collation other
than UTF8_BINARY when the query is analysed (docs/inputs.md). Spark passes a
collated string to a Python function as plain text, its collation dropped, so
:func:`register` wraps the key-taking Python functions' builders in a classic
session's registry (:mod:`spark_udaf.sql.guard`): they refuse it when the query
is analysed too, with the same message. A Spark Connect client cannot wrap its
server's functions, nor are functions registered by hand guarded: there,
normalise such keys first (``lower(key) COLLATE UTF8_BINARY``).

Partial aggregation. PySpark Python aggregates never aggregate map-side: all
rows of a group are shuffled to one Python worker. The Python builders stream
those rows in Arrow batches (memory: one batch plus one sketch, but the whole
group's rows cross the network and one task does all the hashing);
``skim_merge`` receives the group's sketch bytes at once (memory: all sketches
of the group — fine, they are small and few). ``skim_sketch_partials`` builds
per partition with no row shuffle: use it (or :func:`spark_udaf.sketch_column`
/ :func:`spark_udaf.sketch_by` from Python, or the native functions) for large tables.
Spark restrictions: a Python aggregate cannot share a SELECT with built-in
aggregates, a Python builder must be the only Python aggregate of
its SELECT, and a global Python aggregate over zero rows returns zero rows.
"""

from __future__ import annotations

from .. import native
from .._common import worker_python
from .args import DEFAULT_NBYTES, MIN_NBYTES, MIN_WIDTH
from .docs import USAGE, describe, document
from .guard import guard
from .fallbacks import (
    build_from_batches, estimate_call, frequency_impl, info_impl, join_impl, merge_impl, self_join_impl, union_impl,
)
from .udfs import ESTIMATE_TYPE, INFO_TYPE, partials_udtf, python_functions, skim_merge_udf

__all__ = ["register", "describe", "python_functions", "FUNCTIONS", "ALIASES", "USAGE", "ESTIMATES", "MIN_NBYTES",
           "MIN_WIDTH", "DEFAULT_NBYTES", "ESTIMATE_TYPE", "INFO_TYPE", "skim_merge_udf", "MERGE_SUBPLANS_RULE",
           "build_from_batches", "estimate_call", "frequency_impl", "info_impl", "join_impl", "merge_impl",
           "self_join_impl", "union_impl"]

#: Where the estimate functions run: "native" (the JVM: every sketch kind, answers identical to the
#: core's, no Python in the plan), "python" (Python UDFs), or "auto" (native when the session's JVM
#: has the jar and the default confidence is the JVM's 0.95, else Python).
ESTIMATES = ("auto", "python", "native")


#: The one family of SQL function names (native when the JVM has the jar, else these Python functions).
FUNCTIONS = ("skim_sketch_agg", "skim_hash_sketch_agg", "skim_union_agg", "skim_union", "skim_join_size",
             "skim_join_size_bounds", "skim_self_join_size", "skim_self_join_size_bounds", "skim_frequency",
             "skim_sketch_info")
#: Earlier Python names, kept as documented aliases and Python-only functions (module doc).
ALIASES = ("skim_sketch", "skim_sketch_weighted", "skim_skimmed_sketch", "skim_merge", "skim_sketch_partials")
_NATIVE_BUILDS = ("skim_sketch_agg", "skim_hash_sketch_agg", "skim_union_agg", "skim_union")
_ESTIMATE_NAMES = ("skim_join_size", "skim_join_size_bounds", "skim_self_join_size", "skim_self_join_size_bounds",
                   "skim_frequency", "skim_sketch_info")


#: Spark 4.3 optimizer rule that crashes on plans with Python aggregates
#: (``UnevaluableAggregateFunc.aggBufferAttributes should not be called``) when
#: it tries to merge two similar aggregate subplans, e.g. two ``skim_merge``
#: subqueries over one stored-sketch table. Excluding it only disables that
#: plan-merging optimisation.
MERGE_SUBPLANS_RULE = "org.apache.spark.sql.execution.planmerging.MergeSubplans"


def _exclude_rule(spark, rule: str) -> None:
    key = "spark.sql.optimizer.excludedRules"
    current = spark.conf.get(key, "") or ""
    rules = [r for r in current.split(",") if r.strip()]
    if rule not in rules:
        spark.conf.set(key, ",".join(rules + [rule]))


def register(spark, confidence: float = 0.95, exclude_merge_subplans: bool = True,
             estimates: str = "auto") -> tuple:
    """Register the ``skim_*`` SQL functions in ``spark`` (see the module doc) -> their names.

    When the session's JVM has the native jar (:func:`spark_udaf.configure`), its
    functions keep the names of :data:`FUNCTIONS` for building and merging; the
    estimate functions stay the JVM's (``estimates="native"``, and ``"auto"``, the
    default, when ``confidence`` is 0.95: no Python in the plan, every sketch kind)
    or are the Python ones (``estimates="python"``, or ``"auto"`` with another
    ``confidence``). Either way the estimates take an optional ``confidence`` argument
    (``confidence`` here is the Python ones' default; the JVM's is 0.95). Without
    the jar every name is a Python function, with the native argument lists.
    :data:`ALIASES` are registered too. In a classic session every registered
    function then shows its usage and examples in ``DESCRIBE FUNCTION`` (:func:`spark_udaf.sql.docs.document`).
    With ``exclude_merge_subplans`` (default) the session's
    ``spark.sql.optimizer.excludedRules`` gains :data:`MERGE_SUBPLANS_RULE`,
    working around a Spark planner crash on queries that combine several
    Python aggregates over one table. A classic local session whose workers would
    start a bare ``python3`` gets this interpreter instead (``_common.worker_python``).
    """
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    if estimates not in ESTIMATES:
        raise ValueError(f"estimates must be one of {ESTIMATES}, got {estimates!r}")
    worker_python(spark)
    if exclude_merge_subplans:
        _exclude_rule(spark, MERGE_SUBPLANS_RULE)
    native_names = native.register(spark)
    if estimates == "auto":
        estimates = "native" if native_names and confidence == 0.95 else "python"
    fns = python_functions(confidence)
    keep = set(native_names) & (set(_NATIVE_BUILDS) | (set(_ESTIMATE_NAMES) if estimates == "native" else set()))
    if estimates == "native" and not native_names:
        raise ValueError("estimates='native' needs the native jar in the session's JVM (spark_udaf.configure)")
    python_names = [name for name in fns if name not in keep]  # fns: python_functions(confidence)
    native.drop_injected(spark, [n for n in python_names if n in native_names])
    for name in python_names:
        spark.udf.register(name, fns[name])
    spark.udtf.register("skim_sketch_partials", partials_udtf())
    document(spark, python_names + ["skim_sketch_partials"])
    guard(spark, python_names + ["skim_sketch_partials"])  # collated keys refused when analysed (sql.guard)
    return tuple(dict.fromkeys(FUNCTIONS + ALIASES + native_names))
