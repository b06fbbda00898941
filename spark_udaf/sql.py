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
difference: a positional *integer* weight of the Python builders must go by
name (``weight => col``), as a Python aggregate sees values, not whether an
argument is a constant (:func:`_sketch_agg_spec`, docs/spark.md).
``DESCRIBE FUNCTION EXTENDED`` shows usage and examples for all of them
(:data:`USAGE`, :func:`describe`).

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

__all__ = ["register", "describe", "python_functions", "FUNCTIONS", "ALIASES", "USAGE", "ESTIMATES", "MIN_NBYTES", "MIN_WIDTH", "skim_merge_udf",
           "MERGE_SUBPLANS_RULE"]

#: The smallest byte budget and width the SQL builders accept (the native ones' too: SkimFunctions.java).
MIN_NBYTES = 1024
MIN_WIDTH = 16
#: skim_sketch_agg's byte budget when none is given (SkimFunctions.DEFAULT_NBYTES).
DEFAULT_NBYTES = 16384
#: Where the estimate functions run: "native" (the JVM: every sketch kind, answers identical to the
#: core's, no Python in the plan), "python" (Python UDFs), or "auto" (native when the session's JVM
#: has the jar and the default confidence is the JVM's 0.95, else Python).
ESTIMATES = ("auto", "python", "native")

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


KEY_TYPES = "tinyint, smallint, int, bigint, float, double (integral values), string, binary"
WEIGHT_TYPES = "tinyint, smallint, int, bigint, float, double, decimal(p,s)"


def _sql_type(t) -> str:
    """The Spark SQL name of Arrow type ``t`` (as the native functions' messages print types)."""
    import pyarrow as pa

    names = {pa.int8(): "tinyint", pa.int16(): "smallint", pa.int32(): "int", pa.int64(): "bigint",
             pa.float32(): "float", pa.float64(): "double", pa.bool_(): "boolean", pa.string(): "string",
             pa.large_string(): "string", pa.binary(): "binary", pa.large_binary(): "binary", pa.null(): "void",
             pa.date32(): "date"}
    if pa.types.is_decimal(t):
        return f"decimal({t.precision},{t.scale})"
    return names.get(t, str(t))


def _check_key_array(fn: str, keys) -> None:
    """SQL key columns follow the Python API's rule (integers, strings, binary; see docs/inputs.md)."""
    import pyarrow as pa

    t = keys.type
    if not (pa.types.is_integer(t) or pa.types.is_floating(t) or pa.types.is_string(t) or pa.types.is_binary(t)
            or pa.types.is_large_string(t) or pa.types.is_large_binary(t) or pa.types.is_null(t)):
        raise ss.KeyTypeError(f"{fn}: key has type {_sql_type(t)}; supported key types are {KEY_TYPES} "
                              "(cast it, e.g. CAST(key AS BIGINT) or CAST(key AS STRING))")


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
            if not isinstance(sk, (ss.Sketch, ss.JoinSample)):  # the scalar functions query one-column summaries
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


# -- the family's argument lists: the native functions' (SkimFunctions.java), bound in the worker -----

def _named(fn: str, kwargs: dict, names: tuple) -> dict:
    """Named arguments (``name => value`` in SQL), lower-cased and checked against ``names``."""
    out = {}
    for k, v in kwargs.items():
        n = k.lower()
        if n not in names:
            raise ValueError(f"{fn}: unknown parameter {k} (parameters: {', '.join(names)})")
        out[n] = v
    return out


def _with_positional(fn: str, named: dict, values: list, names: tuple) -> dict:
    """``values`` named by position (``names`` in order), then ``named``; a name given both ways is an error."""
    out = dict(zip(names, values))
    for n, v in named.items():
        if n in out:
            raise ValueError(f"{fn}: parameter {n} is given by position and by name")
        out[n] = v
    return out


def _require_binary(fn: str, name: str, arr) -> None:
    import pyarrow as pa

    t = arr.type
    if not (pa.types.is_binary(t) or pa.types.is_large_binary(t) or pa.types.is_null(t)):
        raise TypeError(f"{fn}: {name} has type {_sql_type(t)}; it must be BINARY sketch bytes (from skim_sketch_agg, "
                        "skim_hash_sketch_agg, skim_union_agg)")


def _confidence_arg(fn: str, arr, default: float) -> float:
    """The confidence argument: a numeric constant in (0, 1) (``default`` when not given)."""
    if arr is None or len(arr) == 0:
        return default
    if arr.null_count:
        raise ValueError(f"{fn}: confidence must be a numeric constant, got NULL")
    vals = set()
    for v in arr.unique().to_pylist():  # Decimal -> float as Spark casts DECIMAL to DOUBLE (0.7 stays 0.7)
        try:
            vals.add(float(v))
        except (TypeError, ValueError):
            raise ValueError(f"{fn}: confidence must be a numeric constant, got {_sql_type(arr.type)} {v!r}") from None
    if len(vals) > 1:
        raise ValueError(f"{fn}: confidence must be a numeric constant, got values {min(vals)!r} and {max(vals)!r}")
    c = vals.pop()
    if not 0 < c < 1:
        raise ValueError(f"{fn}: confidence must be in (0, 1), got {c!r}")
    return c


def _sketch_args(fn: str, args, kwargs, names: tuple, count: int, fixed: int) -> dict:
    """Bind an estimate's arguments: ``count`` sketches, then the key (``fixed`` > ``count``), then confidence."""
    named = _named(fn, kwargs, names)
    if len(args) > len(names):
        raise ValueError(f"{fn}: expected at most {len(names)} arguments, got {len(args)}")
    bound = _with_positional(fn, named, list(args), names)
    for n in names[:count]:
        if n not in bound:
            raise ValueError(f"{fn}: parameter {n} (sketch bytes) is missing")
        _require_binary(fn, n, bound[n])
    if fixed > count and "key" not in bound:
        raise ValueError(f"{fn}: parameter key is missing: {fn}(a, key [, confidence])")
    return bound


def estimate_call(fn: str, args, kwargs, default_confidence: float = 0.95):
    """One Arrow batch of ``skim_join_size[_bounds]``, ``skim_self_join_size[_bounds]`` or ``skim_frequency``
    called with ``args``/``kwargs`` as SQL passed them -> the result ``pa.Array``."""
    import pyarrow as pa

    two = fn.startswith("skim_join_size")
    freq = fn == "skim_frequency"
    names = ("a", "b", "confidence") if two else ("a", "key", "confidence") if freq else ("a", "confidence")
    bound = _sketch_args(fn, args, kwargs, names, 2 if two else 1, 2 if (two or freq) else 1)
    c = _confidence_arg(fn, bound.get("confidence"), default_confidence)
    bounds = fn.endswith("_bounds")
    rtype = arrow_type(ESTIMATE) if bounds else pa.float64()
    if two:
        return pa.array(join_impl(bound["a"].to_pylist(), bound["b"].to_pylist(), bounds, c), rtype)
    if not freq:
        return pa.array(self_join_impl(bound["a"].to_pylist(), bounds, c), rtype)
    key = bound["key"]
    t = key.type
    if not (pa.types.is_integer(t) or pa.types.is_floating(t) or pa.types.is_string(t) or pa.types.is_binary(t)
            or pa.types.is_large_string(t) or pa.types.is_large_binary(t) or pa.types.is_null(t)):
        raise ss.KeyTypeError(f"{fn}: key has type {_sql_type(t)}; supported key types are {KEY_TYPES}")
    return pa.array(frequency_impl(bound["a"].to_pylist(), key.to_pylist(), c), rtype)


def union_call(args, kwargs):
    """One Arrow batch of ``skim_union(a, b)``."""
    import pyarrow as pa

    fn = "skim_union"
    named = _named(fn, kwargs, ("a", "b"))
    if len(args) > 2:
        raise ValueError(f"{fn}: expected two arguments (a, b), got {len(args)}")
    bound = _sketch_args(fn, args, named, ("a", "b"), 2, 2)
    return pa.array(union_impl(bound["a"].to_pylist(), bound["b"].to_pylist()), pa.binary())


def info_call(args, kwargs):
    """One Arrow batch of ``skim_sketch_info(a)``."""
    import pyarrow as pa

    fn = "skim_sketch_info"
    named = _named(fn, kwargs, ("a",))
    if len(args) > 1:
        raise ValueError(f"{fn}: expected one argument (a), got {len(args)}")
    bound = _sketch_args(fn, args, named, ("a",), 1, 1)
    return pa.array(info_impl(bound["a"].to_pylist()), arrow_type(INFO))


def union_agg_call(args, kwargs) -> bytes | None:
    """``skim_union_agg(sketch)`` over one group's column."""
    fn = "skim_union_agg"
    named = _named(fn, kwargs, ("sketch",))
    cols = list(args) + list(named.values())
    if len(cols) != 1:
        raise ValueError(f"{fn}: expected one argument (sketch), got {len(cols)}")
    _require_binary(fn, "sketch", cols[0])
    m = merge_blobs(cols[0].to_pylist(), fn)
    return None if m is None else m.to_bytes()


def _int_param(fn: str, name: str, arr) -> int:
    """An integer constant parameter of a builder (constant within the group), checked as the native ones."""
    import pyarrow as pa

    try:
        v = _constant(arr, name, fn)
    except ValueError as e:
        raise ValueError(f"{e} (a column here is a weight? Python builders take it by name: "
                         f"{fn}(key, weight => column, ...), docs/spark.md)") from None
    t = arr.type
    if name == "seed" and pa.types.is_decimal(t):
        from decimal import Decimal

        d = Decimal(v)
        if d != d.to_integral_value() or d < 0 or d >= 2 ** 64:
            raise ValueError(f"{fn}: seed must be an integer in [0, 2**64), got {d}")
        return int(d)
    if not pa.types.is_integer(t):
        raise ValueError(f"{fn}: parameter {name} must be an integer constant, got {v!r}")
    if name == "seed" and v < 0:
        raise ValueError(f"{fn}: seed must be >= 0, got {v}")
    return int(v)


def _is_weight_type(t) -> bool:
    import pyarrow as pa

    return pa.types.is_floating(t) or pa.types.is_decimal(t)


def _sketch_agg_spec(fn: str, hash_kind: bool, args, kwargs):
    """Bind a builder's arguments -> (key, weight or None, the empty sketch to fill).

    The native rule reads a positional argument after ``key`` that is not a constant as the weight;
    a Python aggregate sees values, not expressions, so here the first argument after ``key`` is the
    weight when its type is float, double or decimal (the constant parameters are integers), when
    the constant parameters are all accounted for without it (four arguments after ``key``; or the
    parameter it would be is also named), or when it is named (``weight => col``).
    """
    names = ("key", "weight", "width", "depth", "seed") if hash_kind else ("key", "weight", "nbytes", "seed", "width",
                                                                           "depth")
    named = _named(fn, kwargs, names)
    pos = list(args)
    key = named.pop("key", None)
    if key is None:
        if not pos:
            raise ValueError(f"{fn}: needs a key column: {fn}(key [, weight], ...)")
        key = pos.pop(0)
    weight = named.pop("weight", None)
    if weight is None and pos:
        first = "width" if hash_kind or len(pos) == 3 or "depth" in named else "nbytes"
        if _is_weight_type(pos[0].type) or len(pos) >= 4 or first in named:
            weight = pos.pop(0)
    _check_key_array(fn, key)
    if weight is not None:
        import pyarrow as pa

        wt = weight.type
        if not (pa.types.is_integer(wt) or _is_weight_type(wt) or pa.types.is_null(wt)):
            raise TypeError(f"{fn}: weight has type {_sql_type(wt)}; supported weight types are {WEIGHT_TYPES} "
                            "(cast it, e.g. CAST(weight AS DOUBLE))")
    dtype = _weight_dtype(weight) if weight is not None else "int64"
    n = len(pos)
    if hash_kind:
        sig = "(key [, weight], width, depth [, seed])"
        if n > 3:
            raise ValueError(f"{fn}: expected {sig}, got {n} constant parameters")
        c = _with_positional(fn, named, pos, ("width", "depth", "seed"))
        width, depth = (_required(fn, c, p, sig) for p in ("width", "depth"))
        seed = _int_param(fn, "seed", c["seed"]) if "seed" in c else 0
        _min_width(fn, width)
        return key, weight, _made(fn, lambda: ss.HashSketch(width=width, depth=depth, seed=seed, dtype=dtype))
    if n == 3 or "width" in named or "depth" in named:
        if n not in (0, 3):
            raise ValueError(f"{fn}: expected (key [, weight] [, nbytes [, seed] | width, depth, seed]), got {n} "
                             "positional constants with named width/depth")
        c = _with_positional(fn, named, pos, ("width", "depth", "seed"))
        if "nbytes" in c:
            raise ValueError(f"{fn}: give nbytes or (width, depth), not both")
        sig = "(key [, weight], width, depth, seed)"
        width, depth = (_required(fn, c, p, sig) for p in ("width", "depth"))
        seed = _int_param(fn, "seed", c["seed"]) if "seed" in c else 0
        _min_width(fn, width)
        return key, weight, _made(fn, lambda: ss.SkimmedSketch(width=width, depth=depth, seed=seed, dtype=dtype))
    if n > 2:
        raise ValueError(f"{fn}: expected (key [, weight] [, nbytes [, seed] | width, depth, seed]), got {n} "
                         "constant parameters")
    c = _with_positional(fn, named, pos, ("nbytes", "seed"))
    nbytes = _int_param(fn, "nbytes", c["nbytes"]) if "nbytes" in c else DEFAULT_NBYTES
    seed = _int_param(fn, "seed", c["seed"]) if "seed" in c else 0
    if nbytes < MIN_NBYTES:
        raise ValueError(f"{fn}: nbytes must be at least {MIN_NBYTES} (smaller sketches' errors swamp their estimates), "
                         f"got {nbytes}")
    return key, weight, _made(fn, lambda: ss.SkimmedSketch.for_bytes(nbytes, seed=seed, dtype=dtype))


def _required(fn: str, c: dict, name: str, sig: str) -> int:
    if name not in c:
        raise ValueError(f"{fn}: parameter {name} is missing: {fn}{sig}")
    return _int_param(fn, name, c[name])


def _min_width(fn: str, width: int) -> None:
    if width < MIN_WIDTH:
        raise ValueError(f"{fn}: width must be at least {MIN_WIDTH} (narrower tables' errors swamp their estimates), "
                         f"got {width}")


def _made(fn: str, make):
    try:
        return make()
    except (TypeError, ValueError) as e:
        raise ValueError(f"{fn}: {e}") from None


def sketch_agg_call(fn: str, hash_kind: bool, args, kwargs) -> bytes:
    """``skim_sketch_agg`` / ``skim_hash_sketch_agg`` over one group's columns (the native argument lists)."""
    key, weight, sk = _sketch_agg_spec(fn, hash_kind, args, kwargs)
    acc = PartialAccumulator(sk.to_bytes())
    acc.add(key, weight)
    out = acc.results()
    return out[0][1] if out else sk.to_bytes()


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
    """The builders: the family's two (the native argument lists; whole-group aggregates, as PySpark passes
    named arguments only to those) and the earlier names' (fixed arities; they stream the group in batches)."""
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
    def skim_sketch_agg(*args: pa.Array, **kwargs: pa.Array) -> bytes:
        return sketch_agg_call("skim_sketch_agg", False, args, kwargs)

    @arrow_udf("binary")
    def skim_hash_sketch_agg(*args: pa.Array, **kwargs: pa.Array) -> bytes:
        return sketch_agg_call("skim_hash_sketch_agg", True, args, kwargs)

    @arrow_udf("binary")
    def skim_union_agg(*args: pa.Array, **kwargs: pa.Array) -> bytes:
        return union_agg_call(args, kwargs)

    return {"skim_sketch": skim_sketch, "skim_sketch_weighted": skim_sketch_weighted,
            "skim_skimmed_sketch": skim_skimmed_sketch, "skim_sketch_agg": skim_sketch_agg,
            "skim_hash_sketch_agg": skim_hash_sketch_agg, "skim_union_agg": skim_union_agg}


def _scalars(confidence: float):
    """The scalar functions, with the native argument lists (positional or named; optional confidence,
    ``confidence`` by default)."""
    from pyspark.sql.functions import arrow_udf

    @arrow_udf("double")
    def skim_join_size(*args: pa.Array, **kwargs: pa.Array) -> pa.Array:
        return estimate_call("skim_join_size", args, kwargs, confidence)

    @arrow_udf(ESTIMATE_TYPE)
    def skim_join_size_bounds(*args: pa.Array, **kwargs: pa.Array) -> pa.Array:
        return estimate_call("skim_join_size_bounds", args, kwargs, confidence)

    @arrow_udf("double")
    def skim_self_join_size(*args: pa.Array, **kwargs: pa.Array) -> pa.Array:
        return estimate_call("skim_self_join_size", args, kwargs, confidence)

    @arrow_udf(ESTIMATE_TYPE)
    def skim_self_join_size_bounds(*args: pa.Array, **kwargs: pa.Array) -> pa.Array:
        return estimate_call("skim_self_join_size_bounds", args, kwargs, confidence)

    @arrow_udf("double")
    def skim_frequency(*args: pa.Array, **kwargs: pa.Array) -> pa.Array:
        return estimate_call("skim_frequency", args, kwargs, confidence)

    @arrow_udf(INFO_TYPE)
    def skim_sketch_info(*args: pa.Array, **kwargs: pa.Array) -> pa.Array:
        return info_call(args, kwargs)

    @arrow_udf("binary")
    def skim_union(*args: pa.Array, **kwargs: pa.Array) -> pa.Array:
        return union_call(args, kwargs)

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


#: What DESCRIBE FUNCTION shows for the Python functions (the native ones carry SkimFunctions.java's):
#: name -> (group, usage, arguments, examples). :func:`describe` prints it too.
USAGE = {
    "skim_sketch_agg": (
        "agg_funcs",
        "skim_sketch_agg(key [, weight] [, nbytes [, seed]]) - the library's default sketch of key, "
        "SkimmedSketch.for_bytes(nbytes, seed) (nbytes 16384 and seed 0 by default; nbytes >= 1024), as BINARY; "
        "skim_sketch_agg(key [, weight], width, depth, seed) - SkimmedSketch(width, depth, seed). Python "
        "implementation: an integer weight column goes by name (weight => col) unless four constants follow it",
        "key: the join key (integer types, float/double holding integers, string, binary); weight: an optional "
        "numeric column (SUM sketches); nbytes, seed, width, depth: integer constants, positional or named",
        ("SELECT day, skim_sketch_agg(user_id) AS sk, count(*) FROM events GROUP BY day",
         "SELECT skim_sketch_agg(user_id, weight => amount, nbytes => 32768, seed => 7) FROM events")),
    "skim_hash_sketch_agg": (
        "agg_funcs",
        "skim_hash_sketch_agg(key [, weight], width, depth [, seed]) - a hash (Fast-AGMS) sketch of key, "
        "HashSketch(width, depth, seed) (width >= 16), as BINARY. Python implementation: an integer weight column "
        "goes by name (weight => col) unless width, depth and seed follow it",
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


def _document(spark, python_names) -> list:
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
    state = jss.sessionState()
    for registry in (state.functionRegistry(), state.tableFunctionRegistry()):
        ids = registry.listFunction().iterator()
        while ids.hasNext():
            fid = ids.next()
            name = fid.funcName()
            if name not in infos or (fid.database().isDefined() and fid.database().get() == "builtin"):
                continue
            entry = registry.lookupFunctionEntry(fid)
            if entry.isDefined():
                registry.registerFunction(fid, infos[name], entry.get()._2())
                done.append(name)
    return done


def python_functions(confidence: float = 0.95) -> dict:
    """{name: the Python implementation} of :data:`FUNCTIONS` and the aliases (not the table function),
    as :func:`register` registers them where the JVM has no jar."""
    fns = dict(_builders())
    fns["skim_merge"] = skim_merge_udf()
    fns.update(_scalars(confidence))
    return fns


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
    function then shows its usage and examples in ``DESCRIBE FUNCTION`` (:func:`_document`).
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
    spark.udtf.register("skim_sketch_partials", _partials_udtf())
    _document(spark, python_names + ["skim_sketch_partials"])
    return tuple(dict.fromkeys(FUNCTIONS + ALIASES + native_names))
