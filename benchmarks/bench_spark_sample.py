"""Spark benchmark: the build cost of ``skim_sample_agg`` (the join sample) against ``skim_sketch_agg`` and
Spark's ``tuple_sketch_agg_integer``, on the same scan in the same run.

For each data shape (``--shapes``; every table ``--rows`` rows of one bigint column ``k``, written seeded as
Parquet in ``--files`` files to a temporary directory):

* ``zipf20``: Zipf z = 1.0 over ``[0, 2^20)``; ``zipf18``: Zipf z = 1.0 over ``[0, 2^18)``;
  ``zipf20z1.1``: Zipf z = 1.1 over ``[0, 2^20)`` (the default shapes: ``unique``, ``zipf20z1.1``, ``zipf18``);
* ``unique``: a seeded permutation of ``[0, rows)``: every key distinct, the worst case for grouping
  (map-side combining removes nothing, the shuffle carries every row);
* ``zipf20str`` (not run by default): ``zipf20``'s keys as strings ``'user-<k>'`` (the rule groups string
  keys by their fingerprint64, a bigint);

one ``local[2]`` session (shuffle partitions ``--shuffle``) times each SQL aggregate over the Parquet scan:

* ``scan``: ``sum(hash(k))`` (reads and hashes the key: the floor of every case);
* ``distinct``: ``count(DISTINCT k)`` (Spark's exact distinct count: a sample records the exact number of
  distinct keys, so every exact builder does at least this);
* ``group``: ``max(hash(k, n))`` over ``SELECT k, count(*) AS n ... GROUP BY k`` (Spark's grouping with the
  per-key totals, every group read; ``sum(n)`` would be folded into a ``count(*)`` by the optimizer);
* ``sketch``: ``skim_sketch_agg(k, 16384)`` (the library's default sketch; the reference of every ratio);
* ``sample``: ``skim_sample_agg(k, 16384)`` (the join sample, as SampleRule plans it: the bucketed build,
  per-task sorted runs of fingerprint totals merged per bucket of fingerprints after the shuffle);
* ``sample_groupby``: the same query with ``spark.skimsketch.sample.bucketedBuild=false`` (the previous plan:
  Spark's GROUP BY of the key, then the bounded sample aggregate over the (key, total) rows);
* ``sample_raw``: ``skim_sample_agg(k, 16384)`` beside ``avg(hash(k))`` (the rule does not rewrite it: each scan
  task builds every key's exact total, one task merges them all; no shuffle grouping, not scalable);
* ``tuple``: ``tuple_sketch_agg_integer(k, 1)`` (Spark's uniform key sample with exact counts), when the
  installed Spark has it;
* with ``--bypass``, ``sample_bypass`` and ``group_bypass``: ``sample`` and ``group`` with
  ``spark.sql.execution.bypassPartialAggregation=true`` (Spark 4.3: no map-side partial aggregation, one
  Complete-mode aggregate after the shuffle), set for that case only.

Timing: one warm-up round over every case, then ``--reps`` rounds; each round runs every case once, in an
order rotated by one each round (round-robin, so background load and JIT warm-up fall on every case alike).
Reported per case: median, interquartile range and minimum seconds, and the median (and IQR) of the per-round
ratios to ``sketch`` measured in the same round (issue 35's targets: sample <= 3x sketch on distinct keys, <= 2.5x on Zipf), and for the
sample the per-round ratio to ``group``. The physical plan of the sample case (after execution, adaptive
query execution's final plan) is summarised: its exchanges with the rows they shuffled, and its aggregate
operators. A benchmark, not a test. Usage (bounded, seeded; about 4-5 minutes on 2 cores)::

    PYTHONPATH=$PWD timeout 900 .venv/bin/python benchmarks/bench_spark_sample.py --reps 7 \\
        --out benchmarks/results/bench_spark_sample.txt
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time

SHAPES = ("zipf20", "zipf18", "unique", "zipf20str", "zipf20z1.1")
DEFAULT_SHAPES = ("unique", "zipf20z1.1", "zipf18")

CASES = {
    "scan": "SELECT sum(hash(k)) FROM t",
    "distinct": "SELECT count(DISTINCT k) FROM t",
    "group": "SELECT max(hash(k, n)) FROM (SELECT k, count(*) AS n FROM t GROUP BY k)",
    "sketch": "SELECT skim_sketch_agg(k, 16384) FROM t",
    "sample": "SELECT skim_sample_agg(k, 16384) FROM t",
    "sample_groupby": "SELECT skim_sample_agg(k, 16384) FROM t",
    "sample_raw": "SELECT skim_sample_agg(k, 16384), avg(hash(k)) FROM t",
    "tuple": "SELECT tuple_sketch_agg_integer(k, 1) FROM t",
}


BYPASS = "_bypass"
BYPASS_CONF = "spark.sql.execution.bypassPartialAggregation"
BUCKETED_CONF = "spark.skimsketch.sample.bucketedBuild"


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rows", type=int, default=4_000_000)
    p.add_argument("--shapes", default=",".join(DEFAULT_SHAPES), help=f"comma-separated, of {', '.join(SHAPES)}")
    p.add_argument("--files", type=int, default=8, help="Parquet files per table")
    p.add_argument("--shuffle", type=int, default=8, help="spark.sql.shuffle.partitions")
    p.add_argument("--reps", type=int, default=7, help="timed rounds (after one warm-up round)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--bypass", action="store_true", help="also time sample and group without partial aggregation")
    p.add_argument("--out", default=None, help="also write the report to this file")
    args = p.parse_args(argv)
    args.shapes = [s for s in args.shapes.split(",") if s]
    bad = [s for s in args.shapes if s not in SHAPES]
    if args.reps < 2:
        p.error(f"--reps: needs at least 2 timed rounds for quartiles, got {args.reps}")
    if bad:
        p.error(f"--shapes: unknown shape {bad[0]!r}; use some of {', '.join(SHAPES)}")
    return args


def write_table(path: str, shape: str, rows: int, files: int, seed: int) -> str:
    """Write the shape's table as Parquet under ``path``; -> a one-line description."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    from spark_udaf.datagen import write_zipf_parquet

    if shape == "zipf20str":
        write_table(path + "-ints", "zipf20", rows, files, seed)
        for i, piece in enumerate(sorted(os.listdir(path + "-ints"))):
            k = pq.read_table(os.path.join(path + "-ints", piece)).column("k")
            os.makedirs(path, exist_ok=True)
            strings = pc.binary_join_element_wise("user-", pc.cast(k, pa.string()), "")
            pq.write_table(pa.table({"k": strings}), os.path.join(path, f"part-{i:05d}.parquet"))
        return "Zipf z=1.0 over [0, 2^20) as strings 'user-<k>'"
    if shape.startswith("zipf"):
        bits, _, z = shape[4:].partition("z")
        z = float(z or 1.0)
        write_zipf_parquet(path, rows, z, 1 << int(bits), 0, seed, files)
        return f"Zipf z={z} over [0, 2^{bits})"
    keys = np.random.default_rng(seed).permutation(rows).astype(np.int64)
    os.makedirs(path, exist_ok=True)
    for i, chunk in enumerate(np.array_split(keys, files)):
        pq.write_table(pa.table({"k": chunk}), os.path.join(path, f"part-{i:05d}.parquet"))
    return "a permutation of [0, rows): every key distinct"


def plan_summary(df) -> list[str]:
    """The executed (final adaptive) plan of a collected DataFrame: exchanges and aggregate operators."""
    exchanges, aggregates = [], []

    def metric(node, name):
        m = node.metrics()
        return int(m.apply(name).value()) if m.contains(name) else None

    def walk(node):
        name = node.nodeName()
        if name.startswith("AdaptiveSparkPlan"):
            kids = [node.executedPlan()]
        elif "QueryStage" in name:
            kids = [node.plan()]
        else:
            it, kids = node.children().iterator(), []
            while it.hasNext():
                kids.append(it.next())
        for k in kids:
            walk(k)
        if name == "Exchange":
            exchanges.append(f"Exchange({node.outputPartitioning().toString()}: "
                             f"{metric(node, 'shuffleRecordsWritten'):,} rows, "
                             f"{metric(node, 'shuffleBytesWritten'):,} bytes)")
        elif name.endswith("Aggregate"):
            aggregates.append(f"{name}({metric(node, 'numOutputRows'):,} rows out)")

    walk(df._jdf.queryExecution().executedPlan())
    return [f"  {len(exchanges)} exchanges: " + "; ".join(exchanges),
            f"  {len(aggregates)} aggregates (scan to result): " + " -> ".join(aggregates)]


def quartiles(xs: list[float]) -> tuple[float, float, float]:
    q1, med, q3 = statistics.quantiles(xs, n=4, method="inclusive")
    return q1, med, q3


def time_cases(spark, cases: dict[str, str], reps: int) -> dict[str, list[float]]:
    """Per case, the seconds of ``reps`` rounds (after one warm-up round), cases rotated round-robin.
    A case named ``<case>_bypass`` runs ``<case>``'s query without partial aggregation."""
    names = list(cases)
    times = {c: [] for c in names}
    for rnd in range(reps + 1):
        for j in range(len(names)):
            c = names[(j + rnd) % len(names)]
            bypass = c.endswith(BYPASS)
            spark.conf.set(BYPASS_CONF, "true" if bypass else "false")
            spark.conf.set(BUCKETED_CONF, "false" if c == "sample_groupby" else "true")
            t = time.perf_counter()
            spark.sql(cases[c[:-len(BYPASS)] if bypass else c]).collect()
            if rnd:
                times[c].append(time.perf_counter() - t)
    return times


def report_shape(times: dict[str, list[float]], cases: dict[str, str]) -> list[str]:
    lines = [f"  {'case':<13} {'median s':>8} {'IQR s':>11} {'min s':>6} {'/sketch':>7} {'IQR':>11}  query"]
    for c in cases:
        ratios = [x / s for x, s in zip(times[c], times["sketch"])]
        q1, med, q3 = quartiles(times[c])
        r1, rmed, r3 = quartiles(ratios)
        lines.append(f"  {c:<13} {med:8.3f} {q1:5.3f}-{q3:5.3f} {min(times[c]):6.3f} {rmed:7.2f} "
                     f"{r1:5.2f}-{r3:5.2f}  {cases[c]}")
    for c in ("sample", "sample_groupby", "sample_raw"):
        r1, rmed, r3 = quartiles([x / g for x, g in zip(times[c], times["group"])])
        lines.append(f"  {c} / group: median per-round ratio {rmed:.2f} (IQR {r1:.2f}-{r3:.2f})")
    r1, rmed, r3 = quartiles([x / g for x, g in zip(times["sample"], times["sample_groupby"])])
    lines.append(f"  sample / sample_groupby: median per-round ratio {rmed:.2f} (IQR {r1:.2f}-{r3:.2f})")
    lines.append("  runs (s): " + "; ".join(f"{c} " + " ".join(f"{x:.2f}" for x in times[c]) for c in cases))
    return lines


def main(argv=None) -> int:
    args = parse_args(argv)
    from pyspark.sql import SparkSession

    from spark_udaf import native

    started = time.perf_counter()
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    b = (SparkSession.builder.master("local[2]").config("spark.ui.enabled", "false")
         .config("spark.ui.showConsoleProgress", "false")
         .config("spark.sql.shuffle.partitions", str(args.shuffle)).config("spark.driver.memory", "2g"))
    spark = native.configure(b).getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    cases = dict(CASES)
    command = " ".join(["benchmarks/bench_spark_sample.py", *(sys.argv[1:] if argv is None else argv)])
    lines = [f"$ PYTHONPATH=$PWD .venv/bin/python {command}",
             f"bench_spark_sample: Spark {spark.version}, local[2], {args.rows:,} rows, {args.files} Parquet files, "
             f"{args.shuffle} shuffle partitions, seed {args.seed}; 1 warm-up round + {args.reps} timed rounds, "
             "cases rotated round-robin; ratios are medians of per-round ratios"]
    try:
        spark.sql("SELECT tuple_sketch_agg_integer(id, 1) FROM range(3)").collect()
    except Exception as e:  # an older Spark
        lines.append(f"tuple_sketch_agg_integer: not available ({str(e).splitlines()[0][:120]})")
        del cases["tuple"]
    if args.bypass:
        cases.update({c + BYPASS: cases[c] for c in ("sample", "group")})
    with tempfile.TemporaryDirectory(prefix="bench-sample-") as tmp:
        for shape in args.shapes:
            path = os.path.join(tmp, shape)
            what = write_table(path, shape, args.rows, args.files, args.seed)
            spark.read.parquet(path).createOrReplaceTempView("t")
            distinct = spark.sql("SELECT count(DISTINCT k) FROM t").collect()[0][0]
            lines.append(f"\n{shape}: {what}; {distinct:,} distinct keys")
            df = spark.sql(cases["sample"])
            df.collect()
            lines.append("  sample's executed plan:")
            lines += plan_summary(df)
            lines += report_shape(time_cases(spark, cases, args.reps), cases)
            print("\n".join(lines[-(len(cases) + 9):]), flush=True)
    spark.stop()
    lines.append(f"\ntotal {time.perf_counter() - started:.0f} s")
    report = "\n".join(lines)
    print(report)
    if args.out:
        with open(args.out, "w") as f:
            f.write(report + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
