"""The native aggregates through Spark Connect: a local Connect server configured with the extension only."""

import json
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
    print(json.dumps({"a": bytes(r.a).hex(), "h": bytes(r.h).hex(), "n": r.n, "u": bytes(u.u).hex(), "plan": plan}))
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
    cmd = [os.path.join(home, "bin", "spark-submit"), "--master", "local[1]", "--driver-memory", "1g",
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
