"""Spark SQL functions on sketch bytes, registered by :func:`register`.

Aggregates (build and merge sketches; results are the core's bytes)::

    skim_sketch(key, width, depth, seed)                  -- HashSketch of key
    skim_sketch_weighted(key, weight, width, depth, seed) -- HashSketch, weight per row
    skim_skimmed_sketch(key, width, depth, seed, domain)  -- SkimmedSketch, keys in [0, domain);
                                                             domain NULL: unbounded int/string keys
    skim_merge(sketch)                                    -- merge of sketch bytes

Table function (map-side building, the scalable SQL path)::

    skim_sketch_partials(TABLE(SELECT k AS key [, w AS weight] [, g AS grp] FROM t),
                         width, depth, seed [, domain])
      -> rows (grp STRING, sketch BINARY): one partial sketch per input partition
         (and grp value); merge them with skim_merge(sketch) [GROUP BY grp].

Scalar functions (NULL in, NULL out)::

    skim_join_size(a, b)              DOUBLE   join-size estimate
    skim_join_size_bounds(a, b)       STRUCT<value, low, high, confidence, method>
    skim_self_join_size(a)            DOUBLE
    skim_self_join_size_bounds(a)     STRUCT<...>
    skim_frequency(a, key)            DOUBLE   point estimate of key's frequency
    skim_sketch_info(a)               STRUCT<kind, width, depth, seed, total_weight, null_weight, nbytes>

Partial aggregation. PySpark Python aggregates never aggregate map-side: all
rows of a group are shuffled to one Python worker. ``skim_sketch*`` stream
those rows in Arrow batches (memory: one batch plus one sketch, but the whole
group's rows cross the network and one task does all the hashing);
``skim_merge`` receives the group's sketch bytes at once (memory: all sketches
of the group — fine, they are small and few). ``skim_sketch_partials`` builds
per partition with no row shuffle: use it (or :func:`spark_udaf.sketch_column`
/ :func:`spark_udaf.sketch_by` from Python) for large tables.
Spark restrictions: a Python aggregate cannot share a SELECT with built-in
aggregates, a ``skim_sketch*`` aggregate must be the only Python aggregate of
its SELECT, and a global Python aggregate over zero rows returns zero rows.
"""

from __future__ import annotations

from functools import cache
from collections.abc import Iterator

import pyarrow as pa  # type hints of the Arrow UDFs are resolved in this module's globals

import skimsketch as ss

from . import native
from ._common import load_sketch, merge_blobs
from .partials import PartialAccumulator
from .schemas import ESTIMATE, INFO, arrow_type, ddl, estimate_row, sketch_row

__all__ = ["register", "FUNCTIONS", "skim_merge_udf", "MERGE_SUBPLANS_RULE"]

ESTIMATE_TYPE = ddl(ESTIMATE)  # declared in spark_udaf.schemas
INFO_TYPE = ddl(INFO)


# -- plain Python implementations (run inside workers; unit-testable) -------------

def _constant(arr, name: str, fn: str, nullable: bool = False):
    """The single value of a constant parameter column (``None`` when ``nullable`` and all NULL)."""
    import pyarrow.compute as pc

    if nullable and arr.null_count == len(arr):
        return None
    if arr.null_count:
        raise ValueError(f"{fn}: parameter {name} must not be NULL" + (" in some rows only" if nullable else ""))
    mm = pc.min_max(arr).as_py()
    if mm["min"] != mm["max"]:
        raise ValueError(f"{fn}: parameter {name} must be constant within a group, got {mm['min']} and {mm['max']}")
    return mm["min"]


def _new_sketch(fn: str, kind: str, width, depth, seed, domain=None, dtype="int64"):
    try:
        if kind == "skimmed":
            return ss.SkimmedSketch(width=int(width), depth=int(depth), seed=int(seed),
                                    domain=None if domain is None else int(domain), dtype=dtype)
        if kind == "agms":
            return ss.AGMSSketch(width=int(width), depth=int(depth), seed=int(seed), dtype=dtype)
        return ss.HashSketch(width=int(width), depth=int(depth), seed=int(seed), dtype=dtype)
    except (TypeError, ValueError) as e:
        raise ValueError(f"{fn}: bad sketch parameters: {e}") from None


def _weight_dtype(weights) -> str:
    import pyarrow as pa

    t = weights.type
    if pa.types.is_decimal(t):  # DECIMAL(p, 0) sums exactly as integers (or raises), other scales as float64
        return "int64" if t.scale <= 0 else "float64"
    return "float64" if pa.types.is_floating(t) else "int64"


def _check_key_array(fn: str, keys) -> None:
    """SQL key columns follow the Python API's rule (integers, strings, binary; see docs/inputs.md)."""
    import pyarrow as pa

    t = keys.type
    if not (pa.types.is_integer(t) or pa.types.is_floating(t) or pa.types.is_string(t) or pa.types.is_binary(t)
            or pa.types.is_null(t)):
        raise ss.KeyTypeError(f"{fn}: key has type {t}; supported key types are tinyint, smallint, int, bigint, "
                              "float, double (integral values), string, binary (cast it, e.g. CAST(key AS BIGINT))")


def build_from_batches(fn: str, kind: str, batches, weighted: bool, n_params: int) -> bytes | None:
    """Fold an iterator of Arrow column tuples (key[, weight], params...) into sketch bytes."""
    sk = None
    params = None
    for cols in batches:
        keys = cols[0]
        weights = cols[1] if weighted else None
        pcols = cols[2 if weighted else 1:]
        _check_key_array(fn, keys)
        if len(keys) == 0:
            continue
        names = ("width", "depth", "seed", "domain")[:n_params]
        these = tuple(_constant(c, n, fn, nullable=n == "domain") for c, n in zip(pcols, names))
        if params is None:
            params = these
            dtype = _weight_dtype(weights) if weighted else "int64"
            sk = _new_sketch(fn, kind, *these, dtype=dtype)
            acc_template = sk.to_bytes()
            acc = PartialAccumulator(acc_template)
        elif these != params:
            raise ValueError(f"{fn}: sketch parameters must be constant within a group, got {params} and {these}")
        acc.add(keys, weights)
    if sk is None:
        return None
    out = acc.results()
    return out[0][1] if out else sk.to_bytes()


def merge_impl(blobs) -> bytes | None:
    """``skim_merge``: merge of non-null sketch bytes, ``None`` if there are none."""
    m = merge_blobs(blobs, "skim_merge")
    return None if m is None else m.to_bytes()


class _Loader:
    """Decodes sketch bytes once per distinct blob within a batch."""

    def __init__(self, fn: str, arg: str):
        self._cache: dict = {}
        self._what = f"{fn}({arg})"

    def __call__(self, blob):
        if blob is None:
            return None
        sk = self._cache.get(blob)
        if sk is None:
            if len(self._cache) > 64:
                self._cache.clear()
            sk = load_sketch(blob, self._what)
            if not isinstance(sk, ss.Sketch):  # the scalar functions query one-column sketches
                raise TypeError(f"{self._what}: a {type(sk).__name__} has no two-way join, frequency or info; "
                                "a pair sketch is the middle of a chain join (skimsketch.chain_join_size)")
            self._cache[blob] = sk
        return sk


def _join(fn: str, a, b, confidence: float):
    try:
        return a.join_size(b, confidence=confidence)
    except ss.IncompatibleSketchError as e:
        raise ss.IncompatibleSketchError(e.field, e.mine, e.theirs, f"join ({fn})") from None


def join_impl(a_blobs, b_blobs, bounds: bool, confidence: float = 0.95):
    la, lb = _Loader("skim_join_size", "a"), _Loader("skim_join_size", "b")
    out = []
    for x, y in zip(a_blobs, b_blobs):
        if x is None or y is None:
            out.append(None)
            continue
        e = _join("skim_join_size", la(x), lb(y), confidence)
        out.append(estimate_row(e) if bounds else float(e.value))
    return out


def self_join_impl(blobs, bounds: bool, confidence: float = 0.95):
    load = _Loader("skim_self_join_size", "a")
    out = []
    for x in blobs:
        if x is None:
            out.append(None)
            continue
        e = load(x).self_join_size(confidence=confidence)
        out.append(estimate_row(e) if bounds else float(e.value))
    return out


def frequency_impl(blobs, keys, confidence: float = 0.95):
    load = _Loader("skim_frequency", "a")
    out = []
    for x, k in zip(blobs, keys):
        if x is None or k is None:
            out.append(None)
            continue
        out.append(float(load(x).frequency(k, confidence=confidence).value))
    return out


def info_impl(blobs):
    load = _Loader("skim_sketch_info", "a")
    out = []
    for x in blobs:
        if x is None:
            out.append(None)
            continue
        sk = load(x)
        out.append(sketch_row(sk) | {"nbytes": int(sk.nbytes)})
    return out


# -- Spark wrappers --------------------------------------------------------------

@cache
def skim_merge_udf():
    """The ``skim_merge`` Arrow aggregate (binary -> binary)."""
    from pyspark.sql.functions import arrow_udf

    @arrow_udf("binary")
    def skim_merge(s: pa.Array) -> bytes:
        return merge_impl(s.to_pylist())

    return skim_merge


def _builders():
    from pyspark.sql.functions import arrow_udf

    @arrow_udf("binary")
    def skim_sketch(it: Iterator[tuple[pa.Array, pa.Array, pa.Array, pa.Array]]) -> bytes:
        return build_from_batches("skim_sketch", "hash", it, False, 3)

    @arrow_udf("binary")
    def skim_sketch_weighted(it: Iterator[tuple[pa.Array, pa.Array, pa.Array, pa.Array, pa.Array]]) -> bytes:
        return build_from_batches("skim_sketch_weighted", "hash", it, True, 3)

    @arrow_udf("binary")
    def skim_skimmed_sketch(it: Iterator[tuple[pa.Array, pa.Array, pa.Array, pa.Array, pa.Array]]) -> bytes:
        return build_from_batches("skim_skimmed_sketch", "skimmed", it, False, 4)

    return {"skim_sketch": skim_sketch, "skim_sketch_weighted": skim_sketch_weighted,
            "skim_skimmed_sketch": skim_skimmed_sketch}


def _scalars(confidence: float):
    import pyarrow as pa
    from pyspark.sql.functions import arrow_udf

    @arrow_udf("double")
    def skim_join_size(a: pa.Array, b: pa.Array) -> pa.Array:
        return pa.array(join_impl(a.to_pylist(), b.to_pylist(), False, confidence), pa.float64())

    @arrow_udf(ESTIMATE_TYPE)
    def skim_join_size_bounds(a: pa.Array, b: pa.Array) -> pa.Array:
        return pa.array(join_impl(a.to_pylist(), b.to_pylist(), True, confidence), arrow_type(ESTIMATE))

    @arrow_udf("double")
    def skim_self_join_size(a: pa.Array) -> pa.Array:
        return pa.array(self_join_impl(a.to_pylist(), False, confidence), pa.float64())

    @arrow_udf(ESTIMATE_TYPE)
    def skim_self_join_size_bounds(a: pa.Array) -> pa.Array:
        return pa.array(self_join_impl(a.to_pylist(), True, confidence), arrow_type(ESTIMATE))

    @arrow_udf("double")
    def skim_frequency(a: pa.Array, key: pa.Array) -> pa.Array:
        return pa.array(frequency_impl(a.to_pylist(), key.to_pylist(), confidence), pa.float64())

    @arrow_udf(INFO_TYPE)
    def skim_sketch_info(a: pa.Array) -> pa.Array:
        return pa.array(info_impl(a.to_pylist()), arrow_type(INFO))

    return {f.__name__: f for f in (skim_join_size, skim_join_size_bounds, skim_self_join_size,
                                    skim_self_join_size_bounds, skim_frequency, skim_sketch_info)}


def _partials_udtf():
    import pyarrow as pa
    from pyspark.sql.functions import arrow_udtf

    @arrow_udtf(returnType="grp string, sketch binary")
    class SkimSketchPartials:
        """One partial sketch per partition and ``grp`` value of the TABLE argument."""

        def __init__(self):
            self._acc = None
            self._params = None

        def eval(self, batch: pa.RecordBatch, width: pa.Array, depth: pa.Array, seed: pa.Array,
                 domain: pa.Array = None):
            return self._eval(batch, width, depth, seed, domain)

        def _eval(self, batch, width, depth, seed, domain):
            fn = "skim_sketch_partials"
            names = batch.schema.names
            if "key" not in names:
                raise ValueError(f"{fn}: the TABLE argument needs a column named key, got columns {names}")
            extra = set(names) - {"key", "weight", "grp"}
            if extra:
                raise ValueError(f"{fn}: unexpected columns {sorted(extra)}; allowed: key, weight, grp")
            _check_key_array(fn, batch.column("key"))
            if batch.num_rows == 0:
                return iter(())
            params = [_constant(width, "width", fn), _constant(depth, "depth", fn), _constant(seed, "seed", fn)]
            kind = "hash"
            if domain is not None:
                params.append(_constant(domain, "domain", fn, nullable=True))
                kind = "skimmed"
            weights = batch.column("weight") if "weight" in names else None
            if self._acc is None:
                dtype = _weight_dtype(weights) if weights is not None else "int64"
                self._params = params
                self._acc = PartialAccumulator(_new_sketch(fn, kind, *params, dtype=dtype).to_bytes())
            elif params != self._params:
                raise ValueError(f"{fn}: parameters must be constant, got {self._params} and {params}")
            groups = [pa.compute.cast(batch.column("grp"), pa.string())] if "grp" in names else []
            self._acc.add(batch.column("key"), weights, groups)
            return iter(())

        def terminate(self):
            if self._acc is None:
                return
            out = self._acc.results()
            if not out:
                return
            grp = pa.concat_arrays([g[0] for g, _ in out]) if out[0][0] else pa.nulls(len(out), pa.string())
            yield pa.record_batch([grp.cast(pa.string()), pa.array([b for _, b in out], pa.binary())],
                                  names=["grp", "sketch"])

    return SkimSketchPartials


#: Names of the SQL functions :func:`register` creates.
FUNCTIONS = ("skim_sketch", "skim_sketch_weighted", "skim_skimmed_sketch", "skim_merge", "skim_join_size",
             "skim_join_size_bounds", "skim_self_join_size", "skim_self_join_size_bounds", "skim_frequency",
             "skim_sketch_info", "skim_sketch_partials")


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


def register(spark, confidence: float = 0.95, exclude_merge_subplans: bool = True) -> tuple:
    """Register the ``skim_*`` SQL functions in ``spark`` (see the module doc).

    ``confidence`` is the level of the intervals returned by the ``*_bounds``
    functions. With ``exclude_merge_subplans`` (default) the session's
    ``spark.sql.optimizer.excludedRules`` gains :data:`MERGE_SUBPLANS_RULE`,
    working around a Spark planner crash on queries that combine several
    Python aggregates over one table. When the session's JVM has the native
    jar (:mod:`spark_udaf.native`), its aggregates (``skim_sketch_agg``,
    ``skim_hash_sketch_agg``, ``skim_union_agg``, ``skim_union``) are
    registered too. Returns the registered names.
    """
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    if exclude_merge_subplans:
        _exclude_rule(spark, MERGE_SUBPLANS_RULE)
    fns = dict(_builders())
    fns["skim_merge"] = skim_merge_udf()
    fns.update(_scalars(confidence))
    for name, f in fns.items():
        spark.udf.register(name, f)
    spark.udtf.register("skim_sketch_partials", _partials_udtf())
    return FUNCTIONS + native.register(spark)
