"""Spark SQL functions on sketch bytes, registered by :func:`register` (docs/spark.md).

One family of names, the same as the native (JVM) functions of the jar
(:mod:`spark_udaf.native`, docs/native.md)::

    skim_sketch_agg(key [, weight] [, nbytes [, seed]])   -- the library default, SkimmedSketch.for_bytes
    skim_hash_sketch_agg(key [, weight], width, depth [, seed])
    skim_union_agg(sketch)            -- merge of sketch bytes (NULLs skipped)
    skim_union(a, b)                  -- merge of two sketches
    skim_join_size(a, b)              DOUBLE   join-size estimate
    skim_join_size_bounds(a, b)       STRUCT<value, low, high, confidence, method>
    skim_self_join_size(a)            DOUBLE
    skim_self_join_size_bounds(a)     STRUCT<...>
    skim_frequency(a, key)            DOUBLE   point estimate of key's frequency
    skim_sketch_info(a)               STRUCT<kind, width, depth, seed, total_weight, null_weight, nbytes>

When the session's JVM has the jar, the builders and unions are the native
ones (map-side partial aggregation, any arguments above); the Python
implementations here are registered under those names only when it has not,
and then with fixed arities: ``skim_sketch_agg(key)`` (16384 bytes, seed 0)
and ``skim_hash_sketch_agg(key, width, depth, seed)``. The estimates are the
Python functions below by default (they answer every sketch kind; the JVM
does not have the skimmed estimator yet), or the native ones with
``register(spark, estimates="native")``.

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

from functools import cache
from collections.abc import Iterator

import pyarrow as pa  # type hints of the Arrow UDFs are resolved in this module's globals

import skimsketch as ss

from . import native
from ._common import load_sketch, merge_blobs, worker_python
from .partials import PartialAccumulator
from .schemas import ESTIMATE, INFO, arrow_type, ddl, estimate_row, sketch_row

__all__ = ["register", "python_functions", "FUNCTIONS", "ALIASES", "ESTIMATES", "MIN_NBYTES", "MIN_WIDTH", "skim_merge_udf",
           "MERGE_SUBPLANS_RULE"]

#: The smallest byte budget and width the SQL builders accept (the native ones' too: SkimFunctions.java).
MIN_NBYTES = 1024
MIN_WIDTH = 16
#: Where the estimate functions run: "python" (every sketch kind) or "native" (the JVM; hash, AGMS and
#: exact-mode sketches -- a counter-mode skimmed sketch raises until its estimator is ported).
ESTIMATES = ("python", "native")

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


def _new_sketch(fn: str, kind: str, width=None, depth=None, seed=0, domain=None, dtype="int64"):
    try:
        if kind == "default":  # skim_sketch_agg: the library default at the default budget
            return ss.SkimmedSketch.for_bytes(16384, seed=0, dtype=dtype)
        if kind == "hash" and int(width) < MIN_WIDTH:
            raise ValueError(f"width must be at least {MIN_WIDTH} (narrower tables' errors swamp their estimates), "
                             f"got {int(width)}")
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
        names = ("width", "depth", "seed", "domain")[:n_params]  # kind "default" takes none
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
        if x is None or k is None or (isinstance(k, float) and k != k):  # NaN is NULL
            out.append(None)
            continue
        out.append(float(load(x).frequency(k, confidence=confidence).value))  # a key of the other type raises
    return out


def union_impl(a_blobs, b_blobs):
    """``skim_union``: the merge of two sketches per row (NULL if either is NULL)."""
    out = []
    for x, y in zip(a_blobs, b_blobs):
        out.append(None if x is None or y is None else merge_impl([x, y]))
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

    @arrow_udf("binary")
    def skim_sketch_agg(it: Iterator[pa.Array]) -> bytes:
        return build_from_batches("skim_sketch_agg", "default", ((a,) for a in it), False, 0)

    @arrow_udf("binary")
    def skim_hash_sketch_agg(it: Iterator[tuple[pa.Array, pa.Array, pa.Array, pa.Array]]) -> bytes:
        return build_from_batches("skim_hash_sketch_agg", "hash", it, False, 3)

    return {"skim_sketch": skim_sketch, "skim_sketch_weighted": skim_sketch_weighted,
            "skim_skimmed_sketch": skim_skimmed_sketch, "skim_sketch_agg": skim_sketch_agg,
            "skim_hash_sketch_agg": skim_hash_sketch_agg}


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

    @arrow_udf("binary")
    def skim_union(a: pa.Array, b: pa.Array) -> pa.Array:
        return pa.array(union_impl(a.to_pylist(), b.to_pylist()), pa.binary())

    return {f.__name__: f for f in (skim_join_size, skim_join_size_bounds, skim_self_join_size,
                                    skim_self_join_size_bounds, skim_frequency, skim_sketch_info, skim_union)}


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


def python_functions(confidence: float = 0.95) -> dict:
    """{name: the Python implementation} of :data:`FUNCTIONS` and the aliases (not the table function),
    as :func:`register` registers them where the JVM has no jar."""
    fns = dict(_builders())
    fns["skim_merge"] = skim_merge_udf()
    fns["skim_union_agg"] = skim_merge_udf()
    fns.update(_scalars(confidence))
    return fns


def register(spark, confidence: float = 0.95, exclude_merge_subplans: bool = True,
             estimates: str = "python") -> tuple:
    """Register the ``skim_*`` SQL functions in ``spark`` (see the module doc) -> their names.

    When the session's JVM has the native jar (:func:`spark_udaf.configure`), its
    functions keep the names of :data:`FUNCTIONS` for building and merging; the
    estimate functions are the Python ones (``estimates="python"``, every sketch
    kind, at ``confidence``) or stay the JVM's (``estimates="native"``: no Python
    in the plan; the confidence is a third argument there, 0.95 by default). Without
    the jar every name is a Python function. :data:`ALIASES` are registered too.
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
    fns = python_functions(confidence)
    keep = set(native_names) & (set(_NATIVE_BUILDS) | (set(_ESTIMATE_NAMES) if estimates == "native" else set()))
    if estimates == "native" and not native_names:
        raise ValueError("estimates='native' needs the native jar in the session's JVM (spark_udaf.configure)")
    python_names = [name for name in fns if name not in keep]  # fns: python_functions(confidence)
    native.drop_injected(spark, [n for n in python_names if n in native_names])
    for name in python_names:
        spark.udf.register(name, fns[name])
    spark.udtf.register("skim_sketch_partials", _partials_udtf())
    return tuple(dict.fromkeys(FUNCTIONS + ALIASES + native_names))
