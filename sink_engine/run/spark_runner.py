"""Run planned ranges as Spark tasks: one task per group of ranges, returning the ranges' results."""

from __future__ import annotations

import gc
import os
import sys
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from sink_engine.aws import dynamodb_client
from sink_engine.clock import now_ms
from sink_engine.errors import SinkError
from sink_engine.model import PartitionRange, TaskResult
from sink_engine.offsets import Leases
from sink_engine.run.settings import RunSettings
from sink_engine.source.reader import RangeReader
from sink_engine.storage.s3 import upload_client
from sink_engine.target.contract import Target
from sink_engine.task.deadline import LeaseStopProbe
from sink_engine.task.settings import TaskSettings

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from sink_engine.task.deadline import LeaseStopProbe

LOCAL_TASK_ATTEMPTS = 4
STOP_CHECK_S = 5.0  # the most a bounded run's task reads its lease item for a stop request: one GetItem per task


class SparkTaskError(SinkError):
    """The Spark job failed: a task failed more than `spark.task.maxFailures` times (a Python worker killed on
    every attempt, an executor lost, ...). Nothing of this run was committed."""


QUIET_LOGGING = (Path(__file__).parents[1] / "log4j2-quiet.properties").as_uri()


def launched_by_spark_submit() -> bool:
    """Whether spark-submit started this Python process as the driver of an application (EMR Serverless starts
    every job so). spark-submit's PythonRunner starts the JVM first and hands it to the driver through
    `PYSPARK_GATEWAY_PORT`, so this is known before any JVM call. The obvious test is wrong:
    `SparkConf().contains("spark.master")` reads a plain Python dict until a SparkContext exists (no JVM behind
    it yet), so it is False under spark-submit too, and a master set by the builder would then override
    spark-submit's `--master` (every deployed run worked inside its driver that way)."""
    return "PYSPARK_GATEWAY_PORT" in os.environ


def spark_session(app_name: str, master: str | None = None) -> SparkSession:
    """The active session, or a new one. Under spark-submit (`launched_by_spark_submit`), Spark's own settings
    decide everything, `--master` included. Started directly (the CLI, tests, benchmarks), it runs on `master`,
    default `local[*,4]`, bound to loopback, with the quiet logging of a terminal tool.

    The `,4` is `spark.task.maxFailures` for local mode (which otherwise never retries a task): a task whose
    Python worker dies is run again, up to 4 attempts, as on a cluster, where Spark's default is 4 too. A
    `local-cluster[executors,cores,MB]` master runs executors as separate JVMs (Spark's own test mode), which
    retry failed tasks by that default."""
    from pyspark.sql import SparkSession

    builder = SparkSession.builder.appName(app_name)
    if not launched_by_spark_submit():
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
        builder = (
            builder.master(master or f"local[*,{LOCAL_TASK_ATTEMPTS}]")
            .config("spark.ui.enabled", "false")
            .config("spark.driver.host", "127.0.0.1")
            .config("spark.driver.bindAddress", "127.0.0.1")
            .config("spark.sql.shuffle.partitions", "8")
            # no stage bars and no JVM start-up notices on the run's terminal
            .config("spark.ui.showConsoleProgress", "false")
            .config("spark.driver.extraJavaOptions", f"-Dlog4j2.configurationFile={QUIET_LOGGING}")
        )
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def tasks_share_driver_process(spark: SparkSession) -> bool:
    """Whether tasks run inside the driver's JVM (a `local` master): only then do they share its machine,
    working directory and environment."""
    master = spark.sparkContext.master
    return master is not None and (master == "local" or master.startswith("local["))


def assign_tasks(ranges: list[PartitionRange], tasks: int) -> list[list[PartitionRange]]:
    """Spread ranges over at most `tasks` groups, largest first onto the least-loaded group."""
    groups: list[list[PartitionRange]] = [[] for _ in range(min(tasks, len(ranges)))]
    loads = [0] * len(groups)
    for planned in sorted(ranges, key=lambda r: (-len(r), r.topic, r.partition)):
        target = loads.index(min(loads))
        groups[target].append(planned)
        loads[target] += len(planned)
    return groups


@dataclass(frozen=True)
class RangesRun:
    """What the Spark job of a run's ranges gave: every range's result, and the ids of the executors whose tasks
    succeeded (`driver`: tasks that ran inside the driver's process; empty when Spark's status store could not be
    read)."""

    results: list[TaskResult]
    executors: tuple[str, ...] = ()


def run_ranges(
    spark: SparkSession,
    target: Target,
    group_id: str,
    ranges: list[PartitionRange],
    tasks_max: int,
    progress_dir: str | None = None,
) -> RangesRun:
    """One Spark job of the job group `group_id` (the run's own: what its watchdog cancels, where other connectors'
    runs in the same application go on), one Spark task per group of ranges (at most `tasks_max`, the run's
    `tasks.max`), each writing its ranges to `target`; returns every range's result and where the tasks ran. Tasks
    report their progress in `progress_dir` when given (a directory of the driver's machine: only for a master whose
    tasks share the driver's process, `tasks_share_driver_process`).

    The groups are the elements of an RDD with one partition each: one stage, no shuffle, and nothing but the
    ranges and their results crosses the JVM (a DataFrame with `mapInArrow` cost a shuffle stage and Arrow
    round-trips: an empty 4-task job took 0.7-0.9 JVM and 0.9 Python CPU s that way, 0.34 and 0.3 this way)."""
    if not ranges:
        return RangesRun([])
    config = target.config
    groups = assign_tasks(ranges, tasks_max)
    context = spark.sparkContext
    context.setJobGroup(group_id, f"write {len(ranges)} ranges of connector {config.name}")
    try:
        results = context.parallelize(groups, len(groups)).mapPartitions(_task_function(target, progress_dir)).collect()
    except Exception as e:  # Py4JJavaError or pyspark's captured exceptions: the job was aborted
        raise SparkTaskError(f"the Spark job of connector '{config.name}' failed: {_job_failure(e)}") from e
    finally:
        context.setLocalProperty("spark.jobGroup.id", None)  # type: ignore[arg-type]  # None removes it (the JVM's setLocalProperty); pyspark types only str
    return RangesRun(results, executors_of_job_group(spark, group_id))


def executors_of_job_group(spark: SparkSession, group_id: str) -> tuple[str, ...]:
    """The sorted ids of the executors on which tasks of the jobs of `group_id` succeeded, read from the driver's
    status store (the store Spark's UI and REST API read; it exists with the UI off). `driver` stands for the
    driver's own process (a local master). Empty when the store cannot be read: its Scala API is Spark's
    internals, reached through py4j."""
    context = spark.sparkContext
    try:
        store = context._jsc.sc().statusStore()
        executors = set()
        for job_id in context.statusTracker().getJobIdsForGroup(group_id):
            job = context.statusTracker().getJobInfo(job_id)
            for stage_id in job.stageIds if job else ():
                stage = context.statusTracker().getStageInfo(stage_id)
                attempts = range(stage.currentAttemptId + 1) if stage else range(1)
                for attempt in attempts:
                    tasks = store.taskList(stage_id, attempt, 2**31 - 1).iterator()
                    while tasks.hasNext():
                        task = tasks.next()
                        if task.status() == "SUCCESS":
                            executors.add(task.executorId())
        return tuple(sorted(executors))
    except Exception:  # noqa: BLE001 - where tasks ran is a figure of the run, never its failure
        return ()


def _job_failure(error: Exception) -> str:
    """The line of a Spark failure that says why the job was aborted, without the JVM stack traces."""
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    aborted = [line[line.index("Job aborted") :] for line in lines if "Job aborted" in line]
    return (aborted or lines or [type(error).__name__])[0][:600]


def _task_function(
    target: Target, progress_dir: str | None = None
) -> Callable[[Iterable[list[PartitionRange]]], Iterator[TaskResult]]:
    """A task's work: its ranges, written to `target`, with settings built once where the task runs (the target
    too: an Iceberg catalog's S3 endpoint defaults to the worker's AWS_ENDPOINT_URL), and one Kafka consumer and
    one S3 client for all of them: a range pays neither connections nor authentication of its own. The ranges stop
    early when the run is asked to stop (the lease item's stop request, task/deadline.py's `LeaseStopProbe`)."""

    def process(groups: Iterable[list[PartitionRange]]) -> Iterator[TaskResult]:
        settle_worker()
        settings = TaskSettings.from_config(target.config)
        client = upload_client(settings.s3)
        stop = _stop_probe(target)
        with RangeReader(settings.source) as reader:
            for group in groups:
                for planned in group:
                    yield target.write_range(settings, planned, client, progress_dir, reader, stop)

    return process


def _stop_probe(target: Target) -> LeaseStopProbe:
    """A bounded run's task's `LeaseStopProbe`: every quarter of the lease, at most every STOP_CHECK_S."""
    run = RunSettings.from_config(target.config)
    every_s = min(STOP_CHECK_S, run.lease_ms / 4000)
    return LeaseStopProbe(
        lambda: Leases(dynamodb_client(run.region), run.offsets_table, now_ms), run.connector, every_s
    )


def warm_up(spark: SparkSession, tasks: int, modules: tuple[str, ...] = ()) -> None:
    """Start `tasks` Python workers, import the engine (and `modules`) and load S3's service model in them, so
    that later runs find them ready."""

    def imports(numbers: Iterable[int]) -> Iterable[int]:
        import importlib

        import boto3

        for module in ("sink_engine.task.run", *modules):  # the import is the work
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
