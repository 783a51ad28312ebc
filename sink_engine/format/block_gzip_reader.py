"""Read one record of a Block-GZIP object with two small requests: its index, then one ranged GET of the
gzip member that holds the offset (see block_gzip_format)."""

from __future__ import annotations

import gzip
from dataclasses import dataclass

import orjson
from botocore.exceptions import BotoCoreError, ClientError

from sink_engine.aws_types import S3Client
from sink_engine.errors import StorageError
from sink_engine.format.block_gzip_format import INDEX_SUFFIX, BlockGzipFormat


@dataclass(frozen=True)
class Chunk:
    """The records of one gzip member; `record(offset)` is None where offsets in it are not consecutive."""

    entry: dict
    lines: list[bytes]

    def record(self, offset: int) -> bytes | None:
        first, last = self.entry["first_record_offset"], self.entry["last_record_offset"]
        if last - first + 1 != self.entry["num_records"]:
            return None  # records were filtered or partitioned out: positions are not offsets
        return self.lines[offset - first]


def index_key(key: str) -> str:
    """`<stem>.index.json` beside the data object `<stem>.json.gz`."""
    extension = BlockGzipFormat.extension
    if not key.endswith(extension):
        raise StorageError(f"{key} is not a Block-GZIP object (its name does not end with {extension})")
    return key[: -len(extension)] + INDEX_SUFFIX


def find_chunk(chunks: list[dict], offset: int) -> dict | None:
    """The index entry whose records span `offset`, if any."""
    for entry in chunks:
        if entry["first_record_offset"] <= offset <= entry["last_record_offset"]:
            return entry
    return None


def read_chunk_at(client: S3Client, bucket: str, key: str, offset: int) -> Chunk:
    """The member of `key` that spans `offset`, fetched with one ranged GET and decompressed."""
    chunks = orjson.loads(_get(client, bucket, index_key(key)))["chunks"]
    entry = find_chunk(chunks, offset)
    if entry is None:
        spans = ", ".join(f"{c['first_record_offset']}-{c['last_record_offset']}" for c in chunks)
        raise StorageError(f"no chunk of s3://{bucket}/{key} holds offset {offset} (chunks hold {spans})")
    start = entry["byte_offset"]
    raw = _get(client, bucket, key, f"bytes={start}-{start + entry['byte_length'] - 1}")
    return Chunk(entry, gzip.decompress(raw).split(b"\n")[:-1])


def _get(client: S3Client, bucket: str, key: str, byte_range: str | None = None) -> bytes:
    try:
        extra = {"Range": byte_range} if byte_range else {}
        return client.get_object(Bucket=bucket, Key=key, **extra)["Body"].read()
    except (ClientError, BotoCoreError) as e:
        raise StorageError(f"cannot read s3://{bucket}/{key}: {e}") from e
