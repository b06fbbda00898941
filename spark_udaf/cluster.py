"""Making the pure-Python packages available to executors on a real cluster."""

from __future__ import annotations

import os
import tempfile
import zipfile

import skimsketch

__all__ = ["ship_package"]


def _zip_packages(path: str, roots) -> str:
    """Zip the ``.py`` files under each package directory in ``roots`` (paths relative to its parent)."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for root in roots:
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
    fd, path = tempfile.mkstemp(prefix="skimsketch-", suffix=".zip")
    os.close(fd)
    here = os.path.dirname(os.path.abspath(__file__))  # the spark_udaf package
    _zip_packages(path, [os.path.dirname(os.path.abspath(skimsketch.__file__)), here])
    spark.sparkContext.addPyFile(path)
    return path
