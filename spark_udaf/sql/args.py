"""The SQL functions' argument lists, bound in the worker as the native functions bind them (SkimFunctions.java).

Positional or named (``nbytes => 32768``; names case-insensitive), the same defaults
and the same messages as the native functions. The builders' one difference
(docs/spark.md): the native rule reads a positional argument after ``key`` as the
weight when it is not a constant and as the first size parameter when it is; a
Python aggregate receives values, not expressions, so :func:`sketch_agg_spec`
takes the one reading that gives a valid call, and refuses the call, naming
``weight =>``, when both do.
"""

from __future__ import annotations

import skimsketch as ss
from skimsketch.sketch.sizing import MIN_NBYTES, MIN_WIDTH, check_nbytes, check_width

__all__ = ["DEFAULT_NBYTES", "KEY_TYPES", "MIN_NBYTES", "MIN_WIDTH", "WEIGHT_TYPES", "NotConstant", "check_key_array",
           "confidence_arg", "constant", "named_args", "require_binary", "sketch_agg_spec", "sketch_args", "sql_type",
           "weight_dtype", "with_positional"]

#: The most counters (width * depth) a SQL builder holds (SkimFunctions.MAX_COUNTERS): 1 GiB as int64.
MAX_COUNTERS = 1 << 27
#: skim_sketch_agg's byte budget when none is given (SkimFunctions.DEFAULT_NBYTES).
DEFAULT_NBYTES = 16384

KEY_TYPES = "tinyint, smallint, int, bigint, float, double (integral values), string, binary"
WEIGHT_TYPES = "tinyint, smallint, int, bigint, float, double, decimal(p,s)"


class NotConstant(ValueError):
    """A parameter column that is not one value within a group."""


class _Arity(ValueError):
    """A reading of a builder's arguments that fits no signature (their count or names), whatever the values."""


def constant(arr, name: str, fn: str, nullable: bool = False):
    """The single value of a constant parameter column (``None`` when ``nullable`` and all NULL)."""
    import pyarrow.compute as pc

    if nullable and arr.null_count == len(arr):
        return None
    if arr.null_count:
        raise ValueError(f"{fn}: parameter {name} must not be NULL" + (" in some rows only" if nullable else ""))
    mm = pc.min_max(arr).as_py()
    if mm["min"] != mm["max"]:
        raise NotConstant(f"{fn}: parameter {name} must be constant within a group, got {mm['min']} and {mm['max']}")
    return mm["min"]


def sql_type(t) -> str:
    """The Spark SQL name of Arrow type ``t`` (as the native functions' messages print types)."""
    import pyarrow as pa

    names = {pa.int8(): "tinyint", pa.int16(): "smallint", pa.int32(): "int", pa.int64(): "bigint",
             pa.float32(): "float", pa.float64(): "double", pa.bool_(): "boolean", pa.string(): "string",
             pa.large_string(): "string", pa.binary(): "binary", pa.large_binary(): "binary", pa.null(): "void",
             pa.date32(): "date"}
    if pa.types.is_decimal(t):
        return f"decimal({t.precision},{t.scale})"
    return names.get(t, str(t))


def check_key_array(fn: str, keys) -> None:
    """SQL key columns follow the Python API's rule (integers, strings, binary; see docs/inputs.md)."""
    import pyarrow as pa

    t = keys.type
    if not (pa.types.is_integer(t) or pa.types.is_floating(t) or pa.types.is_string(t) or pa.types.is_binary(t)
            or pa.types.is_large_string(t) or pa.types.is_large_binary(t) or pa.types.is_null(t)):
        raise ss.KeyTypeError(f"{fn}: key has type {sql_type(t)}; supported key types are {KEY_TYPES} "
                              "(cast it, e.g. CAST(key AS BIGINT) or CAST(key AS STRING))")


def weight_dtype(weights) -> str:
    """The counters a weight column needs: ``float64`` for float/double and fractional DECIMAL, else ``int64``."""
    import pyarrow as pa

    t = weights.type
    if pa.types.is_decimal(t):  # DECIMAL(p, 0) sums exactly as integers (or raises), other scales as float64
        return "int64" if t.scale <= 0 else "float64"
    return "float64" if pa.types.is_floating(t) else "int64"


def named_args(fn: str, kwargs: dict, names: tuple) -> dict:
    """Named arguments (``name => value`` in SQL), lower-cased and checked against ``names``."""
    out = {}
    for k, v in kwargs.items():
        n = k.lower()
        if n not in names:
            raise ValueError(f"{fn}: unknown parameter {k} (parameters: {', '.join(names)})")
        out[n] = v
    return out


def with_positional(fn: str, named: dict, values: list, names: tuple) -> dict:
    """``values`` named by position (``names`` in order), then ``named``; a name given both ways is an error."""
    out = dict(zip(names, values))
    for n, v in named.items():
        if n in out:
            raise _Arity(f"{fn}: parameter {n} is given by position and by name")
        out[n] = v
    return out


def require_binary(fn: str, name: str, arr) -> None:
    import pyarrow as pa

    t = arr.type
    if not (pa.types.is_binary(t) or pa.types.is_large_binary(t) or pa.types.is_null(t)):
        raise TypeError(f"{fn}: {name} has type {sql_type(t)}; it must be BINARY sketch bytes (from skim_sketch_agg, "
                        "skim_hash_sketch_agg, skim_union_agg)")


def confidence_arg(fn: str, arr, default: float) -> float:
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
            raise ValueError(f"{fn}: confidence must be a numeric constant, got {sql_type(arr.type)} {v!r}") from None
    if len(vals) > 1:
        raise ValueError(f"{fn}: confidence must be a numeric constant, got values {min(vals)!r} and {max(vals)!r}")
    c = vals.pop()
    if not 0 < c < 1:
        raise ValueError(f"{fn}: confidence must be in (0, 1), got {c!r}")
    return c


def sketch_args(fn: str, args, kwargs, names: tuple, count: int, fixed: int) -> dict:
    """Bind an estimate's arguments: ``count`` sketches, then the key (``fixed`` > ``count``), then confidence."""
    named = named_args(fn, kwargs, names)
    if len(args) > len(names):
        raise ValueError(f"{fn}: expected at most {len(names)} arguments, got {len(args)}")
    bound = with_positional(fn, named, list(args), names)
    for n in names[:count]:
        if n not in bound:
            raise ValueError(f"{fn}: parameter {n} (sketch bytes) is missing")
        require_binary(fn, n, bound[n])
    if fixed > count and "key" not in bound:
        raise ValueError(f"{fn}: parameter key is missing: {fn}(a, key [, confidence])")
    return bound


# -- the builders: skim_sketch_agg and skim_hash_sketch_agg ---------------------------------------------

def _int_param(fn: str, name: str, arr) -> int:
    """An integer constant parameter of a builder (constant within the group), checked as the native ones."""
    import pyarrow as pa

    v = constant(arr, name, fn)
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
    """Float, double and decimal: types a size parameter never has (they are integers)."""
    import pyarrow as pa

    return pa.types.is_floating(t) or pa.types.is_decimal(t)


def _required(fn: str, c: dict, name: str, sig: str) -> int:
    if name not in c:
        raise _Arity(f"{fn}: parameter {name} is missing: {fn}{sig}")
    return _int_param(fn, name, c[name])


def _check_shape(fn: str, width: int, depth: int) -> None:
    """The SQL builders' shape limits, worded as the native ones (SkimFunctions.java)."""
    try:
        check_width(width)
    except ValueError as e:
        raise ValueError(f"{fn}: {e}") from None
    if width * depth > MAX_COUNTERS:
        raise ValueError(f"{fn}: width * depth must be at most {MAX_COUNTERS} counters in SQL (int64 in memory, in one "
                         f"BINARY value), got {width} * {depth} = {width * depth}: give a smaller width or depth")


def _made(fn: str, make):
    try:
        return make()
    except (TypeError, ValueError) as e:
        raise ValueError(f"{fn}: {e}") from None


def _check_weight(fn: str, weight) -> str:
    """The counters' dtype for ``weight`` (None: a count sketch); an unsupported type raises."""
    if weight is None:
        return "int64"
    import pyarrow as pa

    wt = weight.type
    if not (pa.types.is_integer(wt) or _is_weight_type(wt) or pa.types.is_null(wt)):
        raise TypeError(f"{fn}: weight has type {sql_type(wt)}; supported weight types are {WEIGHT_TYPES} "
                        "(cast it, e.g. CAST(weight AS DOUBLE))")
    return weight_dtype(weight)


def _first_parameter(hash_kind: bool, n: int, named: dict) -> str:
    """The parameter a builder's first positional constant binds to, ``n`` positional constants given."""
    return "width" if hash_kind or n == 3 or "width" in named or "depth" in named else "nbytes"


def _sketch_of(fn: str, hash_kind: bool, weight, pos: list, named: dict):
    """The empty sketch of one reading: ``weight`` (None: none), the positional constants ``pos`` and the
    named ones (a :class:`_Arity` error when the reading fits no signature)."""
    dtype = _check_weight(fn, weight)
    n = len(pos)
    if hash_kind:
        sig = "(key [, weight], width, depth [, seed])"
        if n > 3:
            raise _Arity(f"{fn}: expected {sig}, got {n} constant parameters")
        c = with_positional(fn, named, pos, ("width", "depth", "seed"))
        width, depth = (_required(fn, c, p, sig) for p in ("width", "depth"))
        seed = _int_param(fn, "seed", c["seed"]) if "seed" in c else 0
        _check_shape(fn, width, depth)
        return _made(fn, lambda: ss.HashSketch(width=width, depth=depth, seed=seed, dtype=dtype))
    if n == 3 or "width" in named or "depth" in named:
        if n not in (0, 3):
            raise _Arity(f"{fn}: expected (key [, weight] [, nbytes [, seed] | width, depth, seed]), got {n} "
                         "positional constants with named width/depth")
        c = with_positional(fn, named, pos, ("width", "depth", "seed"))
        if "nbytes" in c:
            raise _Arity(f"{fn}: give nbytes or (width, depth), not both")
        sig = "(key [, weight], width, depth, seed)"
        width, depth = (_required(fn, c, p, sig) for p in ("width", "depth"))
        seed = _int_param(fn, "seed", c["seed"]) if "seed" in c else 0
        _check_shape(fn, width, depth)
        return _made(fn, lambda: ss.SkimmedSketch(width=width, depth=depth, seed=seed, dtype=dtype))
    if n > 2:
        raise _Arity(f"{fn}: expected (key [, weight] [, nbytes [, seed] | width, depth, seed]), got {n} "
                     "constant parameters")
    c = with_positional(fn, named, pos, ("nbytes", "seed"))
    nbytes = _int_param(fn, "nbytes", c["nbytes"]) if "nbytes" in c else DEFAULT_NBYTES
    seed = _int_param(fn, "seed", c["seed"]) if "seed" in c else 0
    nbytes = _made(fn, lambda: check_nbytes(nbytes))
    return _made(fn, lambda: ss.SkimmedSketch.for_bytes(nbytes, seed=seed, dtype=dtype))


def _reading(fn: str, hash_kind: bool, weight, pos: list, named: dict):
    """(sketch, None) when the reading gives a valid call, else (None, its error)."""
    try:
        return _sketch_of(fn, hash_kind, weight, pos, named), None
    except (TypeError, ValueError) as e:
        return None, e


def sketch_agg_spec(fn: str, hash_kind: bool, args, kwargs):
    """Bind a builder's arguments -> (key, weight or None, the empty sketch to fill).

    The native rule reads a positional argument after ``key`` that is not a constant as the
    weight, and a constant as the first size parameter (``nbytes``, or ``width``). A Python
    aggregate sees values, not expressions, so here that argument is the weight when it is named
    (``weight => col``) or its type is float, double or decimal (size parameters are integers);
    otherwise each reading is tried: the weight when only that one gives a valid call by its
    argument count and names (four constants after it; or the parameter it would be is also
    named), the size parameter when the weight reading gives no valid call (e.g. ``(k, 4096, 3)``:
    ``nbytes`` 3 is too small; ``skim_hash_sketch_agg(k, 64, 5)``: no depth), and a refusal naming
    ``weight =>`` when both do (``skim_sketch_agg(k, 4096)``: ``nbytes`` 4096, or an integer weight
    column that holds 4096 in this group?), or when the parameter reading fails on its value
    (``skim_sketch_agg(k, qty)``, ``qty`` not one value, or below 1024). Never a guess: the
    same call has one reading whatever the group's values, or is refused.
    """
    names = ("key", "weight", "width", "depth", "seed") if hash_kind else ("key", "weight", "nbytes", "seed", "width",
                                                                           "depth")
    named = named_args(fn, kwargs, names)
    pos = list(args)
    key = named.pop("key", None)
    if key is None:
        if not pos:
            raise ValueError(f"{fn}: needs a key column: {fn}(key [, weight], ...)")
        key = pos.pop(0)
    check_key_array(fn, key)
    weight = named.pop("weight", None)
    if weight is not None or not pos:
        return key, weight, _sketch_of(fn, hash_kind, weight, pos, named)
    first = pos[0]
    if _is_weight_type(first.type):
        return key, first, _sketch_of(fn, hash_kind, first, pos[1:], named)
    as_param, param_error = _reading(fn, hash_kind, None, pos, named)
    as_weight, _ = _reading(fn, hash_kind, first, pos[1:], named)
    param = _first_parameter(hash_kind, len(pos), named)
    remedy = (f"the Python functions cannot tell a column from a constant: give a weight column by name, "
              f"{fn}(key, weight => column, ...), docs/spark.md")
    if as_weight is None:
        if as_param is not None:
            return key, None, as_param
        if isinstance(param_error, NotConstant):
            raise ValueError(f"{param_error} ({remedy})") from None
        raise param_error
    if as_param is None and isinstance(param_error, _Arity):
        return key, first, as_weight
    if as_param is None:
        raise type(param_error)(f"{param_error} ({remedy})") from None
    value = constant(first, param, fn)
    raise ValueError(f"{fn}: the {sql_type(first.type)} {value} after the key could be the weight (a column) or "
                     f"{param} (a constant); {remedy}, or the constant by name, {fn}(key, {param} => {value}, ...)")
