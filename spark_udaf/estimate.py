"""Join-size estimation on Spark with an optional exact fallback."""

from __future__ import annotations

import dataclasses
import math
import time

import skimsketch as ss
from skimsketch.sketch.sizing import check_nbytes

from .build import native as native_build, sample as sample_build
from ._common import check_columns, check_weight_field
from .cluster import python_usable
from .build import plain_parquet_scan, sketch_column, sketch_pair
from .build.parquet import require_template
from .exact import check_join_keys, exact_join_size

__all__ = ["DEFAULT_NBYTES", "default_sketch", "estimate_join_size", "relative_half_width"]

DEFAULT_NBYTES = 16 * 1024  # the library default's budget (the CLI's and native SQL's default too)


def relative_half_width(est: ss.Estimate) -> float:
    """``max(value - low, high - value) / |value|`` (``inf`` for a zero value with a non-zero interval)."""
    half = max(est.value - est.low, est.high - est.value)
    if half == 0:
        return 0.0
    if est.value == 0 or math.isnan(half):
        return math.inf
    return half / abs(est.value)


def _parquet_path(x):
    """``[paths]`` if ``x`` is a Parquet path (str) or list of paths, else ``None`` (a DataFrame)."""
    if isinstance(x, str):
        return [x]
    if isinstance(x, (list, tuple)) and x and all(isinstance(p, str) for p in x):
        return list(x)
    return None


def _active_session():
    from pyspark.sql import SparkSession

    spark = SparkSession.getActiveSession()
    if spark is None:
        raise ValueError("Parquet paths need an active SparkSession")
    return spark


def default_sketch(nbytes: int | None = None, width: int | None = None, depth: int | None = None, seed: int = 0,
                   dtype: str = "int64"):
    """The library default: ``SkimmedSketch.for_bytes(nbytes)`` (16 KB), or ``SkimmedSketch(width, depth)``.

    ``dtype="float64"`` (weights that are not integers) keeps the shape of the
    count sketch of the same arguments (its ``width`` and ``depth``, hence up to
    twice its bytes), so a SUM sketch joins the count sketch built with the
    same arguments.
    """
    if (width is None) != (depth is None):
        raise ValueError(f"width and depth go together, got width={width!r}, depth={depth!r}")
    if width is not None and nbytes is not None:
        raise ValueError(f"give either nbytes or width/depth, not both (got nbytes={nbytes!r}, width={width!r})")
    if width is not None:
        count = ss.SkimmedSketch(width, depth, seed)
    else:
        count = ss.SkimmedSketch.for_bytes(DEFAULT_NBYTES if nbytes is None else check_nbytes(nbytes), seed=seed)
    return count if dtype == "int64" else type(count)(**dict(count.params, dtype=dtype))


def _fractional(df, w) -> bool:
    """Whether weight column ``w`` of ``df`` needs float counters (float, double, DECIMAL(p, s > 0))."""
    t = check_weight_field(df, w).dataType
    return t.simpleString() in ("float", "double") or (t.simpleString().startswith("decimal(") and t.scale > 0)


def estimate_join_size(left, lcol: str, right, rcol: str, sketch=None, *, lweight: str | None = None,
                       rweight: str | None = None, nbytes: int | None = None, width: int | None = None,
                       depth: int | None = None, seed: int | None = None,
                       confidence: float = 0.95, tolerance: float | None = None, fallback: bool = True,
                       single_job: bool = True, merge: str = "driver", path: str = "auto",
                       summary: str = "auto") -> ss.Estimate:
    """Estimate ``|left ⋈ right|`` on ``lcol = rcol`` from two sketches built on the executors.

    ``left``/``right`` are DataFrames, or Parquet paths (a str or list of str)
    read with ``spark.read.parquet`` (plain scans, so the Parquet fast path of
    :func:`~spark_udaf.build.sketch_column` reads them).
    ``sketch`` is the template (its kind, shape and seed; both sides use
    ``sketch.empty_like()``, the template itself never changes); by default
    the library default, :func:`default_sketch` (``SkimmedSketch.for_bytes(nbytes)``,
    16 KB, or ``SkimmedSketch(width, depth)``; float counters of the same
    shape when a weight column is fractional: float, double, DECIMAL(p, s > 0)). With
    ``lweight``/``rweight`` the answer is the join aggregate
    ``Σ_v (Σ lweight)(Σ rweight)``. If ``tolerance`` is given and the interval's
    relative half-width (:func:`relative_half_width`) exceeds it, the exact size
    is computed instead (:func:`~spark_udaf.exact.exact_join_size`) unless
    ``fallback=False``. ``result.method`` names the estimator that answered
    (``"exact"`` after a fallback); ``result.detail`` records ``answered_by``
    (``"sample"``/``"sketch"``/``"exact"``), the sketch estimate, the relative half-width,
    the sketches' bytes and the seconds spent on each step. Both sketches are
    built in one Spark job (:func:`~spark_udaf.build.sketch_pair`) — except
    when both are plain Parquet scans, which two :func:`~spark_udaf.build.sketch_column`
    jobs read faster with pyarrow (``path="auto"``); with ``single_job=False`` by two
    :func:`~spark_udaf.build.sketch_column` jobs (merged per ``merge``).
    DataFrame sides are built on the JVM when the native jar allows it
    (``path`` as in :func:`~spark_udaf.build.sketch_column`);
    ``result.detail["build_path"]`` says which path ran (``"native"``/``"python"``), and for samples built on the
    JVM ``result.detail["build_plan"]`` how each side's was planned (``sample_build.build_plan``).

    ``summary`` chooses what summarises each side when no template is given:
    ``"sample"`` (``JoinSample.for_bytes(nbytes, seed)``, the coordinated join
    sample: :mod:`spark_udaf.build.sample`), ``"sketch"`` (:func:`default_sketch`),
    or ``"auto"`` (the default): the sample. In the measurements of ``docs/sample.md``
    (4/16/64 KB) it is 3-4000x more accurate on skewed and low-overlap joins, at or within a
    standard error of the hash sketch everywhere, and at most 1.15x less accurate than the
    skimmed default (flat real keys at 4 KB). ``width``/``depth`` shape a sketch, so they choose it. A template decides
    by its type. ``result.detail["summary"]`` says which was used (``"sample"`` /
    ``"sketch"``; ``result.method`` is ``"sample"`` for the sample).
    """
    if tolerance is not None and not (tolerance >= 0 and math.isfinite(tolerance)):
        raise ValueError(f"tolerance must be a finite number >= 0, got {tolerance!r}")
    lpath, rpath = _parquet_path(left), _parquet_path(right)
    if lpath is not None or rpath is not None:
        spark = _active_session()
        left = left if lpath is None else spark.read.parquet(*lpath)
        right = right if rpath is None else spark.read.parquet(*rpath)
    check_join_keys(left, lcol, right, rcol)
    use_sample = sample_build.use_sample(summary, sketch, width, depth)
    if sketch is None:
        floats = any(w is not None and _fractional(df, w) for df, w in ((left, lweight), (right, rweight)))
        dtype = "float64" if floats else "int64"
        template = ss.JoinSample.for_bytes(DEFAULT_NBYTES if nbytes is None else check_nbytes(nbytes), seed or 0,
                                           dtype) if use_sample \
            else default_sketch(nbytes, width, depth, seed or 0, dtype)
    elif (nbytes, width, depth, seed) != (None, None, None, None):
        raise ValueError("give either a template sketch or nbytes/width/depth/seed (the template has its own), "
                         "not both")
    else:
        template = require_template(sketch, "sketch")
    check_columns(left, lcol, template, lweight)  # both sides, before either is scanned
    check_columns(right, rcol, template, rweight)
    native_build.check_path(path)
    t0 = time.perf_counter()
    # "auto": plain Parquet scans on both sides (DataFrames or paths) are read fastest by the
    # Parquet fast path (see sketch_column), one sketch_column job per side
    # where the executors can run the library's Python (spark_udaf.cluster; else the JVM builds them)
    scans = (path == "auto" and bool(plain_parquet_scan(left)) and bool(plain_parquet_scan(right))
             and python_usable(left.sparkSession))
    reasons = [native_build.native_reason(df, col, template, w)
               for df, col, w in ((left, lcol, lweight), (right, rcol, rweight))]
    native_sides = path != "python" and not scans and reasons == [None, None]
    if path == "native" and not native_sides and not use_sample:
        raise ValueError(f"path='native' is not possible here: {next(r for r in reasons if r)}; "
                         "use path='auto' or 'python'")
    if use_sample:  # both sides natively when the jar allows it (spark_udaf.build.sample), else in Python
        a = sketch_column(left, lcol, template.empty_like(), lweight, path=path)
        b = sketch_column(right, rcol, template.empty_like(), rweight, path=path)
        native_sides = path != "python" and sample_build.native_sides(left, lcol, lweight, right, rcol, rweight,
                                                                      template)
    elif native_sides:
        a = sketch_column(left, lcol, template.empty_like(), lweight, path="native")
        b = sketch_column(right, rcol, template.empty_like(), rweight, path="native")
    elif single_job and not scans:
        a, b = sketch_pair(left, lcol, right, rcol, template, lweight, rweight)
    else:  # path is "auto" or "python" here ("native" was taken above, or refused)
        a = sketch_column(left, lcol, template.empty_like(), lweight, merge=merge, path=path)
        b = sketch_column(right, rcol, template.empty_like(), rweight, merge=merge, path=path)
    t2 = time.perf_counter()
    est = a.join_size(b, confidence=confidence)
    t3 = time.perf_counter()
    rhw = relative_half_width(est)
    plans = [sample_build.build_plan(df, c, template, w) for df, c, w in ((left, lcol, lweight),
                                                                         (right, rcol, rweight))] \
        if use_sample and native_sides else None
    detail = {
        "answered_by": "sample" if use_sample else "sketch",
        "summary": "sample" if use_sample else "sketch",
        "build_path": "native" if native_sides else "python",
        "build_plan": plans,
        "sketch_estimate": est,
        "relative_half_width": rhw,
        "tolerance": tolerance,
        "sketch_bytes": len(a.to_bytes()) + len(b.to_bytes()),
        "seconds": {"sketches": t2 - t0, "estimate": t3 - t2},
        **{f"sketch_{k}": v for k, v in est.detail.items()},
    }
    if tolerance is None or rhw <= tolerance or not fallback:
        detail["within_tolerance"] = tolerance is None or rhw <= tolerance
        return dataclasses.replace(est, detail=detail)
    exact = exact_join_size(left, lcol, right, rcol, lweight, rweight)
    detail["answered_by"] = "exact"
    detail["within_tolerance"] = False
    detail["seconds"]["exact"] = time.perf_counter() - t3
    detail["exact"] = exact
    v = float(exact)
    return ss.Estimate(v, v, v, 1.0, "exact", detail=detail)
