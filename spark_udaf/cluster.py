"""Making the pure-Python packages available to executors on a real cluster."""

from __future__ import annotations

import os
import tempfile
import zipfile

__all__ = ["ship_package"]


def _zip_packages(path: str, packages) -> str:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for pkg in packages:
            root = os.path.dirname(os.path.abspath(pkg.__file__))
            base = os.path.dirname(root)
            for dirpath, dirnames, filenames in os.walk(root):
                dirnames[:] = [d for d in dirnames if d != "__pycache__"]
                for name in filenames:
                    if name.endswith(".py"):
                        full = os.path.join(dirpath, name)
                        z.write(full, os.path.relpath(full, base))
    return path


def ship_package(spark) -> str:
    """Zip the ``skimsketch`` and ``spark_udaf`` sources and ``addPyFile`` them.

    Needed only when executors do not have skimsketch installed (a real cluster
    without the package on its nodes); they still need numpy, mmh3 and pyarrow.
    Returns the path of the zip that was shipped.
    """
    import skimsketch

    import spark_udaf

    fd, path = tempfile.mkstemp(prefix="skimsketch-", suffix=".zip")
    os.close(fd)
    _zip_packages(path, [skimsketch, spark_udaf])
    spark.sparkContext.addPyFile(path)
    return path
