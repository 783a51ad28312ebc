"""S3 client creation and object upload."""

from __future__ import annotations

from dataclasses import dataclass, field

from botocore.config import Config
from botocore.exceptions import BotoCoreError, ClientError

from sink_engine.aws_types import S3Client
from sink_engine.config import SinkConfig
from sink_engine.errors import StorageError
from sink_engine.storage.credentials import S3Credentials, client_source
from sink_engine.storage.multipart import upload_in_parts
from sink_engine.storage.object_options import ObjectOptions
from sink_engine.storage.proxy import proxies, proxy_url

_RETRIES = Config(retries={"max_attempts": 8, "mode": "standard"}, max_pool_connections=16)
# Uploads retry with `s3.part.retries` and `s3.retry.backoff.ms` (storage.retry), not in the SDK.
_NO_SDK_RETRIES = Config(retries={"total_max_attempts": 1, "mode": "standard"}, max_pool_connections=16)


@dataclass(frozen=True)
class S3Access:
    """What the S3 clients are built from, read once from the config."""

    region: str  # s3.region
    endpoint_url: str | None  # store.url
    credentials: S3Credentials = S3Credentials("default")  # s3.credentials.provider.class and its keys
    proxy_url: str | None = field(default=None, repr=False)  # s3.proxy.url with .user and .password

    @classmethod
    def from_config(cls, config: SinkConfig) -> S3Access:
        return cls(
            config["s3.region"],
            config["store.url"],
            S3Credentials.from_config(config),
            proxy_url(config["s3.proxy.url"], config["s3.proxy.user"], config["s3.proxy.password"]),
        )


def s3_client(access: S3Access) -> S3Client:
    """A client for the bucket's region; `store.url` overrides the endpoint, else boto3's own resolution
    (AWS_ENDPOINT_URL_S3 / AWS_ENDPOINT_URL, then the regional endpoint). It signs as storage/credentials.py
    says and goes through `s3.proxy.url` when set."""
    return _client(access, _RETRIES)


def upload_client(access: S3Access) -> S3Client:
    """Like `s3_client`, without the SDK's own retries: `put_object` retries as the config says."""
    return _client(access, _NO_SDK_RETRIES)


def _client(access: S3Access, config: Config) -> S3Client:
    if access.proxy_url:
        config = config.merge(Config(proxies=proxies(access.proxy_url)))
    source, keys = client_source(access.credentials, access.region)
    return source.client("s3", region_name=access.region, endpoint_url=access.endpoint_url, config=config, **keys)


def put_object(
    client: S3Client,
    bucket: str,
    key: str,
    body: bytes,
    options: ObjectOptions | None = None,
    tags: dict[str, str] | None = None,
) -> None:
    """Upload one object (overwriting an identical one from an earlier attempt): one PutObject, or a
    multipart upload when it is larger than `s3.part.size`. Raises StorageError after the retries."""
    options = options or ObjectOptions()
    create_args = options.create_args(tags)
    try:
        if len(body) > options.part_size:
            upload_in_parts(client, bucket, key, body, options, create_args)
        else:
            options.retry.call(lambda: client.put_object(Bucket=bucket, Key=key, Body=body, **create_args))
    except (ClientError, BotoCoreError) as e:
        raise StorageError(f"upload of s3://{bucket}/{key} failed: {e}") from e


def bucket_exists(client: S3Client, bucket: str) -> bool:
    try:
        client.head_bucket(Bucket=bucket)
        return True
    except ClientError as e:
        if e.response["Error"]["Code"] in ("404", "NoSuchBucket", "403"):
            return False
        raise
