"""A continuous task's share of one connector: that connector's topic-partitions in the task, read through a consumer
of the connector's own (its client settings: brokers, credentials, `consumer.override.*`), each one a
`PartitionStream`, committing under the connector's lease each time a commit point moves (the target's
`StreamCommits`: the offsets for S3 objects; IcebergFormat stages its data files for the driver's snapshot,
target/iceberg_tables/stream_stage.py, and its wall-clock cuts are on `iceberg.control.commit.interval-ms`
boundaries).

A step (continuous/task.py runs the steps of its shares in turn): take what the consumer fetched (up to BATCH
records, waiting at most `wait_s`), feed each partition's records to its stream, cut the streams whose
`rotate.schedule.interval.ms` boundary passed with files open (the cut is recorded as a plan first, `run/plans.py`,
so that a retry of this task, or a bounded run, cuts at the same offset), then upload and commit every stream whose
commit point moved, in one transaction per 99 partitions with the lease check, as soon as their uploads are done
(reading goes on while they upload; a stream is not cut again before its last cut is committed: the recorded plan
holds one cut). Every STOP_CHECK_S (at most a quarter of the lease) the lease item is read: a stop requested by the
driver (SIGTERM, or another share of the connector failed), or a lease that is no longer this run's, ends the share.

A share ends alone: a record error not tolerated, a fetch Kafka refuses, a lost lease or any other error of its own
ends it (what it closed before is committed, unless the lease was lost), and the task's other shares go on. Its end is
put in the task's PROGRESS item of the connector (`ended`, `error`) for the driver, which stops the connector's other
shares and reports it. A retried task (its executor lost) starts from the committed offsets and repeats a recorded
cut.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from confluent_kafka import TopicPartition as KafkaTP

from sink_engine.aws import dynamodb_client
from sink_engine.continuous import expired
from sink_engine.continuous.progress import TaskReporter
from sink_engine.continuous.schedule import Schedule, cut_due
from sink_engine.continuous.settings import ContinuousSettings
from sink_engine.continuous.streams import StreamStart, feed, open_streams
from sink_engine.errors import SinkError
from sink_engine.model import TopicPartition
from sink_engine.offsets import Leases, LeaseToken, OffsetStore
from sink_engine.run.plans import PlanStore
from sink_engine.source.consumer import make_consumer
from sink_engine.storage.s3 import upload_client
from sink_engine.storage.uploader import Uploader
from sink_engine.target.contract import ContinuousTarget
from sink_engine.task.settings import TaskSettings

BATCH = 10_000
STOP_CHECK_S = 5.0  # at most (a quarter of the lease): one consistent GetItem per share; 64 shares read 13 items/s
FETCH_WAIT_MS = 100  # librdkafka's fetch.wait.max.ms: a fetch at a partition's end is answered within it


@dataclass(frozen=True)
class ShareStart:
    """What a task is to serve of one connector: its target (its config), its lease token and its partitions."""

    target: ContinuousTarget
    token: LeaseToken
    starts: tuple[StreamStart, ...]


@dataclass
class StreamReport:
    """What a task did for one topic-partition of a connector until its share ended."""

    connector: str
    tp: TopicPartition
    committed: int
    records_read: int = 0
    records_written: int = 0
    files: int = 0
    error: str | None = None
    lease_lost: bool = False


class ConnectorShare:
    """A task's share of one connector (module docstring): `step(wait_s)` until `ended`, then `close()`."""

    def __init__(self, start: ShareStart, publish: bool, clock: Callable[[], int], task: int) -> None:
        target, token = start.target, start.token
        settings, continuous = TaskSettings.from_config(target.config), ContinuousSettings.from_config(target.config)
        table = continuous.run.offsets_table
        dynamodb = dynamodb_client(continuous.run.region)
        store = OffsetStore(dynamodb, table, clock)
        self._token, self._clock, self._timeout_s = token, clock, settings.source.timeout_ms / 1000
        self._leases, self._plans = Leases(dynamodb, table, clock), PlanStore(dynamodb, table)
        self._uploader = Uploader(upload_client(settings.s3), settings.bucket, settings.object_options)
        self._commits = target.stream_commits(dynamodb, store, token, self._uploader)
        self.streams = open_streams(
            target, settings, token, store, self._plans, self._commits, start.starts, self._uploader
        )
        self._schedule = Schedule(target.stream_cut_interval_ms, continuous.cuts.zone)
        self._consumer = make_consumer(
            settings.source, **{"fetch.wait.max.ms": FETCH_WAIT_MS, **expired.CONSUMER_SETTINGS}
        )
        self._consumer.assign([KafkaTP(tp.topic, tp.partition, s.processed) for tp, s in self.streams.items()])
        self._reporter = TaskReporter(continuous, self.streams, self._consumer, publish, clock, (dynamodb, token, task))
        self._check_every_s = min(STOP_CHECK_S, continuous.run.lease_ms / 4000)  # well within the driver's wait
        self._checked = 0.0
        self.error: str | None = None
        self.lost = self.ended = False

    @property
    def connector(self) -> str:
        return self._token.connector

    def step(self, wait_s: float) -> int:
        """One cycle (module docstring); the records fetched. A SinkError ends the share (`error`)."""
        try:
            messages = self._consumer.consume(num_messages=BATCH, timeout=wait_s)
            feed(self.streams, messages)
            expired.skip_expired(self._consumer, self.streams, messages, self.connector, self._timeout_s)
        except SinkError as e:  # a record error not tolerated, a fetch that failed: commit what came before
            self.error, self.ended = str(e), True
            return 0
        self._commit()
        if not self.ended:
            self._reporter.tick()
            self._look_at_lease()
        return len(messages)

    def _commit(self) -> None:
        commits, schedule, now = self._commits, self._schedule, self._clock()
        if schedule.passed(now):  # what was committed since the last look lets a stream be cut again
            self.lost = commits.refresh(self.streams.values())
        due = [s for s in self.streams.values() if schedule.due(s, now)] if not self.lost else []
        self.lost = (
            self.lost or cut_due(self._plans, self._token, due, now) or commits.commit(self.streams.values(), False)
        )
        self.ended = self.ended or self.lost

    def _look_at_lease(self) -> None:
        if time.monotonic() - self._checked < self._check_every_s:
            return
        self._checked = time.monotonic()
        lease = self._leases.describe(self.connector)
        if lease is None or lease["epoch"] != self._token.epoch:
            self.lost = self.ended = True
        elif lease["stop_requested"]:
            self.ended = True
        else:
            self.lost = self.ended = self._commits.refresh(self.streams.values())

    def fail(self, error: BaseException) -> None:
        """An error of the engine's own ended the share (the task's other shares go on)."""
        self.error, self.ended = f"{type(error).__name__}: {error}", True

    def close(self) -> list[StreamReport]:
        """Commit what closed since the last commit (its uploads awaited; unless the lease was lost), close the
        consumer, put the share's end in its PROGRESS item; a report per topic-partition."""
        try:
            if not self.lost:
                streams = self.streams.values()
                self.lost = self._commits.refresh(streams) or self._commits.commit(streams, wait=True)
        except Exception as e:  # noqa: BLE001 - the share ends either way; its error is its report
            self.error = self.error or f"{type(e).__name__}: {e}"
        try:
            self._reporter.end(self.error, self.lost)  # (its lag asks the consumer)
        finally:
            self._consumer.close()
            self._uploader.close()
        return [
            StreamReport(
                self.connector,
                tp,
                s.committed,
                s.records_read,
                s.records_written,
                s.files_written,
                self.error,
                self.lost,
            )
            for tp, s in self.streams.items()
        ]
