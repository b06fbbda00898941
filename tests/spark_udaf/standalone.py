"""A real Spark standalone cluster for tests: a master and a worker, separate JVMs, on 127.0.0.1.

Both are started with the installed pyspark's own ``bin/spark-class`` (the way
``sbin/start-master.sh`` starts them, minus the daemonising), each in its own
process group, on free ports, and stopped by their process groups: at the end of
the fixture, and at interpreter exit for any that leaked (``atexit``).

The worker's environment has no ``PYTHONPATH`` and no ``PYSPARK_PYTHON``: its
executors see this checkout only through what the driver ships.
"""

from __future__ import annotations

import atexit
import os
import signal
import socket
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

_LIVE: set = set()  # process group ids started here and not yet stopped


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _kill_group(pgid: int, grace: float = 3.0) -> None:
    try:
        os.killpg(pgid, signal.SIGTERM)
    except ProcessLookupError:
        _LIVE.discard(pgid)
        return
    deadline = time.time() + grace
    while time.time() < deadline:
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            break
        time.sleep(0.1)
    else:
        try:
            os.killpg(pgid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    _LIVE.discard(pgid)


@atexit.register
def _kill_leaked() -> None:
    for pgid in list(_LIVE):
        _kill_group(pgid, grace=2.0)


def _wait_for(log: Path, text: str, proc: subprocess.Popen, timeout: float) -> None:
    deadline = time.time() + timeout
    while time.time() < deadline:
        if log.exists() and text in log.read_text(errors="replace"):
            return
        if proc.poll() is not None:
            break
        time.sleep(0.2)
    tail = log.read_text(errors="replace")[-3000:] if log.exists() else "(no log)"
    raise RuntimeError(f"{log.name}: {text!r} not seen within {timeout:.0f} s (exit code {proc.poll()}):\n{tail}")


@dataclass
class Standalone:
    """A running master + worker; ``url`` is the master's ``spark://127.0.0.1:port``."""

    spark_home: str
    workdir: Path
    url: str = ""
    procs: list = field(default_factory=list)

    def _start(self, name: str, args: list, env: dict) -> tuple[subprocess.Popen, Path]:
        log = self.workdir / f"{name}.log"
        with open(log, "wb") as out:
            proc = subprocess.Popen([os.path.join(self.spark_home, "bin", "spark-class"), *args], env=env,
                                    stdout=out, stderr=subprocess.STDOUT, start_new_session=True,
                                    cwd=str(self.workdir))
        _LIVE.add(proc.pid)  # start_new_session: its pid is its process group id
        self.procs.append(proc)
        return proc, log

    def start(self, cores: int = 2, memory: str = "1g", timeout: float = 120.0) -> "Standalone":
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYSPARK_PYTHON",
                                                                 "PYSPARK_DRIVER_PYTHON", "PYSPARK_SUBMIT_ARGS")}
        env.update(SPARK_HOME=self.spark_home, SPARK_LOCAL_IP="127.0.0.1", SPARK_DAEMON_MEMORY="384m",
                   SPARK_LOG_DIR=str(self.workdir), SPARK_WORKER_DIR=str(self.workdir / "work"))
        port = free_port()
        self.url = f"spark://127.0.0.1:{port}"
        master, mlog = self._start("master", ["org.apache.spark.deploy.master.Master", "--host", "127.0.0.1",
                                              "--port", str(port), "--webui-port", str(free_port())], env)
        _wait_for(mlog, "I have been elected leader", master, timeout)
        worker, wlog = self._start("worker", ["org.apache.spark.deploy.worker.Worker", self.url, "--host",
                                              "127.0.0.1", "--webui-port", str(free_port()), "--cores", str(cores),
                                              "--memory", memory, "--work-dir", str(self.workdir / "work")], env)
        _wait_for(wlog, "Successfully registered with master", worker, timeout)
        return self

    def stop(self) -> None:
        for proc in reversed(self.procs):
            _kill_group(proc.pid)
            try:
                proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                pass
        self.procs.clear()
