"""The objects verify reads: data objects under `<topics.dir>/<topic>/` (the routed topics' folders with
RegexRouters), and dead letters under `errors.deadletterqueue.s3.prefix`. Sidecars (`.keys`, `.headers`) and
Block-GZIP `.index.json` files are not data objects. One ListObjectsV2 request per 1,000 keys."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import orjson

from sink_engine.errors import StorageError
from sink_engine.storage.naming import ObjectNaming
from sink_engine.target.s3_objects.verify.coverage import Letter


@dataclass(frozen=True)
class StoredObject:
    key: str
    topic: str  # the source topic its name starts with
    partition: int
    start_offset: int
    size: int


@dataclass
class Lister:
    client: Any  # a boto3 S3 client
    bucket: str
    requests: int = 0

    def data_objects(self, naming: ObjectNaming, folder_topic: str, extension: str) -> Iterator[StoredObject]:
        """The data objects in the folder of `folder_topic` (the topic after routers): keys whose name is
        `<topic><file.delim><partition><file.delim><digits><extension>`."""
        for key, size in self._keys(_folder(naming, folder_topic)):
            parsed = _parse(key.rsplit(naming.directory_delim, 1)[-1], naming.file_delim, extension)
            if parsed is not None:
                yield StoredObject(key, *parsed, size)

    def letters(self, naming: ObjectNaming, topic: str) -> Iterator[tuple[str, int, Letter]]:
        """(topic, partition, Letter) of every dead letter of `topic` under the dead-letter prefix (`naming`'s
        topics_dir); one GET per object."""
        for key, _ in self._keys(_folder(naming, topic)):
            if _parse(key.rsplit(naming.directory_delim, 1)[-1], naming.file_delim, ".json") is None:
                continue
            self.requests += 1
            body = self.client.get_object(Bucket=self.bucket, Key=key)["Body"].read()
            for number, line in enumerate(body.splitlines(), 1):
                try:
                    letter = orjson.loads(line)
                    yield letter["topic"], int(letter["partition"]), Letter(key, int(letter["offset"]))
                except (orjson.JSONDecodeError, KeyError, TypeError, ValueError) as e:
                    raise StorageError(
                        f"dead-letter object s3://{self.bucket}/{key} line {number} is not a dead letter: {e}"
                    ) from e

    def _keys(self, prefix: str) -> Iterator[tuple[str, int]]:
        kwargs = {"Bucket": self.bucket, "Prefix": prefix}
        while True:
            self.requests += 1
            page = self.client.list_objects_v2(**kwargs)
            for item in page.get("Contents", []):
                yield item["Key"], item["Size"]
            if not page.get("IsTruncated"):
                return
            kwargs["ContinuationToken"] = page["NextContinuationToken"]


def _folder(naming: ObjectNaming, topic: str) -> str:
    return naming.directory_delim.join(part for part in (naming.topics_dir, topic) if part) + naming.directory_delim


def _parse(name: str, file_delim: str, extension: str) -> tuple[str, int, int] | None:
    """(topic, partition, start offset) of a data object's file name; None for another file."""
    if not name.endswith(extension):
        return None
    parts = name[: -len(extension)].rsplit(file_delim, 2)
    if len(parts) != 3 or not parts[1].isdigit() or not parts[2].isdigit():
        return None
    return parts[0], int(parts[1]), int(parts[2])
