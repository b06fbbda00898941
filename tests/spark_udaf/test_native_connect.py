"""The native SQL functions through Spark Connect: a local Connect server configured with the jar and the
extension only (no Python registration), and SQL-only clients."""

import json
import math
import os
import socket
import subprocess
import sys
import textwrap
import time

import pytest

import skimsketch as ss
from spark_udaf import native

pytestmark = pytest.mark.spark

CLIENT = textwrap.dedent("""
    import json, sys
    from pyspark.sql import SparkSession
    spark = SparkSession.builder.remote(sys.argv[1]).getOrCreate()
    r = spark.sql("SELECT skim_sketch_agg(CAST(id % 7 AS INT)) AS a, skim_hash_sketch_agg(CAST(id AS STRING), 64, 3, 5)"
                  " AS h, count(*) AS n FROM range(0, 300, 1, 3)").collect()[0]
    u = spark.sql("SELECT skim_union_agg(s) AS u FROM (SELECT skim_hash_sketch_agg(id, 64, 3, 5) AS s FROM range(10) "
                  "GROUP BY id % 2)").collect()[0]
    plan = spark.sql("EXPLAIN SELECT skim_sketch_agg(id) FROM range(0, 10, 1, 3)").collect()[0][0]
    from pyspark.sql import functions as F
    from spark_udaf import functions as SF  # the Column helpers on a Connect session
    df = spark.range(0, 300, 1, 3).selectExpr("CAST(id % 7 AS INT) AS k", "id % 2 AS g")
    c = df.groupBy("g").agg(SF.skim_sketch_agg("k", nbytes=4096, seed=3).alias("s")).agg(
        SF.skim_union_agg("s").alias("s")).select("s", SF.skim_join_size_bounds("s", "s").alias("e")).collect()[0]
    lit = "X'" + bytes(r.a).hex() + "'"  # default column names: the function's, a literal sketch abbreviated
    names = spark.sql(f"SELECT skim_join_size(s, s), skim_sketch_info({lit}) FROM (SELECT {lit} AS s)").columns
    names += df.select(SF.skim_frequency(SF.skim_union(F.lit(bytes(r.a)), F.lit(bytes(r.a))), 3) * 2).columns
    print(json.dumps({"a": bytes(r.a).hex(), "h": bytes(r.h).hex(), "n": r.n, "u": bytes(u.u).hex(), "plan": plan,
                      "c": bytes(c.s).hex(), "ce": c.e.asDict(), "names": names}))
    spark.stop()
""")


#: The daily-sketch workflow in SQL alone: per-day sketches beside count(*), a Parquet table, a week's union,
#: a join estimate with its interval; hash sketches (counter mode) and the default skimmed sketch (exact mode
#: here; the last query skims a counter-mode one: SKIMDENSE and ESTSKIMJOINSIZE on the JVM).
DAILY = textwrap.dedent("""
    import json, sys
    from pyspark.sql import SparkSession
    spark = SparkSession.builder.remote(sys.argv[1]).getOrCreate()
    table = sys.argv[2]
    spark.sql("CREATE OR REPLACE TEMP VIEW orders AS SELECT CAST(id % 7 AS INT) AS day, "
              "(id * 7919) % 300 AS cust FROM range(0, 20000, 1, 4)")
    spark.sql("CREATE OR REPLACE TEMP VIEW visits AS SELECT CAST(id % 7 AS INT) AS day, "
              "(id * 104729 + 11) % 400 AS cust FROM range(0, 30000, 1, 4)")
    spark.sql(f'''CREATE TABLE daily USING parquet LOCATION '{table}' AS
        SELECT 'orders' AS tbl, day, count(*) AS n, skim_hash_sketch_agg(cust, 512, 5, 1) AS hs,
               skim_sketch_agg(cust % 40, nbytes => 4096, seed => 3) AS ss
        FROM orders GROUP BY day
        UNION ALL
        SELECT 'visits', day, count(*), skim_hash_sketch_agg(cust, 512, 5, 1),
               skim_sketch_agg(cust % 40, nbytes => 4096, seed => 3)
        FROM visits GROUP BY day''')
    week = '''SELECT skim_join_size_bounds(a.s, b.s) AS e, skim_self_join_size(a.s) AS sj,
                   skim_frequency(a.s, 17) AS f, skim_sketch_info(b.s) AS info
            FROM (SELECT skim_union_agg({col}) AS s FROM daily WHERE tbl = 'orders' AND day BETWEEN 0 AND 6) a
            CROSS JOIN (SELECT skim_union_agg({col}) AS s FROM daily WHERE tbl = 'visits' AND day BETWEEN 0 AND 6) b'''
    counts = {f"{r.tbl}/{r.day}": r.n for r in spark.sql("SELECT tbl, day, n FROM daily").collect()}
    out = {"counts": counts}
    for col in ("hs", "ss"):
        r = spark.sql(week.format(col=col)).collect()[0]
        out[col] = {"e": r.e.asDict(), "sj": r.sj, "f": r.f, "kind": r.info.kind, "total": r.info.total_weight}
        out[col + "_plan"] = "\\n".join(x[0] for x in spark.sql("EXPLAIN " + week.format(col=col)).collect())
    r = spark.sql("SELECT s, skim_join_size_bounds(s, s) AS e FROM "
                  "(SELECT skim_sketch_agg(cust, nbytes => 1024) AS s FROM orders)").collect()[0]
    out["counter_mode"] = {"s": bytes(r.s).hex(), "e": r.e.asDict()}
    print(json.dumps(out))
    spark.stop()
""")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def connect_url(tmp_path_factory):
    pytest.importorskip("grpc", reason="Spark Connect needs the pyspark[connect] packages (the spark extra)")
    if not native.available():
        pytest.skip("no JDK: the native jar cannot be built here")
    import pyspark

    home = os.path.dirname(pyspark.__file__)
    jar, port = str(native.jar_path()), _free_port()
    warehouse = tmp_path_factory.mktemp("connect-warehouse")
    cmd = [os.path.join(home, "bin", "spark-submit"), "--master", "local[1]", "--driver-memory", "1g",
           "--conf", f"spark.sql.warehouse.dir={warehouse}",
           "--conf", f"spark.jars={jar}", "--conf", f"spark.driver.extraClassPath={jar}",
           "--conf", f"spark.sql.extensions={native.EXTENSION}", "--conf", f"spark.connect.grpc.binding.port={port}",
           "--conf", "spark.ui.enabled=false", "--conf", "spark.sql.shuffle.partitions=2",
           "--class", "org.apache.spark.sql.connect.service.SparkConnectServer", "spark-internal"]
    log = tmp_path_factory.mktemp("connect") / "server.log"
    with open(log, "w") as err:
        proc = subprocess.Popen(cmd, env=dict(os.environ, SPARK_HOME=home), stdout=subprocess.DEVNULL, stderr=err)
    try:
        deadline = time.monotonic() + 180
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    pytest.fail(f"the Spark Connect server did not start:\n{log.read_text()[-3000:]}")
                time.sleep(1)
        yield f"sc://127.0.0.1:{port}"
    finally:
        proc.terminate()
        proc.wait(60)


def test_sql_functions_from_a_connect_client(connect_url):
    done = subprocess.run([sys.executable, "-c", CLIENT, connect_url], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert out["n"] == 300
    assert bytes.fromhex(out["a"]) == ss.SkimmedSketch.for_bytes(16384).update([i % 7 for i in range(300)]).to_bytes()
    assert bytes.fromhex(out["h"]) == ss.HashSketch(64, 3, 5).update([str(i) for i in range(300)]).to_bytes()
    assert bytes.fromhex(out["u"]) == ss.HashSketch(64, 3, 5).update(list(range(10))).to_bytes()
    assert "partial_skim_sketch_agg" in out["plan"]
    c = ss.from_bytes(ss.SkimmedSketch.for_bytes(4096, seed=3).update([i % 7 for i in range(300)]).to_bytes())
    assert bytes.fromhex(out["c"]) == c.to_bytes()
    e = c.join_size(c)
    assert out["ce"] == {"value": e.value, "low": e.low, "high": e.high, "confidence": 1.0, "method": "exact"}
    a = bytes.fromhex(out["a"])
    shown = f"X'{a[:8].hex().upper()}...'({len(a)} bytes)"
    assert out["names"] == ["skim_join_size(s, s)", f"skim_sketch_info({shown})",
                            f"(skim_frequency(skim_union({shown}, {shown}), 3) * 2)"]


def test_the_daily_sketch_workflow_in_sql_alone(connect_url, tmp_path):
    table = tmp_path / "daily"
    done = subprocess.run([sys.executable, "-c", DAILY, connect_url, str(table)], capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    out = json.loads(done.stdout.strip().splitlines()[-1])
    orders = [(i % 7, (i * 7919) % 300) for i in range(20000)]
    visits = [(i % 7, (i * 104729 + 11) % 400) for i in range(30000)]
    assert out["counts"] == {**{f"orders/{d}": sum(1 for x in orders if x[0] == d) for d in range(7)},
                             **{f"visits/{d}": sum(1 for x in visits if x[0] == d) for d in range(7)}}
    for col, make, kf in (("hs", lambda: ss.HashSketch(512, 5, 1), lambda k: k),
                          ("ss", lambda: ss.SkimmedSketch.for_bytes(4096, seed=3), lambda k: k % 40)):
        a = ss.from_bytes(make().update([kf(k) for _, k in orders]).to_bytes())  # as SQL reads them
        b = ss.from_bytes(make().update([kf(k) for _, k in visits]).to_bytes())
        e, got = a.join_size(b), out[col]
        for f in ("value", "low", "high", "confidence"):
            assert math.isclose(got["e"][f], getattr(e, f), rel_tol=1e-9), (col, f, got["e"], e)
        assert got["e"]["method"] == e.method
        assert math.isclose(got["sj"], a.self_join_size().value, rel_tol=1e-9)
        assert math.isclose(got["f"], a.frequency(17).value, rel_tol=1e-9)
        assert got["kind"] == type(b).__name__ and got["total"] == 30000
        plan = out[col + "_plan"]
        assert "ObjectHashAggregate" in plan and "Python" not in plan and "ArrowEval" not in plan, plan
    assert out["ss"]["e"]["method"] == "exact"  # 40 keys: the default sketch's exact mode
    cm = ss.from_bytes(bytes.fromhex(out["counter_mode"]["s"]))  # 300 keys in 1 KB: counter mode, skimmed
    assert not cm.exact_mode and cm.search == "virtual"
    e = cm.join_size(cm)
    got = out["counter_mode"]["e"]
    for f in ("value", "low", "high", "confidence"):
        assert math.isclose(got[f], getattr(e, f), rel_tol=1e-9), (f, got, e)
    assert got["method"] == "skimmed" == e.method


#: Join samples from a Connect client: skim_sample_agg (rewritten into a GROUP BY of the key on the server),
#: the Column helper with an estimate, and sketch_column with a JoinSample template (natively: the server has the
#: extension's skim_sample_agg).
SAMPLES = textwrap.dedent("""
    import json, sys
    from pyspark.sql import SparkSession
    import skimsketch as ss, spark_udaf
    from spark_udaf import functions as SF
    spark = SparkSession.builder.remote(sys.argv[1]).getOrCreate()
    q = ("SELECT skim_sample_agg(id % 500, nbytes => 1024, seed => 3) AS s, "
         "skim_sample_agg(CAST(id % 300 AS STRING), id % 5 - 1, 1024) AS w FROM range(0, 20000, 1, 4)")
    r = spark.sql(q).collect()[0]
    plan = spark.sql("EXPLAIN SELECT skim_sample_agg(id % 500) FROM range(10)").collect()[0][0]  # one key: rewritten
    df = spark.range(0, 20000, 1, 4).selectExpr("id % 500 AS k")
    c = df.agg(SF.skim_sample_agg("k", nbytes=1024, seed=3).alias("s")).select(
        "s", SF.skim_join_size_bounds("s", "s").alias("e")).collect()[0]
    p = spark_udaf.sketch_column(df, "k", ss.JoinSample.for_bytes(1024, seed=3))
    print(json.dumps({"s": bytes(r.s).hex(), "w": bytes(r.w).hex(), "plan": plan, "c": bytes(c.s).hex(),
                      "ce": c.e.asDict(), "p": p.to_bytes().hex()}))
    spark.stop()
""")


def test_join_samples_from_a_connect_client(connect_url):
    done = subprocess.run([sys.executable, "-c", SAMPLES, connect_url], capture_output=True, text=True, timeout=300,
                          env=dict(os.environ, PYTHONPATH=os.getcwd()))
    assert done.returncode == 0, done.stderr[-3000:]
    out = json.loads(done.stdout.strip().splitlines()[-1])
    s = ss.JoinSample.for_bytes(1024, seed=3).update([i % 500 for i in range(20000)])
    assert bytes.fromhex(out["s"]) == s.to_bytes() == bytes.fromhex(out["c"]) == bytes.fromhex(out["p"])
    w = ss.JoinSample.for_bytes(1024).update([str(i % 300) for i in range(20000)],
                                             weights=[i % 5 - 1 for i in range(20000)])
    assert bytes.fromhex(out["w"]) == w.to_bytes()
    # a native plan (the bucketed build's _skim_fp or the GROUP BY's _skim_key), no Python in it
    assert ("_skim_key" in out["plan"] or "_skim_fp" in out["plan"]) and "Python" not in out["plan"]
    e = ss.from_bytes(s.to_bytes()).join_size(ss.from_bytes(s.to_bytes()))
    for f in ("value", "low", "high", "confidence"):
        assert math.isclose(out["ce"][f], getattr(e, f), rel_tol=1e-9), (f, out["ce"], e)
    assert out["ce"]["method"] == "sample"
