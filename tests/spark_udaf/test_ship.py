"""ship_package's zip: the pure-Python sources executors import (no Spark needed)."""

import os
import zipfile

import skimsketch
import spark_udaf
from spark_udaf.cluster import _zip_packages


def test_zip_holds_both_packages_sources(tmp_path):
    path = _zip_packages(str(tmp_path / "p.zip"), [os.path.dirname(m.__file__) for m in (skimsketch, spark_udaf)])
    names = set(zipfile.ZipFile(path).namelist())
    assert {"skimsketch/__init__.py", "skimsketch/keys/hashing.py", "spark_udaf/__init__.py", "spark_udaf/build/__init__.py"} <= names
    assert not any("__pycache__" in n or not n.endswith(".py") for n in names)


def test_a_failed_probe_is_told_in_one_line_in_the_executor_words():
    from spark_udaf.cluster import _job_error

    stage = ("An error occurred while calling o1.collect.\n: org.apache.spark.SparkException: Job aborted due to stage "
             "failure: Task 0 in stage 0.0 failed 4 times, most recent failure: Lost task 0.3 in stage 0.0 (TID 3) "
             "(127.0.0.1 executor 0): ")
    crashed = stage + ("org.apache.spark.SparkException: \nError from python worker:\n  Fatal Python error: "
                       "init_fs_encoding\n  ModuleNotFoundError: No module named 'encodings'\n\tat org.X(Y.scala:1)\n")
    assert _job_error(RuntimeError(crashed)) == ("org.apache.spark.SparkException: ModuleNotFoundError: No module "
                                                 "named 'encodings'")
    plain = stage + "org.apache.spark.SparkException: Python worker exited unexpectedly (crashed)\n\tat org.X(Y:1)"
    assert _job_error(RuntimeError(plain)) == "org.apache.spark.SparkException: Python worker exited unexpectedly (crashed)"
    missing = stage + 'java.io.IOException: Cannot run program "/opt/py": error=2\n\tat java.base/X.start(X.java:1)'
    assert _job_error(RuntimeError(missing)) == 'java.io.IOException: Cannot run program "/opt/py": error=2'
    raised = stage + "An exception was thrown from the Python worker:\nTraceback (most recent call last):\n  x\nKeyError: 1"
    assert _job_error(RuntimeError(raised)) == "KeyError: 1"
