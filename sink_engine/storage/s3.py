"""S3 client creation and object upload."""
from __future__ import annotations

import boto3
from botocore.config import Config
from botocore.exceptions import BotoCoreError, ClientError

from sink_engine.config import SinkConfig
from sink_engine.errors import StorageError

_RETRIES = Config(retries={"max_attempts": 8, "mode": "standard"}, max_pool_connections=16)


def s3_client(config: SinkConfig):
    """A client for the bucket's region; `store.url` overrides the endpoint, else boto3's own resolution
    (AWS_ENDPOINT_URL_S3 / AWS_ENDPOINT_URL, then the regional endpoint)."""
    return boto3.client("s3", region_name=config["s3.region"], endpoint_url=config["store.url"], config=_RETRIES)


def put_object(client, bucket: str, key: str, body: bytes) -> None:
    """Upload one object (overwriting an identical one from an earlier attempt). Raises StorageError."""
    try:
        client.put_object(Bucket=bucket, Key=key, Body=body)
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
