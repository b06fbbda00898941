"""The wheel carries the native jar: `pip wheel .`, installed into a fresh environment, runs the SQL functions
with javac hidden from PATH and no jar cache, in a session started without PYSPARK_PYTHON.

Slow (a wheel build installs pyspark into its build environment): `.ci/run` runs it. The fresh environment is
a new venv with the wheel installed (no dependencies); its dependencies (numpy, mmh3, pyarrow, pyspark) are
the test environment's site-packages on the path after its own (a .pth line), so the package imported there is
the wheel's.
"""

import os
import shutil
import subprocess
import sys
import sysconfig
import textwrap
import venv
import zipfile
from pathlib import Path

import pytest

pytestmark = [pytest.mark.slow, pytest.mark.spark]

ROOT = Path(__file__).resolve().parents[2]

SCRIPT = textwrap.dedent("""
    import json, os, shutil, sys
    import skimsketch as ss, spark_udaf
    from spark_udaf import native
    from pyspark.sql import SparkSession
    assert shutil.which("javac") is None and "PYSPARK_PYTHON" not in os.environ
    jar = native.jar_path()
    builder = SparkSession.builder.master("local[2]").config("spark.ui.enabled", "false")
    spark = spark_udaf.configure(builder).getOrCreate()  # the native functions: no Python registration yet
    r = spark.sql("SELECT skim_sketch_agg(id % 50) AS s, skim_hash_sketch_agg(id, 64, 5, 1) AS h, count(*) AS n "
                  "FROM range(0, 3000, 1, 3)").collect()[0]
    e = spark.sql("SELECT skim_join_size_bounds(h, h, 0.9) AS e FROM (SELECT skim_hash_sketch_agg(id, 64, 5, 1) "
                  "AS h FROM range(0, 3000, 1, 3))").collect()[0].e
    spark_udaf.register(spark)  # the Python functions: their workers need numpy and mmh3 (PYSPARK_PYTHON unset)
    py = spark.sql("SELECT skim_merge(s) AS m FROM (SELECT skim_sketch(id, 64, 5, 1) AS s FROM range(100))")
    from skimsketch import kernels
    print(json.dumps({"package": spark_udaf.__file__, "jar": str(jar), "shipped": str(native.SHIPPED),
                      "kernels": kernels.available()["compiled"],
                      "s": bytes(r.s).hex(), "h": bytes(r.h).hex(), "n": r.n, "e": e.asDict(),
                      "python_udf": bytes(py.collect()[0].m).hex()}))
    spark.stop()
""")


def _path_without(tool: str, bin_dir: Path) -> str:
    """A PATH of one folder linking every command of the current PATH but ``tool``."""
    bin_dir.mkdir()
    for d in os.environ.get("PATH", "").split(os.pathsep):
        if not os.path.isdir(d):
            continue
        for name in os.listdir(d):
            src = os.path.join(d, name)
            if name != tool and not (bin_dir / name).exists() and os.access(src, os.X_OK) and os.path.isfile(src):
                (bin_dir / name).symlink_to(src)
    return str(bin_dir)


def test_the_wheel_runs_the_native_functions_without_a_jdk(tmp_path):
    import skimsketch as ss

    wheels = tmp_path / "wheels"
    done = subprocess.run([sys.executable, "-m", "pip", "wheel", str(ROOT), "--no-deps", "-w", str(wheels)],
                          capture_output=True, text=True, timeout=900, env=dict(os.environ, SKIMSKETCH_REQUIRE_JAR="1"))
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    (wheel,) = wheels.glob("skimsketch-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    jars = [n for n in names if n.startswith("spark_udaf/jars/")]
    assert len(jars) == 1 and jars[0].endswith(".jar"), jars
    if shutil.which("cc") or shutil.which("gcc"):  # the compiled kernels are optional: built where a compiler is
        assert [n for n in names if n.startswith("skimsketch/kernels/_ckernels") and n.endswith(".so")], names

    env_dir = tmp_path / "fresh"
    venv.EnvBuilder(with_pip=False).create(env_dir)
    python = env_dir / "bin" / "python"
    site = Path(subprocess.check_output([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                                        text=True).strip())
    (site / "test_deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    done = subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps", str(wheel)],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]

    env = {k: v for k, v in os.environ.items() if k not in ("PYSPARK_PYTHON", "PYSPARK_DRIVER_PYTHON", "JAVA_HOME",
                                                            "SPARK_HOME", "PYTHONPATH")}
    env.update(PATH=_path_without("javac", tmp_path / "bin"), SKIMSKETCH_JAR_CACHE=str(tmp_path / "no-cache"))
    done = subprocess.run([str(python), "-c", SCRIPT], capture_output=True, text=True, timeout=600, env=env,
                          cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-4000:]
    out = __import__("json").loads(done.stdout.strip().splitlines()[-1])
    assert out["package"].startswith(str(env_dir)), out["package"]
    if shutil.which("cc") or shutil.which("gcc"):
        assert out["kernels"] is None, out["kernels"]  # the wheel's compiled kernels load (and are current)
    assert Path(out["jar"]).parent == Path(out["shipped"]) and out["jar"].startswith(str(env_dir))
    assert not (tmp_path / "no-cache").exists()  # nothing compiled
    assert bytes.fromhex(out["s"]) == ss.SkimmedSketch.for_bytes(16384).update([i % 50 for i in range(3000)]).to_bytes()
    h = ss.from_bytes(ss.HashSketch(64, 5, 1).update(list(range(3000))).to_bytes())  # as SQL reads it
    assert bytes.fromhex(out["h"]) == h.to_bytes() and out["n"] == 3000
    want = h.join_size(h, confidence=0.9)
    assert out["e"] == {"value": want.value, "low": want.low, "high": want.high, "confidence": 0.9, "method": "hash"}
    assert bytes.fromhex(out["python_udf"]) == ss.HashSketch(64, 5, 1).update(list(range(100))).to_bytes()
