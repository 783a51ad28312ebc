"""Creating consumers, with librdkafka's rejections of a setting turned into config errors."""

from __future__ import annotations

from confluent_kafka import Consumer, KafkaException

from sink_engine.errors import ConfigError
from sink_engine.source.client_config import consumer_settings
from sink_engine.source.reachability import client_logger
from sink_engine.source.settings import SourceSettings


def make_consumer(source: SourceSettings, **extra) -> Consumer:
    """A consumer whose log lets each distinct message through once (source/reachability.py)."""
    settings = {**consumer_settings(source), "logger": client_logger("consumer"), **extra}
    try:
        return Consumer(settings)
    except (KafkaException, ValueError, TypeError) as e:
        raise ConfigError("consumer.override.*", f"the Kafka client rejected a setting: {e}") from e
