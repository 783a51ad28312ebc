"""Kafka plumbing of the dead-letter topic: producer settings, topic creation, partition choice, and the
scan that finds what an earlier, uncommitted attempt already sent."""

from __future__ import annotations

import zlib

from confluent_kafka import KafkaError, KafkaException, Producer
from confluent_kafka.admin import AdminClient, NewTopic

from sink_engine.dlq.letter import DeadLetter
from sink_engine.errors import ConfigError, SourceError
from sink_engine.model import PartitionRange, TopicPartition
from sink_engine.source.client_config import consumer_settings
from sink_engine.source.consumer import make_consumer
from sink_engine.source.metadata import await_leaders, watermarks
from sink_engine.source.reader import read_range
from sink_engine.source.settings import SourceSettings

REPLICATION_FACTOR_KEY = "errors.deadletterqueue.topic.replication.factor"
# The engine's own consumer-only settings; the connection and security settings are shared with producers.
_CONSUMER_ONLY = frozenset(
    {
        "group.id",
        "enable.auto.commit",
        "enable.partition.eof",
        "fetch.queue.backoff.ms",
        "queued.max.messages.kbytes",
        "fetch.max.bytes",
        "max.partition.fetch.bytes",
    }
)
MAX_MESSAGE_BYTES = 16 * 1024 * 1024
# The dead-letter topic this engine creates takes letters as large as its producer sends: a bad record of several MB
# (which its source topic took) would otherwise be refused by a broker's default of 1 MB (`message.max.bytes`,
# MSK's too) as MSG_SIZE_TOO_LARGE, and the run fail. A topic made beforehand keeps its own setting.
TOPIC_CONFIG = {"max.message.bytes": str(MAX_MESSAGE_BYTES)}


def client_settings(source: SourceSettings) -> dict:
    """Connection and security settings (including MSK IAM) for producers and admin clients."""
    return {k: v for k, v in consumer_settings(source).items() if k not in _CONSUMER_ONLY}


def producer(source: SourceSettings, **extra: object) -> Producer:
    settings = {
        **client_settings(source),
        "enable.idempotence": True,
        "acks": "all",
        "linger.ms": 5,
        "message.max.bytes": MAX_MESSAGE_BYTES,
        **extra,
    }
    try:
        return Producer(settings)
    except (KafkaException, ValueError, TypeError) as e:
        raise SourceError(f"cannot create a Kafka producer: {e}") from e


def ensure_topic(source: SourceSettings, topic: str, replication_factor: int, timeout_s: float = 30.0) -> int:
    """Create `topic` with one partition when missing (as Kafka Connect does), taking letters of up to
    MAX_MESSAGE_BYTES (TOPIC_CONFIG); returns its partition count.
    ConfigError naming the replication factor's key when the cluster has fewer brokers (Kafka, and so MSK,
    refuses such a topic; a 2-broker MSK cluster with the default 3 is the common case)."""
    admin = AdminClient(client_settings(source))
    try:
        cluster = admin.list_topics(timeout=timeout_s)  # all topics: naming one may auto-create it with the
        found = cluster.topics.get(topic)  # broker's defaults where auto-creation is on
        if found is not None and found.error is None:
            return len(found.partitions)
        if replication_factor > len(cluster.brokers):
            raise ConfigError(
                REPLICATION_FACTOR_KEY,
                f"{replication_factor} is more than the {len(cluster.brokers)} "
                f"broker(s) of the cluster: the dead-letter topic {topic} cannot be created; set it to "
                f"at most {len(cluster.brokers)}, or create the topic beforehand",
            )
        try:
            admin.create_topics([NewTopic(topic, 1, replication_factor, config=TOPIC_CONFIG)])[topic].result(
                timeout=timeout_s
            )
        except KafkaException as e:
            if e.args[0].code() != KafkaError.TOPIC_ALREADY_EXISTS:
                raise
        return await_leaders(admin, topic, timeout_s)
    except KafkaException as e:
        raise SourceError(f"cannot create or describe the dead-letter topic {topic}: {e}") from e


def partition_for(source: TopicPartition, partitions: int) -> int:
    """The dead-letter partition of a source topic-partition: fixed, so one partition holds all its letters."""
    return zlib.crc32(f"{source.topic}\x00{source.partition}".encode()) % partitions


def end_offsets(source: SourceSettings, dlq: TopicPartition) -> tuple[int, int]:
    consumer = make_consumer(source)
    try:
        return watermarks(consumer, [dlq])[dlq]
    finally:
        consumer.close()


def already_sent(source: SourceSettings, dlq: TopicPartition, start: int, end: int, planned: PartitionRange) -> set:
    """Source offsets of `planned` (at or after its start) found in the dead-letter partition in [start, end),
    sent by this connector. Read committed: aborted attempts do not count."""
    scan = PartitionRange(dlq.topic, dlq.partition, start, end, None)
    found = set()
    for chunk in read_range(source, scan):
        for key, value, headers in zip(chunk.keys, chunk.values, chunk.headers):
            letter = DeadLetter.from_kafka(key, value, headers)
            if (
                letter is not None
                and letter.connector == source.connector
                and letter.topic == planned.topic
                and letter.partition == planned.partition
                and letter.offset >= planned.start_offset
            ):
                found.add(letter.offset)
    return found
