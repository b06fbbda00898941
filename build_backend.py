"""The build backend: setuptools', plus the native jar's build step for wheels.

* ``get_requires_for_build_wheel`` adds pyspark to a wheel build's environment: the wheel carries
  the native SQL functions' jar, compiled against Spark's jars, which pyspark brings. Editable
  installs and sdists do not ask for it, nor a build where ``SKIMSKETCH_SPARK_JARS`` or
  ``SPARK_HOME`` names Spark's jars already.
* ``BuildPyWithJar`` (setup.py's ``build_py``): build_py, then ``javac`` through
  ``spark_udaf/native_jar.py`` into ``spark_udaf/jars/skimsketch-spark-<spark version>.jar``.
  Without Spark's jars or a JDK the wheel is built without the jar and says so
  (``SKIMSKETCH_REQUIRE_JAR=1`` makes that an error).
"""

import importlib.util
import os
import sys
from pathlib import Path

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
from setuptools.command.build_py import build_py

#: The Spark the wheel's jar is compiled against (the spark extra's range).
PYSPARK = "pyspark>=4.0,<5"
HERE = Path(__file__).resolve().parent


def get_requires_for_build_wheel(config_settings=None):
    reqs = list(build_meta.get_requires_for_build_wheel(config_settings))
    if not (os.environ.get("SKIMSKETCH_SPARK_JARS") or os.environ.get("SPARK_HOME")):
        reqs.append(PYSPARK)
    return reqs


def _native_jar():
    """spark_udaf/native_jar.py, loaded by path (the package's dependencies are not installed here)."""
    spec = importlib.util.spec_from_file_location("skimsketch_native_jar", HERE / "spark_udaf" / "native_jar.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


class BuildPyWithJar(build_py):
    """build_py, then the jar into the build's spark_udaf/jars."""

    def run(self):
        super().run()
        if getattr(self, "editable_mode", False):
            return
        nj = _native_jar()
        found = nj.spark_jars()
        required = os.environ.get("SKIMSKETCH_REQUIRE_JAR") == "1"
        if found is None:
            msg = "no Spark jars (pyspark, SPARK_HOME or SKIMSKETCH_SPARK_JARS): the wheel has no native jar"
            if required:
                raise SystemExit(msg)
            print(f"skimsketch: {msg}", file=sys.stderr)
            return
        spark_dir, version = found
        out = Path(self.build_lib) / "spark_udaf" / "jars" / nj.jar_name(version)
        try:
            nj.compile_jar(out, spark_dir)
        except nj.JarBuildError as e:
            if required:
                raise SystemExit(str(e)) from None
            print(f"skimsketch: the wheel has no native jar: {e}", file=sys.stderr)
            return
        print(f"skimsketch: built {out.name} against Spark {version}", file=sys.stderr)
