"""Collated keys refused by the Python SQL functions when Spark analyses the call (classic sessions).

Spark hands a Python function a STRING in a collation other than UTF8_BINARY as
plain text (its collation dropped), so the Python builders would hash its bytes and
count 'Alice' and 'alice' under UTF8_LCASE as two keys. :func:`guard` wraps each
function's builder in the session's function registry: Spark calls it on the driver
with the call's resolved arguments, and it refuses any argument that is such a
string (for ``skim_sketch_partials``, the ``key`` column of its TABLE argument)
with the jar's message (``_common.collation_error``: the function, the type,
the collation and the remedy ``lower(key) COLLATE UTF8_BINARY``), before any job.
The wrapper is a Py4J proxy: the refusal (``skimsketch.errors.KeyTypeError``)
reaches the caller inside Py4J's "exception was raised by the Python Proxy" error. Spark Connect clients have no
registry to wrap (their server's functions check or not).
"""

from __future__ import annotations

import logging
import re

import skimsketch as ss

from .._common import collation_error
from .docs import session_functions

__all__ = ["KEYED", "guard"]

#: The Python SQL functions taking a key argument (every other argument is numeric or BINARY), and the table
#: function whose TABLE argument holds a ``key`` column.
KEYED = ("skim_sketch_agg", "skim_hash_sketch_agg", "skim_frequency", "skim_sketch", "skim_sketch_weighted",
         "skim_skimmed_sketch", "skim_sketch_partials")
#: A collated string argument's collation, or that of the ``key`` field of a TABLE argument (a struct).
_COLLATED = re.compile(r"(?:string collate |struct<(?:.*,)?key:string collate )(\w+)")
_LOG = logging.getLogger("spark_udaf")


class _Guard:
    """A ``scala.Function1[Seq[Expression], Expression]``: refuses collated string arguments, else builds the call
    with the builder it wraps."""

    def __init__(self, name: str, inner):
        self.name, self.inner = name, inner

    def apply(self, args):
        for i in range(args.length()):
            m = _COLLATED.match(args.apply(i).dataType().simpleString())
            if m and m.group(1) != "UTF8_BINARY":  # a key argument, or the key column of a TABLE argument
                raise ss.KeyTypeError(collation_error(self.name, f"string collate {m.group(1)}", m.group(1)))
        return self.inner.apply(args)

    class Java:
        implements = ["scala.Function1"]


def guard(spark, names) -> list:
    """Wrap the builders of the session's temporary Python functions ``names`` (those of :data:`KEYED`) -> the
    names guarded; none for Spark Connect, or when Py4J's callback server cannot start (logged)."""
    jss = getattr(spark, "_jsparkSession", None)
    wanted = set(names) & set(KEYED)
    if jss is None or not wanted:
        return []
    from pyspark.java_gateway import ensure_callback_server_started

    try:
        ensure_callback_server_started(spark.sparkContext._gateway)
    except Exception as e:  # the check then cannot run: say so once
        _LOG.warning("collated keys are not checked by the Python SQL functions (no Py4J callback server: %s)", e)
        return []
    done = []
    for registry, fid, name, (info, builder) in session_functions(jss, wanted):
        registry.registerFunction(fid, info, _Guard(name, builder))
        done.append(name)
    return done
