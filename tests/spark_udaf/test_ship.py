"""ship_package's zip: the pure-Python sources executors import (no Spark needed)."""

import os
import zipfile

import skimsketch
import spark_udaf
from spark_udaf.cluster import _zip_packages


def test_zip_holds_both_packages_sources(tmp_path):
    path = _zip_packages(str(tmp_path / "p.zip"), [os.path.dirname(m.__file__) for m in (skimsketch, spark_udaf)])
    names = set(zipfile.ZipFile(path).namelist())
    assert {"skimsketch/__init__.py", "skimsketch/hashing.py", "spark_udaf/__init__.py", "spark_udaf/build.py"} <= names
    assert not any("__pycache__" in n or not n.endswith(".py") for n in names)
