"""Fixtures of the Spark adapter tests."""

import os

import pytest


@pytest.fixture
def native_sql(spark):
    """The shared session with the JVM's estimate functions (a Python registration may have replaced them);
    the default registration (Python estimates) is restored afterwards."""
    import spark_udaf
    from spark_udaf import native

    if not native.loaded(spark):
        pytest.skip("the session's JVM has no native jar")
    native.register(spark)
    yield spark
    spark_udaf.register(spark)


@pytest.fixture(scope="module")
def standalone(tmp_path_factory):
    """A standalone master and worker (separate JVMs, pyspark's own bin/spark-class, 127.0.0.1, free ports;
    2 cores, 1 GB) for one test module, stopped by their process groups at the end (tests/spark_udaf/standalone.py)."""
    pyspark = pytest.importorskip("pyspark")
    import shutil

    from tests.spark_udaf.standalone import Standalone

    if not shutil.which("java"):
        pytest.skip("no java to run a standalone cluster")
    cluster = Standalone(os.path.dirname(pyspark.__file__), tmp_path_factory.mktemp("standalone")).start()
    try:
        yield cluster
    finally:
        cluster.stop()


@pytest.fixture(scope="session")
def jar_self_test():
    """The jar's self-test output, run once per test run (a JVM of its own, about 10 s): the hash vectors, the
    golden estimate and sample vectors, each checked by its own test."""
    from spark_udaf import native

    if not native.available():
        pytest.skip("no JDK: the jar cannot be built here")
    return native.self_test()
