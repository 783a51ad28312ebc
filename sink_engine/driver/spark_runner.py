"""Run planned ranges as Spark tasks: one task per group of ranges, returning the ranges' results."""
from __future__ import annotations

import gc
import os
import sys
from pathlib import Path

from sink_engine.errors import SinkError
from sink_engine.model import PartitionRange, TaskResult
from sink_engine.target import Target

LOCAL_TASK_ATTEMPTS = 4


class SparkTaskError(SinkError):
    """The Spark job failed: a task failed more than `spark.task.maxFailures` times (a Python worker killed on
    every attempt, an executor lost, ...). Nothing of this run was committed."""


QUIET_LOGGING = (Path(__file__).parents[1] / "log4j2-quiet.properties").as_uri()


def spark_session(app_name: str):
    """The active session, or a new one; `local[*,4]` when no master is configured (spark-submit sets one).

    The `,4` is `spark.task.maxFailures` for local mode (which otherwise never retries a task): a task whose
    Python worker dies is run again, up to 4 attempts, as on a cluster, where Spark's default is 4 too."""
    from pyspark import SparkConf
    from pyspark.sql import SparkSession

    builder = SparkSession.builder.appName(app_name)
    if not SparkConf().contains("spark.master"):
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
        builder = (builder.master(f"local[*,{LOCAL_TASK_ATTEMPTS}]").config("spark.ui.enabled", "false")
                   .config("spark.driver.host", "127.0.0.1").config("spark.driver.bindAddress", "127.0.0.1")
                   .config("spark.sql.shuffle.partitions", "8")
                   # no stage bars and no JVM start-up notices on the run's terminal
                   .config("spark.ui.showConsoleProgress", "false")
                   .config("spark.driver.extraJavaOptions", f"-Dlog4j2.configurationFile={QUIET_LOGGING}"))
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def assign_tasks(ranges: list[PartitionRange], tasks: int) -> list[list[PartitionRange]]:
    """Spread ranges over at most `tasks` groups, largest first onto the least-loaded group."""
    groups: list[list[PartitionRange]] = [[] for _ in range(min(tasks, len(ranges)))]
    loads = [0] * len(groups)
    for planned in sorted(ranges, key=lambda r: (-len(r), r.topic, r.partition)):
        target = loads.index(min(loads))
        groups[target].append(planned)
        loads[target] += len(planned)
    return groups


def run_ranges(spark, target: Target, ranges: list[PartitionRange], progress_dir: str | None = None
               ) -> list[TaskResult]:
    """One Spark task per group of ranges (at most `tasks.max`), each writing its ranges to `target`; returns
    every range's result. Tasks report their progress in `progress_dir` when given (a directory of the driver's
    machine: local mode only).

    The groups are the elements of an RDD with one partition each: one stage, no shuffle, and nothing but the
    ranges and their results crosses the JVM (a DataFrame with `mapInArrow` cost a shuffle stage and Arrow
    round-trips: an empty 4-task job took 0.7-0.9 JVM and 0.9 Python CPU s that way, 0.34 and 0.3 this way)."""
    if not ranges:
        return []
    config = target.config
    groups = assign_tasks(ranges, config["tasks.max"])
    try:
        results = spark.sparkContext.parallelize(groups, len(groups)).mapPartitions(
            _task_function(target, progress_dir)).collect()
    except Exception as e:  # Py4JJavaError or pyspark's captured exceptions: the job was aborted
        raise SparkTaskError(f"the Spark job of connector '{config.name}' failed: {_job_failure(e)}") from e
    return results


def _job_failure(error: Exception) -> str:
    """The line of a Spark failure that says why the job was aborted, without the JVM stack traces."""
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    aborted = [line[line.index("Job aborted"):] for line in lines if "Job aborted" in line]
    return (aborted or lines or [type(error).__name__])[0][:600]


def _task_function(target: Target, progress_dir: str | None = None):
    """A task's work: its ranges, written to `target`, with settings built once where the task runs (the target
    too: an Iceberg catalog's S3 endpoint defaults to the worker's AWS_ENDPOINT_URL), and one Kafka consumer and
    one S3 client for all of them: a range pays neither connections nor authentication of its own."""
    def process(groups):
        from sink_engine.source.reader import RangeReader
        from sink_engine.storage.s3 import upload_client
        from sink_engine.task.settings import TaskSettings

        settle_worker()
        settings = TaskSettings.from_config(target.config)
        client = upload_client(settings.s3)
        with RangeReader(settings.source) as reader:
            for group in groups:
                for planned in group:
                    yield target.write_range(settings, planned, client, progress_dir, reader)

    return process


def warm_up(spark, tasks: int, modules: tuple[str, ...] = ()) -> None:
    """Start `tasks` Python workers, import the engine (and `modules`) and load S3's service model in them, so
    that later runs find them ready."""

    def imports(numbers):
        import importlib

        import boto3

        import sink_engine.task.run  # noqa: F401  (the import is the work)

        for module in modules:
            importlib.import_module(module)
        boto3.client("s3", region_name="us-east-1")  # the first client of a process reads the model: 0.14 CPU s
        settle_worker()
        return numbers

    spark.sparkContext.parallelize(range(tasks), tasks).mapPartitions(imports).collect()


def settle_worker() -> None:
    """Make a Python worker's later tasks cheap to start, once its imports are done (Spark reuses workers):
    - drop the Spark jar from `sys.path`: it holds no Python, but pyspark's worker invalidates the import
      caches before every task, and Python 3.11 then re-reads the directory of every zip and jar on the path
      (spark-core's has 5,000 entries: about 0.3 CPU s per task);
    - freeze the objects alive now (modules, clients' models) out of the cyclic garbage collector, which
      pyspark runs in full after every task and Python during it (about 0.2 CPU s per task otherwise)."""
    for entry in [p for p in sys.path if p.endswith(".jar")]:
        sys.path.remove(entry)
        sys.path_importer_cache.pop(entry, None)
    gc.freeze()
