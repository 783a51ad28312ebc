"""Read planned ranges of topic-partitions as `RecordChunk`s: one consumer for all the ranges of a task.

A consumer costs its connections to the brokers (on MSK a TCP and TLS handshake each and a SASL, IAM-signed,
authentication) and its threads, so a task's ranges share one: each range is `assign()`ed in turn, without
group membership or commits (librdkafka still looks up the coordinator of its `group.id`: with ACLs the principal
needs DESCRIBE on the group). The end of a range is found without waiting: a fetch asks for no more records than the
range has left, the broker answers a fetch at a partition's end within FETCH_WAIT_MS, and the end-of-partition event
or the first offset past the range ends it.
"""

from __future__ import annotations

import bisect
import time
from collections.abc import Callable, Iterator
from itertools import repeat
from operator import is_not
from typing import cast

from confluent_kafka import Consumer, KafkaError, KafkaException, Message
from confluent_kafka import TopicPartition as KafkaTP

from sink_engine.errors import SourceError
from sink_engine.failpoints import task_failpoint
from sink_engine.model import PartitionRange
from sink_engine.records import RecordChunk
from sink_engine.source.consumer import fetch_failure, make_consumer
from sink_engine.source.settings import SourceSettings

BATCH = 10_000
POLL_S = 0.1  # one consume call's wait: what a range whose last offsets are gaps (compaction, markers) waits once
FETCH_WAIT_MS = 10  # librdkafka's fetch.wait.max.ms for ranges (its default 500; `consumer.override.` sets another)


def range_consumer(source: SourceSettings) -> Consumer:
    """A consumer for ranges read one after another: the broker holds a fetch at a partition's end for at most
    FETCH_WAIT_MS (the next range's first fetch waits behind it on the same connection; 500 ms by default)."""
    own = "fetch.wait.max.ms" in source.consumer_overrides
    return make_consumer(source, **({} if own else {"fetch.wait.max.ms": FETCH_WAIT_MS}))


class RangeReader:
    """Reads ranges one after another through one consumer, created on the first range and kept until `close()`.

    No record of another range is ever yielded: a range's partition is the consumer's only assignment while it is
    read, each fetched message is checked for its topic and partition and for an offset not before the range's
    next, and a topic-partition read a second time gets a new consumer (the offset check cannot tell what an earlier
    assignment of the same partition fetched ahead from the range's own records; a run reads each partition once)."""

    def __init__(self, source: SourceSettings, consumer_factory: Callable[[SourceSettings], Consumer] = range_consumer):
        self._source, self._factory = source, consumer_factory
        self._consumer: Consumer | None = None
        self._read: set[tuple[str, int]] = set()  # the topic-partitions the current consumer was assigned

    def read(self, planned: PartitionRange) -> Iterator[RecordChunk]:
        """Yield the records with offsets in [start, end) in order, in chunks of up to BATCH records.

        Stops at the end offset or at the end of the partition (offsets may have gaps: compaction, transaction
        markers). Raises SourceError when Kafka delivers nothing for `sink.kafka.timeout.ms`."""
        if len(planned) == 0:
            return
        if (planned.topic, planned.partition) in self._read:
            self.close()
        if self._consumer is None:
            self._consumer = self._factory(self._source)
        consumer = self._consumer
        self._read.add((planned.topic, planned.partition))
        consumer.assign([KafkaTP(planned.topic, planned.partition, planned.start_offset)])
        try:
            yield from _consume(consumer, self._source.timeout_ms / 1000, planned)
        finally:
            self._release(consumer)

    def _release(self, consumer: Consumer) -> None:
        """Unassign the range's partition from `consumer` (no prefetching past it); a consumer that refuses is
        replaced. Nothing when the reader no longer holds it: `close()` came first (a range abandoned when its
        task stopped on an error is finished only when its generator is collected, after the reader closed)."""
        if consumer is not self._consumer:
            return
        try:
            consumer.unassign()
        except KafkaException:
            self.close()

    def close(self) -> None:
        consumer, self._consumer, self._read = self._consumer, None, set()
        if consumer is not None:
            consumer.close()

    def __enter__(self) -> RangeReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def read_range(source: SourceSettings, planned: PartitionRange) -> Iterator[RecordChunk]:
    """One range through a consumer of its own (`RangeReader.read`)."""
    with RangeReader(source) as reader:
        yield from reader.read(planned)


def _consume(consumer: Consumer, timeout_s: float, planned: PartitionRange) -> Iterator[RecordChunk]:
    last_wanted, next_offset = planned.end_offset - 1, planned.start_offset
    idle_since = time.monotonic()
    while True:
        messages = consumer.consume(num_messages=min(BATCH, planned.end_offset - next_offset), timeout=POLL_S)
        messages = _of_range(messages, planned, next_offset) if messages else messages
        if not messages:
            if time.monotonic() - idle_since > timeout_s:
                raise SourceError(
                    f"Kafka delivered nothing from {planned.topic}-{planned.partition} for {timeout_s:g}s "
                    f"(sink.kafka.timeout.ms) while reading offsets up to {last_wanted}"
                )
            continue
        idle_since = time.monotonic()
        messages, done = _records_only(messages, planned)
        offsets = cast(list[int], list(map(Message.offset, messages)))  # records' (Message.offset: int | None)
        if offsets and offsets[-1] >= last_wanted:
            keep = bisect.bisect_right(offsets, last_wanted)
            messages, offsets, done = messages[:keep], offsets[:keep], True
        if messages:
            next_offset = offsets[-1] + 1
            yield RecordChunk(
                planned.topic, planned.partition, offsets, list(map(Message.value, messages)), messages=messages
            )
            task_failpoint("task_mid_range", f"{planned.topic}-{planned.partition}")
            task_failpoint("task_stall", f"{planned.topic}-{planned.partition}")
            task_failpoint("task_pause", f"{planned.topic}-{planned.partition}")
        if done:
            return


def _of_range(messages: list, planned: PartitionRange, next_offset: int) -> list:
    """The messages of the planned topic-partition from `next_offset` on, and the error events (those of another
    partition left out): a reused consumer may still hand out what it fetched for an earlier assignment. (A
    partition's messages come in offset order: only the first of a batch is compared with `next_offset`.)"""
    partitions = list(map(Message.partition, messages))
    if (
        partitions.count(planned.partition) == len(partitions)
        and set(map(Message.topic, messages)) == {planned.topic}
        and (messages[0].offset() >= next_offset or messages[0].error() is not None)
    ):
        return messages
    return [m for m in messages if _belongs(m, planned, next_offset)]


def _belongs(message: Message, planned: PartitionRange, next_offset: int) -> bool:
    if message.error() is not None and message.topic() is None:
        return True  # an error of the consumer as a whole (all brokers down, ...)
    if message.topic() != planned.topic or message.partition() != planned.partition:
        return False
    if message.error() is not None:
        return True
    offset = message.offset()  # a record's is set (confluent-kafka types it int | None)
    return offset is not None and offset >= next_offset


def _records_only(messages: list, planned: PartitionRange) -> tuple[list, bool]:
    """Drop the end-of-partition event (True when seen); raise SourceError on any other error event."""
    errors = list(map(Message.error, messages))
    if not any(map(is_not, errors, repeat(None))):  # (KafkaError cannot be compared with None by ==)
        return messages, False
    position = next(i for i, error in enumerate(errors) if error is not None)
    error = errors[position]
    assert error is not None  # found so
    if error.code() != KafkaError._PARTITION_EOF:
        raise SourceError(fetch_failure(planned.topic, planned.partition, error))
    return messages[:position], True
