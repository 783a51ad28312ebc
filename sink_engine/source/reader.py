"""Read one planned range of a topic-partition as `RecordChunk`s."""
from __future__ import annotations

import bisect
import time
from itertools import repeat
from operator import is_not
from typing import Iterator

from confluent_kafka import KafkaError, Message, TopicPartition as KafkaTP

from sink_engine.errors import SourceError
from sink_engine.failpoints import task_failpoint
from sink_engine.model import PartitionRange
from sink_engine.records import RecordChunk
from sink_engine.source.consumer import make_consumer
from sink_engine.source.settings import SourceSettings

BATCH = 10_000


def read_range(source: SourceSettings, planned: PartitionRange) -> Iterator[RecordChunk]:
    """Yield the records with offsets in [start, end) in order, in chunks of up to BATCH records.

    Stops at the end offset or at the end of the partition (offsets may have gaps: compaction,
    transaction markers). Raises SourceError when Kafka delivers nothing for `sink.kafka.timeout.ms`.
    """
    if len(planned) == 0:
        return
    consumer = make_consumer(source)
    try:
        consumer.assign([KafkaTP(planned.topic, planned.partition, planned.start_offset)])
        yield from _consume(consumer, source.timeout_ms / 1000, planned)
    finally:
        consumer.close()


def _consume(consumer, timeout_s: float, planned: PartitionRange) -> Iterator[RecordChunk]:
    last_wanted = planned.end_offset - 1
    idle_since = time.monotonic()
    while True:
        messages = consumer.consume(num_messages=BATCH, timeout=1.0)
        if not messages:
            if time.monotonic() - idle_since > timeout_s:
                raise SourceError(
                    f"Kafka delivered nothing from {planned.topic}-{planned.partition} for {timeout_s:g}s "
                    f"(sink.kafka.timeout.ms) while reading offsets up to {last_wanted}"
                )
            continue
        idle_since = time.monotonic()
        messages, done = _records_only(messages, planned)
        offsets = list(map(Message.offset, messages))
        if offsets and offsets[-1] >= last_wanted:
            keep = bisect.bisect_right(offsets, last_wanted)
            messages, offsets, done = messages[:keep], offsets[:keep], True
        if messages:
            yield RecordChunk(planned.topic, planned.partition, offsets, list(map(Message.value, messages)),
                              messages=messages)
            task_failpoint("task_mid_range", f"{planned.topic}-{planned.partition}")
            task_failpoint("task_stall", f"{planned.topic}-{planned.partition}")
        if done:
            return


def _records_only(messages: list, planned: PartitionRange) -> tuple[list, bool]:
    """Drop the end-of-partition event (True when seen); raise SourceError on any other error event."""
    errors = list(map(Message.error, messages))
    if not any(map(is_not, errors, repeat(None))):  # (KafkaError cannot be compared with None by ==)
        return messages, False
    position = next(i for i, error in enumerate(errors) if error is not None)
    error = errors[position]
    if error.code() != KafkaError._PARTITION_EOF:
        raise SourceError(f"fetch from {planned.topic}-{planned.partition} failed: {error}")
    return messages[:position], True
