"""Shared fixtures. One real local Spark session per test run (created lazily)."""

import os
import sys

import pytest


@pytest.fixture(scope="session")
def spark(tmp_path_factory):
    """A real local[2] SparkSession shared by every Spark test of the run.

    With a JDK on the machine the native aggregates' jar is built (cached) and
    configured (spark_udaf.native), so the whole Spark suite runs with it."""
    pytest.importorskip("pyspark")
    from pyspark.sql import SparkSession

    from spark_udaf import native

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    warehouse = tmp_path_factory.mktemp("spark-warehouse")
    session = (
        SparkSession.builder.master("local[2]")
        .appName("skimsketch-tests")
        .config("spark.sql.shuffle.partitions", "4")
        .config("spark.default.parallelism", "4")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.warehouse.dir", str(warehouse))
        .config("spark.driver.memory", "2g")
        .config("spark.sql.execution.arrow.pyspark.enabled", "true")
    )
    if native.available():
        session = native.configure(session)
    session = session.getOrCreate()
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()
