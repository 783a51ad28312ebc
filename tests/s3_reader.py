"""Independent read-back of what landed in S3, for assertions."""

from __future__ import annotations

import gzip
import json

from tests.conftest import BUCKET


def list_keys(s3, bucket: str, prefix: str) -> list[str]:
    keys, token = [], None
    while True:
        kwargs = {"Bucket": bucket, "Prefix": prefix, **({"ContinuationToken": token} if token else {})}
        page = s3.list_objects_v2(**kwargs)
        keys += [o["Key"] for o in page.get("Contents", [])]
        if not page.get("IsTruncated"):
            return sorted(keys)
        token = page["NextContinuationToken"]


def read_json_lines(s3, bucket: str, key: str) -> list:
    body = s3.get_object(Bucket=bucket, Key=key)["Body"].read()
    if key.endswith(".gz"):
        body = gzip.decompress(body)
    text = body.decode("utf-8")
    assert text.endswith("\n"), f"{key} does not end with a newline"
    return [json.loads(line) for line in text.split("\n")[:-1]]


def object_bodies(s3, bucket: str, prefix: str) -> dict[str, bytes]:
    return {k: s3.get_object(Bucket=bucket, Key=k)["Body"].read() for k in list_keys(s3, bucket, prefix)}


def landed_by_key(s3, topic: str, bucket: str = BUCKET) -> dict[str, list]:
    """Every JSON-lines object under `topics/<topic>/`, read back independently, by key in key order."""
    return {key: read_json_lines(s3, bucket, key) for key in list_keys(s3, bucket, f"topics/{topic}/")}


def landed_records(s3, topic: str, bucket: str = BUCKET) -> list:
    """Every record of the topic's JSON-lines objects, in key order."""
    return [record for records in landed_by_key(s3, topic, bucket).values() for record in records]
