"""Spark benchmark: the build cost of ``skim_sample_agg`` (the join sample) against ``skim_sketch_agg`` and
Spark's ``tuple_sketch_agg_integer``, on the same scan in the same run.

Writes one Zipf table (``--rows`` rows, z = ``--zipf`` over ``[0, --domain)``, seeded) as Parquet in
``--partitions`` files to a temporary directory, then, in one ``local[2]`` session (shuffle partitions
``--shuffle``), times each SQL aggregate over the Parquet scan (median of ``--reps`` runs after one warm-up
each; repetitions interleaved across cases so background load affects them alike):

* ``scan``: ``count(DISTINCT k)``-free baseline ``sum(hash(k))`` (reads and hashes the key);
* ``group``: ``SELECT count(*) FROM (SELECT k, count(*) FROM t GROUP BY k)`` (Spark's grouping alone);
* ``sketch``: ``skim_sketch_agg(k, 16384)`` (the library default sketch);
* ``sample``: ``skim_sample_agg(k, 16384)`` (the join sample: a GROUP BY of the key under a bounded
  sample aggregate, SampleRule);
* ``sample_raw``: ``skim_sample_agg(k, 16384)`` beside ``avg(k)`` (the raw aggregate: every key's
  exact total in the partial buffers; what runs when the rule cannot rewrite);
* ``tuple``: ``tuple_sketch_agg_integer(k, 1)`` (Spark's theta-style sample with exact counts), when the
  installed Spark has it.

Prints seconds and the ratios to ``sketch`` (the issue's target: sample <= 1.5x sketch). A benchmark,
not a test. Usage (bounded, seeded)::

    PYTHONPATH=$PWD timeout 1800 .venv/bin/python benchmarks/bench_spark_sample.py --rows 4000000 --reps 3
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rows", type=int, default=4_000_000)
    p.add_argument("--domain", type=int, default=1 << 20)
    p.add_argument("--zipf", type=float, default=1.0)
    p.add_argument("--partitions", type=int, default=8, help="Parquet files (scan tasks)")
    p.add_argument("--shuffle", type=int, default=8, help="spark.sql.shuffle.partitions")
    p.add_argument("--reps", type=int, default=3)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", default=None, help="also write the report to this file")
    return p.parse_args(argv)


CASES = {
    "scan": "SELECT sum(hash(k)) FROM t",
    "group": "SELECT count(*) FROM (SELECT k, count(*) AS n FROM t GROUP BY k)",
    "sketch": "SELECT skim_sketch_agg(k, 16384) FROM t",
    "sample": "SELECT skim_sample_agg(k, 16384) FROM t",
    "sample_raw": "SELECT skim_sample_agg(k, 16384), avg(k) FROM t",
    "tuple": "SELECT tuple_sketch_agg_integer(k, 1) FROM t",
}


def main(argv=None) -> int:
    args = parse_args(argv)
    from pyspark.sql import SparkSession

    from spark_udaf import native
    from spark_udaf.datagen import zipf_table

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    b = (SparkSession.builder.master("local[2]").config("spark.ui.enabled", "false")
         .config("spark.sql.shuffle.partitions", str(args.shuffle)).config("spark.driver.memory", "2g"))
    spark = native.configure(b).getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    lines = [f"bench_spark_sample: Spark {spark.version}, local[2], {args.rows:,} rows, Zipf z={args.zipf} over "
             f"[0, {args.domain:,}), seed {args.seed}, {args.partitions} files, {args.shuffle} shuffle partitions, "
             f"median of {args.reps}"]
    with tempfile.TemporaryDirectory(prefix="bench-sample-") as tmp:
        path = os.path.join(tmp, "t")
        zipf_table(spark, args.rows, args.zipf, args.domain, 0, args.seed, args.partitions).write.parquet(path)
        spark.read.parquet(path).createOrReplaceTempView("t")
        distinct = spark.sql("SELECT count(DISTINCT k) FROM t").collect()[0][0]
        lines.append(f"distinct keys: {distinct:,}")
        cases = dict(CASES)
        try:
            spark.sql("SELECT tuple_sketch_agg_integer(id, 1) FROM range(3)").collect()
        except Exception as e:  # an older Spark
            lines.append(f"tuple_sketch_agg_integer: not available ({str(e).splitlines()[0][:120]})")
            del cases["tuple"]
        times = {c: [] for c in cases}
        for rep in range(args.reps + 1):
            for c, q in cases.items():
                t = time.perf_counter()
                spark.sql(q).collect()
                if rep:  # the first round warms up every case
                    times[c].append(time.perf_counter() - t)
        med = {c: statistics.median(v) for c, v in times.items()}
        lines.append(f"{'case':<11} {'seconds':>8} {'/sketch':>8}  runs")
        for c in cases:
            runs = " ".join(f"{x:.2f}" for x in times[c])
            lines.append(f"{c:<11} {med[c]:8.2f} {med[c] / med['sketch']:8.2f}  {runs}   {cases[c]}")
    spark.stop()
    report = "\n".join(lines)
    print(report)
    if args.out:
        with open(args.out, "w") as f:
            f.write(report + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
