"""spark_udaf.cluster's probe (issue 33 item 11): it never swaps the session's interpreter while it runs, it probes
again when executors it has not seen join, and the zip of shipped sources is deleted when the driver exits."""

import os
import stat
import subprocess
import sys
import textwrap
import threading

import pytest

from spark_udaf import cluster

MARK = "SKIM_PROBE_CANDIDATE"


def _candidate(tmp_path, delay: float) -> str:
    """An interpreter that is this one, started after ``delay`` seconds with ``MARK`` set in its environment."""
    path = tmp_path / "candidate-python"
    path.write_text(f"#!/bin/sh\nsleep {delay}\n{MARK}=1 exec {sys.executable} \"$@\"\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return str(path)


@pytest.mark.spark
def test_a_probe_runs_its_candidate_only_in_its_own_job(spark, tmp_path):
    """Python jobs another thread runs while a probe runs (a streaming foreachBatch) keep the session's interpreter,
    and ``sc.pythonExec`` never changes; the probe's own tasks run the candidate."""
    sc = spark.sparkContext
    before = sc.pythonExec
    python = _candidate(tmp_path, 1.5)
    done = threading.Event()
    seen_exec, seen_marks = set(), []

    def other_jobs():
        while not done.is_set():
            seen_exec.add(sc.pythonExec)
            seen_marks.extend(sc.parallelize([0, 1], 2).map(lambda _: os.environ.get(MARK)).collect())

    worker = threading.Thread(target=other_jobs)
    worker.start()
    try:
        found, err = cluster._probe(sc, python, None)
        marks = cluster._with_python(sc, sc.parallelize([0, 1], 2).map(lambda _: os.environ.get(MARK)),
                                     python).collect()
    finally:
        done.set()
        worker.join()
    assert err is None and all(ok for ok, _ in found.values()), (found, err)
    assert marks == ["1", "1"]  # the candidate ran the tasks of the jobs made for it
    assert seen_marks and set(seen_marks) == {None}, seen_marks  # and no task of the other thread's jobs
    assert seen_exec == {before} and sc.pythonExec == before


@pytest.mark.spark
def test_executors_that_join_later_are_probed(spark, monkeypatch):
    """The verdict is kept per application while no executor it has not probed appears; a new one (dynamic
    allocation) makes the next call probe again, passing on the zip already shipped; executors leaving do not."""
    sc = spark.sparkContext
    real = cluster._executors(sc)
    assert real == frozenset(), real  # local mode: no executor but the driver
    executors = {"now": real}
    decided = []

    def decide(sc, shipped=None):
        decided.append(shipped)
        return cluster.PythonWorkers(sc.pythonExec, "/tmp/earlier.zip" if len(decided) == 1 else shipped, None)

    monkeypatch.setattr(cluster, "_executors", lambda sc: executors["now"])
    monkeypatch.setattr(cluster, "_decide", decide)
    monkeypatch.setitem(cluster._STATE, sc.applicationId, None)
    del cluster._STATE[sc.applicationId]  # monkeypatch restores the real verdict afterwards
    cluster.python_workers(spark)
    cluster.python_workers(spark)
    assert decided == [None]
    executors["now"] = real | {"7"}
    assert cluster.python_workers(spark).shipped == "/tmp/earlier.zip"
    assert decided == [None, "/tmp/earlier.zip"]
    executors["now"] = frozenset()  # executor 7 left: every one there was probed
    cluster.python_workers(spark)
    assert len(decided) == 2
    executors["now"] = frozenset({"8"})
    cluster.python_workers(spark)
    assert len(decided) == 3


def test_the_shipped_zip_is_deleted_when_the_driver_exits(tmp_path):
    """``_ship`` zips the sources into a temporary directory of its own, and the driver's exit deletes it."""
    script = textwrap.dedent(
        """
        import os, zipfile
        from spark_udaf import cluster

        class Context:  # what _ship needs of a SparkContext
            def addPyFile(self, path):
                self.added = path

        sc = Context()
        path = cluster._ship(sc)
        assert sc.added == path and os.path.isfile(path) and "spark_udaf/cluster.py" in zipfile.ZipFile(path).namelist()
        print(path)
        """
    )
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    proc = subprocess.run([sys.executable, "-c", script], cwd=root, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    path = proc.stdout.strip().splitlines()[-1]
    assert path.endswith(".zip") and os.path.basename(os.path.dirname(path)).startswith("skimsketch-ship-"), path
    assert not os.path.exists(path) and not os.path.exists(os.path.dirname(path))


DYNAMIC = textwrap.dedent(
    """
    import logging, time
    from pyspark.sql import SparkSession
    from spark_udaf import cluster

    spark = (SparkSession.builder.master("local-cluster[2,1,1024]").config("spark.executor.memory", "512m")
             .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
             .config("spark.cores.max", "1").getOrCreate())  # one executor process at a time
    sc = spark.sparkContext
    sc.setLogLevel("ERROR")
    said = []
    handler = logging.Handler()
    handler.emit = lambda r: said.append(r.getMessage())
    logging.getLogger("spark_udaf").addHandler(handler)
    logging.getLogger("spark_udaf").setLevel(logging.INFO)
    deadline = time.time() + 120
    while not cluster._executors(sc) and time.time() < deadline:
        time.sleep(0.2)
    first = cluster._executors(sc)
    assert cluster.python_workers(spark).python is not None and not said, said
    assert sc._jsc.sc().killExecutor(sorted(first)[0]) and sc._jsc.sc().requestExecutors(1)
    while (not cluster._executors(sc) or cluster._executors(sc) == first) and time.time() < deadline:
        time.sleep(0.2)  # another executor process replaces it (as under dynamic allocation)
    later = cluster._executors(sc)
    assert later and later != first, (first, later)
    assert cluster.python_workers(spark).python is not None
    assert any("joined since the last probe: probing again" in m for m in said), said
    cluster.python_workers(spark)
    assert sum("probing again" in m for m in said) == 1, said  # probed once more, not at every call
    spark.stop()
    print("DYNAMIC-OK", sorted(first), sorted(later))
    """
)


@pytest.mark.cluster
@pytest.mark.spark
def test_an_executor_that_joins_later_is_probed_on_a_real_cluster(tmp_path):
    """local-cluster: executor 0 is killed and another requested (the way dynamic allocation adds one); the next
    call probes again (the fast sibling: test_executors_that_join_later_are_probed)."""
    import pyspark

    env = dict(os.environ, SPARK_HOME=os.path.dirname(pyspark.__file__), PYSPARK_PYTHON=sys.executable,
               PYSPARK_DRIVER_PYTHON=sys.executable, SPARK_LOCAL_IP="127.0.0.1")
    env.pop("PYSPARK_SUBMIT_ARGS", None)
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    proc = subprocess.run([sys.executable, "-c", DYNAMIC], cwd=root, env=env, capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0 and "DYNAMIC-OK" in proc.stdout, (proc.stdout + proc.stderr)[-3000:]
