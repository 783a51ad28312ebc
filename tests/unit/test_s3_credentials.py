"""The S3 client's credentials per `s3.credentials.provider.class` (storage/credentials.py), against moto's S3
and STS: environment variables read as the Java SDK v1 reads them, static keys, and an assumed role with its
session name and external id, shared by a process's clients and refreshed before it expires."""

from __future__ import annotations

import datetime

import boto3
import pytest

from sink_engine.errors import ConfigError
from sink_engine.storage import credentials as module
from sink_engine.storage.credentials import S3Credentials, assumed_role_session, environment_keys
from sink_engine.storage.s3 import S3Access, s3_client, upload_client
from sink_engine.validation import parse_checked_config
from tests.conftest import BUCKET

ROLE = "arn:aws:iam::123456789012:role/lake-writer"
ASSUME = {
    "s3.credentials.provider.class": "io.confluent.connect.s3.auth.AwsAssumeRoleCredentialsProvider",
    "s3.credentials.provider.sts.role.arn": ROLE,
    "s3.credentials.provider.sts.role.session.name": "sink-orders",
    "s3.credentials.provider.sts.role.external.id": "ext-7f3a",
}
BASE = {
    "name": "orders",
    "topics": "orders",
    "bootstrap.servers": "localhost:9092",
    "s3.bucket.name": BUCKET,
    "s3.region": "us-east-1",
    "flush.size": "10",
    "format.class": "JsonFormat",
}


def access(**keys) -> S3Access:
    return S3Access.from_config(parse_checked_config({**BASE, **keys}))


def signing_key(client) -> str:
    return client._request_signer._credentials.get_frozen_credentials().access_key


@pytest.mark.parametrize(
    "environ, expected",
    [
        (
            {"AWS_ACCESS_KEY_ID": "AKID", "AWS_SECRET_ACCESS_KEY": "secret"},
            {"aws_access_key_id": "AKID", "aws_secret_access_key": "secret"},
        ),
        (
            {"AWS_ACCESS_KEY": "AKALT", "AWS_SECRET_KEY": "alt-secret"},  # the v1 SDK's alternate names
            {"aws_access_key_id": "AKALT", "aws_secret_access_key": "alt-secret"},
        ),
        (
            {
                "AWS_ACCESS_KEY_ID": "AKID",
                "AWS_ACCESS_KEY": "AKALT",
                "AWS_SECRET_KEY": "first",
                "AWS_SECRET_ACCESS_KEY": "second",
            },  # v1 order: AWS_ACCESS_KEY_ID, then AWS_SECRET_KEY first
            {"aws_access_key_id": "AKID", "aws_secret_access_key": "first"},
        ),
        (
            {"AWS_ACCESS_KEY_ID": " AKID ", "AWS_SECRET_ACCESS_KEY": "secret", "AWS_SESSION_TOKEN": "token"},
            {"aws_access_key_id": "AKID", "aws_secret_access_key": "secret", "aws_session_token": "token"},
        ),
        (
            {"AWS_ACCESS_KEY_ID": "", "AWS_ACCESS_KEY": "AKALT", "AWS_SECRET_ACCESS_KEY": "secret"},  # blank is absent
            {"aws_access_key_id": "AKALT", "aws_secret_access_key": "secret"},
        ),
    ],
)
def test_the_environment_provider_reads_the_variables_as_the_java_sdk_v1(environ, expected):
    assert environment_keys(environ) == expected


@pytest.mark.parametrize("environ", [{}, {"AWS_ACCESS_KEY_ID": "AKID"}, {"AWS_SECRET_KEY": "s", "AWS_ACCESS_KEY": " "}])
def test_the_environment_provider_without_keys_is_an_error_naming_the_provider_key(environ):
    with pytest.raises(ConfigError) as caught:
        environment_keys(environ)
    assert caught.value.key == "s3.credentials.provider.class" and "AWS_ACCESS_KEY_ID" in str(caught.value)


def test_the_environment_provider_signs_with_the_processs_variables(stack, monkeypatch):
    # given the environment provider and keys in this process's environment
    monkeypatch.setenv("AWS_ACCESS_KEY", "AKIAENVIRONMENT")
    monkeypatch.delenv("AWS_ACCESS_KEY_ID")
    settings = access(**{"s3.credentials.provider.class": "com.amazonaws.auth.EnvironmentVariableCredentialsProvider"})
    # when the S3 client is built, then it signs with them
    assert signing_key(s3_client(settings)) == "AKIAENVIRONMENT"


@pytest.mark.parametrize(
    "provider",
    [
        "AwsAccessKeyCredentialsProvider",
        "DefaultAWSCredentialsProviderChain",
        "software.amazon.awssdk.auth.credentials.EnvironmentVariableCredentialsProvider",
    ],
)
def test_static_keys_sign_with_the_providers_that_take_no_settings(stack, provider):
    # given static keys (the connector replaces a provider without settings of its own by them)
    settings = access(
        **{
            "s3.credentials.provider.class": provider,
            "aws.access.key.id": "AKIASTATIC",
            "aws.secret.access.key": "static-secret",
        }
    )
    # then both clients sign with them, and moto's S3 answers
    assert signing_key(s3_client(settings)) == signing_key(upload_client(settings)) == "AKIASTATIC"
    s3_client(settings).head_bucket(Bucket=BUCKET)


@pytest.mark.parametrize(
    "keys, key, message",
    [
        ({"s3.credentials.provider.class": "AwsAccessKeyCredentialsProvider"}, "aws.access.key.id", "is required"),
        (
            {"s3.credentials.provider.class": "com.example.VaultCredentialsProvider"},
            "s3.credentials.provider.class",
            "not a class this engine knows",
        ),
        (
            {**ASSUME, "s3.credentials.provider.sts.role.arn": None},
            "s3.credentials.provider.sts.role.arn",
            "is required",
        ),
        (
            {**ASSUME, "s3.credentials.provider.sts.role.arn": "lake-writer"},
            "s3.credentials.provider.sts.role.arn",
            "is not an IAM role ARN",
        ),
        (
            {**ASSUME, "s3.credentials.provider.sts.role.session.name": None},
            "s3.credentials.provider.sts.role.session.name",
            "is required",
        ),
        (
            {**ASSUME, "s3.credentials.provider.sts.role.session.name": "sink orders"},
            "s3.credentials.provider.sts.role.session.name",
            "is not 2-64 letters",
        ),
        (
            {**ASSUME, "s3.credentials.provider.sts.role.external.id": None},
            "s3.credentials.provider.sts.role.external.id",
            "is required",
        ),
        (
            {"s3.credentials.provider.sts.role.arn": ROLE},
            "s3.credentials.provider.sts.role.arn",
            "is only used with s3.credentials.provider.class=AwsAssumeRoleCredentialsProvider",
        ),
    ],
)
def test_a_providers_missing_or_stray_setting_is_an_error_naming_its_key(keys, key, message):
    with pytest.raises(ConfigError) as caught:
        access(**{k: v for k, v in keys.items() if v is not None})
    assert caught.value.key == key and message in str(caught.value)


@pytest.fixture
def assume_role_calls(stack, monkeypatch):
    """The AssumeRole requests made by clients of the default session (the default chain signs them), as sent."""
    monkeypatch.setattr(module, "_SESSIONS", {})
    boto3.setup_default_session()
    calls = []
    boto3.DEFAULT_SESSION.events.register(
        "provide-client-params.sts.AssumeRole", lambda params, **_: calls.append(dict(params))
    )
    yield calls
    boto3.setup_default_session()


def test_an_assumed_role_signs_the_s3_requests_with_its_session_name_and_external_id(assume_role_calls):
    # given the assume-role provider without static keys (the default chain signs AssumeRole)
    settings = access(**ASSUME)
    # when both clients of a task are built and used
    uploads, reads = upload_client(settings), s3_client(settings)
    uploads.put_object(Bucket=BUCKET, Key="assumed/object", Body=b"x")
    reads.head_object(Bucket=BUCKET, Key="assumed/object")
    # then one AssumeRole, with the role, session name and external id, gave both their credentials
    assert assume_role_calls == [{"RoleArn": ROLE, "RoleSessionName": "sink-orders", "ExternalId": "ext-7f3a"}]
    assert signing_key(uploads) == signing_key(reads) != "testing"
    identity = assumed_role_session(settings.credentials, "us-east-1").client("sts").get_caller_identity()
    assert identity["Arn"] == "arn:aws:sts::123456789012:assumed-role/lake-writer/sink-orders"


def test_with_static_keys_the_assume_role_call_is_signed_with_them(stack):
    # given the assume-role provider and static keys (the connector builds its STS client from them)
    settings = access(**ASSUME, **{"aws.access.key.id": "AKIABASE", "aws.secret.access.key": "base-secret"})
    # then AssumeRole is signed with the static keys, and the S3 client with the role's
    base = module._base_session(settings.credentials).get_credentials().get_frozen_credentials()
    assert (base.access_key, base.secret_key) == ("AKIABASE", "base-secret")
    assert signing_key(s3_client(settings)) not in ("AKIABASE", "testing")


def test_the_assumed_role_is_refreshed_before_it_expires(assume_role_calls):
    # given a clock the test moves, and the assumed role's credentials (moto: one hour, as STS's default)
    now = [datetime.datetime.now(datetime.UTC)]
    settings = access(**ASSUME)
    session = assumed_role_session(settings.credentials, "us-east-1", clock=lambda: now[0])
    client = session.client("s3", region_name="us-east-1")
    client.head_bucket(Bucket=BUCKET)
    first = session.get_credentials().get_frozen_credentials().access_key
    # when 40 minutes pass, then the same credentials serve
    now[0] += datetime.timedelta(minutes=40)
    client.head_bucket(Bucket=BUCKET)
    assert len(assume_role_calls) == 1
    # when 50 minutes have passed (less than 15 minutes left), then the role is assumed again before it expires
    now[0] += datetime.timedelta(minutes=10)
    client.head_bucket(Bucket=BUCKET)
    assert len(assume_role_calls) == 2
    assert session.get_credentials().get_frozen_credentials().access_key != first


def test_a_refused_assume_role_is_an_error_naming_the_role_key(stack, monkeypatch):
    # given settings STS refuses (moto checks a session name's length only; the config check is bypassed here)
    monkeypatch.setattr(module, "_SESSIONS", {})
    settings = S3Credentials("assumerole", assume=module.AssumeRole(ROLE, "s" * 65, "ext-7f3a", None))
    # when the S3 client first needs credentials, then the error names the key and the role
    with pytest.raises(ConfigError) as caught:
        s3_client(S3Access("us-east-1", None, settings)).head_bucket(Bucket=BUCKET)
    assert caught.value.key == "s3.credentials.provider.sts.role.arn" and ROLE in str(caught.value)
