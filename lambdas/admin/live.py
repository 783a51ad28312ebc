"""Read and write the live AWS state the admin reconciles: bucket lifecycle rules, an inline role policy,
and the objects under the config prefix. Vendor errors for "absent" become None / empty."""
from __future__ import annotations

import json

from botocore.exceptions import ClientError


class LiveState:
    def __init__(self, s3, iam):
        self._s3, self._iam = s3, iam

    def lifecycle_rules(self, bucket: str) -> list[dict]:
        try:
            return self._s3.get_bucket_lifecycle_configuration(Bucket=bucket)["Rules"]
        except ClientError as e:
            if e.response["Error"]["Code"] == "NoSuchLifecycleConfiguration":
                return []
            raise

    def put_lifecycle_rules(self, bucket: str, rules: list[dict]) -> None:
        if rules:
            self._s3.put_bucket_lifecycle_configuration(Bucket=bucket, LifecycleConfiguration={"Rules": rules})
        else:
            self._s3.delete_bucket_lifecycle(Bucket=bucket)

    def role_policy(self, role: str, name: str) -> dict | None:
        try:
            document = self._iam.get_role_policy(RoleName=role, PolicyName=name)["PolicyDocument"]
        except ClientError as e:
            if e.response["Error"]["Code"] == "NoSuchEntity":
                return None
            raise
        return json.loads(document) if isinstance(document, str) else document

    def put_role_policy(self, role: str, name: str, document: dict) -> None:
        self._iam.put_role_policy(RoleName=role, PolicyName=name, PolicyDocument=json.dumps(document))

    def delete_role_policy(self, role: str, name: str) -> None:
        try:
            self._iam.delete_role_policy(RoleName=role, PolicyName=name)
        except ClientError as e:
            if e.response["Error"]["Code"] != "NoSuchEntity":
                raise

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
