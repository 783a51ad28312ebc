"""`${secrets:...}` and `${ssm:...}` references: their forms, resolution from AWS Secrets Manager and SSM Parameter
Store (moto), the errors that name the config key, and how credentials are shown and judged in clear text."""

from __future__ import annotations

import json

import boto3
import pytest
from moto import mock_aws

from sink_engine.config import load_config, parse_config
from sink_engine.config.credentials import clear_text_credential, masked
from sink_engine.errors import ConfigError
from sink_engine.secrets import (
    PARAMETER_STORE,
    SECRETS_MANAGER,
    Reference,
    SecretReadError,
    parse_reference,
    references,
    resolve,
)
from tests.builders import connector_keys

REGION = "eu-west-1"
BASE = connector_keys(
    {
        "bootstrap.servers": "b-1:9096",
        "s3.region": REGION,  # MSK SASL/SCRAM's port
        "value.converter.schemas.enable": "false",
    }
)
SCRAM = "org.apache.kafka.common.security.scram.ScramLoginModule"


PARAMETER_ARN = "arn:aws:ssm:us-east-2:111122223333:parameter/sink/registry"


@pytest.mark.parametrize(
    "prefix, body, source, name, field",
    [
        ("secrets", "msk/sink:password", SECRETS_MANAGER, "msk/sink", "password"),
        ("secrets", "msk/sink", SECRETS_MANAGER, "msk/sink", None),
        (
            "secrets",
            "arn:aws:secretsmanager:us-east-2:111122223333:secret:msk/sink-AbCdEf:password",
            SECRETS_MANAGER,
            "arn:aws:secretsmanager:us-east-2:111122223333:secret:msk/sink-AbCdEf",
            "password",
        ),
        (
            "aws:secretsmanager",
            "arn:aws:secretsmanager:us-east-2:111122223333:secret:msk/sink-AbCdEf",
            SECRETS_MANAGER,
            "arn:aws:secretsmanager:us-east-2:111122223333:secret:msk/sink-AbCdEf",
            None,
        ),
        ("ssm", "/sink/registry", PARAMETER_STORE, "/sink/registry", None),
        ("ssm", "/sink/registry:password", PARAMETER_STORE, "/sink/registry", "password"),
        ("aws:ssm", "registry-token:a:b", PARAMETER_STORE, "registry-token", "a:b"),  # the first ':' ends the name
        ("ssm", PARAMETER_ARN, PARAMETER_STORE, PARAMETER_ARN, None),
        ("aws:ssm", f"{PARAMETER_ARN}:password", PARAMETER_STORE, PARAMETER_ARN, "password"),
    ],
)
def test_reference_forms(prefix, body, source, name, field):
    assert parse_reference("k", prefix, body) == Reference("k", source, name, field)


@pytest.mark.parametrize(
    "name, region, resource",
    [
        ("/sink/registry", None, "arn:aws:ssm:eu-west-1:222222222222:parameter/sink/registry"),
        ("registry-token", None, "arn:aws:ssm:eu-west-1:222222222222:parameter/registry-token"),
        (PARAMETER_ARN, "us-east-2", PARAMETER_ARN),
    ],
)
def test_a_parameter_is_granted_and_read_as_iam_and_ssm_name_it(name, region, resource):
    (ref,) = references({"k": f"${{ssm:{name}}}"})
    assert (ref.region, ref.arn_pattern("eu-west-1", "222222222222")) == (region, resource)


def test_all_spellings_in_text_are_found_and_malformed_ones_name_their_key():
    document = {
        "config": {
            "a": "x ${secrets:one:k} y ${aws:secretsmanager:two}",
            "b": 3,
            "c": "${ssm:/p/three:k}${aws:ssm:four}",
        }
    }
    assert [(r.config_key, r.source.service, r.name, r.field) for r in references(document)] == [
        ("a", "secretsmanager", "one", "k"),
        ("a", "secretsmanager", "two", None),
        ("c", "ssm", "/p/three", "k"),
        ("c", "ssm", "four", None),
    ]
    with pytest.raises(ConfigError, match="'kafka.api.secret': .*names no JSON key"):
        parse_config({**BASE, "kafka.api.secret": "${secrets:one:}"})
    with pytest.raises(ConfigError, match="'x': .*names no AWS Secrets Manager secret ARN"):
        references({"x": "${secrets:arn:aws:s3:::bucket}"})


@pytest.mark.parametrize(
    "value, message",
    [
        ("${ssm:/sink/pw:}", "names no JSON key"),
        ("${ssm:sink/pw}", "'sink/pw' is not a parameter name"),  # a name with a '/' must start with one
        ("${ssm:/sink//pw}", "is not a parameter name"),
        ("${ssm:/sink/p w}", "is not a parameter name"),
        ("${ssm:/aws/reference/secretsmanager/msk}", "names a parameter of AWS's own"),
        ("${aws:ssm:SSM-settings}", "names a parameter of AWS's own"),
        (
            "${ssm:arn:aws:secretsmanager:us-east-2:111122223333:secret:x-AbCdEf}",
            "names no AWS Systems Manager Parameter Store parameter ARN",
        ),
        ("${ssm:arn:aws:ssm:us-east-2:111122223333:document/x}", "names no AWS Systems Manager Parameter Store"),
        ("${ssm:arn:aws:ssm:us-east-2:111122223333:parameter/aws/service/x}", "names a parameter of AWS's own"),
    ],
)
def test_a_malformed_parameter_reference_names_its_key(value, message):
    with pytest.raises(ConfigError) as caught:
        parse_config({**BASE, "kafka.api.secret": value})
    assert caught.value.key == "kafka.api.secret" and message in str(caught.value)


@pytest.fixture
def secrets(monkeypatch):
    for name in ("AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_SECRETS_MANAGER", "AWS_ENDPOINT_URL_SSM"):  # the functional
        monkeypatch.delenv(name, raising=False)  # tests' stack
    with mock_aws():
        client = boto3.client("secretsmanager", region_name=REGION)
        client.create_secret(Name="msk/sink", SecretString=json.dumps({"username": "sink-user", "password": "pw1"}))
        client.create_secret(Name="plain-token", SecretString="tok-123")
        ssm = boto3.client("ssm", region_name=REGION)
        ssm.put_parameter(
            Name="/sink/registry",
            Type="SecureString",
            Value=json.dumps({"user": "reader", "password": "reg-pw", "port": 8081}),
        )
        ssm.put_parameter(Name="api-token", Type="SecureString", Value="tok-ssm")
        ssm.put_parameter(Name="/sink/region", Type="String", Value="eu-west-1")
        yield client


def _client_for(service, region):
    return boto3.client(service, region_name=region or REGION)


def test_references_resolve_to_json_fields_or_the_whole_secret_inside_any_text(secrets):
    arn = secrets.describe_secret(SecretId="msk/sink")["ARN"]
    document = {
        "name": "c",
        "config": {
            **BASE,
            "security.protocol": "SASL_SSL",
            "sasl.mechanism": "SCRAM-SHA-512",
            "sasl.jaas.config": f'{SCRAM} required username="${{secrets:msk/sink:username}}" '
            f'password="${{aws:secretsmanager:{arn}:password}}";',
            "value.converter.basic.auth.user.info": "reader:${secrets:plain-token}",
        },
    }
    resolved = resolve(document, _client_for)
    assert resolved["config"]["sasl.jaas.config"] == f'{SCRAM} required username="sink-user" password="pw1";'
    assert resolved["config"]["value.converter.basic.auth.user.info"] == "reader:tok-123"
    assert resolved["config"]["flush.size"] == 10 and resolved["name"] == "c"


def test_parameters_resolve_decrypted_by_name_or_arn_to_json_fields_or_the_whole_value(secrets):
    arn = boto3.client("ssm", region_name=REGION).get_parameter(Name="/sink/registry")["Parameter"]["ARN"]
    document = {
        "name": "c",
        "config": {
            **BASE,
            "value.converter.basic.auth.user.info": "${ssm:/sink/registry:user}:${aws:ssm:api-token}",
            "key.converter.basic.auth.user.info": f"x:${{aws:ssm:{arn}:password}} ${{ssm:/sink/registry:port}}",
            "kafka.api.secret": "${secrets:plain-token}/${ssm:/sink/region}",
        },
    }
    resolved = resolve(document, _client_for)["config"]
    assert resolved["value.converter.basic.auth.user.info"] == "reader:tok-ssm"  # SecureString: its plain text
    assert resolved["key.converter.basic.auth.user.info"] == "x:reg-pw 8081"
    assert resolved["kafka.api.secret"] == "tok-123/eu-west-1"


def test_each_parameter_is_read_once(secrets):
    reads = []

    def counting(service, region):
        client = _client_for(service, region)
        client.meta.events.register(
            "provide-client-params.ssm.GetParameter", lambda params, **_: reads.append(params["Name"])
        )
        return client

    resolve(
        {
            **BASE,
            "kafka.api.secret": "${ssm:/sink/registry:user}${ssm:/sink/registry:password}",
            "aws.secret.access.key": "${aws:ssm:/sink/registry:password}",
        },
        counting,
    )
    assert reads == ["/sink/registry"]


@pytest.mark.parametrize(
    "value, message",
    [
        ("${secrets:missing:password}", "secret 'missing' does not exist in AWS Secrets Manager"),
        ("${secrets:msk/sink:token}", "has no key 'token' (it has password, username)"),
        ("${secrets:plain-token:password}", "is not a JSON object"),
        ("${ssm:/sink/missing}", "parameter '/sink/missing' does not exist in AWS Systems Manager Parameter Store"),
        ("${ssm:/sink/registry:token}", "parameter '/sink/registry' has no key 'token' (it has password, port, user)"),
        ("${ssm:api-token:password}", "reference its whole value as ${ssm:api-token}"),
    ],
)
def test_a_secret_that_is_not_there_is_an_error_naming_the_config_key(secrets, value, message):
    with pytest.raises(ConfigError) as caught:
        resolve({**BASE, "kafka.api.secret": value}, _client_for)
    assert caught.value.key == "kafka.api.secret" and message in str(caught.value)


@pytest.mark.parametrize(
    "value, source",
    [
        ("${ssm:/sink/registry:user}", "AWS Systems Manager Parameter Store"),
        ("${secrets:msk/sink:username}", "AWS Secrets Manager"),
    ],
)
def test_a_store_that_cannot_be_reached_is_a_read_error_naming_the_key(secrets, value, source):
    from botocore.config import Config

    def unreachable(service, region):  # nothing listens on port 9 (discard)
        return boto3.client(
            service,
            region_name=REGION,
            endpoint_url="http://127.0.0.1:9",
            config=Config(retries={"max_attempts": 1}, connect_timeout=1),
        )

    with pytest.raises(SecretReadError, match=f"config key 'kafka.api.secret': cannot reach {source} for "):
        resolve({**BASE, "kafka.api.secret": value}, unreachable)


def test_load_config_resolves_for_a_run_and_only_checks_for_validate(secrets, tmp_path):
    path = tmp_path / "connector.json"
    path.write_text(
        json.dumps(
            {
                **BASE,
                "security.protocol": "SASL_SSL",
                "sasl.mechanism": "SCRAM-SHA-512",
                "sasl.jaas.config": f'{SCRAM} required username="sink-user" password="${{secrets:msk/sink:password}}";',
            }
        )
    )
    from sink_engine.source.client_config import consumer_settings
    from sink_engine.source.settings import SourceSettings

    run = consumer_settings(SourceSettings.from_config(load_config(str(path), secrets_client_for=_client_for)))
    assert (run["sasl.username"], run["sasl.password"]) == ("sink-user", "pw1")
    validate = consumer_settings(SourceSettings.from_config(load_config(str(path), resolve_secrets=False)))
    assert validate["sasl.password"] == "${secrets:msk/sink:password}"


@pytest.mark.parametrize(
    "key, value, clear",
    [
        ("kafka.api.secret", "s3cr3t", True),
        ("kafka.api.secret", "${secrets:cc/api:secret}", False),
        ("kafka.api.secret", "${ssm:/cc/api-secret}", False),
        ("kafka.api.secret", "${aws:ssm:/cc/api:secret}", False),
        ("kafka.api.secret", "x${ssm:/cc/api-secret}", True),
        ("consumer.override.sasl.jaas.config", f'{SCRAM} required username="u" password="p";', True),
        ("consumer.override.sasl.jaas.config", f'{SCRAM} required username="u" password="${{secrets:x:p}}";', False),
        (
            "consumer.override.sasl.jaas.config",
            "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required;",
            False,
        ),
        ("value.converter.basic.auth.user.info", "user:pw", True),
        ("value.converter.basic.auth.user.info", "user:${secrets:sr:password}", False),
        ("value.converter.basic.auth.user.info", "user:${ssm:/sr/password}", False),
        ("consumer.override.sasl.jaas.config", f'{SCRAM} required username="u" password="${{ssm:/x/p}}";', False),
        ("value.converter.schema.registry.url", "https://user:pw@registry:8081", True),
        ("value.converter.schema.registry.url", "https://user:${secrets:sr:password}@registry:8081", False),
        ("value.converter.schema.registry.url", "https://registry:8081", False),
        ("aws.secret.access.key", "wJalrXUtnFEMI", True),
        ("s3.bucket.name", "lake", False),
    ],
)
def test_credentials_in_clear_text_are_told_from_references(key, value, clear):
    assert clear_text_credential(key, value) is clear


def test_validate_shows_credentials_masked_and_references_as_written():
    jaas = f'{SCRAM} required username="u" password="hunter2";'
    assert masked("sasl.jaas.config", jaas) == f'{SCRAM} required username="u" password="********";'
    assert masked("kafka.api.secret", "hunter2") == "********"
    assert masked("kafka.api.secret", "${secrets:cc:secret}") == "${secrets:cc:secret}"
    assert masked("kafka.api.secret", "${ssm:/cc/secret}") == "${ssm:/cc/secret}"
    assert masked("value.converter.basic.auth.user.info", "user:${aws:ssm:pw}") == "user:${aws:ssm:pw}"
    assert masked("value.converter.basic.auth.user.info", "user:hunter2") == "user:********"
    assert masked("value.converter.schema.registry.url", "https://u:hunter2@r:8081") == "https://u:********@r:8081"
    assert masked("s3.bucket.name", "lake") == "lake"
