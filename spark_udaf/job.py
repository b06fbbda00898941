"""The main job: sketch two tables, estimate their join size, compare with the exact join.

``main(argv)`` is what ``./dev run`` (``python -m spark_udaf.job``, the README's
main command) runs. By default it starts an embedded ``local[2]`` Spark,
generates two Zipf tables on the executors (:mod:`spark_udaf.datagen`: the
paper's setting, G = F shifted by ``--shift``) and writes them to Parquet in a
scratch directory; ``--left/--right`` read your Parquet instead. Then, on the
same files, it times the sketch estimate (both sketches built on the executors,
only their bytes reach the driver) against the exact join size (a shuffle of
grouped counts), and prints both answers, the error, the interval and the
speed-up. The same command works against a cluster, ``--master
spark://host:7077`` (``--workdir`` must then be a path every node can read),
with nothing set by hand: the session is made by :func:`spark_udaf.configure`
(the native jar travels to the executors with ``spark.jars``, so the sketches of
DataFrames build on the JVM), and :mod:`spark_udaf.cluster` finds a Python on
the executors that runs the library (shipping the sources) for the Python paths;
where none can, the tables are written from the driver and every build runs on
the JVM. docs/deploying.md.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time

import skimsketch as ss
from skimsketch.sketch.sizing import check_nbytes

from . import native
from .cluster import python_usable, python_workers
from .datagen import write_zipf_parquet, zipf_table
from .estimate import estimate_join_size
from .exact import exact_join_size

__all__ = ["main", "parse_args"]


def parse_args(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m spark_udaf.job", description=__doc__.splitlines()[0])
    p.add_argument("--master", default="local[2]", help="Spark master URL (default local[2]; any cluster URL works)")
    p.add_argument("--rows", type=int, default=4_000_000, help="rows of the left table (default 4,000,000)")
    p.add_argument("--right-rows", type=int, default=None, help="rows of the right table (default: --rows)")
    p.add_argument("--zipf", type=float, default=1.0, help="Zipf skew z of both tables (default 1.0)")
    p.add_argument("--domain", type=int, default=2**18, help="key domain [0, m) (default 2^18)")
    p.add_argument("--shift", type=int, default=100, help="right table = left distribution shifted by s (default 100)")
    p.add_argument("--seed", type=int, default=0, help="sketch seed (default 0)")
    p.add_argument("--data-seed", type=int, default=1, help="seed of the generated tables (default 1)")
    p.add_argument("--kind", choices=("auto", "sample", "skimmed", "hash", "agms"), default="auto",
                   help="summary (default auto: the join sample JoinSample.for_bytes, estimate_join_size's default "
                        "for tables at rest; skimmed with --width/--depth); skimmed: the library default sketch "
                        "SkimmedSketch.for_bytes, over [0, --domain) for generated tables, unbounded keys for "
                        "--left/--right")
    p.add_argument("--nbytes", type=int, default=16384,
                   help="memory per sketch: the library's default shape for it (default 16384)")
    p.add_argument("--width", type=int, default=None, help="buckets per table (with --depth, instead of --nbytes)")
    p.add_argument("--depth", type=int, default=None, help="tables (with --width)")
    p.add_argument("--confidence", type=float, default=0.95, help="interval confidence (default 0.95)")
    p.add_argument("--tolerance", type=float, default=None,
                   help="fall back to the exact size when the interval's relative half-width exceeds this")
    p.add_argument("--partitions", type=int, default=None, help="partitions of the generated tables")
    p.add_argument("--left", default=None, help="Parquet path of the left table (instead of generating)")
    p.add_argument("--right", default=None, help="Parquet path of the right table")
    p.add_argument("--column", default="k", help="join key column of --left/--right (default k)")
    p.add_argument("--workdir", default=None,
                   help="where generated tables are written as Parquet (default: a temporary directory, removed)")
    p.add_argument("--no-exact", action="store_true", help="skip the exact computation")
    p.add_argument("--repeat", type=int, default=3,
                   help="time the estimate and the exact join this many times each, alternating (default 3): "
                        "the first run pays the session's warm-up (Python workers, JIT), the others do not")
    args = p.parse_args(argv)
    if (args.left is None) != (args.right is None):
        p.error("--left and --right go together")
    if (args.width is None) != (args.depth is None):
        p.error("--width and --depth go together")
    if args.kind == "auto":
        args.kind = "sample" if args.width is None else "skimmed"
    if args.kind == "sample" and args.width is not None:
        p.error("--width/--depth shape a sketch: the sample takes --nbytes")
    for name in ("rows", "width", "depth", "domain", "nbytes", "repeat"):
        if getattr(args, name) is not None and getattr(args, name) < 1:
            p.error(f"--{name} must be positive")
    try:
        check_nbytes(args.nbytes)  # the smallest budget of every interface
    except ValueError as e:
        p.error(str(e))
    if args.right_rows is None:
        args.right_rows = args.rows
    return args


def _session(master: str):
    """The active SparkSession if there is one (left running), else a new one (stopped at the end)."""
    from pyspark.sql import SparkSession

    active = SparkSession.getActiveSession()
    if active is not None:
        return active, False
    if master.startswith("local"):
        # executors are local processes: use this interpreter (and its packages)
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
        if master.startswith("local-cluster") and "SPARK_HOME" not in os.environ:
            import pyspark

            os.environ["SPARK_HOME"] = os.path.dirname(pyspark.__file__)
    b = SparkSession.builder.master(master).appName("skimsketch-spark-demo")
    if master.startswith("local"):
        b = (b.config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
             .config("spark.sql.shuffle.partitions", "8"))
    if master.startswith("local-cluster"):
        b = b.config("spark.executor.memory", "512m")
    if native.available():  # the jar (JVM builds, executors need no Python) and PYSPARK_PYTHON for local masters
        b = native.configure(b)
    spark = b.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark, True


def _template(args):
    if args.kind == "sample":
        return ss.JoinSample.for_bytes(args.nbytes, seed=args.seed)
    cls = {"skimmed": ss.SkimmedSketch, "agms": ss.AGMSSketch, "hash": ss.HashSketch}[args.kind]
    params = {"domain": args.domain} if args.kind == "skimmed" and not args.left else {}
    if args.width is not None:
        return cls(args.width, args.depth, args.seed, **params)
    return cls.for_bytes(args.nbytes, seed=args.seed, **params)


def _fmt(x) -> str:
    return f"{x:,.0f}" if abs(x) < 1e15 else f"{x:.6g}"


def _generate(spark, args, workdir: str) -> tuple[str, str, float, str]:
    """Write the two Zipf tables to Parquet under ``workdir`` -> their paths, the seconds spent and where they
    were generated (on the executors where they run the library's Python, else by the driver)."""
    t = time.perf_counter()
    paths = os.path.join(workdir, "left"), os.path.join(workdir, "right")
    on_executors = python_usable(spark)
    files = args.partitions or spark.sparkContext.defaultParallelism
    for path, rows, shift, seed in ((paths[0], args.rows, 0, args.data_seed),
                                    (paths[1], args.right_rows, args.shift, args.data_seed + 1)):
        if on_executors:
            zipf_table(spark, rows, args.zipf, args.domain, shift, seed, args.partitions).write.parquet(path)
        else:
            write_zipf_parquet(path, rows, args.zipf, args.domain, shift, seed, files)
    return paths[0], paths[1], time.perf_counter() - t, "the executors" if on_executors else "the driver"


def main(argv=None) -> int:
    """Run the job; prints estimate, interval, exact answer, error, timings and speed-up. Returns 0."""
    args = parse_args(argv)
    template = _template(args)
    spark, owned = _session(args.master)
    scratch = None
    try:
        print(f"spark_udaf.job: master {spark.sparkContext.master}, Spark {spark.version}")
        workers = python_workers(spark)
        if workers is not None:
            where = (f"Python tasks run {workers.python}" if workers.python else
                     "no Python there runs the library: tables written by the driver, sketches built on the JVM")
            jvm = "native jar loaded" if native.loaded(spark) else "no native jar"
            print(f"executors  : {where}{' (sources shipped)' if workers.shipped else ''}; {jvm}")
        if args.left:
            lpath, rpath, lcol = args.left, args.right, args.column
            print(f"tables     : left {lpath}, right {rpath} (column {lcol})")
        else:
            workdir = args.workdir or (scratch := tempfile.mkdtemp(prefix="skimsketch-job-"))
            lpath, rpath, t_gen, where = _generate(spark, args, workdir)
            lcol = "k"
            print(f"tables     : left {args.rows:,} rows, right {args.right_rows:,} rows; Zipf z={args.zipf} over "
                  f"[0, {args.domain:,}), right shifted by {args.shift} (written to Parquet by {where} in "
                  f"{t_gen:.2f} s)")
        shape = ", ".join(f"{k}={v}" for k, v in template.params.items())
        if isinstance(template, ss.JoinSample):
            size = f"at most {args.nbytes:,} bytes each (the coordinated join sample)"
        elif getattr(template, "exact_mode", False):  # exact while few keys, then counters: the budget bounds both
            size = (f"at most {args.nbytes:,} bytes each (exact up to {template.exact_capacity:,} distinct keys, "
                    "then counters)")
        else:
            size = f"{template.nbytes:,} bytes each"
        print(f"sketch     : {type(template).__name__}({shape}), {size}")
        def run_estimate():
            t0 = time.perf_counter()
            result = estimate_join_size(lpath, lcol, rpath, lcol, template, confidence=args.confidence,
                                        tolerance=args.tolerance)
            return result, time.perf_counter() - t0

        def run_exact():
            t1 = time.perf_counter()
            value = exact_join_size(spark.read.parquet(lpath), lcol, spark.read.parquet(rpath), lcol)
            return value, time.perf_counter() - t1

        est, t_est = run_estimate()
        d = est.detail
        sk = d["sketch_estimate"]
        print(f"estimate   : {_fmt(sk.value)}  interval [{_fmt(sk.low)}, {_fmt(sk.high)}] at "
              f"{sk.confidence:.0%} ({sk.method})")
        print(f"summary    : {d['summary']} (estimate_join_size's default for tables at rest is the sample)")
        if d.get("build_plan"):
            print(f"built by   : skim_sample_agg, {'; '.join(dict.fromkeys(p or 'unknown' for p in d['build_plan']))}")
        if d["answered_by"] == "exact":
            print(f"fallback   : interval half-width {d['relative_half_width']:.1%} > tolerance "
                  f"{args.tolerance:.1%}: answered exactly ({_fmt(est.value)})")
        secs = d["seconds"]
        line = f"timings    : both sketches {secs['sketches']:.2f} s ({d['build_path']} path), estimate {secs['estimate']:.3f} s"
        if "exact" in secs:
            line += f", exact fallback {secs['exact']:.2f} s"
        line += f"; total {t_est:.2f} s"
        if not args.no_exact:
            if "exact" in d:
                exact, t_exact = d["exact"], secs["exact"]
            else:
                exact, t_exact = run_exact()
            print(f"exact      : {_fmt(exact)}  (exact join size from grouped counts, {t_exact:.2f} s)")
            if exact:
                rel = abs(sk.value - exact) / abs(exact)
                print(f"error      : {d['summary']} estimate off by {rel:.2%}; exact value "
                      f"{'inside' if sk.contains(exact) else 'OUTSIDE'} the interval")
        print(line)
        if not args.no_exact and d["answered_by"] != "exact":
            warm_est, warm_exact = [], []
            for _ in range(args.repeat - 1):  # alternating, so both see the same machine load
                warm_est.append(run_estimate()[1])
                warm_exact.append(run_exact()[1])
            print(f"speed-up   : first run: the sketch estimate took {t_est / t_exact:.2f}x the exact join's "
                  f"time ({t_exact / t_est:.1f}x faster) on the same Parquet files")
            if warm_est:
                e, x = statistics.median(warm_est), statistics.median(warm_exact)
                print(f"             warm (median of {len(warm_est)} more runs each): estimate {e:.2f} s, "
                      f"exact {x:.2f} s: {e / x:.2f}x the exact join's time ({x / e:.1f}x faster)")
        return 0
    finally:
        if scratch:
            shutil.rmtree(scratch, ignore_errors=True)
        if owned:
            spark.stop()


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main(sys.argv[1:]))
