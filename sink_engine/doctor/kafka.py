"""Kafka as a run first reaches it: the cluster's metadata with the configured authentication, every partition of
the connector's topics and their low and high watermarks (source/metadata.py's `watermarks`, as the driver plans),
all within `sink.kafka.timeout.ms`; and the dead-letter topic, when one is configured."""

from __future__ import annotations

from typing import TYPE_CHECKING

from confluent_kafka import Consumer, KafkaError, KafkaException
from confluent_kafka.admin import ClusterMetadata

from sink_engine.dlq.settings import DeadLetterSettings
from sink_engine.doctor.checks import Check, Failed
from sink_engine.doctor.grants import grant_hint
from sink_engine.errors import SourceError
from sink_engine.model import TopicPartition
from sink_engine.source.client_config import kafka_authentication
from sink_engine.source.consumer import make_consumer
from sink_engine.source.metadata import list_topics, named_topics, watermarks
from sink_engine.source.reachability import ClientErrors, check_bootstrap
from sink_engine.source.settings import SourceSettings

if TYPE_CHECKING:
    from sink_engine.doctor.runner import Context


def topics(context: Context) -> str:
    """Every topic the config names exists with partitions; their watermarks are read. Records the topics found
    on `context.topics` (the S3 probe writes under them with `topics.regex`)."""
    source = context.settings.source
    metadata, consumer = _metadata(source)
    try:
        found = {
            name: topic
            for name, topic in metadata.topics.items()
            if not name.startswith("__") and source.topic_matches(name)
        }
        named = source.topics if source.topics is not None else tuple(sorted(found))
        if not named:
            raise Failed(f"no topic matches topics.regex={source.topics_regex}")
        missing = [t for t in named if t not in found]
        if missing:
            _missing(consumer, missing, source.timeout_ms / 1000)
        refused = [(t, error) for t in named if (error := found[t].error) is not None]
        if refused:
            raise Failed("; ".join(_topic_error(t, error) for t, error in refused))
        tps = sorted(TopicPartition(t, p) for t in named for p in found[t].partitions)
        marks = watermarks(consumer, tps, source.timeout_ms / 1000)
    finally:
        consumer.close()
    context.topics = tuple(named)
    records = sum(high - low for low, high in marks.values())
    return f"{_auth(source)}: {len(tps)} partitions of {', '.join(named)}, {records} records between their watermarks"


def dead_letter_topic(context: Context) -> str:
    topic = context.settings.dead_letters.topic
    assert topic is not None  # the check applies with a dead-letter topic only (CHECKS)
    source = context.settings.source
    metadata, consumer = _metadata(source)
    try:
        found = metadata.topics.get(topic)
        if found is None:  # absent, or left out because the principal may not describe it: asked by name
            found = consumer.list_topics(topic=topic, timeout=source.timeout_ms / 1000).topics.get(topic)
    finally:
        consumer.close()
    if found is None or (found.error is not None and found.error.code() == KafkaError.UNKNOWN_TOPIC_OR_PART):
        return (
            f"{topic} does not exist yet: the first dead letter creates it (with MSK IAM it "
            f"{grant_hint('kafka-cluster:CreateTopic', f'topic {topic}')})"
        )
    if found.error is not None:
        raise Failed(_topic_error(topic, found.error))
    return f"{topic}: {len(found.partitions)} partition(s)"


def _missing(consumer: Consumer, topics: list[str], timeout_s: float) -> None:
    """Failed for topics left out of the metadata: those the principal may not describe (Kafka leaves them out of an
    answer about every topic: named_topics asks for each), else those not found."""
    asked = named_topics(consumer, topics, timeout_s)
    refused = [(t, e) for t, e in asked if e is not None and e.code() != KafkaError.UNKNOWN_TOPIC_OR_PART]
    if refused:
        raise Failed("; ".join(_topic_error(t, e) for t, e in refused))
    raise Failed(f"topics not found in Kafka: {', '.join(topics)} (topics)")


def _metadata(source: SourceSettings) -> tuple[ClusterMetadata, Consumer]:
    """(the cluster's metadata, the consumer that read it: the caller closes it); Failed naming the brokers and
    what the client reported meanwhile (a refused connection, a failed SASL authentication)."""
    try:
        check_bootstrap(source.bootstrap_servers)
    except SourceError as e:
        raise Failed(f"{e} ({_auth(source)})") from None
    reported = ClientErrors()
    consumer = make_consumer(source, error_cb=reported)
    try:
        return list_topics(consumer, source.timeout_ms / 1000, reported), consumer
    except SourceError as e:  # the broker refused the login
        consumer.close()
        raise Failed(f"bootstrap.servers={','.join(source.bootstrap_servers)} ({_auth(source)}): {e}") from None
    except KafkaException as e:
        consumer.poll(0)  # serves the client's errors
        consumer.close()
        seen = reported.last()
        raise Failed(
            f"no answer from bootstrap.servers={','.join(source.bootstrap_servers)} ({_auth(source)}) "
            f"within sink.kafka.timeout.ms={source.timeout_ms}: {e.args[0].str()}"
            + (f"; the client reported: {'; '.join(seen)}" if seen else "")
        ) from None


def _auth(source: SourceSettings) -> str:
    settings = kafka_authentication(source)
    protocol = settings.get("security.protocol", "PLAINTEXT")
    mechanism = settings.get("sasl.mechanisms")
    iam = " (MSK IAM)" if "oauth_cb" in settings else ""
    return f"{protocol}" + (f" {mechanism}{iam}" if mechanism else "")


def _topic_error(topic: str, error: KafkaError) -> str:
    if error.code() == KafkaError.TOPIC_AUTHORIZATION_FAILED:
        return (
            f"topic {topic}: not authorized to describe it (with MSK IAM the job "
            f"{grant_hint('kafka-cluster:DescribeTopic', f'topic {topic}')}; otherwise the cluster's ACLs)"
        )
    return f"topic {topic}: {error}"


CHECKS = (
    Check("kafka topics", topics),
    Check(
        "kafka dead-letter topic",
        dead_letter_topic,
        applies=lambda config: bool(DeadLetterSettings.from_config(config).topic),
    ),
)
