"""librdkafka settings from the connector config, including Java-client settings users bring along.

Users' connector JSON carries Java Kafka client settings under `consumer.override.*` (and the security ones,
`security.protocol`, `sasl.mechanism`, `sasl.jaas.config`, at the top level too). Most have the same name in
librdkafka and pass through; authentication is decided by source/kafka_auth.py; the settings in JAVA_ONLY only
mean something to the Java client and change nothing here, so they are left out.
"""
from __future__ import annotations

from sink_engine.config import SinkConfig
from sink_engine.errors import ConfigError
from sink_engine.source.kafka_auth import AUTH_KEYS, Settings, authentication

# Java client settings with no librdkafka meaning, none of which carries a credential or changes what is read:
# deserializers and poll sizes are the engine's own; a JKS truststore is Java's (librdkafka trusts the system's CAs,
# which sign MSK's certificates; name a private CA with ssl.ca.location); librdkafka always verifies host names.
JAVA_ONLY = frozenset({
    "key.deserializer", "value.deserializer", "max.poll.records", "partition.assignment.strategy",
    "ssl.truststore.location", "ssl.truststore.password", "ssl.truststore.type", "ssl.keystore.type",
    "ssl.endpoint.identification.algorithm", "interceptor.classes", "default.api.timeout.ms",
    "request.timeout.ms", "retry.backoff.ms", "security.providers",
})
ENGINE_OWNED = frozenset({"enable.auto.commit", "enable.partition.eof", "group.id", "auto.offset.reset"})
TOP_LEVEL_CLIENT_KEYS = ("security.protocol", "sasl.mechanism", "sasl.jaas.config")


def consumer_settings(config: SinkConfig) -> dict:
    """Settings for a confluent_kafka Consumer that reads assigned partitions (no group commits)."""
    settings = {
        "bootstrap.servers": ",".join(config["bootstrap.servers"]),
        "group.id": f"connect-{config.name}",
        "enable.auto.commit": False,
        "enable.partition.eof": True,
        "fetch.queue.backoff.ms": 10,
        "queued.max.messages.kbytes": 65536,
        "fetch.max.bytes": 52428800,
        "max.partition.fetch.bytes": 10485760,
    }
    for key, value in config.consumer_overrides().items():
        if key not in JAVA_ONLY and key not in ENGINE_OWNED and key not in AUTH_KEYS:
            settings[key] = value
    settings.update(kafka_authentication(config))
    return settings


def kafka_authentication(config: SinkConfig) -> dict:
    """The client's security settings (see source/kafka_auth.py); ConfigError naming the key at fault."""
    return authentication(config, client_security_settings(config))


def client_security_settings(config: SinkConfig) -> Settings:
    """The security settings by librdkafka-or-Java name, from the top level and `consumer.override.*`; the same
    setting given both ways with different values is an error."""
    found = {key: (config[key], key) for key in TOP_LEVEL_CLIENT_KEYS if config[key] is not None}
    for key, value in config.consumer_overrides().items():
        if key not in AUTH_KEYS:
            continue
        if key in found and found[key][0] != value:
            raise ConfigError(f"consumer.override.{key}", f"differs from {key}; set one of the two")
        found[key] = (value, f"consumer.override.{key}")
    if "sasl.mechanism" in found and "sasl.mechanisms" in found and \
            found["sasl.mechanism"][0].upper() != found["sasl.mechanisms"][0].upper():
        raise ConfigError(found["sasl.mechanisms"][1], f"differs from {found['sasl.mechanism'][1]}; set one of the two")
    return Settings(found)


def auto_offset_reset(config: SinkConfig) -> str:
    """Where a topic-partition with no committed offset starts: earliest (default) or latest."""
    value = config.consumer_overrides().get("auto.offset.reset", "earliest").lower()
    if value not in ("earliest", "latest"):
        raise ConfigError("consumer.override.auto.offset.reset", f"{value!r}: expected earliest or latest")
    return value
