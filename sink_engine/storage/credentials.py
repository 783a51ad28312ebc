"""The S3 client's credentials, as the Confluent S3 sink applies `s3.credentials.provider.class`.

- default chain (DefaultAWSCredentialsProviderChain): boto3's own chain, the job's role;
- EnvironmentVariableCredentialsProvider: the keys in the process's environment, read as the Java SDK v1 reads
  them (AWS_ACCESS_KEY_ID, else AWS_ACCESS_KEY; AWS_SECRET_KEY, else AWS_SECRET_ACCESS_KEY; AWS_SESSION_TOKEN);
  each process reads its own, so Spark executors need them too;
- AwsAccessKeyCredentialsProvider: `aws.access.key.id` and `aws.secret.access.key`;
- AwsAssumeRoleCredentialsProvider: AssumeRole of `s3.credentials.provider.sts.role.arn` with its session name and
  external id (the connector requires all three), signed with the static keys when both are set, else with the
  default chain (as the connector's STS client); refreshed before expiry (botocore refreshes 15 minutes ahead), one
  AssumeRole per process until then.
With the default chain or the environment provider, static keys when set replace the provider, as in the
connector (it configures only the assume-role provider with them). Only the S3 client uses these credentials."""

from __future__ import annotations

import datetime
import os
import re
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Final

import boto3
import botocore.session
from botocore.credentials import CredentialProvider, CredentialResolver, DeferredRefreshableCredentials
from botocore.exceptions import BotoCoreError, ClientError

from sink_engine.aws_types import STSClient
from sink_engine.config import SinkConfig
from sink_engine.errors import ConfigError, StorageError

PROVIDER_KEY: Final = "s3.credentials.provider.class"
_STS = "s3.credentials.provider.sts."
# AssumeRole's own constraints on the values (STS API reference)
_ROLE_ARN = re.compile(r"arn:aws[a-z-]*:iam::\d{12}:role/[\w+=,.@/-]{1,512}")
_SESSION_NAME = re.compile(r"[\w+=,.@-]{2,64}")
_EXTERNAL_ID = re.compile(r"[\w+=,.@:/-]{2,1224}")


@dataclass(frozen=True)
class AssumeRole:
    role_arn: str  # s3.credentials.provider.sts.role.arn
    session_name: str  # .sts.role.session.name
    external_id: str  # .sts.role.external.id
    sts_region: str | None  # .sts.region


@dataclass(frozen=True)
class S3Credentials:
    """How the S3 client signs, read once from the config: `provider` is one of default, environment, accesskey,
    assumerole (the canonical names of `s3.credentials.provider.class`)."""

    provider: str
    access_key_id: str | None = None  # aws.access.key.id / aws.secret.access.key (both or neither)
    secret_access_key: str | None = field(default=None, repr=False)
    assume: AssumeRole | None = None

    @classmethod
    def from_config(cls, config: SinkConfig) -> S3Credentials:
        """ConfigError naming the key at fault: a provider's missing or malformed key, an STS key without
        AwsAssumeRoleCredentialsProvider."""
        provider = config[PROVIDER_KEY]
        key_id, secret = config["aws.access.key.id"] or None, config["aws.secret.access.key"] or None
        sts = {
            name: config.optional_text(_STS + name)
            for name in ("role.arn", "role.session.name", "role.external.id", "region")
        }
        if provider != "assumerole":
            for name, value in sts.items():
                if value:
                    raise ConfigError(_STS + name, f"is only used with {PROVIDER_KEY}=AwsAssumeRoleCredentialsProvider")
        if provider == "accesskey" and not (key_id and secret):
            missing = "aws.secret.access.key" if key_id else "aws.access.key.id"
            raise ConfigError(missing, "is required with AwsAccessKeyCredentialsProvider")
        assume = _assume_role(sts) if provider == "assumerole" else None
        return cls(provider, key_id, secret, assume)


def _assume_role(sts: dict[str, str | None]) -> AssumeRole:
    """The `s3.credentials.provider.sts.*` values (keyed without the prefix), checked as AssumeRole takes them."""
    values = {}
    for name, pattern, what in (
        ("role.arn", _ROLE_ARN, "an IAM role ARN (arn:aws:iam::<account>:role/<name>)"),
        ("role.session.name", _SESSION_NAME, "2-64 letters, digits or +=,.@_-"),
        ("role.external.id", _EXTERNAL_ID, "2-1224 letters, digits or +=,.@:/_-"),
    ):
        value = (sts[name] or "").strip()
        if not value:
            raise ConfigError(_STS + name, "is required with AwsAssumeRoleCredentialsProvider")
        if not pattern.fullmatch(value):
            raise ConfigError(_STS + name, f"{value!r} is not {what}")
        values[name] = value
    return AssumeRole(
        values["role.arn"],
        values["role.session.name"],
        values["role.external.id"],
        (sts["region"] or "").strip() or None,
    )


def client_source(credentials: S3Credentials, region: str) -> tuple:
    """(what to call `.client(...)` on, its credential keyword arguments) for the S3 client: boto3 itself with
    none (its chain) or with static keys, or the assumed role's session."""
    if credentials.access_key_id and credentials.provider != "assumerole":
        return boto3, {
            "aws_access_key_id": credentials.access_key_id,
            "aws_secret_access_key": credentials.secret_access_key,
        }
    if credentials.provider == "environment":
        return boto3, environment_keys(os.environ)
    if credentials.provider == "assumerole":
        return assumed_role_session(credentials, region), {}
    return boto3, {}


def environment_keys(environ: Mapping[str, str]) -> dict:
    """The keys EnvironmentVariableCredentialsProvider reads (see the module docstring); ConfigError naming
    `s3.credentials.provider.class` when they are absent."""

    def first(*names: str) -> str | None:
        return next((environ[n].strip() for n in names if (environ.get(n) or "").strip()), None)

    key_id, secret = first("AWS_ACCESS_KEY_ID", "AWS_ACCESS_KEY"), first("AWS_SECRET_KEY", "AWS_SECRET_ACCESS_KEY")
    if not (key_id and secret):
        raise ConfigError(
            PROVIDER_KEY,
            "EnvironmentVariableCredentialsProvider: AWS_ACCESS_KEY_ID (or "
            "AWS_ACCESS_KEY) and AWS_SECRET_KEY (or AWS_SECRET_ACCESS_KEY) are not set "
            "in this process's environment",
        )
    token = first("AWS_SESSION_TOKEN")
    return {
        "aws_access_key_id": key_id,
        "aws_secret_access_key": secret,
        **({"aws_session_token": token} if token else {}),
    }


# AssumeRole answers that the settings or the deployment must change (others, e.g. throttling, are transient)
_REFUSED = {
    "AccessDenied",
    "ValidationError",
    "MalformedPolicyDocument",
    "RegionDisabledException",
    "InvalidClientTokenId",
}
_SESSIONS: dict[tuple, boto3.Session] = {}
_LOCK = threading.Lock()


def _now() -> datetime.datetime:
    return datetime.datetime.now(datetime.UTC)


def assumed_role_session(
    credentials: S3Credentials, region: str, clock: Callable[[], datetime.datetime] = _now
) -> boto3.Session:
    """A boto3 Session whose credentials are the assumed role's, refreshed before they expire; one per process
    for the same settings and the same base credentials (a task's clients share it)."""
    assert credentials.assume is not None  # provider assumerole
    base = _base_session(credentials)
    frozen = base.get_credentials()
    key = (credentials, frozen.access_key if frozen else None, clock)
    with _LOCK:
        if key not in _SESSIONS:
            sts = base.client("sts", region_name=credentials.assume.sts_region or _region(region))
            refreshable = DeferredRefreshableCredentials(
                _assume_role_fetcher(sts, credentials.assume), "assume-role", time_fetcher=clock
            )
            _SESSIONS[key] = _session_with(refreshable)
        return _SESSIONS[key]


def _base_session(credentials: S3Credentials) -> boto3.Session:
    """What signs AssumeRole: the static keys when set, else the default chain (the process's default session)."""
    if credentials.access_key_id:
        return boto3.Session(
            aws_access_key_id=credentials.access_key_id, aws_secret_access_key=credentials.secret_access_key
        )
    if boto3.DEFAULT_SESSION is None:
        boto3.setup_default_session()
    return boto3.DEFAULT_SESSION


def _region(configured: str) -> str:
    return os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION") or configured


def _assume_role_fetcher(sts: STSClient, assume: AssumeRole) -> Callable[[], dict]:
    def fetch() -> dict:
        try:
            answer = sts.assume_role(
                RoleArn=assume.role_arn, RoleSessionName=assume.session_name, ExternalId=assume.external_id
            )["Credentials"]
        except ClientError as e:
            if e.response["Error"]["Code"] in _REFUSED:
                raise ConfigError(_STS + "role.arn", f"AssumeRole of {assume.role_arn} failed: {e}") from e
            raise StorageError(f"AssumeRole of {assume.role_arn} ({_STS}role.arn) failed: {e}") from e
        except BotoCoreError as e:  # no base credentials, STS unreachable
            raise StorageError(f"AssumeRole of {assume.role_arn} ({_STS}role.arn) failed: {e}") from e
        return {
            "access_key": answer["AccessKeyId"],
            "secret_key": answer["SecretAccessKey"],
            "token": answer["SessionToken"],
            "expiry_time": answer["Expiration"].isoformat(),
        }

    return fetch


class _Given(CredentialProvider):
    METHOD = "assume-role"

    def __init__(self, credentials: DeferredRefreshableCredentials) -> None:
        super().__init__()
        self._credentials = credentials

    def load(self) -> DeferredRefreshableCredentials:
        return self._credentials


def _session_with(credentials: DeferredRefreshableCredentials) -> boto3.Session:
    core = botocore.session.Session()
    core.register_component("credential_provider", CredentialResolver([_Given(credentials)]))
    return boto3.Session(botocore_session=core)
