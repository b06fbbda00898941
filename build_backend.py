"""The build backend: setuptools', plus pyspark in the build environment of a wheel.

A wheel carries the native SQL functions' jar, compiled against Spark's jars
(setup.py); pyspark brings them. Only wheel builds ask for it (editable installs
and sdists do not), and not when ``SKIMSKETCH_SPARK_JARS`` or ``SPARK_HOME`` names
Spark's jars already.
"""

import os

from setuptools import build_meta
from setuptools.build_meta import (  # noqa: F401  (the rest of the backend interface, unchanged)
    build_editable,
    build_sdist,
    build_wheel,
    get_requires_for_build_editable,
    get_requires_for_build_sdist,
    prepare_metadata_for_build_editable,
    prepare_metadata_for_build_wheel,
)

#: The Spark the wheel's jar is compiled against (the spark extra's range).
PYSPARK = "pyspark>=4.0,<5"


def get_requires_for_build_wheel(config_settings=None):
    reqs = list(build_meta.get_requires_for_build_wheel(config_settings))
    if not (os.environ.get("SKIMSKETCH_SPARK_JARS") or os.environ.get("SPARK_HOME")):
        reqs.append(PYSPARK)
    return reqs
