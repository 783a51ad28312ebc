"""An object's record count (and first/last offsets when stored), with as few S3 requests as its format allows.

Requests per object: tags (`s3.object.tagging`): 1 GetObjectTagging; Parquet: 1 ranged GET of the last 64 KiB
(a second one when the footer is larger); Block-GZIP: 1 GET of `<stem>.index.json`; Avro: ranged GETs of 256
KiB windows at the block headers (1 for an object of up to 256 KiB; at most one per block or per 256 KiB);
JSON and ByteArray: 1 GET of the whole object, streamed and counted by line (separator)."""

from __future__ import annotations

import gzip
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import orjson
import pyarrow as pa
import pyarrow.parquet as pq

from sink_engine.errors import StorageError
from sink_engine.format.block_gzip_reader import index_key
from sink_engine.format.settings import FormatSettings
from sink_engine.target.s3_objects.verify.coverage import Entry
from sink_engine.target.s3_objects.verify.listing import StoredObject

PARQUET_TAIL = 64 * 1024
AVRO_WINDOW = 256 * 1024
_STREAM_PIECE = 1024 * 1024


@dataclass
class RecordCounter:
    """Counts objects of one format; `requests` adds up the S3 requests made."""

    client: Any  # a boto3 S3 client
    bucket: str
    formats: FormatSettings
    tagged: bool  # s3.object.tagging: read the tags first
    requests: int = 0

    def entry(self, obj: StoredObject) -> Entry:
        """The object's Entry. Raises StorageError naming the object when it cannot be read or counted."""
        if self.tagged:
            tags = self._tags(obj.key)
            if {"startOffset", "endOffset", "recordCount"} <= tags.keys():
                return Entry(
                    obj.key,
                    obj.start_offset,
                    int(tags["recordCount"]),
                    int(tags["startOffset"]),
                    int(tags["endOffset"]),
                )
        name = self.formats.format_class
        if name == "envelope":  # counted as objects of its encoding
            name = self.formats.envelope_encoding
        if name == "parquet":
            return Entry(obj.key, obj.start_offset, self._parquet_rows(obj))
        if name == "avro":
            return Entry(obj.key, obj.start_offset, self._avro_records(obj))
        if name == "blockgzip":
            chunks = orjson.loads(self._get(index_key(obj.key)))["chunks"]
            return Entry(
                obj.key,
                obj.start_offset,
                sum(c["num_records"] for c in chunks),
                chunks[0]["first_record_offset"] if chunks else None,
                chunks[-1]["last_record_offset"] if chunks else None,
            )
        separator = b"\n" if name == "json" else self.formats.separator
        return Entry(obj.key, obj.start_offset, self._lines(obj.key, separator))

    def _tags(self, key: str) -> dict[str, str]:
        self.requests += 1
        return {t["Key"]: t["Value"] for t in self.client.get_object_tagging(Bucket=self.bucket, Key=key)["TagSet"]}

    def _get(self, key: str, byte_range: str | None = None) -> bytes:
        self.requests += 1
        args = {"Range": byte_range} if byte_range else {}
        try:
            return self.client.get_object(Bucket=self.bucket, Key=key, **args)["Body"].read()
        except self.client.exceptions.NoSuchKey:
            raise StorageError(f"s3://{self.bucket}/{key} is missing (needed to count its data object)") from None

    def _parquet_rows(self, obj: StoredObject) -> int:
        tail = self._get(obj.key, f"bytes=-{min(PARQUET_TAIL, obj.size)}")
        footer = int.from_bytes(tail[-8:-4], "little") + 8
        if tail[-4:] != b"PAR1" or footer > obj.size:
            raise StorageError(f"s3://{self.bucket}/{obj.key} does not end with a Parquet footer")
        if footer > len(tail):
            tail = self._get(obj.key, f"bytes=-{footer}")
        return pq.read_metadata(pa.BufferReader(b"PAR1" + tail[-footer:])).num_rows

    def _avro_records(self, obj: StoredObject) -> int:
        """Skips from block header to block header: each gives its record count and byte size."""
        reader = _Window(lambda start, stop: self._get(obj.key, f"bytes={start}-{stop - 1}"), obj.size)
        if reader.read(4) != b"Obj\x01":
            raise StorageError(f"s3://{self.bucket}/{obj.key} is not an Avro object container file")
        while (entries := reader.long()) != 0:  # the header's metadata map, in blocks
            if entries < 0:
                reader.long()  # the block's byte size
            for _ in range(abs(entries)):
                reader.skip(reader.long())
                reader.skip(reader.long())
        reader.skip(16)  # the sync marker
        records = 0
        while reader.position < obj.size:
            records += reader.long()
            reader.skip(reader.long() + 16)
        return records

    def _lines(self, key: str, separator: bytes) -> int:
        if not separator:
            raise StorageError(
                f"s3://{self.bucket}/{key}: records cannot be counted without a separator "
                "(format.bytearray.separator is empty); set s3.object.tagging=true"
            )
        self.requests += 1
        body = self.client.get_object(Bucket=self.bucket, Key=key)["Body"]
        stream = gzip.GzipFile(fileobj=body) if key.endswith(".gz") else body
        count, carry = 0, b""
        try:
            while piece := stream.read(_STREAM_PIECE):
                joined = carry + piece
                count += joined.count(separator)
                carry = joined[-(len(separator) - 1) :] if len(separator) > 1 else b""
        except (OSError, EOFError, zlib.error) as e:
            raise StorageError(f"s3://{self.bucket}/{key} cannot be read: {e}") from e
        return count


class _Window:
    """Reads a remote object forward through windows of AVRO_WINDOW bytes fetched at need."""

    def __init__(self, fetch: Callable[[int, int], bytes], size: int) -> None:
        self._fetch, self._size = fetch, size
        self._start, self._data, self.position = 0, b"", 0

    def read(self, n: int) -> bytes:
        if not self._start <= self.position <= self.position + n <= self._start + len(self._data):
            stop = min(self._size, self.position + max(n, AVRO_WINDOW))
            self._start, self._data = self.position, self._fetch(self.position, stop)
        got = self._data[self.position - self._start : self.position - self._start + n]
        if len(got) < n:
            raise StorageError("an Avro object ends inside a block header")
        self.position += n
        return got

    def skip(self, n: int) -> None:
        self.position += n

    def long(self) -> int:
        """Avro's zig-zag varint."""
        shift, value = 0, 0
        while True:
            byte = self.read(1)[0]
            value |= (byte & 0x7F) << shift
            if not byte & 0x80:
                return (value >> 1) ^ -(value & 1)
            shift += 7
