"""The Kafka source's keys, read once from the config: what consumers, partition discovery and the range reader
are built from."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from sink_engine.config import SinkConfig
from sink_engine.errors import ConfigError
from sink_engine.source.kafka_auth import AUTH_KEYS

TOP_LEVEL_CLIENT_KEYS = ("security.protocol", "sasl.mechanism", "sasl.jaas.config")


@dataclass(frozen=True)
class SourceSettings:
    connector: str  # name: the consumer's group.id is connect-<name>
    bootstrap_servers: tuple[str, ...]
    topics: tuple[str, ...] | None  # topics, or None with topics.regex
    topics_regex: str | None
    timeout_ms: int  # sink.kafka.timeout.ms
    consumer_overrides: Mapping[str, str]  # consumer.override.* without the prefix, over the worker's (not security)
    top_level_security: Mapping[str, str]  # TOP_LEVEL_CLIENT_KEYS set at the top level
    kafka_api_key: str | None  # Confluent Cloud's kafka.api.key / kafka.api.secret
    kafka_api_secret: str | None
    region: str  # s3.region: MSK IAM tokens' region when the environment names none
    # the worker's security settings (config/worker.py) by client name, each with where it was set; the connector's
    # own (top level, consumer.override.*) win over them
    worker_security: Mapping[str, tuple[str, str]] = field(default_factory=dict)

    @classmethod
    def from_config(cls, config: SinkConfig) -> SourceSettings:
        """The Kafka consumer's settings as Kafka Connect layers them: the worker's (its `consumer.*` over its top
        level), then the connector's `consumer.override.*` over them."""
        topics, servers = config["topics"], config["bootstrap.servers"]
        if servers is None:
            raise ConfigError("bootstrap.servers", "is required to read Kafka")
        worker = config.worker.client_settings()
        plain = {name: value for name, (value, _) in worker.items() if name not in AUTH_KEYS}
        return cls(
            config.name,
            tuple(servers),
            None if topics is None else tuple(topics),
            config["topics.regex"],
            config["sink.kafka.timeout.ms"],
            {**plain, **config.consumer_overrides()},
            {key: value for key in TOP_LEVEL_CLIENT_KEYS if (value := config.optional_text(key)) is not None},
            config["kafka.api.key"],
            config["kafka.api.secret"],
            config["s3.region"],
            {name: entry for name, entry in worker.items() if name in AUTH_KEYS},
        )

    def topic_matches(self, topic: str) -> bool:
        if self.topics is not None:
            return topic in self.topics
        assert self.topics_regex is not None  # config validation requires topics or topics.regex
        return re.fullmatch(self.topics_regex, topic) is not None
