"""Compiling the native SQL functions' jar: ``javac`` against Spark's jars, standard library only.

Two callers: :mod:`spark_udaf.native` (on demand, into a cache, for a checkout)
and ``setup.py`` (into the wheel, ``spark_udaf/jars/skimsketch-spark-<spark
version>.jar``), which loads this file by path before the package's
dependencies exist; so it imports nothing but the standard library.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import zipfile
from pathlib import Path

__all__ = ["SOURCES", "JarBuildError", "compile_jar", "jar_name", "resources", "sources", "spark_jars", "tool"]

#: The Java sources (and the resources the jar carries: the golden estimate vectors).
SOURCES = Path(__file__).parent / "java"
_RESOURCES = ("*.tsv",)


class JarBuildError(RuntimeError):
    """The jar could not be built (no JDK, no Spark jars, or a compiler error)."""


def sources() -> list[Path]:
    return sorted(SOURCES.rglob("*.java"))


def resources() -> list[Path]:
    return sorted(p for pattern in _RESOURCES for p in SOURCES.rglob(pattern))


def jar_name(version: str) -> str:
    """The file name of the jar built for Spark ``version`` (what a wheel ships)."""
    return f"skimsketch-spark-{version}.jar"


def tool(name: str) -> str:
    """``$JAVA_HOME/bin/<name>``, else ``<name>`` on the PATH."""
    home = os.environ.get("JAVA_HOME")
    if home and (Path(home) / "bin" / name).exists():
        return str(Path(home) / "bin" / name)
    found = shutil.which(name)
    if found is None:
        raise JarBuildError(f"{name} not found: install a JDK (17 or later) or set JAVA_HOME")
    return found


def spark_jars() -> tuple[Path, str] | None:
    """(folder of Spark's jars, Spark version) to compile against: ``$SKIMSKETCH_SPARK_JARS``, else
    ``$SPARK_HOME/jars``, else the importable pyspark's; ``None`` when there is none."""
    candidates = [os.environ.get("SKIMSKETCH_SPARK_JARS"),
                  os.environ.get("SPARK_HOME") and os.path.join(os.environ["SPARK_HOME"], "jars")]
    try:
        import importlib.util

        spec = importlib.util.find_spec("pyspark")
        if spec is not None and spec.origin:
            candidates.append(os.path.join(os.path.dirname(spec.origin), "jars"))
    except (ImportError, ValueError):
        pass
    for c in candidates:
        if c and Path(c).is_dir():
            core = sorted(Path(c).glob("spark-core_*-*.jar"))
            if core:
                return Path(c), core[0].stem.split("-", 2)[2]
    return None


def compile_jar(jar: Path, spark_jars_dir: Path) -> Path:
    """Compile the sources with ``javac`` against ``spark_jars_dir`` into ``jar`` (written atomically)."""
    javac = tool("javac")
    jar.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=jar.parent) as tmp:
        classes = Path(tmp) / "classes"
        cmd = [javac, "--release", "17", "-nowarn", "-encoding", "UTF-8", "-d", str(classes),
               "-cp", str(spark_jars_dir / "*"), *map(str, sources())]
        done = subprocess.run(cmd, capture_output=True, text=True)
        if done.returncode:
            raise JarBuildError(f"javac failed ({done.returncode}):\n{done.stderr[-4000:]}")
        part = Path(tmp) / jar.name
        with zipfile.ZipFile(part, "w", zipfile.ZIP_DEFLATED) as z:
            z.writestr("META-INF/MANIFEST.MF", "Manifest-Version: 1.0\nCreated-By: skimsketch\n")
            for f in sorted(classes.rglob("*.class")):
                z.write(f, f.relative_to(classes).as_posix())
            for f in resources():
                z.write(f, f.relative_to(SOURCES).as_posix())
        os.replace(part, jar)  # atomic: concurrent builders leave one complete jar
    return jar
