"""local-cluster mode: separate executor processes, so nothing may depend on driver state.

The native (JVM) aggregates run there too when a JDK is present: the jar reaches the
executor JVMs through ``spark.jars``.

Runs in a subprocess (its own SparkContext) so it never touches the shared
local[2] session of the test run.
"""

import os
import subprocess
import sys
import textwrap

import pytest

pytestmark = [pytest.mark.spark, pytest.mark.cluster]  # out of the default run: .ci/run runs them

SCRIPT = textwrap.dedent(
    """
    import contextlib, io, os, sys, time
    T0 = time.time()

    def step(name):
        print(f"[{time.time() - T0:6.1f} s] {name}", flush=True)

    import numpy as np
    import pyspark
    from pyspark.sql import SparkSession

    import skimsketch as ss
    import spark_udaf
    from spark_udaf import job
    from spark_udaf.datagen import zipf_keys, zipf_table

    from spark_udaf import native
    has_native = native.available()
    builder = (SparkSession.builder.master("local-cluster[2,1,1024]")
             .config("spark.executor.memory", "512m")
             .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
             .config("spark.sql.shuffle.partitions", "4")
             .config("spark.scheduler.maxRegisteredResourcesWaitingTime", "5s"))
    spark = (native.configure(builder) if has_native else builder).getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    step("session")
    try:
        deadline = time.time() + 180
        while spark.sparkContext._jsc.sc().getExecutorMemoryStatus().size() < 3 and time.time() < deadline:
            time.sleep(0.2)  # wait for both executor processes to register
        step("executors registered")
        driver_pid = os.getpid()
        # executors are other processes: their Python workers have other pids
        pids = set(spark.range(0, 4, 1, 4).rdd.map(lambda _: os.getpid()).collect())
        assert driver_pid not in pids, pids
        executors = spark.sparkContext._jsc.sc().getExecutorMemoryStatus().size() - 1
        assert executors == 2, executors

        step("python workers up")
        left = zipf_table(spark, 30000, 1.0, 4000, 0, 1, 4)
        right = zipf_table(spark, 20000, 1.0, 4000, 5, 2, 3)
        lk, rk = zipf_keys(np.arange(30000), 1.0, 4000, 0, 1), zipf_keys(np.arange(20000), 1.0, 4000, 5, 2)
        template = ss.SkimmedSketch(width=128, depth=5, seed=9, domain=4000)
        a = spark_udaf.sketch_column(left, "k", template.empty_like())
        assert a.to_bytes() == template.empty_like().update(lk).to_bytes()
        b = spark_udaf.sketch_column(right, "k", template.empty_like(), merge="tree")
        assert b.to_bytes() == template.empty_like().update(rk).to_bytes()

        step("sketch_column driver + tree merge")
        spark_udaf.register(spark)
        left.createOrReplaceTempView("l")
        right.createOrReplaceTempView("r")
        row = spark.sql(
            "SELECT skim_join_size(x.s, y.s) AS j FROM "
            "(SELECT skim_merge(sketch) AS s FROM skim_sketch_partials(TABLE(SELECT k AS key FROM l), 256, 5, 3)) x "
            "CROSS JOIN (SELECT skim_sketch(k, 256, 5, 3) AS s FROM r) y").collect()[0]
        h = lambda keys: ss.HashSketch(width=256, depth=5, seed=3).update(keys)
        assert row.j == h(lk).join_size(h(rk)).value

        step("sql")
        if has_native:
            # the JVM aggregates on executors that are other JVMs: the jar reaches them through spark.jars
            import logging
            rows = [(int(k), int(k) % 7 - 2) for k in lk]
            nat = spark.createDataFrame(rows, "k bigint, w int").repartition(4)
            nat.createOrReplaceTempView("nat")
            q = ("SELECT skim_sketch_agg(k) AS d, skim_hash_sketch_agg(k, w, 128, 5, 4) AS hw, "
                 "skim_sketch_agg(CAST(k AS STRING), 4096, 6) AS ds, count(*) AS n FROM nat")
            plan = "\\n".join(r[0] for r in spark.sql("EXPLAIN " + q).collect())
            assert "partial_skim_sketch_agg" in plan and "Python" not in plan, plan
            got = spark.sql(q).collect()[0]
            ws = [w for _, w in rows]
            assert got.n == len(rows)
            assert bytes(got.d) == ss.SkimmedSketch.for_bytes(16384).update(lk).to_bytes()
            assert bytes(got.hw) == ss.HashSketch(128, 5, 4).update(lk, weights=ws).to_bytes()
            assert bytes(got.ds) == ss.SkimmedSketch.for_bytes(4096, seed=6).update([str(k) for k in lk]).to_bytes()
            # partials per partition, merged by skim_union_agg on the executors
            merged = spark.sql("SELECT skim_union_agg(s) AS u FROM (SELECT skim_hash_sketch_agg(k, 128, 5, 4) AS s "
                               "FROM nat GROUP BY k % 5)").collect()[0].u
            assert bytes(merged) == ss.HashSketch(128, 5, 4).update(lk).to_bytes()
            records = []
            handler = logging.Handler()
            handler.emit = records.append
            logging.getLogger("spark_udaf").addHandler(handler)
            logging.getLogger("spark_udaf").setLevel(logging.INFO)
            via = spark_udaf.sketch_column(nat, "k", ss.HashSketch(128, 5, 4), "w", path="native")
            assert via.to_bytes() == bytes(got.hw)
            assert any("native path" in r.getMessage() for r in records), [r.getMessage() for r in records]
            step("native SQL aggregates on the executors")
        # the demo job (sketch_pair + estimate + exact_join_size) against the cluster
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            assert job.main(["--rows", "20000", "--domain", "3000", "--width", "128", "--depth", "5"]) == 0
        out = buf.getvalue()
        print(out)
        jl, jr = zipf_keys(np.arange(20000), 1.0, 3000, 0, 1), zipf_keys(np.arange(20000), 1.0, 3000, 100, 2)
        t = ss.SkimmedSketch(width=128, depth=5, seed=0, domain=3000)
        est = t.empty_like().update(jl).join_size(t.empty_like().update(jr))
        assert f"exact      : {ss.exact_join_size(jl, jr):,}" in out, out
        assert f"estimate   : {est.value:,.0f}  interval [{est.low:,.0f}, {est.high:,.0f}]" in out, out
        step("job")
        print("CLUSTER-OK")
    finally:
        spark.stop()
    """
)


def test_local_cluster_mode(tmp_path):
    pytest.importorskip("pyspark")
    import pyspark

    script = tmp_path / "cluster_check.py"
    script.write_text(SCRIPT)
    env = dict(os.environ)
    env["SPARK_HOME"] = os.path.dirname(pyspark.__file__)
    env["PYSPARK_PYTHON"] = sys.executable
    env["PYSPARK_DRIVER_PYTHON"] = sys.executable
    env["SPARK_LOCAL_IP"] = "127.0.0.1"
    env.pop("PYSPARK_SUBMIT_ARGS", None)
    proc = subprocess.run([sys.executable, str(script)], cwd=str(tmp_path), env=env, capture_output=True,
                          text=True, timeout=600)
    tail = "\n".join((proc.stdout + proc.stderr).splitlines()[-40:])
    assert proc.returncode == 0 and "CLUSTER-OK" in proc.stdout, tail
    assert "exact      :" in proc.stdout, tail
    from spark_udaf import native

    if native.available():
        assert "native SQL aggregates on the executors" in proc.stdout, tail


ORDINARY = textwrap.dedent(
    """
    import sys
    sys.path.insert(0, sys.argv[1])  # this checkout for the driver only: its Python workers do not see it
    import numpy as np
    from pyspark.sql import SparkSession
    import skimsketch as ss
    import spark_udaf

    spark = SparkSession.builder.master("local[2]").getOrCreate()  # the ordinary way: no configure, no PYSPARK_PYTHON
    spark.sparkContext.setLogLevel("ERROR")
    df = spark.range(0, 3000, 1, 2).selectExpr("id % 97 AS k")
    template = ss.HashSketch(width=64, depth=3, seed=2)
    got = spark_udaf.sketch_column(df.where("k > 5"), "k", template, path="python")
    keys = np.arange(3000) % 97
    assert got.to_bytes() == template.empty_like().update(keys[keys > 5]).to_bytes()
    state = spark_udaf.cluster.python_workers(spark)
    assert state.python == sys.executable, state
    import os
    seen = spark.sparkContext.parallelize([0], 1).map(lambda _: __import__("spark_udaf").__file__).first()
    mine = os.path.realpath(spark_udaf.__file__)
    # this checkout's sources: shipped (a zip) unless the workers' own import is this very checkout
    assert (state.shipped and ".zip" in seen) or os.path.realpath(seen) == mine, (seen, mine, state)
    spark.stop()
    print("ORDINARY-OK")
    """
)


def test_an_ordinary_local_session_outside_the_checkout(tmp_path):
    """``SparkSession.builder.master('local[2]').getOrCreate()`` from a script outside the checkout, ``python3`` on
    the PATH being the system one: the Python path takes this interpreter and ships this checkout's sources."""
    pytest.importorskip("pyspark")
    import pyspark

    script = tmp_path / "ordinary.py"
    script.write_text(ORDINARY)
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env = {k: v for k, v in os.environ.items() if k not in ("PYSPARK_PYTHON", "PYSPARK_DRIVER_PYTHON", "PYTHONPATH",
                                                             "PYSPARK_SUBMIT_ARGS")}
    env.update(PATH="/usr/bin:/bin", SPARK_HOME=os.path.dirname(pyspark.__file__), SPARK_LOCAL_IP="127.0.0.1")
    proc = subprocess.run([sys.executable, str(script), root], cwd=str(tmp_path), env=env, capture_output=True,
                          text=True, timeout=600)
    tail = "\n".join((proc.stdout + proc.stderr).splitlines()[-40:])
    assert proc.returncode == 0 and "ORDINARY-OK" in proc.stdout, tail
