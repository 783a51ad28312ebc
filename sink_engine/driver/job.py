"""The driver of one bounded run of a connector: its session (lease, plan: driver/session.py), its ranges written in one
Spark job of the run's own job group, the commit, the release."""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING

from sink_engine import events
from sink_engine.aws_types import DynamoDBClient
from sink_engine.clock import now_ms
from sink_engine.config import SinkConfig
from sink_engine.driver.run_timeout import RunWatchdog
from sink_engine.driver.session import ConnectorSession, open_session
from sink_engine.errors import RunStoppedError, RunTimeoutError, SinkError
from sink_engine.failpoints import failpoint
from sink_engine.model import ClosedFile, PartitionRange, TaskResult, TopicPartition
from sink_engine.progress import ProgressBoard
from sink_engine.run.metrics import MetricsPublisher, RunMetrics
from sink_engine.run.settings import RunSettings
from sink_engine.run.spark_runner import RangesRun, SparkTaskError, run_ranges
from sink_engine.run.wall_clock import decide_wall_clock
from sink_engine.target.contract import Target

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


class TaskFailedError(SinkError):
    """One or more ranges stopped on an error; what they closed before it was committed."""


@dataclass
class RunSummary:
    ranges: list[PartitionRange]
    results: list[TaskResult]
    committed: list[TaskResult] = field(default_factory=list)
    seconds: float = 0.0
    end_offsets: dict[TopicPartition, int] = field(default_factory=dict)  # high watermarks at planning
    executors: tuple[str, ...] = ()  # Spark executors whose tasks succeeded ("driver": in the driver's process)

    @property
    def files(self) -> list[ClosedFile]:
        return [f for r in self.results for f in r.files]

    @property
    def records_written(self) -> int:
        return sum(f.record_count for f in self.files)

    @property
    def records_dropped(self) -> int:
        """Records the single message transforms dropped (settled: their offsets are committed)."""
        return sum(r.records_dropped for r in self.results)

    @property
    def bytes_written(self) -> int:
        return sum(f.size_bytes for f in self.files)

    @property
    def dead_letters(self) -> int:
        """Records of the committed results sent to the dead-letter queue."""
        return sum(n for r in self.committed for n in r.dead_letters.values())

    @property
    def lag(self) -> int:
        """Records left after the run: per planned partition, its end offset less its committed next offset
        (this run's commit, else the start the plan read from)."""
        position = {r.range.tp: r.next_offset for r in self.committed}
        return sum(
            max(0, self.end_offsets.get(r.tp, r.end_offset) - position.get(r.tp, r.start_offset)) for r in self.ranges
        )

    def metrics(self) -> RunMetrics:
        return RunMetrics(
            records=self.records_written,
            bytes=self.bytes_written,
            files=len(self.files),
            dead_letters=self.dead_letters,
            dropped=self.records_dropped,
            seconds=self.seconds,
            lag=self.lag,
            executors=len(self.executors),
            tasks_in_driver="driver" in self.executors,
        )


def run_job(
    config: SinkConfig,
    spark: SparkSession,
    dynamodb: DynamoDBClient,
    clock: Callable[[], int] = now_ms,
    owner: str | None = None,
    progress: ProgressBoard | None = None,
    metrics: MetricsPublisher | None = None,
    say: Callable[[str], None] = lambda line: None,
    stop: threading.Event | None = None,
) -> RunSummary:
    """One bounded run. Raises LeaseHeldError (another run is active), CommitConflictError (this run
    lost its lease), TaskFailedError (a record or upload failed, or `stop` was set while the tasks ran and they stopped
    early; what came before it is committed), RunStoppedError (`stop` was set and a task did not stop within half the
    lease: the Spark job was cancelled, nothing committed).
    `progress` shows the tasks' progress while they run (local mode); `metrics` publishes the run's figures once its
    commits are done, also before a TaskFailedError; `say` is told when the lease is taken and what was planned."""
    started = _Started(time.monotonic(), time.time())
    session = open_session(config, dynamodb, clock, owner)
    say(f"lease taken: epoch {session.token.epoch}")
    try:
        with session.keeper():
            summary = _write_and_commit(session, spark, started.wall, progress, say, stop, clock)
    except Exception:
        session.release()
        raise
    session.release()
    summary.seconds = time.monotonic() - started.monotonic
    figures = summary.metrics()
    events.emit(events.RUN_FINISHED, connector=config.name, **{**asdict(figures), "seconds": round(figures.seconds, 3)})
    if metrics:
        metrics.publish(config.name, figures, clock())
    errors = [r.error for r in summary.results if r.error]
    if errors:
        raise TaskFailedError("; ".join(errors))
    return summary


@dataclass(frozen=True)
class _Started:
    monotonic: float
    wall: float


def _write_and_commit(
    session: ConnectorSession,
    spark: SparkSession,
    started_wall: float,
    progress: ProgressBoard | None,
    say: Callable[[str], None],
    stop: threading.Event | None,
    clock: Callable[[], int],
) -> RunSummary:
    """Plan the session's ranges, write them in one Spark job of its own job group, and commit what was written."""
    run, ranges, ends = session.run, *session.plan()
    if session.plans:
        ranges = decide_wall_clock(session.config, session.store, session.plans, session.token, ranges, clock())
    events.emit(
        events.RUN_PLANNED,
        connector=session.name,
        epoch=session.token.epoch,
        ranges=[(r.topic, r.partition, r.start_offset, r.end_offset) for r in ranges],
    )
    planned = [r for r in ranges if len(r)]
    say(
        f"planned: {sum(len(r) for r in planned):,} records in {len(planned)} of {len(ranges)} partitions"
        + (f"; starting their tasks (at most tasks.max={run.tasks_max})" if planned else "")
    )
    group = f"sink-engine-{session.name}-{uuid.uuid4().hex[:12]}"
    ask_tasks = lambda: session.leases.request_stop(session.token)  # noqa: E731
    watchdog = RunWatchdog(
        spark, group, session.name, run.timeout_ms, started_wall, stop, ask_tasks, run.lease_ms / 2000
    )
    written = _write_ranges(spark, session.target, run, group, watchdog.bounded(planned), progress, watchdog)
    summary = RunSummary(ranges, written.results, end_offsets=ends, executors=written.executors)
    events.emit(
        events.FILES_UPLOADED,
        connector=session.name,
        files=len(summary.files),
        records=summary.records_written,
        dropped=summary.records_dropped,
        bytes=summary.bytes_written,
    )
    failpoint("after_upload_before_commit")
    summary.committed = session.commit(written.results, ranges)
    if session.plans:
        session.plans.forget(session.name, [r.tp for r in ranges])
    return summary


def _write_ranges(
    spark: SparkSession,
    target: Target,
    run: RunSettings,
    group: str,
    ranges: list[PartitionRange],
    progress: ProgressBoard | None,
    watchdog: RunWatchdog,
) -> RangesRun:
    """The ranges' results and where they ran; RunTimeoutError when the watchdog had to cancel the Spark job."""
    if progress is not None:
        progress.start(ranges)
    try:
        with watchdog:
            return run_ranges(spark, target, group, ranges, run.tasks_max, progress.directory if progress else None)
    except SparkTaskError as e:
        if watchdog.stopped:
            raise RunStoppedError(
                f"run of connector '{run.connector}' was asked to stop and a task was still running half of "
                f"sink.lease.duration.ms={run.lease_ms} later: its Spark job was cancelled, nothing was committed and "
                f"the next run goes on from the last commit"
            ) from e
        if not watchdog.fired:
            raise
        raise RunTimeoutError(
            f"run of connector '{run.connector}' passed sink.run.timeout.ms="
            f"{run.timeout_ms} and a task was still running "
            f"{watchdog.grace_s:g}s later: its Spark job was cancelled, nothing was committed and "
            f"the next run goes on from the last commit"
        ) from e
    finally:
        if progress is not None:
            progress.stop()
