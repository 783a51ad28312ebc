"""The driver of one bounded run: lease, plan, write (Spark tasks), commit, release."""

from __future__ import annotations

import logging
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import asdict, dataclass, field

from botocore.exceptions import BotoCoreError, ClientError

from sink_engine import events
from sink_engine.config import SinkConfig
from sink_engine.driver.planner import plan_ranges
from sink_engine.driver.run_timeout import RunWatchdog
from sink_engine.errors import RunStoppedError, RunTimeoutError, SinkError
from sink_engine.failpoints import failpoint
from sink_engine.model import PartitionRange, TaskResult, TopicPartition
from sink_engine.offsets import LeaseKeeper, Leases, LeaseToken, OffsetStore, table_exists
from sink_engine.progress import ProgressBoard
from sink_engine.run.committer import commit_results
from sink_engine.run.metrics import MetricsPublisher, RunMetrics
from sink_engine.run.plans import PlanStore
from sink_engine.run.preflight import missing_table
from sink_engine.run.settings import RunSettings
from sink_engine.run.spark_runner import RangesRun, SparkTaskError, run_ranges
from sink_engine.run.wall_clock import decide_wall_clock, needs_recorded_plan
from sink_engine.source.client_config import auto_offset_reset
from sink_engine.source.metadata import partition_watermarks
from sink_engine.source.settings import SourceSettings
from sink_engine.target.choice import target_for
from sink_engine.target.contract import Target


def now_ms() -> int:
    return int(time.time() * 1000)


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
    def files(self):
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


def plan(config: SinkConfig, store: OffsetStore) -> tuple[list[PartitionRange], dict[TopicPartition, int]]:
    """Read committed offsets and Kafka's watermarks and plan this run's ranges; with each partition's end offset
    (high watermark)."""
    source = SourceSettings.from_config(config)
    marks = partition_watermarks(source)
    ranges = plan_ranges(
        list(marks),
        store.committed(config.name),
        marks,
        auto_offset_reset(source),
        RunSettings.from_config(config).max_records_per_partition,
    )
    for planned in ranges:
        if planned.expired:
            events.emit(
                events.RECORDS_EXPIRED,
                logging.WARNING,
                connector=config.name,
                topic=planned.topic,
                partition=planned.partition,
                committed=planned.expected_committed,
                log_start=planned.start_offset,
                records=planned.expired,
            )
    return ranges, {tp: high for tp, (_, high) in marks.items()}


def run_job(
    config: SinkConfig,
    spark,
    dynamodb,
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
    started, started_wall = time.monotonic(), time.time()
    report_ignored_keys(config)
    run = RunSettings.from_config(config)
    table = run.offsets_table
    if not table_exists(dynamodb, table):
        raise SinkError(missing_table(table))
    leases, store = Leases(dynamodb, table, clock), OffsetStore(dynamodb, table, clock)
    duration = run.lease_ms
    token = leases.acquire(config.name, owner or uuid.uuid4().hex, duration)
    say(f"lease taken: epoch {token.epoch}")
    target = target_for(config)
    try:
        with LeaseKeeper(leases, token, duration):
            ranges, ends = plan(config, store)
            if target.recover(store, token, {r.topic for r in ranges}):
                ranges, ends = plan(config, store)  # DynamoDB caught up with what the target committed before a crash
            plans = PlanStore(dynamodb, table) if needs_recorded_plan(config) else None
            if plans:
                ranges = decide_wall_clock(config, store, plans, token, ranges, clock())
            events.emit(
                events.RUN_PLANNED,
                connector=config.name,
                epoch=token.epoch,
                ranges=[(r.topic, r.partition, r.start_offset, r.end_offset) for r in ranges],
            )
            planned = [r for r in ranges if len(r)]
            say(
                f"planned: {sum(len(r) for r in planned):,} records in {len(planned)} of {len(ranges)} partitions"
                + (f"; starting their tasks (at most tasks.max={run.tasks_max})" if planned else "")
            )
            watchdog = RunWatchdog(
                spark,
                config.name,
                run.timeout_ms,
                started_wall,
                stop,
                lambda: leases.request_stop(token),
                duration / 2000,
            )
            written = _write_ranges(spark, target, run, watchdog.bounded(planned), progress, watchdog)
            results = written.results
            summary = RunSummary(ranges, results, end_offsets=ends, executors=written.executors)
            events.emit(
                events.FILES_UPLOADED,
                connector=config.name,
                files=len(summary.files),
                records=summary.records_written,
                dropped=summary.records_dropped,
                bytes=summary.bytes_written,
            )
            failpoint("after_upload_before_commit")
            target.commit(results, leases, token, duration)
            summary.committed = commit_results(store, token, results + _unread(ranges))
            if plans:
                plans.forget(config.name, [r.tp for r in ranges])
    except Exception:
        release_lease(leases, token)
        raise
    release_lease(leases, token)
    summary.seconds = time.monotonic() - started
    figures = summary.metrics()
    events.emit(events.RUN_FINISHED, connector=config.name, **{**asdict(figures), "seconds": round(figures.seconds, 3)})
    if metrics:
        metrics.publish(config.name, figures, clock())
    errors = [r.error for r in results if r.error]
    if errors:
        raise TaskFailedError("; ".join(errors))
    return summary


def report_ignored_keys(config: SinkConfig) -> None:
    """One CONFIG_KEY_IGNORED warning per connector key no one knows (config.ignored)."""
    for ignored in config.ignored:
        events.emit(
            events.CONFIG_KEY_IGNORED,
            level=logging.WARNING,
            connector=config.name,
            key=ignored.key,
            reason=ignored.reason,
            suggestion=ignored.suggestion,
        )


def _write_ranges(
    spark,
    target: Target,
    run: RunSettings,
    ranges: list[PartitionRange],
    progress: ProgressBoard | None,
    watchdog: RunWatchdog,
) -> RangesRun:
    """The ranges' results and where they ran; RunTimeoutError when the watchdog had to cancel the Spark job."""
    if progress is not None:
        progress.start(ranges)
    try:
        with watchdog:
            return run_ranges(spark, target, ranges, run.tasks_max, progress.directory if progress else None)
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


def release_lease(leases: Leases, token: LeaseToken) -> None:
    """Let the lease go. When DynamoDB does not take that (the SDK's retries failed), the lease lapses by itself
    after `sink.lease.duration.ms`: the run's own outcome, not the release's, is what its caller must see."""
    try:
        leases.release(token)
    except (ClientError, BotoCoreError) as e:
        events.emit(
            events.LEASE_RELEASE_FAILED,
            level=logging.WARNING,
            connector=token.connector,
            epoch=token.epoch,
            error=str(e),
        )


def _unread(ranges: list[PartitionRange]) -> list[TaskResult]:
    """Empty ranges still pin a first start offset (a partition seen for the first time)."""
    return [TaskResult(range=r, next_offset=r.start_offset) for r in ranges if not len(r)]
