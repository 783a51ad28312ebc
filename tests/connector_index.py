"""The connector index as the admin publishes it (`_connectors/_index.json`), for tests of the functions that read
it (trigger, DLQ replay): publish one, and read one back."""

from __future__ import annotations

import json

import boto3


def publish_index(uri: str, entries: list[dict], s3=None) -> str:
    """Put `entries` (index entries: name, topics, config_uri, rotation, role_arn) at `uri` (s3://bucket/key), as
    the admin does, creating the bucket when missing; returns `uri` (the functions' CONNECTORS_URI)."""
    s3 = s3 or boto3.client("s3")
    bucket, _, key = uri.removeprefix("s3://").partition("/")
    if bucket not in {b["Name"] for b in s3.list_buckets()["Buckets"]}:
        region = s3.meta.region_name
        s3.create_bucket(
            Bucket=bucket,
            **({} if region == "us-east-1" else {"CreateBucketConfiguration": {"LocationConstraint": region}}),
        )
    s3.put_object(
        Bucket=bucket,
        Key=key,
        Body=json.dumps(entries, indent=2, sort_keys=True).encode(),
        ContentType="application/json",
    )
    return uri


def read_index(uri: str, s3=None) -> list[dict]:
    """The entries of the index published at `uri`."""
    s3 = s3 or boto3.client("s3")
    bucket, _, key = uri.removeprefix("s3://").partition("/")
    return json.loads(s3.get_object(Bucket=bucket, Key=key)["Body"].read())
