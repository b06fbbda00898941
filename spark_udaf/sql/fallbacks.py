"""The plain-Python implementations of the SQL functions (run inside workers; unit-testable on Arrow arrays).

Each takes the Arrow columns Spark passes (bound by :mod:`spark_udaf.sql.args`, the
native functions' argument lists) and returns what the SQL function returns: sketch
bytes for the builders and unions, and per row the estimates of the core
(``join_size``, ``self_join_size``, ``frequency``: median of tables with the core's
interval) or a sketch's description. :mod:`spark_udaf.sql.udfs` wraps them as Arrow
UDFs; :mod:`spark_udaf.sql` registers those where the session's JVM has no jar.
"""

from __future__ import annotations

import skimsketch as ss

from .._common import load_sketch, merge_blobs
from ..build.partials import PartialAccumulator
from ..schemas import ESTIMATE, INFO, arrow_type, estimate_row, sketch_row
from .args import (
    KEY_TYPES, MIN_WIDTH, check_key_array, confidence_arg, constant, named_args, require_binary, sketch_agg_spec,
    sketch_args, sql_type, weight_dtype,
)

__all__ = ["build_from_batches", "estimate_call", "frequency_impl", "info_call", "info_impl", "join_impl",
           "merge_impl", "new_sketch", "self_join_impl", "sketch_agg_call", "union_agg_call", "union_call",
           "union_impl"]


def new_sketch(fn: str, kind: str, width=None, depth=None, seed=0, domain=None, dtype="int64"):
    """The empty sketch of the earlier Python names' fixed parameters (``kind``: hash, skimmed, agms)."""
    try:
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


def build_from_batches(fn: str, kind: str, batches, weighted: bool, n_params: int) -> bytes | None:
    """Fold an iterator of Arrow column tuples (key[, weight], params...) into sketch bytes."""
    sk = None
    params = None
    for cols in batches:
        keys = cols[0]
        weights = cols[1] if weighted else None
        pcols = cols[2 if weighted else 1:]
        check_key_array(fn, keys)
        if len(keys) == 0:
            continue
        names = ("width", "depth", "seed", "domain")[:n_params]
        these = tuple(constant(c, n, fn, nullable=n == "domain") for c, n in zip(pcols, names))
        if params is None:
            params = these
            dtype = weight_dtype(weights) if weighted else "int64"
            sk = new_sketch(fn, kind, *these, dtype=dtype)
            acc = PartialAccumulator(sk.to_bytes())
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
    """``skim_join_size[_bounds]`` per row: the core's ``join_size`` (NULL if either sketch is NULL)."""
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
    """``skim_self_join_size[_bounds]`` per row: the core's ``self_join_size``."""
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
    """``skim_frequency`` per row: the core's ``frequency`` (NULL for a NULL or NaN key)."""
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
    """``skim_sketch_info`` per row: kind, shape, seed, weights and memory."""
    load = _Loader("skim_sketch_info", "a")
    out = []
    for x in blobs:
        if x is None:
            out.append(None)
            continue
        sk = load(x)
        out.append(sketch_row(sk) | {"nbytes": int(sk.nbytes)})
    return out


def _float32_keys(key):
    """FLOAT keys as numpy float32 scalars, so the core applies float32's exact-integer limit (docs/inputs.md)."""
    import numpy as np

    return [None if v is None else np.float32(v) for v in key.to_pylist()]


def estimate_call(fn: str, args, kwargs, default_confidence: float = 0.95):
    """One Arrow batch of ``skim_join_size[_bounds]``, ``skim_self_join_size[_bounds]`` or ``skim_frequency``
    called with ``args``/``kwargs`` as SQL passed them -> the result ``pa.Array``."""
    import pyarrow as pa

    two = fn.startswith("skim_join_size")
    freq = fn == "skim_frequency"
    names = ("a", "b", "confidence") if two else ("a", "key", "confidence") if freq else ("a", "confidence")
    bound = sketch_args(fn, args, kwargs, names, 2 if two else 1, 2 if (two or freq) else 1)
    c = confidence_arg(fn, bound.get("confidence"), default_confidence)
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
        raise ss.KeyTypeError(f"{fn}: key has type {sql_type(t)}; supported key types are {KEY_TYPES}")
    keys = _float32_keys(key) if t == pa.float32() else key.to_pylist()
    return pa.array(frequency_impl(bound["a"].to_pylist(), keys, c), rtype)


def union_call(args, kwargs):
    """One Arrow batch of ``skim_union(a, b)``."""
    import pyarrow as pa

    fn = "skim_union"
    named = named_args(fn, kwargs, ("a", "b"))
    if len(args) > 2:
        raise ValueError(f"{fn}: expected two arguments (a, b), got {len(args)}")
    bound = sketch_args(fn, args, named, ("a", "b"), 2, 2)
    return pa.array(union_impl(bound["a"].to_pylist(), bound["b"].to_pylist()), pa.binary())


def info_call(args, kwargs):
    """One Arrow batch of ``skim_sketch_info(a)``."""
    import pyarrow as pa

    fn = "skim_sketch_info"
    named = named_args(fn, kwargs, ("a",))
    if len(args) > 1:
        raise ValueError(f"{fn}: expected one argument (a), got {len(args)}")
    bound = sketch_args(fn, args, named, ("a",), 1, 1)
    return pa.array(info_impl(bound["a"].to_pylist()), arrow_type(INFO))


def union_agg_call(args, kwargs) -> bytes | None:
    """``skim_union_agg(sketch)`` over one group's column."""
    fn = "skim_union_agg"
    named = named_args(fn, kwargs, ("sketch",))
    cols = list(args) + list(named.values())
    if len(cols) != 1:
        raise ValueError(f"{fn}: expected one argument (sketch), got {len(cols)}")
    require_binary(fn, "sketch", cols[0])
    m = merge_blobs(cols[0].to_pylist(), fn)
    return None if m is None else m.to_bytes()


def sketch_agg_call(fn: str, hash_kind: bool, args, kwargs) -> bytes:
    """``skim_sketch_agg`` / ``skim_hash_sketch_agg`` over one group's columns (the native argument lists)."""
    key, weight, sk = sketch_agg_spec(fn, hash_kind, args, kwargs)
    acc = PartialAccumulator(sk.to_bytes())
    acc.add(key, weight)
    out = acc.results()
    return out[0][1] if out else sk.to_bytes()
