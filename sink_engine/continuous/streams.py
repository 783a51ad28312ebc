"""A continuous task's streams of one connector: one `PartitionStream` per topic-partition, opened where the
connector's commits left it, and the records of a fetch handed to them."""

from __future__ import annotations

from dataclasses import dataclass
from itertools import groupby
from typing import TYPE_CHECKING

from confluent_kafka import KafkaError, Message

from sink_engine.continuous import expired
from sink_engine.errors import SourceError
from sink_engine.failpoints import task_failpoint
from sink_engine.model import TopicPartition
from sink_engine.offsets import LeaseToken, OffsetStore
from sink_engine.records import RecordChunk
from sink_engine.run.plans import PlanStore
from sink_engine.source.consumer import fetch_failure
from sink_engine.storage.uploader import Uploader
from sink_engine.target.contract import ContinuousTarget
from sink_engine.task.settings import TaskSettings
from sink_engine.task.stream import PartitionStream

if TYPE_CHECKING:
    from sink_engine.target.contract import StreamCommits


@dataclass(frozen=True)
class StreamStart:
    """A topic-partition of a continuous run and where the driver's plan starts it: the committed offset, the log
    start when retention left the committed offset below it (the driver logged RECORDS_EXPIRED), or
    `auto.offset.reset` against the watermarks when nothing is committed."""

    tp: TopicPartition
    planned_offset: int


def open_streams(
    target: ContinuousTarget,
    settings: TaskSettings,
    token: LeaseToken,
    store: OffsetStore,
    plans: PlanStore,
    commits: StreamCommits,
    starts: tuple[StreamStart, ...],
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


def feed(streams: dict[TopicPartition, PartitionStream], messages: list[Message]) -> None:
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
