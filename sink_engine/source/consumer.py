"""Creating consumers, with librdkafka's rejections of a setting turned into config errors, and what a failed
fetch means, for messages."""

from __future__ import annotations

from confluent_kafka import Consumer, KafkaError, KafkaException

from sink_engine.errors import ConfigError
from sink_engine.source.client_config import consumer_settings
from sink_engine.source.reachability import client_logger
from sink_engine.source.settings import SourceSettings


def make_consumer(source: SourceSettings, **extra: object) -> Consumer:
    """A consumer whose log lets each distinct message through once (source/reachability.py)."""
    settings = {**consumer_settings(source), "logger": client_logger("consumer"), **extra}
    try:
        return Consumer(settings)
    except (KafkaException, ValueError, TypeError) as e:
        raise ConfigError("consumer.override.*", f"the Kafka client rejected a setting: {e}") from e


def fetch_failure(topic: str | None, partition: int | None, error: KafkaError) -> str:
    """What a fetch's error event says, naming what the connector's principal lacks when Kafka refused it. The
    consumer reads assigned partitions and commits nothing to Kafka, yet librdkafka looks up its group's coordinator
    (FindCoordinator), which Kafka's ACLs allow with DESCRIBE on the group (Kafka Connect's sink needs READ on it)."""
    if error.code() == KafkaError.GROUP_AUTHORIZATION_FAILED:
        return (
            f"Kafka refused the consumer's group ({error.name()}): the connector's principal needs DESCRIBE on the "
            "group connect-<connector name> (the cluster's ACLs; with MSK IAM, kafka-cluster:DescribeGroup)"
        )
    if error.code() == KafkaError.TOPIC_AUTHORIZATION_FAILED:
        return (
            f"fetch from {topic}-{partition} refused ({error.name()}): the connector's principal needs READ on topic "
            f"{topic} (the cluster's ACLs; with MSK IAM, kafka-cluster:ReadData)"
        )
    return f"fetch from {topic}-{partition} failed: {error}"
