"""The driver of a continuous run (`sink-engine run --continuous`) of one connector or several: one Spark job of
long-lived tasks serving every connector, each under its own lease, until it is asked to stop.

For each connector (in the order given) it opens its session (driver/session.py): the lease, waiting up to 1.5 times
its duration for a lapsing one (another holder that keeps it: LeaseHeldError, exit 3, for that connector), renewed
from then on; the start of each topic-partition (committed offset, the log start when that is below it, else
`auto.offset.reset`), DynamoDB first moved forward to what the target committed before a crash (`Target.recover`).
The connectors' partitions are spread over the job's tasks (continuous/spread.py: no more tasks than Spark has task
slots; a connector in at most `tasks.max` of them), and one Spark job runs the tasks in a thread of its own
(continuous/task.py: a task steps its shares of the connectors in turn, continuous/share.py). The tasks commit as
their files close; where the target's commit is the driver's (IcebergFormat: one snapshot per table and interval,
target/iceberg_tables/stream_commit.py) the connector's `CommitCoordinator` commits what they hand on.

Each connector ends alone (continuous/connector_run.py): a lease lost, a share that failed, a coordinator that failed
stop that connector (CONNECTOR_FAILED) while the others go on; the job ends when every connector has. On `stop`
(SIGTERM or SIGINT in the CLI) it asks every connector's tasks to stop through its lease item, waits for them at most
half of the longest `sink.lease.duration.ms` (then cancels the Spark job: what they closed is committed already,
what is open is read again by the next run), and settles each connector: its last commits, its lease released.
"""

from __future__ import annotations

import os
import threading
import time
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from sink_engine.aws_types import DynamoDBClient
from sink_engine.clock import now_ms
from sink_engine.config import SinkConfig
from sink_engine.continuous.connector_run import ConnectorRun, ContinuousSummary
from sink_engine.continuous.run_progress import RunProgress
from sink_engine.continuous.settings import ContinuousSettings
from sink_engine.continuous.share import ShareStart, StreamReport
from sink_engine.continuous.spread import Shares, spread, task_slots
from sink_engine.continuous.streams import StreamStart
from sink_engine.continuous.task import stream_task
from sink_engine.driver.session import ConnectorSession, open_session
from sink_engine.errors import SinkError
from sink_engine.run.metrics import publisher_from_environment
from sink_engine.run.spark_runner import SparkTaskError, executors_of_job_group
from sink_engine.target.choice import continuous_target_for
from sink_engine.target.contract import ContinuousTarget

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

CANCEL_WAIT_S = 30
__all__ = ["ContinuousSummary", "check_continuous", "run_connectors", "run_continuous", "stream_task"]


@dataclass(frozen=True)
class ContinuousOutcome:
    """How a connector of a continuous run ended: its summary, or the error it ended on (what it committed before
    is kept)."""

    connector: str
    summary: ContinuousSummary | None = None
    error: Exception | None = None


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
    """A continuous run of one connector until `stop` is set. Raises LeaseHeldError (another run holds the lease),
    LeaseLostError (this run lost its lease), TaskFailedError (a record or a fetch stopped a task; what came before
    it is committed), SparkTaskError (Spark gave up on a task). `say` is told when the lease is taken, when the tasks
    start and, while they run, the run's progress (continuous/run_progress.py)."""
    [outcome] = run_connectors([config], spark, lambda _: dynamodb, stop, clock, owner, lambda _: say)
    if outcome.error is not None:
        raise outcome.error
    assert outcome.summary is not None
    return outcome.summary


def run_connectors(
    configs: list[SinkConfig],
    spark: SparkSession,
    dynamodb_of: Callable[[SinkConfig], DynamoDBClient],
    stop: threading.Event,
    clock: Callable[[], int] = now_ms,
    owner: str | None = None,
    say_for: Callable[[str], Callable[[str], None]] = lambda _: lambda line: None,
) -> list[ContinuousOutcome]:
    """A continuous run of the connectors (module docstring) until `stop` is set or every one ended; each one's
    outcome, in the order of `configs`. `dynamodb_of(config)`: the DynamoDB client of a connector's offsets table;
    `say_for(connector)` is told that connector's lines."""
    started = time.monotonic()
    runs, outcomes = [], {}
    for config in configs:
        try:
            runs.append(_opened(config, dynamodb_of(config), clock, owner, stop, say_for(config.name)))
        except Exception as e:  # noqa: BLE001 - a connector that cannot start is its outcome: the others go on
            outcomes[config.name] = ContinuousOutcome(config.name, error=e)
    planned = _planned(runs)
    reports, executors = _serve(planned, spark, stop, clock, say_for) if planned else ([], ())
    for run in runs:
        summary = ContinuousSummary([r for r in reports if r.connector == run.name], time.monotonic() - started)
        summary.executors = executors
        outcomes[run.name] = ContinuousOutcome(run.name, None if run.error else summary, run.error)
    return [outcomes[config.name] for config in configs]


def _opened(
    config: SinkConfig,
    dynamodb: DynamoDBClient,
    clock: Callable[[], int],
    owner: str | None,
    stop: threading.Event,
    say: Callable[[str], None],
) -> ConnectorRun:
    """The connector's run, its lease taken and renewed from now on."""
    settings = check_continuous(config)
    lease_ms = settings.run.lease_ms
    session = open_session(config, dynamodb, clock, owner, 1.5 * lease_ms / 1000, stop)
    target = session.target
    assert isinstance(target, ContinuousTarget)  # check_continuous refused a target without the capability
    say(f"lease taken: epoch {session.token.epoch}, renewed every {lease_ms / 3000:.1f} s")
    try:
        coordinator = target.stream_coordinator(dynamodb, session.store, session.leases, session.token, clock)
    except BaseException:
        session.release()
        raise

    def progress(shares: int) -> RunProgress:
        return RunProgress(
            dynamodb, settings.run.offsets_table, session.token, shares, settings.metrics_interval_ms, say
        )

    return ConnectorRun(session, coordinator, progress, say)


def _planned(runs: list[ConnectorRun]) -> list[tuple[ConnectorRun, tuple[StreamStart, ...]]]:
    """Each connector's run with the starts of its partitions; a connector whose plan fails ends alone."""
    planned = []
    for run in runs:
        try:
            ranges, _ = run.session.plan()
        except SinkError as e:
            run.fail(e)
            continue
        planned.append((run, tuple(StreamStart(r.tp, r.start_offset) for r in ranges)))
    return planned


def _serve(
    planned: list[tuple[ConnectorRun, tuple[StreamStart, ...]]],
    spark: SparkSession,
    stop: threading.Event,
    clock: Callable[[], int],
    say_for: Callable[[str], Callable[[str], None]],
) -> tuple[list[StreamReport], tuple[str, ...]]:
    """Run the connectors' shares as one Spark job until it ends or `stop` is set; the reports and executors."""
    sessions = {run.name: run.session for run, _ in planned}
    tasks = spread([Shares(r.name, starts, r.session.run.tasks_max) for r, starts in planned], task_slots(spark))
    job = _SparkJob(spark, _group(sessions))
    publish = publisher_from_environment(os.environ, next(iter(sessions.values())).run.region) is not None
    plan = [[_share(sessions[name], items) for name, items in task] for task in tasks] or [[]]  # no partition: none
    job.start(plan, stream_task(publish, clock))
    for run, starts in planned:
        shares = sum(1 for task in tasks if any(name == run.name for name, _ in task))
        run.serve(shares)
        interval_s = check_continuous(run.session.config).metrics_interval_ms / 1000
        say_for(run.name)(
            f"tasks starting: {shares} for {len(starts)} partitions; a progress line once they run, then every "
            f"{interval_s:g} s (sink.continuous.metrics.interval.ms)"
        )
    runs = [run for run, _ in planned]
    while job.running and not stop.wait(0.5):
        for run in runs:
            run.tick()
    stopping = time.monotonic()
    longest_s = max(run.session.run.lease_ms for run in runs) / 2000
    if job.running:
        for run in runs:
            run.stop()
        job.wait(longest_s)
        job.cancel()
    error = job.error if not stop.is_set() else None
    for run in runs:
        run.end(
            [r for r in job.reports if r.connector == run.name],
            error,
            max(0.0, longest_s - (time.monotonic() - stopping)),
        )
    return job.reports, executors_of_job_group(spark, job.group)


def _share(session: ConnectorSession, starts: tuple[StreamStart, ...]) -> ShareStart:
    target = session.target
    assert isinstance(target, ContinuousTarget)
    return ShareStart(target, session.token, starts)


def _group(sessions: dict[str, ConnectorSession]) -> str:
    """The Spark job group: the connector's name and epoch when it is one, else the count and a unique suffix."""
    if len(sessions) == 1:
        [session] = sessions.values()
        return f"sink-engine-continuous-{session.name}-{session.token.epoch}"
    return f"sink-engine-continuous-{len(sessions)}-connectors-{uuid.uuid4().hex[:8]}"


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
        tasks: list[list[ShareStart]],
        function: Callable[[Iterable[list[ShareStart]]], Iterable[StreamReport]],
    ) -> None:
        def collect() -> None:
            context = self._spark.sparkContext
            context.setJobGroup(self.group, "continuous run", interruptOnCancel=True)
            try:
                self.reports = context.parallelize(tasks, len(tasks)).mapPartitions(function).collect()
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
