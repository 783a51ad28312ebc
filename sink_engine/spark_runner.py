"""Run planned ranges as Spark tasks with `mapInArrow`; each task returns its results as JSON rows."""
from __future__ import annotations

import json
import os
import sys
from dataclasses import asdict
from pathlib import Path

from sink_engine.config import SinkConfig
from sink_engine.errors import SinkError
from sink_engine.model import PartitionRange, TaskResult

RESULT_SCHEMA = "result string"
LOCAL_TASK_ATTEMPTS = 4


class SparkTaskError(SinkError):
    """The Spark job failed: a task failed more than `spark.task.maxFailures` times (a Python worker killed on
    every attempt, an executor lost, ...). Nothing of this run was committed."""


QUIET_LOGGING = Path(__file__).with_name("log4j2-quiet.properties").as_uri()


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


def run_ranges(spark, config: SinkConfig, ranges: list[PartitionRange]) -> list[TaskResult]:
    """One Spark task per group of ranges (at most `tasks.max`); returns every range's result."""
    if not ranges:
        return []
    groups = assign_tasks(ranges, config["tasks.max"])
    rows = [(g, json.dumps(asdict(r))) for g, group in enumerate(groups) for r in group]
    rdd = spark.sparkContext.parallelize(rows, len(groups)).partitionBy(len(groups), lambda g: g)
    frame = spark.createDataFrame(rdd.map(lambda row: (row[1],)), "range string")
    try:
        collected = frame.mapInArrow(_task_function(config), RESULT_SCHEMA).collect()
    except Exception as e:  # Py4JJavaError or pyspark's captured exceptions: the job was aborted
        raise SparkTaskError(f"the Spark job of connector '{config.name}' failed: {_job_failure(e)}") from e
    return [TaskResult.from_dict(json.loads(row.result)) for row in collected]


def _job_failure(error: Exception) -> str:
    """The line of a Spark failure that says why the job was aborted, without the JVM stack traces."""
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    aborted = [line[line.index("Job aborted"):] for line in lines if "Job aborted" in line]
    return (aborted or lines or [type(error).__name__])[0][:600]


def _task_function(config: SinkConfig):
    def process(batches):
        import pyarrow as pa

        from sink_engine.task import run_range

        schema = pa.schema([("result", pa.string())])
        for batch in batches:
            for text in batch.column(0).to_pylist():
                result = run_range(config, PartitionRange(**json.loads(text)))
                yield pa.RecordBatch.from_pylist([{"result": json.dumps(result.to_dict())}], schema=schema)

    return process


def warm_up(spark, tasks: int) -> None:
    """Start `tasks` Python workers and import the engine in them, so that later runs find them ready."""

    def imports(batches):
        import pyarrow as pa

        import sink_engine.task  # noqa: F401  (the import is the work)

        for batch in batches:
            yield pa.RecordBatch.from_pylist([{"result": "ready"}] * batch.num_rows,
                                             schema=pa.schema([("result", pa.string())]))

    rdd = spark.sparkContext.parallelize([(i,) for i in range(tasks)], tasks)
    spark.createDataFrame(rdd, "n int").mapInArrow(imports, RESULT_SCHEMA).collect()
