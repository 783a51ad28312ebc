"""librdkafka settings from the connector config, including Java-client settings users bring along.

Users' connector JSON carries Java Kafka client settings under `consumer.override.*`. Most have the same
name in librdkafka; the ones that only mean something to the Java client are dropped, and MSK IAM auth
(`sasl.mechanism=AWS_MSK_IAM`, or OAUTHBEARER with the aws-msk-iam-auth callback handler) becomes
librdkafka's OAUTHBEARER with a token from aws-msk-iam-sasl-signer-python.
"""
from __future__ import annotations

import os

from sink_engine.config import SinkConfig
from sink_engine.errors import ConfigError

# Java client settings with no librdkafka meaning: the values belong to the Java runtime.
JAVA_ONLY = frozenset({
    "sasl.jaas.config", "sasl.client.callback.handler.class", "sasl.login.callback.handler.class",
    "key.deserializer", "value.deserializer", "max.poll.records", "partition.assignment.strategy",
    "ssl.truststore.location", "ssl.truststore.password", "ssl.truststore.type", "ssl.keystore.type",
    "ssl.endpoint.identification.algorithm", "interceptor.classes", "default.api.timeout.ms",
    "request.timeout.ms", "retry.backoff.ms", "security.providers",
})
MSK_IAM_PACKAGE = "software.amazon.msk.auth.iam."
ENGINE_OWNED = frozenset({"enable.auto.commit", "enable.partition.eof", "group.id", "auto.offset.reset"})


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
    overrides = config.consumer_overrides()
    for key, value in overrides.items():
        if key in JAVA_ONLY or key in ENGINE_OWNED or (key == "sasl.mechanism" and uses_msk_iam(overrides)):
            continue
        settings[key] = value
    if uses_msk_iam(overrides):
        _use_msk_iam(settings, config)
    return settings


def uses_msk_iam(overrides: dict) -> bool:
    """MSK IAM auth as Java clients configure it: `sasl.mechanism=AWS_MSK_IAM`, or `OAUTHBEARER` with the
    aws-msk-iam-auth callback handler (`software.amazon.msk.auth.iam.IAMOAuthBearerLoginCallbackHandler`)."""
    mechanism = overrides.get("sasl.mechanism", "").upper()
    handlers = (overrides.get("sasl.login.callback.handler.class", ""),
                overrides.get("sasl.client.callback.handler.class", ""))
    return mechanism == "AWS_MSK_IAM" or (
        mechanism == "OAUTHBEARER" and any(h.startswith(MSK_IAM_PACKAGE) for h in handlers))


def auto_offset_reset(config: SinkConfig) -> str:
    """Where a topic-partition with no committed offset starts: earliest (default) or latest."""
    value = config.consumer_overrides().get("auto.offset.reset", "earliest").lower()
    if value not in ("earliest", "latest"):
        raise ConfigError("consumer.override.auto.offset.reset", f"{value!r}: expected earliest or latest")
    return value


def _use_msk_iam(settings: dict, config: SinkConfig) -> None:
    region = os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION") or config["s3.region"]
    settings["security.protocol"] = settings.get("security.protocol", "SASL_SSL")
    settings["sasl.mechanisms"] = "OAUTHBEARER"
    settings["oauth_cb"] = _MskIamToken(region)


class _MskIamToken:
    """oauth_cb for MSK IAM: a signed token and its expiry in seconds (librdkafka's unit)."""

    def __init__(self, region: str):
        self.region = region

    def __call__(self, _config_str):
        from aws_msk_iam_sasl_signer import MSKAuthTokenProvider

        token, expiry_ms = MSKAuthTokenProvider.generate_auth_token(self.region)
        return token, expiry_ms / 1000
