"""librdkafka settings from the source settings, including Java-client settings users bring along.

Users' connector JSON carries Java Kafka client settings under `consumer.override.*` (and the security ones,
`security.protocol`, `sasl.mechanism`, `sasl.jaas.config`, at the top level too). Most have the same name in
librdkafka and pass through; authentication is decided by source/kafka_auth.py; the settings in JAVA_ONLY only
mean something to the Java client and change nothing here, so they are left out.
"""

from __future__ import annotations

from sink_engine.errors import ConfigError
from sink_engine.source.kafka_auth import AUTH_KEYS, Settings, authentication
from sink_engine.source.settings import SourceSettings

# Java client settings with no librdkafka meaning, none of which carries a credential or changes what is read:
# deserializers and poll sizes are the engine's own; a JKS truststore is Java's (librdkafka trusts the system's CAs,
# which sign MSK's certificates; name a private CA with ssl.ca.location); librdkafka always verifies host names.
JAVA_ONLY = frozenset(
    {
        "key.deserializer",
        "value.deserializer",
        "max.poll.records",
        "partition.assignment.strategy",
        "ssl.truststore.location",
        "ssl.truststore.password",
        "ssl.truststore.type",
        "ssl.keystore.type",
        "ssl.endpoint.identification.algorithm",
        "interceptor.classes",
        "default.api.timeout.ms",
        "request.timeout.ms",
        "retry.backoff.ms",
        "security.providers",
    }
)
ENGINE_OWNED = frozenset({"enable.auto.commit", "enable.partition.eof", "group.id", "auto.offset.reset"})


def consumer_settings(source: SourceSettings) -> dict:
    """Settings for a confluent_kafka Consumer that reads assigned partitions (no group commits)."""
    settings = {
        "bootstrap.servers": ",".join(source.bootstrap_servers),
        "group.id": f"connect-{source.connector}",
        "enable.auto.commit": False,
        "enable.partition.eof": True,
        "fetch.queue.backoff.ms": 10,
        "queued.max.messages.kbytes": 65536,
        "fetch.max.bytes": 52428800,
        "max.partition.fetch.bytes": 10485760,
    }
    for key, value in source.consumer_overrides.items():
        if key not in JAVA_ONLY and key not in ENGINE_OWNED and key not in AUTH_KEYS:
            settings[key] = value
    settings.update(kafka_authentication(source))
    return settings


def kafka_authentication(source: SourceSettings) -> dict:
    """The client's security settings (see source/kafka_auth.py); ConfigError naming the key at fault."""
    return authentication(source, client_security_settings(source))


def client_security_settings(source: SourceSettings) -> Settings:
    """The security settings by librdkafka-or-Java name, from the connector's top level and `consumer.override.*`
    (the same setting given both ways with different values is an error), over the worker's (config/worker.py: a
    connector's setting wins, as Kafka Connect's `consumer.override.*` does; a connector that names its SASL
    mechanism drops the worker's SASL login with it)."""
    own = {key: (value, key) for key, value in source.top_level_security.items()}
    for key, value in source.consumer_overrides.items():
        if key not in AUTH_KEYS:
            continue
        if key in own and own[key][0] != value:
            raise ConfigError(f"consumer.override.{key}", f"differs from {key}; set one of the two")
        own[key] = (value, f"consumer.override.{key}")
    worker = dict(source.worker_security)
    if {"sasl.mechanism", "sasl.mechanisms"} & own.keys():
        worker = {k: v for k, v in worker.items() if not k.startswith("sasl.")}
    found = {**worker, **own}
    if (
        "sasl.mechanism" in found
        and "sasl.mechanisms" in found
        and found["sasl.mechanism"][0].upper() != found["sasl.mechanisms"][0].upper()
    ):
        raise ConfigError(found["sasl.mechanisms"][1], f"differs from {found['sasl.mechanism'][1]}; set one of the two")
    return Settings(found)


def auto_offset_reset(source: SourceSettings) -> str:
    """Where a topic-partition with no committed offset starts: earliest (default) or latest."""
    value = source.consumer_overrides.get("auto.offset.reset", "earliest").lower()
    if value not in ("earliest", "latest"):
        raise ConfigError("consumer.override.auto.offset.reset", f"{value!r}: expected earliest or latest")
    return value
