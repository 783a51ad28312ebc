"""Read and write the live AWS state the admin reconciles: the objects under the config prefix.
Vendor errors for "absent" become None / empty."""

from __future__ import annotations

from typing import TYPE_CHECKING

from botocore.exceptions import ClientError

if TYPE_CHECKING:
    from sink_engine.aws_types import S3Client


class LiveState:
    def __init__(self, s3: S3Client) -> None:
        self._s3 = s3

    def objects(self, bucket: str, prefix: str) -> dict[str, bytes]:
        found = {}
        for page in self._s3.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix):
            for entry in page.get("Contents", []):
                found[entry["Key"]] = self._s3.get_object(Bucket=bucket, Key=entry["Key"])["Body"].read()
        return found

    def read_object(self, bucket: str, key: str) -> bytes | None:
        try:
            return self._s3.get_object(Bucket=bucket, Key=key)["Body"].read()
        except ClientError as e:
            if e.response["Error"]["Code"] in ("NoSuchKey", "404"):
                return None
            raise

    def put_object(self, bucket: str, key: str, body: bytes) -> None:
        self._s3.put_object(Bucket=bucket, Key=key, Body=body, ContentType="application/json")

    def delete_object(self, bucket: str, key: str) -> None:
        self._s3.delete_object(Bucket=bucket, Key=key)
