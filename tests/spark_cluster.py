"""Spark whose executors are separate processes, as on EMR Serverless, and Spark's event log read back to tell
where tasks ran.

- `spark_submit(...)`: the job started as EMR starts it, by spark-submit (so the driver is the process spark-submit
  launched), on any master: `local-cluster[executors,cores,MB]` (Spark's own test mode: a master and workers inside
  the driver's JVM, each executor a JVM of its own that inherits the driver's environment) or a standalone cluster.
- `StandaloneCluster`: a master and workers started here with pyspark's `spark-class`, each worker with its own work
  directory and an environment of its own (Java and loopback only): its executors see the driver's
  `spark.executorEnv.*` and nothing else of the driver's environment, and unpack `spark.archives` themselves.
- `task_ends(event_log_dir)`: every task attempt the event log recorded, with the executor that ran it.
- `spark_submit_jvm(job)`: the driver's JVM of a job spark-submit started (what a test sends SIGTERM to, as EMR's
  CancelJobRun with a grace period does).
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from devtools.stack import LOOPBACK, free_port

SPARK_HOME = Path(importlib.util.find_spec("pyspark").origin).parent
ROOT = Path(__file__).resolve().parents[1]
ENTRY_POINT = ROOT / "infra" / "job" / "entrypoint.py"  # the deployed job's entry point
# two executors of one core each, as a small EMR run has; 1 GB each is what the tests' ranges need
LOCAL_CLUSTER = "local-cluster[2,1,1024]"


def spark_env() -> dict[str, str]:
    """The JVM's environment: Java, SPARK_HOME (the venv's pyspark), loopback; no PYTHONPATH, no AWS settings."""
    java = shutil.which("java")
    if java is None:
        raise RuntimeError("java is not on PATH: Spark needs Java 17")
    env = {
        "PATH": f"{Path(java).resolve().parent}:/usr/bin:/bin",
        "SPARK_HOME": str(SPARK_HOME),
        "SPARK_LOCAL_IP": LOOPBACK,
        "HOME": os.environ.get("HOME", "/tmp"),
        "LANG": "C.UTF-8",
    }
    if "JAVA_HOME" in os.environ:
        env["JAVA_HOME"] = os.environ["JAVA_HOME"]
    return env


def spark_submit_command(
    master: str,
    entry_point: Path,
    arguments: list[str],
    event_log_dir: Path | None = None,
    confs: dict[str, str] | None = None,
) -> list[str]:
    """spark-submit's command line: `master`, no UI, the event log in `event_log_dir` when given, `confs`."""
    settings = {
        "spark.ui.enabled": "false",
        "spark.scheduler.minRegisteredResourcesRatio": "1.0",
        **({"spark.eventLog.enabled": "true", "spark.eventLog.dir": event_log_dir.as_uri()} if event_log_dir else {}),
        **(confs or {}),
    }
    return [
        str(Path(sys.executable).parent / "spark-submit"),
        "--master",
        master,
        *(arg for key, value in settings.items() for arg in ("--conf", f"{key}={value}")),
        str(entry_point),
        *arguments,
    ]


def spark_submit(
    master: str,
    arguments: list[str],
    event_log_dir: Path | None = None,
    confs: dict[str, str] | None = None,
    env: dict[str, str] | None = None,
    cwd: Path | None = None,
    entry_point: Path = ENTRY_POINT,
) -> subprocess.Popen:
    """Start `entry_point arguments` under spark-submit on `master` (see `spark_submit_command`); the driver and
    executors run this venv's Python. `env` is added to the test process's environment (the driver's)."""
    if event_log_dir is not None:
        event_log_dir.mkdir(parents=True, exist_ok=True)
    python = {"PYSPARK_PYTHON": sys.executable, "PYSPARK_DRIVER_PYTHON": sys.executable}
    return subprocess.Popen(
        spark_submit_command(master, entry_point, arguments, event_log_dir, confs),
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, **spark_env(), **python, **(env or {})},
    )


def spark_submit_jvm(job: subprocess.Popen):
    """The driver's JVM of a job started by spark-submit (a psutil.Process): spark-submit itself, whose scripts exec
    the JVM, or the process under it running SparkSubmit. What EMR's CancelJobRun with a grace period signals."""
    import psutil

    root = psutil.Process(job.pid)
    for process in [root, *root.children(recursive=True)]:
        try:
            if "org.apache.spark.deploy.SparkSubmit" in process.cmdline():
                return process
        except psutil.Error:
            continue
    raise AssertionError(f"no SparkSubmit JVM under process {job.pid}")


@dataclass(frozen=True)
class TaskEnd:
    stage: int
    executor: str  # Spark's executor id; "driver" for a task that ran in the driver's process (a local master)
    host: str
    reason: str  # "Success", or the reason the attempt failed (ExecutorLostFailure, ExceptionFailure, ...)

    @property
    def succeeded(self) -> bool:
        return self.reason == "Success"


def task_ends(event_log_dir: Path) -> list[TaskEnd]:
    """Every task attempt of every application whose event log lies in `event_log_dir`."""
    ends = []
    for log in sorted(event_log_dir.iterdir()):
        for line in log.read_text().splitlines():
            event = json.loads(line)
            if event.get("Event") == "SparkListenerTaskEnd":
                info = event["Task Info"]
                ends.append(
                    TaskEnd(event["Stage ID"], info["Executor ID"], info["Host"], event["Task End Reason"]["Reason"])
                )
    return ends


class StandaloneCluster:
    """Context manager: a standalone Spark master on loopback and `workers` workers of `cores` cores and
    `memory` each, every worker with its own work directory under `root`. `master_url` is what spark-submit's
    `--master` takes. Stops them all, also on failure."""

    def __init__(self, root: Path, workers: int = 2, cores: int = 1, memory: str = "1g"):
        self.root, self.workers, self.cores, self.memory = root, workers, cores, memory
        self.port, self.ui_port = free_port(), free_port()
        self._processes: list[subprocess.Popen] = []

    @property
    def master_url(self) -> str:
        return f"spark://{LOOPBACK}:{self.port}"

    def worker_dirs(self) -> list[Path]:
        return [self.root / f"worker-{n}" for n in range(self.workers)]

    def __enter__(self) -> StandaloneCluster:
        try:
            self._start(
                "master",
                "org.apache.spark.deploy.master.Master",
                "--host",
                LOOPBACK,
                "--port",
                str(self.port),
                "--webui-port",
                str(self.ui_port),
            )
            for work_dir in self.worker_dirs():
                work_dir.mkdir(parents=True, exist_ok=True)
                self._start(
                    work_dir.name,
                    "org.apache.spark.deploy.worker.Worker",
                    self.master_url,
                    "--host",
                    LOOPBACK,
                    "--work-dir",
                    str(work_dir),
                    "--cores",
                    str(self.cores),
                    "--memory",
                    self.memory,
                    "--webui-port",
                    str(free_port()),
                )
            self._wait_for_workers()
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def __exit__(self, *exc) -> None:
        for process in reversed(self._processes):
            process.terminate()
        for process in self._processes:
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                process.kill()

    def _start(self, name: str, main_class: str, *args: str) -> None:
        log = open(self.root / f"{name}.log", "w")  # noqa: SIM115 - open for the process's life
        self._processes.append(
            subprocess.Popen(
                [str(SPARK_HOME / "bin" / "spark-class"), main_class, *args],
                stdout=log,
                stderr=subprocess.STDOUT,
                env=spark_env(),
            )
        )

    def _wait_for_workers(self, timeout_s: float = 90) -> None:
        """Until the master's status page lists every worker ALIVE."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            for process in self._processes:
                if process.poll() is not None:
                    raise RuntimeError(f"a Spark process exited with {process.returncode} (logs in {self.root})")
            try:
                with urllib.request.urlopen(f"http://{LOOPBACK}:{self.ui_port}/json/", timeout=2) as answer:
                    status = json.load(answer)
                if sum(w["state"] == "ALIVE" for w in status.get("workers", [])) >= self.workers:
                    return
            except OSError:
                pass
            time.sleep(0.5)
        raise RuntimeError(
            f"the standalone cluster's {self.workers} workers did not register in {timeout_s}s (logs in {self.root})"
        )
