"""Kafka client settings from connector configs as Java users write them, MSK IAM included."""

from __future__ import annotations

import pytest

from sink_engine.errors import ConfigError
from sink_engine.source.client_config import consumer_settings
from sink_engine.source.settings import SourceSettings
from sink_engine.validation import parse_checked_config
from tests.builders import connector_keys

BASE = connector_keys({"bootstrap.servers": "b-1:9098", "value.converter.schemas.enable": "false"})  # MSK IAM's port
HANDLER = "software.amazon.msk.auth.iam.IAMOAuthBearerLoginCallbackHandler"


def settings(**overrides) -> dict:
    overrides = {f"consumer.override.{k}": v for k, v in overrides.items()}
    return consumer_settings(SourceSettings.from_config(parse_checked_config({**BASE, **overrides})))


@pytest.mark.parametrize(
    "overrides",
    [
        {
            "sasl.mechanism": "AWS_MSK_IAM",
            "security.protocol": "SASL_SSL",
            "sasl.jaas.config": "software.amazon.msk.auth.iam.IAMLoginModule required;",
            "sasl.client.callback.handler.class": "software.amazon.msk.auth.iam.IAMClientCallbackHandler",
        },
        {
            "sasl.mechanism": "OAUTHBEARER",
            "security.protocol": "SASL_SSL",
            "sasl.login.callback.handler.class": HANDLER,
            "sasl.client.callback.handler.class": HANDLER,
        },
    ],
)
def test_msk_iam_becomes_oauthbearer_with_a_signed_token_callback(overrides):
    result = settings(**overrides)
    assert result["sasl.mechanisms"] == "OAUTHBEARER" and result["security.protocol"] == "SASL_SSL"
    assert callable(result["oauth_cb"])
    assert not any(k.startswith("sasl.") and k not in ("sasl.mechanisms",) for k in result)


def test_other_settings_pass_through_and_java_only_ones_are_dropped():
    result = settings(
        **{
            "sasl.mechanism": "SCRAM-SHA-512",
            "sasl.username": "u",
            "sasl.password": "p",
            "security.protocol": "SASL_SSL",
            "max.poll.records": "500",
            "enable.auto.commit": "true",
            "client.id": "sink",
        }
    )
    assert result["sasl.mechanisms"] == "SCRAM-SHA-512" and result["sasl.username"] == "u"
    assert result["client.id"] == "sink"
    assert "oauth_cb" not in result and "max.poll.records" not in result
    assert result["enable.auto.commit"] is False


SCRAM = "org.apache.kafka.common.security.scram.ScramLoginModule"
PLAIN = "org.apache.kafka.common.security.plain.PlainLoginModule"


def test_a_scram_jaas_config_reaches_the_client_as_username_and_password():
    result = settings(
        **{
            "security.protocol": "SASL_SSL",
            "sasl.mechanism": "SCRAM-SHA-512",
            "sasl.jaas.config": f'{SCRAM} required username="sink-user" password="p@ss \\"w0rd\\"";',
        }
    )
    assert result["sasl.mechanisms"] == "SCRAM-SHA-512" and result["security.protocol"] == "SASL_SSL"
    assert result["sasl.username"] == "sink-user" and result["sasl.password"] == 'p@ss "w0rd"'
    assert "sasl.jaas.config" not in result and "sasl.mechanism" not in result


def test_a_plain_jaas_config_at_the_top_level_works_as_under_consumer_override():
    config = parse_checked_config(
        {
            **BASE,
            "security.protocol": "SASL_PLAINTEXT",
            "sasl.mechanism": "PLAIN",
            "sasl.jaas.config": f"{PLAIN} required username=alice password=secret;",
        }
    )
    result = consumer_settings(SourceSettings.from_config(config))
    assert (result["sasl.mechanisms"], result["sasl.username"], result["sasl.password"]) == ("PLAIN", "alice", "secret")
    assert result["security.protocol"] == "SASL_PLAINTEXT"


def test_confluent_cloud_api_keys_become_msk_sasl_scram():
    cloud = {
        "connector.class": "S3_SINK",
        "input.data.format": "JSON",
        "output.data.format": "JSON",
        "time.interval": "DAILY",
        "kafka.api.key": "KEY1",
        "kafka.api.secret": "SECRET1",
    }
    base = {k: v for k, v in BASE.items() if k not in ("format.class", "value.converter.schemas.enable")}
    result = consumer_settings(SourceSettings.from_config(parse_checked_config({**base, **cloud})))
    assert (result["security.protocol"], result["sasl.mechanisms"]) == ("SASL_SSL", "SCRAM-SHA-512")
    assert (result["sasl.username"], result["sasl.password"]) == ("KEY1", "SECRET1")
    plain = consumer_settings(
        SourceSettings.from_config(parse_checked_config({**base, **cloud, "consumer.override.sasl.mechanism": "PLAIN"}))
    )
    assert plain["sasl.mechanisms"] == "PLAIN"


@pytest.mark.parametrize(
    "overrides, key, message",
    [
        (
            {
                "sasl.mechanism": "GSSAPI",
                "security.protocol": "SASL_SSL",
                "sasl.jaas.config": "com.sun.security.auth.module.Krb5LoginModule required useKeyTab=true;",
            },
            "consumer.override.sasl.jaas.config",
            "login module com.sun.security.auth.module.Krb5LoginModule is not supported",
        ),
        (
            {"security.protocol": "SASL_SSL", "sasl.jaas.config": f'{SCRAM} required username="u" password="p";'},
            "consumer.override.sasl.mechanism",
            "ScramLoginModule needs SCRAM-SHA-256 or SCRAM-SHA-512",
        ),
        (
            {"sasl.mechanism": "SCRAM-SHA-256", "sasl.jaas.config": f'{SCRAM} required username="u" password="p";'},
            "consumer.override.security.protocol",
            "would not be sent",
        ),
        (
            {
                "sasl.mechanism": "PLAIN",
                "security.protocol": "SASL_SSL",
                "sasl.jaas.config": f'{PLAIN} required username="u";',
            },
            "consumer.override.sasl.jaas.config",
            "needs password",
        ),
        (
            {
                "sasl.mechanism": "PLAIN",
                "security.protocol": "SASL_SSL",
                "sasl.jaas.config": f'{PLAIN} required username="u"',
            },
            "consumer.override.sasl.jaas.config",
            "does not end with ';'",
        ),
        (
            {
                "sasl.mechanism": "OAUTHBEARER",
                "security.protocol": "SASL_SSL",
                "sasl.jaas.config": "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required;",
            },
            "consumer.override.sasl.jaas.config",
            "understood only with MSK IAM's callback handler",
        ),
        (
            {"sasl.mechanism": "OAUTHBEARER", "security.protocol": "SASL_SSL"},
            "consumer.override.sasl.mechanism",
            "OAUTHBEARER is understood only as MSK IAM auth",
        ),
        (
            {
                "sasl.mechanism": "AWS_MSK_IAM",
                "security.protocol": "SASL_SSL",
                "sasl.jaas.config": 'software.amazon.msk.auth.iam.IAMLoginModule required awsRoleArn="arn:aws:iam::1:role/r";',
            },
            "consumer.override.sasl.jaas.config",
            "option awsRoleArn would change who signs",
        ),
        (
            {"sasl.mechanism": "PLAIN", "security.protocol": "SASL_SSL"},
            "consumer.override.sasl.mechanism",
            "PLAIN needs a username and password",
        ),
        (
            {
                "sasl.mechanism": "PLAIN",
                "security.protocol": "SASL_SSL",
                "sasl.username": "u",
                "sasl.password": "p",
                "sasl.jaas.config": f'{PLAIN} required username="u" password="p";',
            },
            "consumer.override.sasl.username",
            "so does consumer.override.sasl.jaas.config",
        ),
        (
            {"sasl.login.callback.handler.class": "com.example.OidcHandler"},
            "consumer.override.sasl.login.callback.handler.class",
            "is a Java class",
        ),
    ],
)
def test_authentication_the_engine_cannot_do_is_an_error_naming_the_key(overrides, key, message):
    with pytest.raises(ConfigError) as caught:
        settings(**overrides)
    assert caught.value.key == key and message in str(caught.value)


def test_the_same_setting_given_twice_must_agree():
    with pytest.raises(ConfigError, match="'consumer.override.security.protocol': differs from security.protocol"):
        parse_checked_config({**BASE, "security.protocol": "SASL_SSL", "consumer.override.security.protocol": "SSL"})
