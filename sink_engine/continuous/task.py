"""A continuous run's Spark task: one consumer for its topic-partitions, one `PartitionStream` each, kept for as long
as the task runs, committing under the run's lease each time a commit point moves (the target's `StreamCommits`:
the offsets for S3 objects; IcebergFormat stages its data files for the driver's snapshot,
target/iceberg_tables/stream_stage.py,
and its wall-clock cuts are on `iceberg.control.commit.interval-ms` boundaries).

A cycle: fetch what arrived (up to BATCH records, waiting at most POLL_S), feed each partition's records to its
stream, cut the streams whose `rotate.schedule.interval.ms` boundary passed with files open (the cut is recorded as
a plan first, `run/plans.py`, so that a retry of this task, or a bounded run, cuts at the same offset), then
upload and commit every stream whose commit point moved, in one transaction per 99 partitions with the lease
check, as soon as their uploads are done (reading goes on while they upload; a stream is not cut again before its
last cut is committed: the recorded plan holds one cut). Every STOP_CHECK_S (at most a quarter of the lease) the
lease item is read: a stop requested by the driver (SIGTERM), or a lease that is no longer this run's, ends the
task; on a stop it first commits what it closed. A retried task (its executor lost) starts from the committed
offsets and repeats a recorded cut.
"""

from __future__ import annotations

import logging
import sys
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import tzinfo
from itertools import groupby
from typing import TYPE_CHECKING

from confluent_kafka import KafkaError, Message
from confluent_kafka import TopicPartition as KafkaTP

from sink_engine.aws import dynamodb_client
from sink_engine.clock import now_ms
from sink_engine.continuous import expired
from sink_engine.continuous.progress import TaskReporter
from sink_engine.continuous.settings import ContinuousSettings
from sink_engine.errors import CommitConflictError, SinkError, SourceError
from sink_engine.failpoints import task_failpoint
from sink_engine.model import PartitionRange, TopicPartition
from sink_engine.offsets import Leases, LeaseToken, OffsetStore
from sink_engine.partition.time_buckets import next_rotation_ms
from sink_engine.records import RecordChunk
from sink_engine.run.plans import PlanStore
from sink_engine.run.spark_runner import settle_worker
from sink_engine.source.consumer import fetch_failure, make_consumer
from sink_engine.storage.s3 import upload_client
from sink_engine.storage.uploader import Uploader
from sink_engine.target.contract import ContinuousTarget
from sink_engine.task.settings import TaskSettings
from sink_engine.task.stream import PartitionStream

if TYPE_CHECKING:
    from sink_engine.target.contract import StreamCommits

BATCH = 10_000
POLL_S = 0.2  # the longest a cycle waits for records: what a cut or a stop waits behind at most
STOP_CHECK_S = 5.0  # at most (a quarter of the lease): one consistent GetItem per task; 64 tasks read 13 items/s
FETCH_WAIT_MS = 100  # librdkafka's fetch.wait.max.ms: a fetch at a partition's end is answered within it


@dataclass(frozen=True)
class StreamStart:
    """A topic-partition of a continuous run and where the driver's plan starts it: the committed offset, the log
    start when retention left the committed offset below it (the driver logged RECORDS_EXPIRED), or
    `auto.offset.reset` against the watermarks when nothing is committed."""

    tp: TopicPartition
    planned_offset: int


@dataclass
class StreamReport:
    """What a task did for one topic-partition until it ended."""

    tp: TopicPartition
    committed: int
    records_read: int = 0
    records_written: int = 0
    files: int = 0
    error: str | None = None
    lease_lost: bool = False


@dataclass
class _Schedule:
    """Wall-clock cut boundaries of one task's streams (`ContinuousTarget.stream_cut_interval_ms`; off when not
    positive)."""

    interval_ms: int
    zone: tzinfo
    next_ms: dict[TopicPartition, int] = field(default_factory=dict)

    def passed(self, now: int) -> bool:
        """Whether a boundary of some stream has passed (what was committed since may let it be cut)."""
        return self.interval_ms > 0 and any(now >= boundary for boundary in self.next_ms.values())

    def due(self, stream: PartitionStream, now: int) -> bool:
        """Whether `stream` must be cut now: a boundary passed since its last look and files are open."""
        if self.interval_ms <= 0:
            return False
        boundary = self.next_ms.setdefault(stream.tp, next_rotation_ms(now, self.interval_ms, self.zone))
        if now < boundary:
            return False
        self.next_ms[stream.tp] = next_rotation_ms(now, self.interval_ms, self.zone)
        return stream.has_open_files and stream.recorded_cut is None and stream.cuts_committed


def stream_task(
    target: ContinuousTarget, token: LeaseToken, publish: bool, clock: Callable[[], int] = now_ms
) -> Callable[[Iterable[list[StreamStart]]], Iterator[StreamReport]]:
    """The function of a continuous run's Spark tasks: each element of the task's partition is a list of
    StreamStarts; yields a StreamReport per topic-partition when the task ends. `publish`: send each progress
    report to CloudWatch too (continuous/progress.py). The tasks log the engine's events at the driver's level
    (`-v`: INFO) to their standard error, which Spark keeps as the executor's log."""
    level = logging.getLogger("sink_engine").getEffectiveLevel()

    def process(groups: Iterable[list[StreamStart]]) -> Iterator[StreamReport]:
        settle_worker()
        if not logging.getLogger().handlers:
            logging.basicConfig(level=level, format="%(asctime)s %(levelname)s %(name)s %(message)s", stream=sys.stderr)
        from pyspark import TaskContext

        context = TaskContext.get()
        task = context.partitionId() if context is not None else 0
        for starts in groups:
            yield from _run(target, token, starts, publish, clock, task)

    return process


def _run(
    target: ContinuousTarget,
    token: LeaseToken,
    starts: list[StreamStart],
    publish: bool,
    clock: Callable[[], int],
    task: int,
) -> list[StreamReport]:
    settings, continuous = TaskSettings.from_config(target.config), ContinuousSettings.from_config(target.config)
    table = continuous.run.offsets_table
    dynamodb = dynamodb_client(continuous.run.region)
    store, leases, plans = (
        OffsetStore(dynamodb, table, clock),
        Leases(dynamodb, table, clock),
        PlanStore(dynamodb, table),
    )
    uploader = Uploader(upload_client(settings.s3), settings.bucket, settings.object_options)
    commits = target.stream_commits(dynamodb, store, token, uploader)
    streams = _open_streams(target, settings, token, store, plans, commits, starts, uploader)
    schedule = _Schedule(target.stream_cut_interval_ms, continuous.cuts.zone)
    consumer = make_consumer(settings.source, **{"fetch.wait.max.ms": FETCH_WAIT_MS, **expired.CONSUMER_SETTINGS})
    consumer.assign([KafkaTP(tp.topic, tp.partition, s.processed) for tp, s in streams.items()])
    error, lost, checked = None, False, 0.0
    check_every_s = min(STOP_CHECK_S, continuous.run.lease_ms / 4000)  # well within the driver's wait
    reporter = TaskReporter(continuous, streams, consumer, publish, clock, (dynamodb, token, task))
    try:
        while True:
            try:
                messages = consumer.consume(num_messages=BATCH, timeout=POLL_S)
                _feed(streams, messages)
                expired.skip_expired(consumer, streams, messages, token.connector, settings.source.timeout_ms / 1000)
            except SinkError as e:  # a record error not tolerated, a fetch that failed: commit what came before
                error = e
            if schedule.passed(clock()):  # what was committed since the last look lets a stream be cut again
                lost = commits.refresh(streams.values())
            due = [s for s in streams.values() if schedule.due(s, clock())] if error is None and not lost else []
            lost = lost or _cut(plans, token, due, clock()) or commits.commit(streams.values(), wait=False)
            if error is not None or lost:
                break
            reporter.tick()
            if time.monotonic() - checked >= check_every_s:
                checked = time.monotonic()
                lease = leases.describe(token.connector)
                if lease is None or lease["epoch"] != token.epoch:
                    lost = True
                    break
                if lease["stop_requested"]:
                    break
                lost = commits.refresh(streams.values())
                if lost:
                    break
        if not lost:  # what closed since the last commit, its uploads awaited (and what another committed, seen)
            lost = commits.refresh(streams.values()) or commits.commit(streams.values(), wait=True)
    finally:
        consumer.close()
        uploader.close()
    return [
        StreamReport(
            tp,
            s.committed,
            s.records_read,
            s.records_written,
            s.files_written,
            None if error is None else str(error),
            lost,
        )
        for tp, s in streams.items()
    ]


def _open_streams(
    target: ContinuousTarget,
    settings: TaskSettings,
    token: LeaseToken,
    store: OffsetStore,
    plans: PlanStore,
    commits: StreamCommits,
    starts: list[StreamStart],
    uploader: Uploader,
) -> dict[TopicPartition, PartitionStream]:
    """A stream per topic-partition from its committed offset (else its planned offset; past the records the plan
    found expired), or after what an earlier attempt handed on to be committed (`StreamCommits.resume`), with the cut
    an earlier attempt recorded after it."""
    committed = store.committed(token.connector)
    recorded = plans.recorded(token.connector)
    streams = {}
    for start in starts:
        held = committed.get(start.tp)
        expected = held.next_offset if held is not None else None
        begin = commits.resume(start.tp, expected)
        resumed = begin is not None
        if begin is None:
            begin = expected if expected is not None else start.planned_offset
        plan = recorded.get(start.tp)
        cut = plan.end_offset if plan is not None and plan.cut_at_end and plan.expected_committed == expected else None
        stream = PartitionStream(target.stream_output, settings, start.tp, begin, expected, uploader, cut)
        if not resumed:
            stream.expire(start.planned_offset)  # the records the plan found deleted below the log start, if any
        streams[start.tp] = stream
    return streams


def _feed(streams: dict[TopicPartition, PartitionStream], messages: list[Message]) -> None:
    """Hand each partition's records of a fetch to its stream, in offset order."""
    records = [m for m in messages if _is_record(m)]
    for (topic, partition), group in groupby(records, key=lambda m: (m.topic(), m.partition())):
        stream = streams.get(TopicPartition(topic, partition))
        if stream is None:
            continue
        batch = [m for m in group if _offset(m) >= stream.processed]
        if not batch:
            continue
        chunk = RecordChunk(topic, partition, [_offset(m) for m in batch], [m.value() for m in batch], messages=batch)
        stream.feed(chunk, batch[0].timestamp()[1])
        task_failpoint("task_stall", f"{topic}-{partition}")


def _offset(message: Message) -> int:
    offset = message.offset()
    assert offset is not None  # a record's (not an event's)
    return offset


# errors a fetch meets again at every retry: a missing topic or partition, ACLs that deny the topic or the group
REFUSED = (
    KafkaError.UNKNOWN_TOPIC_OR_PART,
    KafkaError._UNKNOWN_PARTITION,
    KafkaError.TOPIC_AUTHORIZATION_FAILED,
    KafkaError.GROUP_AUTHORIZATION_FAILED,
)


def _is_record(message: Message) -> bool:
    """A record, not an event; raises SourceError for an error the consumer does not recover from by itself."""
    error = message.error()
    if error is None:
        return True
    if error.code() == KafkaError._PARTITION_EOF or expired.is_reset(message):  # expired.skip_expired's
        return False
    if error.fatal() or error.code() in REFUSED:
        raise SourceError(fetch_failure(message.topic(), message.partition(), error))
    return False  # transient (a broker down, a timeout): librdkafka reconnects and fetches again


def _cut(plans: PlanStore, token: LeaseToken, due: list[PartitionStream], now: int) -> bool:
    """Record the wall-clock cuts of `due` at the offsets they reached, then make them; True when the lease was
    lost (nothing was cut)."""
    if not due:
        return False
    ranges = [PartitionRange(s.tp.topic, s.tp.partition, s.committed, s.processed, s.expected, True, now) for s in due]
    try:
        plans.record(token, ranges)
    except CommitConflictError:
        return True
    for stream in due:
        stream.cut(stream.processed)
    return False
