"""Python on the executors: whether the library's Python tasks can run there, made so when they can.

Every path that runs the library's Python code inside Spark tasks (``mapInArrow``
builds, the Parquet fast path, the Arrow aggregates, the demo's table generator)
asks this module first, once per Spark application and set of executors (cached by the application id;
probed again when executors it has not probed join, e.g. under dynamic allocation):

* :func:`python_workers` probes the executors with one tiny Python job per
  candidate interpreter: the session's (``PYSPARK_PYTHON``, else a bare ``python3``)
  and then the driver's own (``sys.executable``: on a single host, or wherever the
  nodes share the driver's filesystem, it is there with numpy, mmh3 and pyarrow).
  The job imports numpy, mmh3, pyarrow, ``skimsketch`` and ``spark_udaf`` and
  reports what failed; it never raises on the executors. When the executors lack
  the driver's ``skimsketch``/``spark_udaf`` sources (or hold other copies), the
  sources are zipped and shipped with ``addPyFile`` (:func:`ship_package`) and the
  interpreter is probed again (the zip is deleted when the driver's Python exits).
  Each probe job carries its candidate interpreter in its own Python function:
  the session's ``pythonExec`` is never swapped while it runs, so Python jobs
  other threads start meanwhile (a streaming ``foreachBatch``) keep theirs. The
  first interpreter that imports everything becomes the session's ``pythonExec``
  (new Python workers start with it);
* :func:`python_usable` says whether one works, so that a path with a JVM
  alternative (the native jar) can take that instead;
* :func:`require_python` raises :class:`ExecutorPythonError` on the driver, before
  any of the caller's tasks runs, naming what failed and the remedy.

Spark Connect sessions are not probed (their Python workers are the server's).
docs/deploying.md says what each cluster manager needs.
"""

from __future__ import annotations

import atexit
import logging
import os
import re
import shutil
import sys
import tempfile
import threading
import zipfile
from dataclasses import dataclass

import skimsketch

__all__ = ["MODULES", "REMEDY", "ExecutorPythonError", "PythonWorkers", "python_usable", "python_workers",
           "require_python", "ship_package"]

#: What the library's Python tasks import on an executor (the third-party ones, then the library's).
MODULES = ("numpy", "mmh3", "pyarrow", "skimsketch", "spark_udaf")
_OURS = ("skimsketch", "spark_udaf")
#: What to do when no interpreter on the executors can run the library.
REMEDY = ("configure the session with spark_udaf.configure(builder) so that builds run on the JVM, or give the "
          "executors a Python with skimsketch[spark] installed (PYSPARK_PYTHON on the driver, or a packed "
          "environment in spark.archives; docs/deploying.md)")
_LOG = logging.getLogger("spark_udaf")
_STATE: dict = {}  # application id -> (PythonWorkers, the executors probed for it)
_LOCK = threading.Lock()  # one probe at a time (foreachBatch handlers run on other threads)
_SHIPPED: list = []  # the temporary directories of the zips shipped, deleted when this Python exits


class ExecutorPythonError(RuntimeError):
    """The executors cannot run the library's Python tasks: raised on the driver before any such task."""


@dataclass(frozen=True)
class PythonWorkers:
    """What the probe found: ``python``, the interpreter the library's tasks run (``None``: none can),
    ``shipped``, the zip of sources added with ``addPyFile`` (``None``: not needed), and ``reason``,
    per interpreter tried, why it could not (``None`` when one can)."""

    python: str | None
    shipped: str | None
    reason: str | None


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


def _package_dirs() -> list:
    here = os.path.dirname(os.path.abspath(__file__))  # the spark_udaf package
    return [os.path.dirname(os.path.abspath(skimsketch.__file__)), here]


def _remove_shipped() -> None:
    """Delete the shipped zips (at exit: the driver serves a zip to executors that join later)."""
    while _SHIPPED:
        shutil.rmtree(_SHIPPED.pop(), ignore_errors=True)


atexit.register(_remove_shipped)


def _ship(sc) -> str:
    where = tempfile.mkdtemp(prefix="skimsketch-ship-")
    _SHIPPED.append(where)
    path = _zip_packages(os.path.join(where, f"skimsketch-{os.path.basename(where)[-8:]}.zip"), _package_dirs())
    sc.addPyFile(path)
    return path


def ship_package(spark) -> str:
    """Zip the ``skimsketch`` and ``spark_udaf`` sources and ``addPyFile`` them -> the zip's path.

    :func:`python_workers` does this by itself when the executors lack these
    sources; the executors still need numpy, mmh3 and pyarrow (compiled packages:
    a zip cannot carry them). The compiled kernel is not shipped: the executors
    then run the numpy kernels, which give the same bytes.
    """
    return _ship(spark.sparkContext)


def _probe_task(modules, ours: dict, shipped: str | None):
    """The probe's task function (a closure, so cloudpickle ships it by value: it needs only the standard
    library on the executor) -> one ``(sys.executable, {module: (ok, real path of its file or the error)})``.

    The library's packages (``ours``: name -> the driver's file) are imported only from the driver's file or
    the ``shipped`` zip: a Python worker is reused across tasks, and a copy imported there from elsewhere
    would stay in it after the sources are shipped. Elsewhere they are only located (``find_spec``)."""

    def probe(_):
        import importlib
        import importlib.util
        import os
        import sys

        found = {}
        for name in modules:
            try:
                if name in ours:
                    spec = importlib.util.find_spec(name)
                    where = os.path.realpath(spec.origin) if spec is not None and spec.origin else ""
                    if spec is None:
                        raise ModuleNotFoundError(f"No module named {name!r}")
                    if where != ours[name] and not (shipped and shipped in where):
                        found[name] = (False, f"another copy at {where}")
                        continue
                f = getattr(importlib.import_module(name), "__file__", None) or ""
                found[name] = (True, os.path.realpath(f) if f else "")
            except BaseException as e:  # an import that fails in any way is a missing module here
                found[name] = (False, f"{type(e).__name__}: {e}".splitlines()[0][:200])
        yield sys.executable, found

    return probe


_ERROR_LINE = re.compile(r"^[A-Za-z_]\w*(Error|Exception): \S")
_LOST = re.compile(r"most recent failure: Lost task [^:]*\): (.*?)(?:\n\s*at |\Z)", re.S)


def _job_error(e: Exception) -> str:
    """One line saying why the probe job failed: the executor's words for its last failed task when found."""
    java = getattr(e, "java_exception", None)
    try:
        text = str(java.getMessage()) if java is not None else str(e)
    except Exception:  # the JVM is gone: the Python-side text is all there is
        text = str(e)
    m = _LOST.search(text)  # the failed task's message, up to its stack trace, as one line
    lines = [s.strip() for s in text.splitlines() if s.strip()]
    if m and "Traceback" not in m.group(1):
        # an interpreter that died on start prints its own error line (e.g. "ModuleNotFoundError: ..."): that one
        said = [s.strip() for s in m.group(1).splitlines() if _ERROR_LINE.match(s.strip())]
        line = " ".join(m.group(1).split()) if not said else f"{m.group(1).split(':')[0]}: {said[-1]}"
    elif "Traceback" in text and lines:  # the worker ran and raised: its last line says what
        line = lines[-1]
    else:
        line = lines[0] if lines else type(e).__name__
    return line[:240]


def _with_python(sc, rdd, python: str):
    """A copy of ``rdd`` (a not yet materialised one-stage Python RDD) whose tasks run ``python``, and only them.

    PySpark reads ``sc.pythonExec`` when it wraps an RDD's Python function; this
    wraps it with ``python`` instead (the same command, environment, includes and
    broadcasts PySpark's own wrapping sends), so the context's setting, which
    other threads' jobs read, never changes."""
    from pyspark.core.rdd import RDD, _prepare_for_python_RDD

    command = (rdd.func, None, rdd._prev_jrdd_deserializer, rdd._jrdd_deserializer)
    pickled, broadcasts, env, includes = _prepare_for_python_RDD(sc, command)
    fn = sc._jvm.SimplePythonFunction(bytearray(pickled), env, includes, python, sc.pythonVer, broadcasts,
                                      sc._javaAccumulator)
    jrdd = sc._jvm.PythonRDD(rdd._prev_jrdd.rdd(), fn, rdd.preservesPartitioning, rdd.is_barrier)
    return RDD(jrdd.asJavaRDD(), sc, rdd._jrdd_deserializer)


def _probe(sc, python: str, shipped: str | None):
    """Run the probe with ``python`` as the workers' interpreter -> ``({module: (ok, info)}, None)`` merged
    over the tasks (one task per slot of the default parallelism, at most 64), or ``(None, why it failed)``."""
    task = _probe_task(MODULES, {m: _driver_file(m) for m in _OURS}, shipped and os.path.basename(shipped))
    n = max(1, min(int(sc.defaultParallelism), 64))
    rdd = _with_python(sc, sc.parallelize(list(range(n)), n).mapPartitions(task), python)
    try:
        rows = rdd.collect()
    except Exception as e:  # the interpreter did not start there, or is another Python version
        return None, _job_error(e)
    found = {}
    for _, got in rows:
        for name, (ok, info) in got.items():
            if name not in found or not ok:
                found[name] = (ok, info)
    return found, None


def _driver_file(name: str) -> str:
    return os.path.realpath(sys.modules[name].__file__)


def _needs_sources(found) -> bool:
    """Whether the executors lack this driver's ``skimsketch``/``spark_udaf`` (absent, or other copies)."""
    return any(not found[m][0] for m in _OURS)


def _missing(found) -> list:
    return [f"{m} ({info})" for m, (ok, info) in found.items() if not ok]


def _candidates(sc) -> list:
    """Interpreters to try: the session's, then this one (first for a local master left on a bare default)."""
    current = sc.pythonExec
    out = [current]
    if sys.executable and sys.executable != current:
        bare = current in ("python3", "python") and not os.environ.get("PYSPARK_PYTHON")
        if bare and str(sc.master).startswith("local"):
            out.insert(0, sys.executable)  # local workers run on this machine: its interpreter is there
        else:
            out.append(sys.executable)
    return out


def _decide(sc, shipped: str | None = None) -> PythonWorkers:
    """Probe the candidates (``shipped``: the zip an earlier probe of this application added, if any)."""
    reasons = []
    for python in _candidates(sc):
        found, err = _probe(sc, python, shipped)
        if found is not None and shipped is None and _needs_sources(found):
            shipped = _ship(sc)
            found, err = _probe(sc, python, shipped)
        if found is not None and not _missing(found):
            if python != sc.pythonExec:
                _LOG.info("executors' Python tasks run %s (the session's %s cannot import the library)",
                          python, sc.pythonExec)
                sc.pythonExec = python
            return PythonWorkers(python, shipped, None)
        reasons.append(f"{python}: {err or 'cannot import ' + ', '.join(_missing(found))}")
    return PythonWorkers(None, shipped, "; ".join(reasons))


def _context(spark):
    """The classic session's SparkContext, ``None`` for Spark Connect (nothing to probe from here)."""
    if getattr(spark, "_jsparkSession", None) is None:
        return None
    return spark.sparkContext


def _executors(sc) -> frozenset:
    """The ids of the executors the application has now (none in local mode: the driver runs the tasks)."""
    ids = str(sc._jsc.sc().getExecutorIds().mkString("\n"))
    return frozenset(i for i in ids.split("\n") if i)


def python_workers(spark) -> PythonWorkers | None:
    """Probe which interpreter on the executors runs the library, and use it: once per Spark application,
    and again when executors join that no probe of it saw (dynamic allocation, a replaced node).

    See the module doc: the session's interpreter, else the driver's; the
    sources shipped when the executors lack them. Returns the
    :class:`PythonWorkers` found (``python`` is ``None`` when no interpreter
    can run the library), or ``None`` for a Spark Connect session. The probe
    job runs wherever Spark places its tasks: executors that join while it runs
    are probed by the next call.
    """
    sc = _context(spark)
    if sc is None:
        return None
    key = sc.applicationId
    with _LOCK:
        now = _executors(sc)
        known = _STATE.get(key)
        if known is None or not now <= known[1]:
            if known is not None:
                _LOG.info("executors %s joined since the last probe: probing again", ", ".join(sorted(now - known[1])))
            found = _decide(sc, known[0].shipped if known is not None else None)
            _STATE[key] = (found, now | (known[1] if known is not None else frozenset()))
        state = _STATE[key][0]
    if state.python is not None and sc.pythonExec != state.python:
        sc.pythonExec = state.python  # the session's value was reset (a new context object on the same app)
    return state


def python_usable(spark) -> bool:
    """Whether the executors can run the library's Python tasks (probed once; Connect: assumed)."""
    state = python_workers(spark)
    return state is None or state.python is not None


def require_python(spark, what: str) -> None:
    """Raise :class:`ExecutorPythonError` (one line: ``what``, why, the remedy) unless the executors can run
    the library's Python tasks; call it on the driver before creating the tasks."""
    state = python_workers(spark)
    if state is not None and state.python is None:
        raise ExecutorPythonError(f"{what} runs the library's Python code on the executors, and no Python there "
                                  f"can import it ({state.reason}): {REMEDY}")
