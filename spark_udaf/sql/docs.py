"""DESCRIBE FUNCTION text of the Python SQL functions: usage, arguments and examples (docs/spark.md).

:data:`USAGE` holds the text (the native functions carry SkimFunctions.java's, which
says the same); :func:`describe` prints it for sessions that cannot show it (Spark
Connect clients), :func:`document` puts it into a classic session's function registry.
"""

from __future__ import annotations

__all__ = ["USAGE", "describe", "document"]


#: What DESCRIBE FUNCTION shows for the Python functions (the native ones carry SkimFunctions.java's):
#: name -> (group, usage, arguments, examples). :func:`describe` prints it too.
USAGE = {
    "skim_sketch_agg": (
        "agg_funcs",
        "skim_sketch_agg(key [, weight] [, nbytes [, seed]]) - the library's default sketch of key, "
        "SkimmedSketch.for_bytes(nbytes, seed) (nbytes 16384 and seed 0 by default; nbytes >= 1024), as BINARY; "
        "skim_sketch_agg(key [, weight], width, depth, seed) - SkimmedSketch(width, depth, seed). Python "
        "implementation (it cannot tell a column from a constant): an integer argument after key that could be "
        "the weight or the first size parameter is refused; name it (weight => col, nbytes => n)",
        "key: the join key (integer types, float/double holding integers, string, binary); weight: an optional "
        "numeric column (SUM sketches); nbytes, seed, width, depth: integer constants, positional or named",
        ("SELECT day, skim_sketch_agg(user_id) AS sk, count(*) FROM events GROUP BY day",
         "SELECT skim_sketch_agg(user_id, weight => amount, nbytes => 32768, seed => 7) FROM events")),
    "skim_hash_sketch_agg": (
        "agg_funcs",
        "skim_hash_sketch_agg(key [, weight], width, depth [, seed]) - a hash (Fast-AGMS) sketch of key, "
        "HashSketch(width, depth, seed) (width >= 16), as BINARY. Python implementation (it "
        "cannot tell a column from a constant): an integer argument after key that could be the weight or width "
        "is refused; name it (weight => col, width => n)",
        "key, weight: as skim_sketch_agg; width, depth, seed: integer constants, positional or named",
        ("SELECT skim_hash_sketch_agg(user_id, 2048, 5) FROM events",
         "SELECT skim_hash_sketch_agg(user_id, width => 2048, depth => 5, seed => 1) FROM events")),
    "skim_union_agg": (
        "agg_funcs", "skim_union_agg(sketch) - the merge of the sketches (NULLs skipped; NULL when there is none)",
        "sketch: BINARY sketch bytes of one kind, shape and seed",
        ("SELECT skim_union_agg(sk) FROM daily WHERE day BETWEEN '2026-11-01' AND '2026-11-07'",)),
    "skim_union": (
        "misc_funcs", "skim_union(a, b) - the merge of two sketches (NULL if either is NULL)",
        "a, b: BINARY sketch bytes", ("SELECT skim_union(a.sk, b.sk) FROM a, b",)),
    "skim_join_size": (
        "misc_funcs", "skim_join_size(a, b [, confidence]) - the estimated size of the equi-join of the sketched "
        "columns (SUM of weights with weighted sketches), as DOUBLE",
        "a, b: BINARY sketches of one kind, shape and seed; confidence: a constant in (0, 1), 0.95 by default",
        ("SELECT skim_join_size(o.sk, v.sk) FROM o CROSS JOIN v",)),
    "skim_join_size_bounds": (
        "misc_funcs", "skim_join_size_bounds(a, b [, confidence]) - the join-size estimate with its interval, "
        "STRUCT<value, low, high, confidence, method>",
        "a, b: BINARY sketches of one kind, shape and seed; confidence: a constant in (0, 1), 0.95 by default",
        ("SELECT skim_join_size_bounds(o.sk, v.sk, confidence => 0.99).low FROM o CROSS JOIN v",)),
    "skim_self_join_size": (
        "misc_funcs", "skim_self_join_size(a [, confidence]) - the estimated self-join size (sum of squared "
        "frequencies), as DOUBLE", "a: BINARY sketch bytes; confidence: a constant in (0, 1), 0.95 by default",
        ("SELECT skim_self_join_size(sk) FROM daily",)),
    "skim_self_join_size_bounds": (
        "misc_funcs", "skim_self_join_size_bounds(a [, confidence]) - the self-join size with its interval, "
        "STRUCT<value, low, high, confidence, method>",
        "a: BINARY sketch bytes; confidence: a constant in (0, 1), 0.95 by default",
        ("SELECT skim_self_join_size_bounds(sk) FROM daily",)),
    "skim_frequency": (
        "misc_funcs", "skim_frequency(a, key [, confidence]) - the estimated frequency (summed weight) of key in the "
        "sketch, as DOUBLE", "a: BINARY sketch bytes; key: a key of the sketch's type (integer or string/binary); "
        "confidence: a constant in (0, 1), 0.95 by default", ("SELECT skim_frequency(sk, 42) FROM daily",)),
    "skim_sketch_info": (
        "misc_funcs", "skim_sketch_info(a) - the sketch's description, STRUCT<kind, width, depth, seed, "
        "total_weight, null_weight, nbytes>", "a: BINARY sketch bytes",
        ("SELECT skim_sketch_info(sk).total_weight FROM daily",)),
    "skim_sketch": (
        "agg_funcs", "skim_sketch(key, width, depth, seed) - HashSketch(width, depth, seed) of key, as BINARY "
        "(= skim_hash_sketch_agg(key, width, depth, seed))",
        "key: the join key; width, depth, seed: integer constants, all four positional",
        ("SELECT skim_sketch(user_id, 2048, 5, 1) FROM events",)),
    "skim_sketch_weighted": (
        "agg_funcs", "skim_sketch_weighted(key, weight, width, depth, seed) - HashSketch(width, depth, seed) of key "
        "with a weight per row (SUM sketch), as BINARY",
        "key: the join key; weight: a numeric column; width, depth, seed: integer constants, all positional",
        ("SELECT skim_sketch_weighted(user_id, amount, 2048, 5, 1) FROM orders",)),
    "skim_skimmed_sketch": (
        "agg_funcs", "skim_skimmed_sketch(key, width, depth, seed, domain) - SkimmedSketch(width, depth, seed, "
        "domain) of key, keys in [0, domain) (domain NULL: unbounded integer/string keys), as BINARY",
        "key: the join key; width, depth, seed: integer constants; domain: an integer constant or NULL",
        ("SELECT skim_skimmed_sketch(user_id, 1024, 5, 1, 1000000) FROM events",)),
    "skim_merge": (
        "agg_funcs", "skim_merge(sketch) - the merge of the sketches (NULLs skipped; = skim_union_agg(sketch))",
        "sketch: BINARY sketch bytes of one kind, shape and seed",
        ("SELECT day, skim_merge(sketch) FROM partials GROUP BY day",)),
    "skim_sketch_partials": (
        "table_funcs", "skim_sketch_partials(TABLE(SELECT k AS key [, w AS weight] [, g AS grp] FROM t), width, "
        "depth, seed [, domain]) - rows (grp STRING, sketch BINARY): one partial HashSketch (SkimmedSketch with a "
        "domain) per input partition and grp value, built without a shuffle; merge them with skim_merge",
        "TABLE(...): columns key, optional weight and grp; width, depth, seed: integer constants; domain: an "
        "integer constant or NULL (skimmed partials)",
        ("SELECT grp, skim_merge(sketch) FROM skim_sketch_partials(TABLE(SELECT user_id AS key, day AS grp FROM "
         "events), 2048, 5, 1) GROUP BY grp",)),
}


def _info_parts(name: str) -> tuple[str, str, str, str]:
    """(group, usage line, arguments block, examples block) of ``name`` in the ExpressionInfo layout."""
    try:
        group, usage, arguments, examples = USAGE[name]
    except KeyError:
        raise ValueError(f"unknown skim function {name!r}; known: {', '.join(USAGE)}") from None
    args = f"\n    Arguments:\n      * {arguments}\n  "
    ex = "\n    Examples:\n" + "".join(f"      > {e};\n" for e in examples) + "  "
    return group, f"{usage}. Example: {examples[0]}", args, ex


def describe(name: str) -> str:
    """What ``DESCRIBE FUNCTION EXTENDED name`` shows for a ``skim_*`` function (the Python functions' text;
    the native ones say the same): for sessions that cannot show it (Spark Connect clients)."""
    _, usage, args, ex = _info_parts(name)
    return f"Function: {name}\nUsage: {usage}\nExtended Usage:{args}{ex}"


def document(spark, python_names) -> list:
    """Give the session's temporary Python ``skim_*`` functions their DESCRIBE FUNCTION text -> the names done.

    ``spark.udf.register`` records no usage; the function registry's entry is replaced by one with the
    same builder and an ExpressionInfo holding usage, arguments and examples (:data:`USAGE`). The jar's
    functions keep their own text (``SkimFunctions.register``). Classic sessions only (a Connect client
    has no JVM handle).
    """
    jss = getattr(spark, "_jsparkSession", None)
    if jss is None:
        return []
    jvm = spark._jvm
    infos = {}
    make = jvm.org.apache.spark.sql.catalyst.expressions.ExpressionInfo
    for name in python_names:
        group, usage, args, ex = _info_parts(name)
        source = "python_udtf" if group == "table_funcs" else "python_udf"
        infos[name] = make(f"spark_udaf.sql.{name}", None, name, usage, args, ex, "", group, "", "", source)
    done = []
    for registry, fid, name, (_info, builder) in session_functions(jss, infos):
        registry.registerFunction(fid, infos[name], builder)
        done.append(name)
    return done


def session_functions(jss, names):
    """``(registry, id, name, (info, builder))`` of each session function (scalar or table, not a builtin)
    registered under one of ``names`` in the JVM session ``jss``."""
    state = jss.sessionState()
    for registry in (state.functionRegistry(), state.tableFunctionRegistry()):
        ids = registry.listFunction().iterator()
        while ids.hasNext():
            fid = ids.next()
            name = fid.funcName()
            if name not in names or (fid.database().isDefined() and fid.database().get() == "builtin"):
                continue
            entry = registry.lookupFunctionEntry(fid)
            if entry.isDefined():
                yield registry, fid, name, (entry.get()._1(), entry.get()._2())
