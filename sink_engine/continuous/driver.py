"""The driver of a continuous run (`sink-engine run --continuous`): one Spark job of long-lived tasks under the
connector's lease, until it is asked to stop.

It takes the lease as a bounded run does, waiting up to 1.5 times its duration for a lapsing one (another holder that
keeps it: LeaseHeldError, exit 3), and keeps renewing it, plans each topic-partition's start once (committed offset,
the log start when that is below it, else `auto.offset.reset`), spreads the partitions over at most `tasks.max`
tasks (no more than Spark has task slots, `task_slots`: a task that never starts would hold its partitions back), and
runs them as one Spark job in a thread of its own. The tasks commit as their files close (continuous/task.py); where
the target's commit is the driver's (IcebergFormat: one snapshot per table and interval,
target/iceberg_tables/stream_commit.py) the driver first moves DynamoDB forward to what the target committed before a
crash (`Target.recover`) and, while the tasks run, lets the target's `CommitCoordinator` commit what they hand on, and
once more after they ended. On `stop` (SIGTERM or SIGINT in the CLI) it asks the tasks to stop through the lease
item, waits for them at most half of `sink.lease.duration.ms` (then cancels the Spark job: what they closed is
committed already, what is open is read again by the next run), and releases the lease.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from sink_engine.aws_types import DynamoDBClient
from sink_engine.clock import now_ms
from sink_engine.config import SinkConfig
from sink_engine.continuous.run_progress import RunProgress
from sink_engine.continuous.settings import ContinuousSettings
from sink_engine.continuous.task import StreamReport, StreamStart, stream_task
from sink_engine.driver.job import TaskFailedError
from sink_engine.driver.session import open_session
from sink_engine.errors import LeaseLostError, SinkError
from sink_engine.offsets import LeaseKeeper
from sink_engine.run.metrics import publisher_from_environment
from sink_engine.run.spark_runner import SparkTaskError, executors_of_job_group
from sink_engine.target.choice import continuous_target_for
from sink_engine.target.contract import CommitCoordinator, ContinuousTarget

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

CANCEL_WAIT_S = 30


@dataclass
class ContinuousSummary:
    reports: list[StreamReport] = field(default_factory=list)
    seconds: float = 0.0
    executors: tuple[str, ...] = ()

    @property
    def records_written(self) -> int:
        return sum(r.records_written for r in self.reports)

    @property
    def files(self) -> int:
        return sum(r.files for r in self.reports)


def check_continuous(config: SinkConfig) -> ContinuousSettings:
    """The run's settings; ConfigError naming the key of what a continuous run cannot do."""
    continuous_target_for(config)
    return ContinuousSettings.from_config(config)


def run_continuous(
    config: SinkConfig,
    spark: SparkSession,
    dynamodb: DynamoDBClient,
    stop: threading.Event,
    clock: Callable[[], int] = now_ms,
    owner: str | None = None,
    say: Callable[[str], None] = lambda line: None,
) -> ContinuousSummary:
    """Run until `stop` is set (see the module docstring). Raises LeaseHeldError (another run holds the lease),
    LeaseLostError (this run lost its lease), TaskFailedError (a record or a fetch stopped a task; what came
    before it is committed), SparkTaskError (Spark gave up on a task). `say` is told when the lease is taken, when
    the tasks start and, while they run, the run's progress (continuous/run_progress.py)."""
    settings_of = check_continuous(config)
    settings = settings_of.run
    started = time.monotonic()
    duration = settings.lease_ms
    session = open_session(config, dynamodb, clock, owner, 1.5 * duration / 1000, stop)
    token = session.token
    target = session.target
    assert isinstance(target, ContinuousTarget)  # check_continuous refused a target without the capability
    say(f"lease taken: epoch {token.epoch}, renewed every {duration / 3000:.1f} s")
    summary = ContinuousSummary()
    try:
        with session.keeper() as keeper:
            ranges, _ = session.plan()
            groups = _spread(
                [StreamStart(r.tp, r.start_offset) for r in ranges],
                min(settings.tasks_max, task_slots(spark)),
            )
            coordinator = target.stream_coordinator(dynamodb, session.store, session.leases, token, clock)
            job = _SparkJob(spark, f"sink-engine-continuous-{config.name}-{token.epoch}")
            publish = publisher_from_environment(os.environ, settings.region) is not None
            job.start(groups, stream_task(target, token, publish, clock))
            say(
                f"tasks starting: {len(groups)} for {len(ranges)} partitions; a progress line once they run, then every "
                f"{settings_of.metrics_interval_ms / 1000:g} s (sink.continuous.metrics.interval.ms)"
            )
            progress = RunProgress(
                dynamodb, settings.offsets_table, token, len(groups), settings_of.metrics_interval_ms, say
            )
            failure = _watch(job, keeper, stop, coordinator, progress)
            stopping = time.monotonic()
            if job.running:
                session.leases.request_stop(token)
                job.wait(duration / 2000)
                job.cancel()
            summary.reports, summary.executors = job.reports, executors_of_job_group(spark, job.group)
            if keeper.lost or any(r.lease_lost for r in summary.reports):
                raise LeaseLostError(config.name)
            if failure is not None:
                raise failure
            if coordinator is not None:  # what the tasks handed on before they ended
                coordinator.finish(max(0.0, duration / 2000 - (time.monotonic() - stopping)))
            if job.error is not None and not stop.is_set():
                raise job.error
    finally:
        session.release()
        summary.seconds = time.monotonic() - started
    failed = [r for r in summary.reports if r.error]
    if failed:
        raise TaskFailedError("; ".join(f"{r.tp}: {r.error}" for r in failed))
    return summary


def _watch(
    job: _SparkJob,
    keeper: LeaseKeeper,
    stop: threading.Event,
    coordinator: CommitCoordinator | None,
    progress: RunProgress,
) -> SinkError | None:
    """Look at the job every half second, letting the coordinator commit and the progress be said, until it ends, the
    lease is lost, `stop` is set or the coordinator fails (that SinkError is returned)."""
    while job.running and not keeper.lost and not stop.wait(0.5):
        progress.tick()
        if coordinator is None:
            continue
        try:
            coordinator.tick()
        except SinkError as e:
            return e
    return None


def task_slots(spark: SparkSession) -> int:
    """How many tasks the job can run at once: `spark.executor.instances` x `spark.executor.cores` when the job's
    settings name them (EMR's executors may register after the driver starts, and Spark's default parallelism counts
    only those registered), else Spark's default parallelism."""
    conf = spark.sparkContext.getConf()
    instances, cores = conf.get("spark.executor.instances"), conf.get("spark.executor.cores")
    if instances and cores and conf.get("spark.dynamicAllocation.enabled", "false") == "false":
        return int(instances) * int(cores)
    return spark.sparkContext.defaultParallelism


def _spread(starts: list[StreamStart], tasks: int) -> list[list[StreamStart]]:
    """The topic-partitions dealt round-robin over at most `tasks` groups."""
    count = max(1, min(tasks, len(starts)))
    return [starts[i::count] for i in range(count)]


class _SparkJob:
    """The continuous run's Spark job, collected in a thread of its own: `reports` once it ended, `error` if Spark
    gave up on it."""

    def __init__(self, spark: SparkSession, group: str) -> None:
        self._spark, self.group = spark, group
        self.reports: list[StreamReport] = []
        self.error: SinkError | None = None
        self._thread: threading.Thread | None = None

    def start(
        self,
        groups: list[list[StreamStart]],
        function: Callable[[Iterable[list[StreamStart]]], Iterable[StreamReport]],
    ) -> None:
        def collect() -> None:
            context = self._spark.sparkContext
            context.setJobGroup(self.group, "continuous run", interruptOnCancel=True)
            try:
                self.reports = context.parallelize(groups, len(groups)).mapPartitions(function).collect()
            except Exception as e:  # noqa: BLE001 - Py4JJavaError or pyspark's captured exceptions: Spark gave up
                self.error = SparkTaskError(f"the continuous Spark job failed: {e}".splitlines()[0][:600])

        self._thread = threading.Thread(target=collect, name="continuous-job", daemon=True)
        self._thread.start()

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def wait(self, seconds: float) -> None:
        if self._thread is not None:
            self._thread.join(seconds)

    def cancel(self) -> None:
        """Cancel the job if it still runs, and wait for its thread."""
        if self.running:
            self._spark.sparkContext.cancelJobGroup(self.group)
            self.wait(CANCEL_WAIT_S)
