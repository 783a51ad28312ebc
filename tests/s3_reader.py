"""Independent read-back of what landed in S3, for assertions."""
from __future__ import annotations

import gzip
import json


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
