"""`${secrets:...}` references: their forms, resolution from AWS Secrets Manager (moto), the errors that name the
config key, and how credentials are shown and judged in clear text."""
from __future__ import annotations

import json

import boto3
import pytest
from moto import mock_aws

from sink_engine.config import load_config, parse_config
from sink_engine.config.credentials import clear_text_credential, masked
from sink_engine.errors import ConfigError
from sink_engine.secrets import SecretRef, parse_reference, references, resolve

REGION = "eu-west-1"
BASE = {"name": "c", "topics": "t", "bootstrap.servers": "b-1:9096", "s3.bucket.name": "lake", "s3.region": REGION,
        "flush.size": 10, "format.class": "JsonFormat", "value.converter.schemas.enable": "false"}
SCRAM = "org.apache.kafka.common.security.scram.ScramLoginModule"


@pytest.mark.parametrize("body, secret_id, field", [
    ("msk/sink:password", "msk/sink", "password"),
    ("msk/sink", "msk/sink", None),
    ("arn:aws:secretsmanager:us-east-2:111122223333:secret:msk/sink-AbCdEf:password",
     "arn:aws:secretsmanager:us-east-2:111122223333:secret:msk/sink-AbCdEf", "password"),
    ("arn:aws:secretsmanager:us-east-2:111122223333:secret:msk/sink-AbCdEf",
     "arn:aws:secretsmanager:us-east-2:111122223333:secret:msk/sink-AbCdEf", None),
])
def test_reference_forms(body, secret_id, field):
    assert parse_reference("k", body) == SecretRef("k", secret_id, field)


def test_both_spellings_in_text_are_found_and_malformed_ones_name_their_key():
    document = {"config": {"a": "x ${secrets:one:k} y ${aws:secretsmanager:two}", "b": 3}}
    assert [(r.config_key, r.secret_id, r.field) for r in references(document)] == [
        ("a", "one", "k"), ("a", "two", None)]
    with pytest.raises(ConfigError, match="'kafka.api.secret': .*names no JSON key"):
        parse_config({**BASE, "kafka.api.secret": "${secrets:one:}"})
    with pytest.raises(ConfigError, match="'x': .*names no Secrets Manager secret ARN"):
        references({"x": "${secrets:arn:aws:s3:::bucket}"})


@pytest.fixture
def secrets(monkeypatch):
    for name in ("AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_SECRETS_MANAGER"):  # the functional tests' stack sets them
        monkeypatch.delenv(name, raising=False)
    with mock_aws():
        client = boto3.client("secretsmanager", region_name=REGION)
        client.create_secret(Name="msk/sink", SecretString=json.dumps({"username": "sink-user", "password": "pw1"}))
        client.create_secret(Name="plain-token", SecretString="tok-123")
        yield client


def _client_for(region):
    return boto3.client("secretsmanager", region_name=region or REGION)


def test_references_resolve_to_json_fields_or_the_whole_secret_inside_any_text(secrets):
    arn = secrets.describe_secret(SecretId="msk/sink")["ARN"]
    document = {"name": "c", "config": {
        **BASE, "security.protocol": "SASL_SSL", "sasl.mechanism": "SCRAM-SHA-512",
        "sasl.jaas.config": f'{SCRAM} required username="${{secrets:msk/sink:username}}" '
                            f'password="${{aws:secretsmanager:{arn}:password}}";',
        "value.converter.basic.auth.user.info": "reader:${secrets:plain-token}"}}
    resolved = resolve(document, _client_for)
    assert resolved["config"]["sasl.jaas.config"] == f'{SCRAM} required username="sink-user" password="pw1";'
    assert resolved["config"]["value.converter.basic.auth.user.info"] == "reader:tok-123"
    assert resolved["config"]["flush.size"] == 10 and resolved["name"] == "c"


@pytest.mark.parametrize("value, message", [
    ("${secrets:missing:password}", "secret 'missing' does not exist"),
    ("${secrets:msk/sink:token}", "has no key 'token' (it has password, username)"),
    ("${secrets:plain-token:password}", "is not a JSON object"),
])
def test_a_secret_that_is_not_there_is_an_error_naming_the_config_key(secrets, value, message):
    with pytest.raises(ConfigError) as caught:
        resolve({**BASE, "kafka.api.secret": value}, _client_for)
    assert caught.value.key == "kafka.api.secret" and message in str(caught.value)


def test_load_config_resolves_for_a_run_and_only_checks_for_validate(secrets, tmp_path):
    path = tmp_path / "connector.json"
    path.write_text(json.dumps({**BASE, "security.protocol": "SASL_SSL", "sasl.mechanism": "SCRAM-SHA-512",
                                "sasl.jaas.config": f'{SCRAM} required username="sink-user" '
                                                    'password="${secrets:msk/sink:password}";'}))
    from sink_engine.source.client_config import consumer_settings
    from sink_engine.source.settings import SourceSettings

    run = consumer_settings(SourceSettings.from_config(load_config(str(path), secrets_client_for=_client_for)))
    assert (run["sasl.username"], run["sasl.password"]) == ("sink-user", "pw1")
    validate = consumer_settings(SourceSettings.from_config(load_config(str(path), resolve_secrets=False)))
    assert validate["sasl.password"] == "${secrets:msk/sink:password}"


@pytest.mark.parametrize("key, value, clear", [
    ("kafka.api.secret", "s3cr3t", True),
    ("kafka.api.secret", "${secrets:cc/api:secret}", False),
    ("consumer.override.sasl.jaas.config", f'{SCRAM} required username="u" password="p";', True),
    ("consumer.override.sasl.jaas.config", f'{SCRAM} required username="u" password="${{secrets:x:p}}";', False),
    ("consumer.override.sasl.jaas.config",
     "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required;", False),
    ("value.converter.basic.auth.user.info", "user:pw", True),
    ("value.converter.basic.auth.user.info", "user:${secrets:sr:password}", False),
    ("value.converter.schema.registry.url", "https://user:pw@registry:8081", True),
    ("value.converter.schema.registry.url", "https://user:${secrets:sr:password}@registry:8081", False),
    ("value.converter.schema.registry.url", "https://registry:8081", False),
    ("aws.secret.access.key", "wJalrXUtnFEMI", True),
    ("s3.bucket.name", "lake", False),
])
def test_credentials_in_clear_text_are_told_from_references(key, value, clear):
    assert clear_text_credential(key, value) is clear


def test_validate_shows_credentials_masked_and_references_as_written():
    jaas = f'{SCRAM} required username="u" password="hunter2";'
    assert masked("sasl.jaas.config", jaas) == f'{SCRAM} required username="u" password="********";'
    assert masked("kafka.api.secret", "hunter2") == "********"
    assert masked("kafka.api.secret", "${secrets:cc:secret}") == "${secrets:cc:secret}"
    assert masked("value.converter.basic.auth.user.info", "user:hunter2") == "user:********"
    assert masked("value.converter.schema.registry.url", "https://u:hunter2@r:8081") == "https://u:********@r:8081"
    assert masked("s3.bucket.name", "lake") == "lake"
