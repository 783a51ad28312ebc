"""The target topic: its partitions, its creation (`--create-target`), the producer, and the scan that finds which
original records are already in it.

The producer is idempotent (`enable.idempotence`, acks=all, at most 5 requests in flight): within one producer
each partition gets the records in the order produced, none twice. Across producers (a killed restore and its
rerun) the origin headers found by `present` say what is there. Records go partition for partition when the
target has as many partitions as the source; otherwise through the partitioner Java clients use by default
(murmur2 of the key; a null key to a random partition), and a source partition's order then holds per key.
"""

from __future__ import annotations

from collections.abc import Callable

from confluent_kafka import KafkaError, KafkaException, Message, Producer
from confluent_kafka.admin import AdminClient, NewTopic

from sink_engine.dlq import kafka_io
from sink_engine.dlq.kafka_io import client_settings
from sink_engine.errors import OptionError, SourceError
from sink_engine.model import PartitionRange, TopicPartition
from sink_engine.restore.present import Present
from sink_engine.restore.stored import origin_of
from sink_engine.source.consumer import make_consumer
from sink_engine.source.metadata import await_leaders, watermarks
from sink_engine.source.reader import read_range
from sink_engine.source.settings import SourceSettings

TIMEOUT_S = 30.0


def partition_counts(source: SourceSettings, topics: list[str]) -> dict[str, int]:
    """The partition count of each of `topics` that exists (all topics are listed: naming a missing one may create
    it where the broker auto-creates topics)."""
    admin = AdminClient(client_settings(source))
    try:
        listed = admin.list_topics(timeout=TIMEOUT_S).topics
    except KafkaException as e:
        raise SourceError(f"cannot list topics of {','.join(source.bootstrap_servers)}: {e}") from e
    return {name: len(listed[name].partitions) for name in topics if name in listed and listed[name].error is None}


# A restored record keeps its original timestamp, which may be older than the cluster's time retention (Kafka's default
# `retention.ms` is 7 days): the broker would delete such records at its next retention check, minutes after the
# restore. So a target the restore creates keeps its records until someone sets a retention on it.
TARGET_CONFIG = {"retention.ms": "-1"}


def create_topic(source: SourceSettings, topic: str, partitions: int) -> None:
    """Create the target with the cluster's default replication factor (-1: the broker's
    default.replication.factor) and no time retention (TARGET_CONFIG)."""
    admin = AdminClient(client_settings(source))
    try:
        admin.create_topics([NewTopic(topic, partitions, -1, config=TARGET_CONFIG)])[topic].result(timeout=TIMEOUT_S)
        await_leaders(admin, topic, TIMEOUT_S)
    except KafkaException as e:
        if e.args[0].code() != KafkaError.TOPIC_ALREADY_EXISTS:
            raise OptionError("--create-target", f"cannot create {topic}: {e}") from e


def end_offsets(source: SourceSettings, topic: str, partitions: int) -> dict[int, tuple[int, int]]:
    consumer = make_consumer(source)
    try:
        marks = watermarks(consumer, [TopicPartition(topic, p) for p in range(partitions)], TIMEOUT_S)
    finally:
        consumer.close()
    return {tp.partition: marks[tp] for tp in marks}


def present(
    source: SourceSettings, topic: str, ranges: dict[int, tuple[int, int]], source_topic: str
) -> tuple[dict[int, Present], int]:
    """The original offsets of `source_topic`'s records found in the target's partitions' [start, end) `ranges`,
    by source partition; and the number of target records read."""
    found: dict[int, list[int]] = {}
    read = 0
    for partition, (start, end) in sorted(ranges.items()):
        for chunk in read_range(source, PartitionRange(topic, partition, start, end, None)):
            read += len(chunk)
            for headers in chunk.headers:
                origin = origin_of(headers)
                if origin is not None and origin[0] == source_topic:
                    found.setdefault(origin[1], []).append(origin[2])
    return {p: Present.of(offsets) for p, offsets in found.items()}, read


def producer(
    source: SourceSettings, message_timeout_ms: int, on_delivery: Callable[[KafkaError | None, Message], None]
) -> Producer:
    """kafka_io's idempotent producer, with at most 5 requests in flight, the Java clients' default partitioner,
    and unsent records given up after `message_timeout_ms`."""
    return kafka_io.producer(
        source,
        **{
            "max.in.flight.requests.per.connection": 5,
            "linger.ms": 20,
            "partitioner": "murmur2_random",
            "message.timeout.ms": message_timeout_ms,
            "on_delivery": on_delivery,
        },
    )
