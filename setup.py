"""setuptools entry: the package metadata lives in pyproject.toml; this adds the build steps.

* The native Spark SQL functions' jar: ``build_py`` compiles ``spark_udaf/java`` with
  ``javac`` against Spark's jars (``spark_udaf/native_jar.py``) into the wheel as
  ``spark_udaf/jars/skimsketch-spark-<spark version>.jar``, so a cluster with only a JRE
  runs the native functions (``spark_udaf.native.jar_path`` takes it first). The build
  backend (``build_backend.py``) supplies pyspark to the build environment of a wheel;
  without Spark's jars or a JDK the wheel is built without the jar and says so
  (``SKIMSKETCH_REQUIRE_JAR=1`` makes that an error). Editable installs skip it: a
  checkout compiles the jar on first use.
"""

import importlib.util
import os
import sys
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = Path(__file__).resolve().parent


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


setup(cmdclass={"build_py": BuildPyWithJar})
