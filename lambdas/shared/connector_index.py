"""The connector index as the trigger and the DLQ replay read it: the JSON list the admin publishes at
`s3://<bucket>/_connectors/_index.json` (`CONNECTORS_URI`), one entry per deployed connector
({name, topics, config_uri, rotation, role_arn}, built by `infra.connectors.connector_index`).

A container reads it on first use and again once its copy is older than `INDEX_TTL_MS`, so a deploy that adds,
changes or removes a connector reaches warm containers within a minute, without waiting for new ones.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Generic, TypeVar

from botocore.exceptions import ClientError

if TYPE_CHECKING:
    from sink_engine.aws_types import S3Client

INDEX_TTL_MS = 60_000
T = TypeVar("T")


class ConnectorIndexError(Exception):
    """The index cannot be read or is malformed; the message names its URI."""

    def __init__(self, uri: str, message: str):
        super().__init__(f"connector index {uri}: {message}")
        self.uri = uri


class ConnectorIndex(Generic[T]):
    """`get()` is `parse(entries)` of the index at `uri`, read through `s3` when first asked and when the value is
    `ttl_ms` old by `clock` (ms). `parse` raises ValueError for an entry it cannot use; like a missing, unreadable
    or non-JSON index, that raises ConnectorIndexError naming the URI (and nothing is kept: the next call reads
    again)."""

    def __init__(
        self,
        uri: str,
        s3: S3Client,
        parse: Callable[[list[dict]], T],
        clock: Callable[[], int],
        ttl_ms: int = INDEX_TTL_MS,
    ) -> None:
        bucket, _, key = uri.removeprefix("s3://").partition("/")
        if not uri.startswith("s3://") or not bucket or not key:
            raise ConnectorIndexError(uri, "is not an s3://<bucket>/<key> URI")
        self.uri, self._bucket, self._key = uri, bucket, key
        self._s3, self._parse, self._clock, self._ttl_ms = s3, parse, clock, ttl_ms
        self._value: T | None = None
        self._read_at_ms = 0

    def get(self) -> T:
        now = self._clock()
        if self._value is None or not 0 <= now - self._read_at_ms < self._ttl_ms:  # a clock set back reads too
            entries = self._read()
            try:
                value = self._parse(entries)
            except ValueError as e:
                raise ConnectorIndexError(self.uri, str(e)) from e
            self._value, self._read_at_ms = value, now
        return self._value

    def _read(self) -> list[dict]:
        try:
            body = self._s3.get_object(Bucket=self._bucket, Key=self._key)["Body"].read()
        except ClientError as e:
            code = e.response.get("Error", {}).get("Code", "?")
            if code in ("NoSuchKey", "404"):
                raise ConnectorIndexError(
                    self.uri,
                    "does not exist; the admin custom resource publishes it when "
                    "the Service stack is deployed (an admin apply repairs it)",
                ) from None
            raise ConnectorIndexError(self.uri, f"cannot be read: {code}: {e}") from e
        try:
            entries = json.loads(body)
        except ValueError as e:
            raise ConnectorIndexError(self.uri, f"is not valid JSON: {e}") from None
        if not isinstance(entries, list) or not all(
            isinstance(e, dict) and isinstance(e.get("name"), str) for e in entries
        ):
            raise ConnectorIndexError(self.uri, "is not a JSON list of connector entries, each with a name")
        return entries
