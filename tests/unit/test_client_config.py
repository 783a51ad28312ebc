"""Kafka client settings from connector configs as Java users write them, MSK IAM included."""
from __future__ import annotations

import pytest

from sink_engine.config import parse_config
from sink_engine.source.client_config import consumer_settings

BASE = {"name": "c", "topics": "t", "bootstrap.servers": "b-1:9098", "s3.bucket.name": "lake", "flush.size": 10,
        "format.class": "JsonFormat", "value.converter.schemas.enable": "false"}
HANDLER = "software.amazon.msk.auth.iam.IAMOAuthBearerLoginCallbackHandler"


def settings(**overrides) -> dict:
    return consumer_settings(parse_config({**BASE, **{f"consumer.override.{k}": v for k, v in overrides.items()}}))


@pytest.mark.parametrize("overrides", [
    {"sasl.mechanism": "AWS_MSK_IAM", "security.protocol": "SASL_SSL",
     "sasl.jaas.config": "software.amazon.msk.auth.iam.IAMLoginModule required;",
     "sasl.client.callback.handler.class": "software.amazon.msk.auth.iam.IAMClientCallbackHandler"},
    {"sasl.mechanism": "OAUTHBEARER", "security.protocol": "SASL_SSL",
     "sasl.login.callback.handler.class": HANDLER, "sasl.client.callback.handler.class": HANDLER},
])
def test_msk_iam_becomes_oauthbearer_with_a_signed_token_callback(overrides):
    result = settings(**overrides)
    assert result["sasl.mechanisms"] == "OAUTHBEARER" and result["security.protocol"] == "SASL_SSL"
    assert callable(result["oauth_cb"])
    assert not any(k.startswith("sasl.") and k not in ("sasl.mechanisms",) for k in result)


def test_other_settings_pass_through_and_java_only_ones_are_dropped():
    result = settings(**{"sasl.mechanism": "SCRAM-SHA-512", "sasl.username": "u", "max.poll.records": "500",
                         "enable.auto.commit": "true"})
    assert result["sasl.mechanism"] == "SCRAM-SHA-512" and result["sasl.username"] == "u"
    assert "oauth_cb" not in result and "max.poll.records" not in result
    assert result["enable.auto.commit"] is False
