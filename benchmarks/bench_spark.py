"""Spark benchmark: sketch building vs Spark's count_min_sketch, estimate vs exact join size.

Writes two Zipf tables (default 4M rows each, z=1.0 over [0, 2^18), the right
one shifted by 100) as Parquet to a temporary directory, then, in one
``local[2]`` session and the same run, times (median of ``--reps`` runs after
one warm-up run of each; repetitions interleaved across cases so that
background load affects them alike):

* building: ``spark_udaf.sketch_column`` (HashSketch and SkimmedSketch,
  width x depth; also with 131072-row Arrow batches) and
  ``spark_udaf.sketch_parquet`` (pyarrow reads the files on the executors)
  versus Spark's Count-Min sketch of the same shape on the same column, both through the DataFrame API (``df.stat.countMinSketch``) and the
  SQL aggregate (``count_min_sketch``); target: sketch_column <= 1.5x Spark;
* native (JVM) building, when a JDK is present (docs/native.md): the SQL
  aggregates ``skim_hash_sketch_agg`` (same shape) and ``skim_sketch_agg`` (the
  library default), and ``sketch_column(path="native")``, on the plain scan and on
  a derived DataFrame (a filter), against ``count_min_sketch`` on the same input;
  target: <= 1.1x;
* joining: ``spark_udaf.estimate_join_size`` (two sketches + estimate; from
  the DataFrames, and from the Parquet paths, i.e. ``sketch_parquet``) versus
  ``spark_udaf.exact_join_size`` (grouped counts, join, sum); target: <= 1/3.

* SQL estimates (``--cases sql-estimates`` runs only these; needs the jar):
  ``skim_join_size``, ``skim_join_size_bounds`` and ``skim_frequency`` over every
  pair of per-day sketches of the two tables (``--days`` days each, so
  ``days**2`` sketch pairs, built once natively: ``skim_hash_sketch_agg``, or with
  ``--estimate-sketch skimmed`` the library default ``skim_sketch_agg(k, 16384)``),
  the same SQL text answered by the native functions (``register(spark,
  estimates="native")``) and by the Python fallbacks (``estimates="python"``);
  printed as the ratio Python / native measured in the same run (no target).

"shuffle bytes" is the sum of ``shuffleWriteBytes`` over the stages the
operation ran, read from Spark's own status store (the data behind the UI's
Stages tab); results collected to the driver are not shuffle bytes and are
reported separately where known. This is a benchmark, not a test: it gates
nothing. Usage: ``./dev py benchmarks/bench_spark.py [--rows N] [--reps R] [--cases all|sql-estimates]``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time


def stage_metrics(sc):
    """{(stage id, attempt id): (shuffle write bytes, input bytes, records read)} from the status store."""
    jsc = sc._jsc.sc()
    try:
        jsc.listenerBus().waitUntilEmpty()
    except Exception:
        time.sleep(1.0)
    store = jsc.statusStore()
    quantiles = getattr(store, "stageList$default$4")()
    seq = store.stageList(None, False, False, quantiles, None)
    out = {}
    for i in range(seq.length()):
        s = seq.apply(i)
        out[(s.stageId(), s.attemptId())] = (s.shuffleWriteBytes(), s.inputBytes(), s.inputRecords())
    return out


class Timer:
    """Times a callable and measures the shuffle bytes written by the stages it ran."""

    def __init__(self, sc):
        self.sc = sc

    def run(self, fn):
        before = stage_metrics(self.sc)
        t = time.perf_counter()
        result = fn()
        dt = time.perf_counter() - t
        after = stage_metrics(self.sc)
        new = [v for k, v in after.items() if k not in before]
        return dt, sum(v[0] for v in new), sum(v[1] for v in new), result


SQL_ESTIMATES = (
    ("skim_join_size", "sum(skim_join_size(x.sk, y.sk))"),
    ("skim_join_size_bounds", "sum(skim_join_size_bounds(x.sk, y.sk, 0.9).high)"),
    ("skim_frequency", "sum(skim_frequency(x.sk, y.day))"),
)


def sql_estimate_case(spark, left, right, days: int, width: int, depth: int, reps: int,
                      sketch: str = "hash") -> None:
    """Time the SQL estimate functions over ``days**2`` sketch pairs, native vs the Python fallbacks."""
    import spark_udaf

    spark_udaf.register(spark)
    t = time.perf_counter()
    build = (f"skim_hash_sketch_agg(k, {width}, {depth}, 1)" if sketch == "hash" else "skim_sketch_agg(k, 16384, 1)")
    shape = f"HashSketch({width}, {depth})" if sketch == "hash" else "SkimmedSketch.for_bytes(16384)"
    for name, df, seed in (("skim_bench_left", left, 5), ("skim_bench_right", right, 6)):
        daily = spark.sql(f"""SELECT day, {build} AS sk
                             FROM (SELECT CAST(floor(rand({seed}) * {days}) AS INT) AS day, k FROM {{df}})
                             GROUP BY day""", df=df).collect()
        assert len(daily) == days, len(daily)
        spark.createDataFrame([(r.day, bytes(r.sk)) for r in daily], "day int, sk binary") \
            .coalesce(1).cache().createOrReplaceTempView(name)
        spark.table(name).count()
    pairs = days * days
    nbytes = len(spark.table("skim_bench_left").first().sk)
    print(f"# SQL estimates: {days} x {days} = {pairs:,} pairs of per-day {shape} sketches "
          f"({nbytes:,} B each), built natively in {time.perf_counter() - t:.1f} s; one query per function: "
          "SELECT sum(f(x.sk, y.sk)) FROM skim_bench_left x CROSS JOIN skim_bench_right y")

    def query(expr):
        return spark.sql(f"SELECT {expr} AS v FROM skim_bench_left x CROSS JOIN skim_bench_right y").collect()[0].v

    modes = ("native", "python")
    runs = {(f, m): [] for f, _ in SQL_ESTIMATES for m in modes}
    answers = {}
    for rep in range(reps + 1):  # the first repetition warms up (workers, JIT) and is not counted
        for f, expr in SQL_ESTIMATES:
            for m in modes:
                spark_udaf.register(spark, estimates=m)
                t = time.perf_counter()
                answers[(f, m)] = query(expr)
                if rep:
                    runs[(f, m)].append(time.perf_counter() - t)
    spark_udaf.register(spark)
    med = {}
    for f, _ in SQL_ESTIMATES:
        for m in modes:
            rs = runs[(f, m)]
            med[(f, m)] = secs = statistics.median(rs)
            print(f"sql estimate: {f:22s} {m:7s} {secs:7.2f} s  {pairs / secs / 1e3:8.1f} k pairs/s  "
                  f"(runs: {', '.join(f'{r:.2f}' for r in rs)})")
    for f, _ in SQL_ESTIMATES:
        x, y = answers[(f, "native")], answers[(f, "python")]
        same = abs(x - y) <= 1e-9 * max(abs(x), abs(y))  # the JVM's sums round like the core's within 1e-9
        print(f"ratio {f} Python UDF / native: {med[(f, 'python')] / med[(f, 'native')]:.2f} "
              f"(same answer: {'yes' if same else 'NO'}, {answers[(f, 'native')]:,.6g})")


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rows", type=int, default=4_000_000)
    p.add_argument("--reps", type=int, default=5)
    p.add_argument("--width", type=int, default=1024)
    p.add_argument("--depth", type=int, default=5)
    p.add_argument("--master", default="local[2]")
    p.add_argument("--dir", default=None, help="where to write the Parquet tables (default: a temp dir)")
    p.add_argument("--cases", choices=("all", "sql-estimates"), default="all",
                   help="sql-estimates: only the SQL estimate functions, native vs Python")
    p.add_argument("--days", type=int, default=64, help="per-day sketches per table of the SQL estimate case")
    p.add_argument("--estimate-sketch", choices=("hash", "skimmed"), default="hash",
                   help="the SQL estimate case's sketches: hash (width x depth) or the skimmed default (16 KB)")
    args = p.parse_args(argv)

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    from pyspark.sql import SparkSession

    import skimsketch as ss
    import spark_udaf
    from spark_udaf import native
    from spark_udaf.datagen import zipf_table

    builder = (SparkSession.builder.master(args.master).appName("skimsketch-bench")
               .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
               .config("spark.driver.memory", "2g").config("spark.sql.shuffle.partitions", "8"))
    has_native = native.available()
    spark = (native.configure(builder) if has_native else builder).getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    sc = spark.sparkContext
    timer = Timer(sc)
    W, D = args.width, args.depth
    eps, conf = 2.0 / W, 1 - 2.0 ** -D - 1e-9  # Spark: width = ceil(2/eps), depth = ceil(-log2(1-conf))
    tmp = tempfile.TemporaryDirectory(prefix="skimsketch-bench-", dir=args.dir)
    try:
        lpath, rpath = os.path.join(tmp.name, "left"), os.path.join(tmp.name, "right")
        t = time.perf_counter()
        zipf_table(spark, args.rows, 1.0, 2**18, 0, 1).write.parquet(lpath)
        zipf_table(spark, args.rows, 1.0, 2**18, 100, 2).write.parquet(rpath)
        left, right = spark.read.parquet(lpath), spark.read.parquet(rpath)
        print(f"# Spark {spark.version}, master {sc.master}, {os.cpu_count()} CPUs; "
              f"tables: 2 x {args.rows:,} rows Zipf z=1.0 over [0, 2^18), right shifted by 100 "
              f"(written in {time.perf_counter() - t:.1f} s, {left.rdd.getNumPartitions()} + "
              f"{right.rdd.getNumPartitions()} input partitions); sketch {W} x {D}; median of {args.reps} runs; "
              f"load average at start {os.getloadavg()[0]:.1f}")

        if args.cases == "sql-estimates":
            if not has_native:
                raise SystemExit("the SQL estimate case needs the native jar (a JDK): spark_udaf.native")
            sql_estimate_case(spark, left, right, args.days, W, D, args.reps, args.estimate_sketch)
            return
        cms = spark._jvm.org.apache.spark.util.sketch.CountMinSketch
        assert cms.create(eps, conf, 1).width() == W and cms.create(eps, conf, 1).depth() == D

        def cms_df():
            return left._jdf.stat().countMinSketch("k", eps, conf, 1)  # JVM API (not exposed in PySpark)

        def cms_sql():
            return left.selectExpr(f"count_min_sketch(k, {eps!r}D, {conf!r}D, 1) AS s").collect()[0].s

        def hash_sketch():
            return spark_udaf.sketch_column(left, "k", ss.HashSketch(width=W, depth=D, seed=1), path="python")

        def skimmed_sketch():
            return spark_udaf.sketch_column(left, "k", ss.SkimmedSketch(width=W, depth=D, seed=1, domain=2**18),
                                            path="python")

        derived = left.where("k % 2 = 0")

        def cms_derived():
            return derived.selectExpr(f"count_min_sketch(k, {eps!r}D, {conf!r}D, 1) AS s").collect()[0].s

        def native_sql_hash(df=left):
            return df.selectExpr(f"skim_hash_sketch_agg(k, {W}, {D}, 1) AS s").collect()[0].s

        def native_sql_default():
            return left.selectExpr("skim_sketch_agg(k) AS s").collect()[0].s

        def native_column(df=left):
            return spark_udaf.sketch_column(df, "k", ss.HashSketch(width=W, depth=D, seed=1), path="native")

        def python_derived():
            return spark_udaf.sketch_column(derived, "k", ss.HashSketch(width=W, depth=D, seed=1), path="python")

        def with_batch(fn, n=131072):
            """``fn`` run with spark.sql.execution.arrow.maxRecordsPerBatch = n (default 10,000)."""
            def run():
                key = "spark.sql.execution.arrow.maxRecordsPerBatch"
                spark.conf.set(key, str(n))
                try:
                    return fn()
                finally:
                    spark.conf.unset(key)
            return run

        template = ss.SkimmedSketch(width=W, depth=D, seed=1, domain=2**18)

        def parquet_sketch():
            return spark_udaf.sketch_parquet(spark, lpath, "k", ss.HashSketch(width=W, depth=D, seed=1))

        def estimate():
            return spark_udaf.estimate_join_size(left, "k", right, "k", template)

        def estimate_parquet():
            return spark_udaf.estimate_join_size(lpath, "k", rpath, "k", template)

        def exact():
            return spark_udaf.exact_join_size(left, "k", right, "k")

        cases = [
            ("build: Spark countMinSketch (DataFrame API)", cms_df, args.rows),
            ("build: Spark count_min_sketch (SQL aggregate)", cms_sql, args.rows),
            ("build: sketch_column HashSketch", hash_sketch, args.rows),
            ("build: sketch_column SkimmedSketch", skimmed_sketch, args.rows),
            ("build: sketch_column HashSketch, Arrow batch 131072", with_batch(hash_sketch), args.rows),
            ("build: sketch_parquet HashSketch (pyarrow reads)", parquet_sketch, args.rows),
        ]
        native_cases = [
            ("native: Spark count_min_sketch on a filter (SQL aggregate)", cms_derived, args.rows),
            ("native: SQL skim_hash_sketch_agg", native_sql_hash, args.rows),
            ("native: SQL skim_sketch_agg (default 16 KB sketch)", native_sql_default, args.rows),
            ("native: sketch_column HashSketch path=native", native_column, args.rows),
            ("native: SQL skim_hash_sketch_agg on a filter", lambda: native_sql_hash(derived), args.rows),
            ("native: sketch_column path=native on a filter", lambda: native_column(derived), args.rows),
            ("native: sketch_column path=python on a filter", python_derived, args.rows),
        ] if has_native else []
        cases += native_cases + [
            ("join: estimate_join_size DataFrames (skimmed, 1 job)", estimate, 2 * args.rows),
            ("join: estimate_join_size Parquet paths (skimmed)", estimate_parquet, 2 * args.rows),
            ("join: exact_join_size (grouped counts)", exact, 2 * args.rows),
        ]
        n_build = 6 + len(native_cases)
        for _, fn, _ in cases:
            timer.run(fn)  # warm-up: Python workers, JIT, file listing
        # interleaved repetitions: every case sees the same background load on average
        runs = {name: [] for name, _, _ in cases}
        for _ in range(args.reps):
            for group in (cases[:n_build], cases[n_build:]):
                for name, fn, _ in group:
                    runs[name].append(timer.run(fn))
        results = {}
        for name, _fn, rows in cases:
            rs = runs[name]
            secs = statistics.median(r[0] for r in rs)
            shuffle = statistics.median(r[1] for r in rs)
            results[name] = (secs, rs[-1][3])
            print(f"{name:54s} {secs:7.2f} s  {rows / secs / 1e6:6.2f} M rows/s  shuffle write {shuffle:>12,.0f} B  "
                  f"(runs: {', '.join(f'{r[0]:.2f}' for r in rs)})")
        nbytes = len(ss.HashSketch(width=W, depth=D, seed=1).to_bytes())
        print(f"sketch_column moves no rows: the driver receives at most one partial per input partition "
              f"({left.rdd.getNumPartitions()} x {nbytes:,} B); load average at end {os.getloadavg()[0]:.1f}")
        b_cms = min(results[cases[0][0]][0], results[cases[1][0]][0])
        for n in (cases[2][0], cases[3][0], cases[4][0], cases[5][0]):
            print(f"ratio {n.split(': ')[1]} / fastest Spark Count-Min: {results[n][0] / b_cms:.2f} (target <= 1.1)")
        if native_cases:
            cms_sql_s, cms_f = results[cases[1][0]][0], results[native_cases[0][0]][0]
            for name, _fn, _rows in native_cases[1:4]:
                print(f"ratio {name.split(': ')[1]} / Spark count_min_sketch (SQL): {results[name][0] / cms_sql_s:.2f} "
                      "(target <= 1.1)")
            for name, _fn, _rows in native_cases[4:]:
                print(f"ratio {name.split(': ')[1]} / Spark count_min_sketch on the filter: "
                      f"{results[name][0] / cms_f:.2f} (target <= 1.1 for the native path)")
        j = 6 + len(native_cases)
        est, estp, ex = results[cases[j][0]], results[cases[j + 1][0]], results[cases[j + 2][0]]
        print(f"ratio estimate (DataFrames) / exact: {est[0] / ex[0]:.2f} (target <= 0.25)")
        print(f"ratio estimate (Parquet paths) / exact: {estp[0] / ex[0]:.2f} (target <= 0.25)")
        e = est[1]
        print(f"estimate {e.value:,.0f} [{e.low:,.0f}, {e.high:,.0f}] ({e.method}); exact {ex[1]:,}; "
              f"error {abs(e.value - ex[1]) / ex[1]:.2%}; sketch bytes {e.detail['sketch_bytes']:,}")
        if has_native:
            sql_estimate_case(spark, left, right, args.days, W, D, args.reps, args.estimate_sketch)
    finally:
        spark.stop()
        tmp.cleanup()


if __name__ == "__main__":
    main()
