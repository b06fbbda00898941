"""The Python SQL functions as PySpark Arrow UDFs (aggregates, scalars, the partials table function).

Thin wrappers of :mod:`spark_udaf.sql.fallbacks`: each declares its result type and
passes Spark's Arrow columns (positional and named) through. Registered by
:func:`spark_udaf.sql.register` where the session's JVM has no jar, and under the
earlier Python names (:data:`spark_udaf.sql.ALIASES`) always (memory and partial
aggregation: the module doc of :mod:`spark_udaf.sql`).
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import cache

import pyarrow as pa  # type hints of the Arrow UDFs are resolved in this module's globals

from ..build.partials import PartialAccumulator
from ..schemas import ESTIMATE, INFO, ddl
from .args import check_key_array, constant, weight_dtype
from .fallbacks import (
    build_from_batches, estimate_call, info_call, merge_impl, new_sketch, sketch_agg_call, union_agg_call, union_call,
)

__all__ = ["ESTIMATE_TYPE", "INFO_TYPE", "builders", "partials_udtf", "python_functions", "scalars",
           "skim_merge_udf"]

ESTIMATE_TYPE = ddl(ESTIMATE)  # declared in spark_udaf.schemas
INFO_TYPE = ddl(INFO)


@cache
def skim_merge_udf():
    """The ``skim_merge`` Arrow aggregate (binary -> binary)."""
    from pyspark.sql.functions import arrow_udf

    @arrow_udf("binary")
    def skim_merge(s: pa.Array) -> bytes:
        return merge_impl(s.to_pylist())

    return skim_merge


def builders():
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


def scalars(confidence: float):
    """The scalar functions, with the native argument lists (positional or named; optional confidence,
    ``confidence`` by default)."""
    from pyspark.sql.functions import arrow_udf

    def estimator(name: str, returns: str):
        def call(*args: pa.Array, **kwargs: pa.Array) -> pa.Array:
            return estimate_call(name, args, kwargs, confidence)

        call.__name__ = call.__qualname__ = name  # Spark names the UDF (and its columns) after the function
        return arrow_udf(returns)(call)

    estimators = [estimator(name, returns) for name, returns in (
        ("skim_join_size", "double"), ("skim_join_size_bounds", ESTIMATE_TYPE), ("skim_self_join_size", "double"),
        ("skim_self_join_size_bounds", ESTIMATE_TYPE), ("skim_frequency", "double"))]

    @arrow_udf(INFO_TYPE)
    def skim_sketch_info(*args: pa.Array, **kwargs: pa.Array) -> pa.Array:
        return info_call(args, kwargs)

    @arrow_udf("binary")
    def skim_union(*args: pa.Array, **kwargs: pa.Array) -> pa.Array:
        return union_call(args, kwargs)

    return {f.__name__: f for f in (*estimators, skim_sketch_info, skim_union)}


def python_functions(confidence: float = 0.95) -> dict:
    """{name: the Python implementation} of the SQL functions and the aliases (not the table function),
    as :func:`spark_udaf.sql.register` registers them where the JVM has no jar."""
    fns = dict(builders())
    fns["skim_merge"] = skim_merge_udf()
    fns.update(scalars(confidence))
    return fns


def partials_udtf():
    """``skim_sketch_partials``: an Arrow table function, one partial sketch per partition and ``grp`` value."""
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
            check_key_array(fn, batch.column("key"))
            if batch.num_rows == 0:
                return iter(())
            params = [constant(width, "width", fn), constant(depth, "depth", fn), constant(seed, "seed", fn)]
            kind = "hash"
            if domain is not None:
                params.append(constant(domain, "domain", fn, nullable=True))
                kind = "skimmed"
            weights = batch.column("weight") if "weight" in names else None
            if self._acc is None:
                dtype = weight_dtype(weights) if weights is not None else "int64"
                self._params = params
                self._acc = PartialAccumulator(new_sketch(fn, kind, *params, dtype=dtype).to_bytes())
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
