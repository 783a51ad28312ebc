"""Records Kafka deletes while a continuous run is behind: a partition's log start (retention, DeleteRecords) moves
past the position of its stream.

The task's consumer runs with `auto.offset.reset=error`: librdkafka's own reset would move the position without a
word (to the partition's end with its default, `latest`, skipping records Kafka still holds). With `error`, a fetch
below the log start is an `_AUTO_OFFSET_RESET` event for that partition and its fetching stops; `skip_expired` then
asks for the partition's log start, settles the offsets in between as expired (`PartitionStream.expire`, counted as
`skipped.expired` by the commit that passes them), logs RECORDS_EXPIRED and assigns the partition again at the log
start. An offset out of range above the log start (past the partition's end: the topic recreated, or truncated by an
unclean leader election) is not an expiry: a SourceError that ends the task, as a bounded run's planner refuses a
committed offset past the end.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable

from confluent_kafka import Consumer, KafkaError, KafkaException, Message
from confluent_kafka import TopicPartition as KafkaTP

from sink_engine import events
from sink_engine.errors import SourceError
from sink_engine.model import TopicPartition
from sink_engine.task.stream import PartitionStream

# the continuous consumer's reset policy (the connector's `auto.offset.reset` only places a partition with nothing
# committed, in the driver's plan)
CONSUMER_SETTINGS = {"auto.offset.reset": "error"}


def is_reset(message: Message) -> bool:
    """Whether `message` is the event of a fetch whose offset is out of the partition's range."""
    error = message.error()
    return error is not None and error.code() == KafkaError._AUTO_OFFSET_RESET


def skip_expired(
    consumer: Consumer,
    streams: dict[TopicPartition, PartitionStream],
    messages: Iterable[Message],
    connector: str,
    timeout_s: float,
) -> None:
    """For each partition of `messages` whose fetch fell below its log start: settle the expired offsets, log
    RECORDS_EXPIRED and read on from the log start. Raises SourceError when the offset is not below the log start."""
    out_of_range = {(m.topic(), m.partition()) for m in messages if is_reset(m)}
    for tp, stream in sorted(streams.items()):
        if (tp.topic, tp.partition) not in out_of_range:
            continue
        expected = stream.processed
        log_start, end = _watermarks(consumer, tp, timeout_s)
        records = stream.expire(log_start)
        if not records:
            raise SourceError(
                f"offset {expected} of {tp} is out of range [{log_start}, {end}) but not below its log start: "
                "was the topic recreated or truncated? Remove its offset item to start again"
            )
        events.emit(
            events.RECORDS_EXPIRED,
            logging.WARNING,
            connector=connector,
            topic=tp.topic,
            partition=tp.partition,
            expected=expected,
            log_start=log_start,
            records=records,
        )
        # librdkafka refuses to seek a partition whose fetching the error stopped (_STATE): assigned again instead
        consumer.incremental_unassign([KafkaTP(tp.topic, tp.partition)])
        consumer.incremental_assign([KafkaTP(tp.topic, tp.partition, log_start)])


def _watermarks(consumer: Consumer, tp: TopicPartition, timeout_s: float) -> tuple[int, int]:
    """The partition's log start and end offsets, asked of its leader (ListOffsets)."""
    try:
        low, high = consumer.get_watermark_offsets(KafkaTP(tp.topic, tp.partition), timeout=timeout_s, cached=False)
    except KafkaException as e:
        raise SourceError(f"the log start of {tp} could not be read after its offset fell out of range: {e}") from e
    return low, high
