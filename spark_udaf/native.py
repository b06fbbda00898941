"""Native (JVM) Spark SQL functions: locate (or build), configure and register the ``skimsketch-spark`` jar.

A wheel built with ``pip wheel .`` carries the jar compiled for the pyspark it was
built against (``spark_udaf/jars/skimsketch-spark-<spark version>.jar``,
:mod:`spark_udaf.native_jar`); :func:`jar_path` takes it when the installed
pyspark has that version. Otherwise (a checkout, another Spark) the Java sources
shipped in this package (``spark_udaf/java``) are compiled on demand with
``javac`` against the jars of the installed pyspark into a cache directory keyed
by a hash of the sources and the Spark version (``$SKIMSKETCH_JAR_CACHE``,
default ``~/.cache/skimsketch``). The jar provides:

* ``skim_sketch_agg(key [, weight] [, nbytes [, seed] | width, depth, seed])``: the
  library's default sketch, ``SkimmedSketch.for_bytes(nbytes, seed)`` (16384 bytes,
  seed 0 by default), or ``SkimmedSketch(width, depth, seed)``;
* ``skim_hash_sketch_agg(key [, weight], width, depth [, seed])``: a ``HashSketch``;
* ``skim_sample_agg(key [, weight] [, nbytes [, seed]])``: the join sample
  ``JoinSample.for_bytes(nbytes, seed)`` (its scale rule groups the rows by key first);
* ``skim_union_agg(sketch)`` and the scalar ``skim_union(a, b)`` (sketches or samples);
* the estimates ``skim_join_size[_bounds](a, b [, confidence])``,
  ``skim_self_join_size[_bounds](a [, confidence])``, ``skim_frequency(a, key [, confidence])``,
  ``skim_sketch_info(a)`` for hash, AGMS and exact-mode sketches;

all producing the core's bytes and numbers. See docs/native.md.

``configure(builder)`` (also ``spark_udaf.configure``) adds the jar and the session
extension (``io.skimsketch.spark.SkimExtensions``) to a session being built;
``register(spark)`` registers the functions in a running classic session whose
JVM already has the jar on its class path.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from functools import cache
from pathlib import Path

from .native_jar import SOURCES, JarBuildError, compile_jar, jar_name, resources, sources, tool

__all__ = ["EXTENSION", "FUNCTIONS", "SHIPPED", "NativeBuildError", "available", "configure", "drop_injected",
           "jar_path", "loaded", "register", "self_test", "shipped_jar"]

EXTENSION = "io.skimsketch.spark.SkimExtensions"
_REGISTRY = "io.skimsketch.spark.SkimFunctions"
#: SQL functions the jar provides.
FUNCTIONS = ("skim_sketch_agg", "skim_hash_sketch_agg", "skim_sketch_like_agg", "skim_union_agg", "skim_union",
             "skim_join_size", "skim_join_size_bounds", "skim_self_join_size", "skim_self_join_size_bounds",
             "skim_frequency", "skim_sketch_info", "skim_sample_agg")
#: Where a wheel keeps the jar it was built with (setup.py, spark_udaf.native_jar).
SHIPPED = Path(__file__).parent / "jars"


NativeBuildError = JarBuildError  # the jar could not be built (no JDK, no pyspark, or a compiler error)


def _spark_home() -> tuple[Path, str]:
    try:
        import pyspark
    except ImportError:
        raise NativeBuildError("pyspark is not installed: install the spark extra (pip install 'skimsketch[spark]')") \
            from None
    return Path(pyspark.__file__).parent, pyspark.__version__


def _cache_dir() -> Path:
    return Path(os.environ.get("SKIMSKETCH_JAR_CACHE") or Path.home() / ".cache" / "skimsketch")


def _key(version: str) -> str:
    h = hashlib.sha256(f"spark {version}\n".encode())
    for src in sources() + resources():
        h.update(src.relative_to(SOURCES).as_posix().encode() + b"\0" + src.read_bytes())
    return h.hexdigest()[:16]


def shipped_jar(version: str) -> Path:
    """The path of the jar a wheel ships for Spark ``version`` (it may not exist)."""
    return SHIPPED / jar_name(version)


@cache
def jar_path() -> Path:
    """The jar for the installed pyspark: the one the wheel ships, else compiled into the cache on first use."""
    home, version = _spark_home()
    shipped = shipped_jar(version)
    if shipped.exists():
        return shipped
    jar = _cache_dir() / f"skimsketch-spark-{version}-{_key(version)}.jar"
    if jar.exists():
        return jar
    try:
        return compile_jar(jar, home / "jars")
    except JarBuildError as e:
        others = sorted(p.name for p in SHIPPED.glob("*.jar")) if SHIPPED.is_dir() else []
        note = f" (this package ships {', '.join(others)}, for another Spark)" if others else ""
        raise NativeBuildError(f"{e}{note}") from None


@cache
def available() -> bool:
    """Whether the jar exists or can be built here (a JDK and pyspark are installed)."""
    try:
        jar_path()
    except NativeBuildError:
        return False
    return True


def self_test() -> str:
    """Run the jar's self-test (the hash family's pinned vectors, fingerprints, sketch bytes) -> its output."""
    done = subprocess.run([tool("java"), "-cp", str(jar_path()), "io.skimsketch.spark.selftest.SelfTest"],
                          capture_output=True, text=True)
    if done.returncode:
        raise AssertionError(f"native self-test failed:\n{done.stdout}{done.stderr}")
    return done.stdout.strip()


def _append(current: str | None, item: str, sep: str) -> str:
    parts = [p for p in (current or "").split(sep) if p]
    return sep.join(parts if item in parts else parts + [item])


def configure(builder, extensions: str | None = None, jars: str | None = None):
    """Add the jar and the session extension to ``builder`` (a ``SparkSession.Builder``); returns it.

    ``spark.jars``, ``spark.driver.extraClassPath`` and ``spark.sql.extensions`` are
    set; pass the values you would otherwise set for ``jars`` (comma-separated)
    and ``extensions`` so that they are kept. When the session will run locally
    (no master, or ``local``/``local-cluster``) and ``PYSPARK_PYTHON`` is not set, it
    is set to this interpreter, so that Python workers find numpy and mmh3. For
    any other master nothing else is needed: ``spark.jars`` takes the jar to the
    executors (the JVM builds need no Python there), and the first job that needs
    Python on the executors finds an interpreter that runs the library, ships the
    sources, or stops with a one-line error (:mod:`spark_udaf.cluster`,
    docs/deploying.md). This is the one documented way to set up a session. A
    Spark Connect builder (``.remote(...)``) is refused: the server needs the jar
    and the extension in its own configuration (docs/native.md).
    """
    options = getattr(builder, "_options", {}) or {}
    if "spark.remote" in options or "spark.connect.remote" in options:
        raise ValueError("configure() sets up a classic session: for Spark Connect start the server with "
                         f"--conf spark.jars={jar_path()} --conf spark.sql.extensions={EXTENSION}")
    master = str(options.get("spark.master") or os.environ.get("MASTER") or "local")
    if master.startswith("local") and not os.environ.get("PYSPARK_PYTHON") and sys.executable:
        os.environ["PYSPARK_PYTHON"] = sys.executable
    jar = str(jar_path())
    return (builder.config("spark.jars", _append(jars, jar, ","))
            .config("spark.driver.extraClassPath", jar)
            .config("spark.sql.extensions", _append(extensions, EXTENSION, ",")))


def loaded(spark) -> bool:
    """Whether ``spark`` (a classic session) has the jar on its JVM's class path."""
    jvm = getattr(spark, "_jvm", None)
    if jvm is None:
        return False
    try:
        jvm.java.lang.Class.forName(_REGISTRY, False, jvm.Thread.currentThread().getContextClassLoader())
    except Exception:
        return False
    return True


def drop_injected(spark, names) -> None:
    """Drop the session extension's versions of ``names`` (Spark resolves them before temporary functions),
    so that Python functions registered under those names are the ones SQL calls."""
    if loaded(spark):
        spark._jvm.io.skimsketch.spark.SkimFunctions.dropInjected(spark._jsparkSession, list(names))


def register(spark) -> tuple:
    """Register the native functions in ``spark`` -> their names; ``()`` when the JVM lacks the jar.

    Sessions built with :func:`configure` (or ``spark.sql.extensions``) already have them.
    """
    if not loaded(spark):
        return ()
    return tuple(spark._jvm.io.skimsketch.spark.SkimFunctions.register(spark._jsparkSession))
