"""S3 client creation and object upload."""
from __future__ import annotations

from dataclasses import dataclass

import boto3
from botocore.config import Config
from botocore.exceptions import BotoCoreError, ClientError

from sink_engine.config import SinkConfig
from sink_engine.errors import StorageError
from sink_engine.storage.multipart import upload_in_parts
from sink_engine.storage.object_options import ObjectOptions

_RETRIES = Config(retries={"max_attempts": 8, "mode": "standard"}, max_pool_connections=16)
# Uploads retry with `s3.part.retries` and `s3.retry.backoff.ms` (storage.retry), not in the SDK.
_NO_SDK_RETRIES = Config(retries={"total_max_attempts": 1, "mode": "standard"}, max_pool_connections=16)


@dataclass(frozen=True)
class S3Access:
    """What the S3 clients are built from, read once from the config."""
    region: str  # s3.region
    endpoint_url: str | None  # store.url
    access_key_id: str | None  # aws.access.key.id / aws.secret.access.key (both or neither)
    secret_access_key: str | None

    @classmethod
    def from_config(cls, config: SinkConfig) -> S3Access:
        return cls(config["s3.region"], config["store.url"], config["aws.access.key.id"],
                   config["aws.secret.access.key"])


def s3_client(access: S3Access):
    """A client for the bucket's region; `store.url` overrides the endpoint, else boto3's own resolution
    (AWS_ENDPOINT_URL_S3 / AWS_ENDPOINT_URL, then the regional endpoint). `aws.access.key.id` and
    `aws.secret.access.key`, when set, are its credentials; else boto3's (the job's role)."""
    return boto3.client("s3", region_name=access.region, endpoint_url=access.endpoint_url, config=_RETRIES,
                        **_static_credentials(access))


def upload_client(access: S3Access):
    """Like `s3_client`, without the SDK's own retries: `put_object` retries as the config says."""
    return boto3.client("s3", region_name=access.region, endpoint_url=access.endpoint_url,
                        config=_NO_SDK_RETRIES, **_static_credentials(access))


def _static_credentials(access: S3Access) -> dict:
    if not access.access_key_id:
        return {}
    return {"aws_access_key_id": access.access_key_id, "aws_secret_access_key": access.secret_access_key}


def put_object(client, bucket: str, key: str, body: bytes, options: ObjectOptions | None = None,
               tags: dict[str, str] | None = None) -> None:
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


def bucket_exists(client, bucket: str) -> bool:
    try:
        client.head_bucket(Bucket=bucket)
        return True
    except ClientError as e:
        if e.response["Error"]["Code"] in ("404", "NoSuchBucket", "403"):
            return False
        raise
