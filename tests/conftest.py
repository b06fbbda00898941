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


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    """A test module may thin its parametrized tests in the default run: ``SLOW_PARAMS = {"test_name": ids}``
    marks those parameter ids slow, ``FAST_PARAMS = {"test_name": ids}`` marks every id *not* listed slow (ids: a
    set of parameter ids, or a predicate on the id).
    The whole matrix still runs with ``-m slow`` plus the default run; the default run keeps a representative of
    each family (the run must stay under about 12 minutes on 2 cores)."""
    for item in items:
        spec = getattr(item, "callspec", None)
        module = getattr(item, "module", None)
        if spec is None or module is None:
            continue
        name = item.originalname
        slow = getattr(module, "SLOW_PARAMS", {}).get(name)
        fast = getattr(module, "FAST_PARAMS", {}).get(name)
        if (slow is not None and _listed(spec.id, slow)) or (fast is not None and not _listed(spec.id, fast)):
            item.add_marker(pytest.mark.slow)


def _listed(param_id, ids) -> bool:
    return ids(param_id) if callable(ids) else param_id in ids
