"""Fixtures of the Spark adapter tests."""

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
