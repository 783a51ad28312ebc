"""Records back from the objects of a backup: one GET per object (and one per sidecar beside it).

- EnvelopeFormat: every field from the object (pyarrow for Parquet, fastavro for Avro, orjson for JSON lines
  with base64 bytes), the offsets as stored.
- ByteArrayFormat (values split at `format.bytearray.separator`) and JsonFormat (one value per line), with their
  keys and headers from the `.keys` / `.headers` sidecars when the connector stores them (sidecar_values.py).
  These objects hold no offsets and no timestamps: record i of an object is given the offset start + i (exact
  when the partition's offsets have no gaps: no transaction markers, compaction, dead letters or dropped
  records), and no timestamp (the producer stamps the restore's time). A value that contains the separator
  cannot be told apart from two values: the sidecars' counts then disagree and the object is refused.
"""

from __future__ import annotations

import functools
import gzip
import io
import zlib
from binascii import a2b_base64  # binascii.Error is a ValueError
from collections.abc import Iterator, Sequence
from typing import Any

import fastavro
import orjson
import pyarrow as pa
import pyarrow.parquet as pq
from botocore.exceptions import ClientError

from sink_engine.aws_types import S3Client
from sink_engine.doctor.grants import describe
from sink_engine.errors import StorageError
from sink_engine.restore.settings import RestoreSettings
from sink_engine.restore.sidecar_values import converted_bytes, headers_of
from sink_engine.restore.stored import StoredRecord
from sink_engine.target.s3_objects.verify.listing import StoredObject

# The job role's statements (infra/job_policy.py) that let a deployed restore list and read the backup.
LIST_SID, READ_SID = "ListOwnBackups", "ReadOwnBackups"


class ObjectReader:
    """Reads objects of one backup; `requests` adds up the GETs made."""

    def __init__(self, client: S3Client, settings: RestoreSettings, binary_headers: frozenset = frozenset()) -> None:
        self._client, self._settings, self._binary = client, settings, binary_headers
        self.requests = 0

    def records(self, obj: StoredObject) -> list[StoredRecord]:
        """The object's records in stored order. Raises StorageError naming the object when it cannot be read."""
        body = self._get(obj.key)
        try:
            if self._settings.formats.format_class == "envelope":
                return _envelope(body, self._settings.formats.envelope_encoding, obj)
            return self._with_sidecars(obj, body)
        except StorageError:
            raise
        except (OSError, EOFError, ValueError, KeyError, TypeError, zlib.error, orjson.JSONDecodeError) as e:
            raise StorageError(f"s3://{self._settings.bucket}/{obj.key} cannot be read back: {e}") from e

    def _with_sidecars(self, obj: StoredObject, body: bytes) -> list[StoredRecord]:
        s = self._settings
        values: Sequence[bytes | None]
        if s.formats.format_class == "bytearray":
            values = _split(_plain(body, obj.key), s.formats.separator, obj.key)
        else:
            values = [_json_item(line, s.value_converter) for line in _lines(_plain(body, obj.key))]
        stem = obj.key[: -len(s.extension)]
        keys = headers = None
        if s.keys_extension is not None:
            assert s.keys_format is not None  # set with keys_extension
            keys = [
                _key(item, s.key_converter)
                for item in self._sidecar(f"{stem}.keys{s.keys_extension}", s.keys_format, "key")
            ]
        if s.headers_extension is not None:
            assert s.headers_format is not None  # set with headers_extension
            headers = [
                headers_of(item, self._binary)
                for item in self._sidecar(f"{stem}.headers{s.headers_extension}", s.headers_format, "headers")
            ]
        for name, column in (("keys", keys), ("headers", headers)):
            if column is not None and len(column) != len(values):
                raise StorageError(
                    f"s3://{s.bucket}/{obj.key} holds {len(values)} records but its {name} sidecar "
                    f"{len(column)}: they no longer line up"
                )
        return [
            StoredRecord(
                obj.partition,
                obj.start_offset + i,
                None,
                None,
                keys[i] if keys else None,
                value,
                headers[i] if headers else None,
            )
            for i, value in enumerate(values)
        ]

    def _sidecar(self, key: str, format_class: str, field: str) -> list:
        """The sidecar's items: JSON lines parsed (keys as `_JsonLine`s, headers out of `{"headers": [...]}`),
        Parquet rows' wrapped field, Avro datums (bare, as the connector writes them: task/sidecars.py), or ByteArray
        keys' raw bytes. Sidecars this engine wrote before it wrote them so (headers in JSON as a bare list, keys and
        headers in Avro as `{key}` / `{headers}` records) are read too."""
        body = _plain(self._get(key), key)
        if format_class == "json":
            if field == "key":
                return [_JsonLine(line) for line in _lines(body)]
            return [_header_list(orjson.loads(line)) for line in _lines(body)]
        if format_class == "parquet":
            return [row[field] for row in pq.read_table(io.BytesIO(body), use_threads=False).to_pylist()]
        if format_class == "avro":
            reader: Any = fastavro.reader(io.BytesIO(body))
            schema = reader.writer_schema
            old = isinstance(schema, dict) and [f["name"] for f in schema.get("fields", ())] == [field]
            return [datum[field] if old else datum for datum in reader]
        return [_RawBytes(item) for item in _split(body, self._settings.formats.separator, key)]

    def _get(self, key: str) -> bytes:
        self.requests += 1
        try:
            return self._client.get_object(Bucket=self._settings.bucket, Key=key)["Body"].read()
        except self._client.exceptions.NoSuchKey:
            raise StorageError(f"s3://{self._settings.bucket}/{key} is missing (a restore reads it)") from None
        except ClientError as e:
            raise StorageError(
                f"s3://{self._settings.bucket}/{key} cannot be read: {describe(e, 's3', sid=READ_SID)}"
            ) from None


class _JsonLine(bytes):
    """A JSON sidecar line not parsed yet: its converter decides."""


class _RawBytes(bytes):
    """A ByteArray sidecar's key: the bytes as written."""


def _avro_records(body: bytes) -> Iterator[dict]:
    """The records of an Avro object container file whose schema is a record's (the backup's)."""
    return fastavro.reader(io.BytesIO(body))  # type: ignore[return-value]  # fastavro types them as any Avro value


def _header_list(item: Any) -> list:
    """A JSON headers line's list: `{"headers": [...]}`, or the bare list of earlier objects."""
    return item["headers"] if isinstance(item, dict) else item


def _key(item: object, converter: str) -> bytes | None:
    if isinstance(item, _RawBytes):
        return bytes(item)
    if isinstance(item, _JsonLine):
        return _json_item(bytes(item), converter)
    return converted_bytes(item, converter, from_json=False)


def _json_item(line: bytes, converter: str) -> bytes | None:
    """A JSON line's record bytes: JsonConverter's values are their text as written; strings and base64 bytes are
    decoded; `null` is a null key or value."""
    if line == b"null":
        return None
    if converter == "json":
        return line
    return converted_bytes(orjson.loads(line), converter, from_json=True)


def _plain(body: bytes, key: str) -> bytes:
    return gzip.decompress(body) if key.endswith(".gz") else body


def _lines(body: bytes) -> list[bytes]:
    return body.split(b"\n")[:-1] if body.endswith(b"\n") else body.split(b"\n") if body else []


def _split(body: bytes, separator: bytes, key: str) -> list[bytes]:
    if not separator:
        raise StorageError(
            f"{key}: values cannot be told apart without a separator (format.bytearray.separator is empty)"
        )
    if not body:
        return []
    if not body.endswith(separator):
        raise StorageError(f"{key} does not end with format.bytearray.separator: it is cut short")
    return body[: -len(separator)].split(separator)


def _envelope(body: bytes, encoding: str, obj: StoredObject) -> list[StoredRecord]:
    if encoding == "parquet":
        table = pq.read_table(io.BytesIO(body), columns=list(_PARQUET_COLUMNS), use_threads=False)
        columns = zip(
            *(table.column(name).to_pylist() for name in _PARQUET_COLUMNS[:3]),
            _repeated_strings(table.column("timestamp_type").combine_chunks()),
            *(table.column(name).to_pylist() for name in _PARQUET_COLUMNS[4:6]),
            _header_lists(table.column("headers")),
        )
        return list(map(_stored_record, columns))
    if encoding == "avro":
        return [
            StoredRecord(
                r["partition"],
                r["offset"],
                r["timestamp"],
                r["timestamp_type"],
                r["key"],
                r["value"],
                [(h["key"], h["value"]) for h in r["headers"]],
            )
            for r in _avro_records(body)
        ]
    records, loads = [], orjson.loads
    for line in _lines(_plain(body, obj.key)):
        r = loads(line)
        records.append(
            _stored_record(
                (
                    r["partition"],
                    r["offset"],
                    r["timestamp"],
                    r["timestamp_type"],
                    _unbase64(r["key"]),
                    _unbase64(r["value"]),
                    [(h["key"], _unbase64(h["value"])) for h in r["headers"]],
                )
            )
        )
    return records


_stored_record = functools.partial(tuple.__new__, StoredRecord)  # from a 7-tuple in C (StoredRecord(...) is Python)
_PARQUET_COLUMNS = ("partition", "offset", "timestamp", "timestamp_type", "key", "value", "headers")


def _header_lists(column: pa.ChunkedArray) -> list[list[tuple]]:
    """Each row's [(name, value)] from the list-of-struct column: the names and values converted once, flat, then
    cut at the list offsets (a struct per header made into a dict and back costs twice as much)."""
    lists = column.combine_chunks()
    names, values = lists.flatten().flatten()
    pairs = list(zip(_repeated_strings(names), values.to_pylist()))
    offsets = lists.offsets.to_pylist()
    base = offsets[0]
    return [pairs[start - base : end - base] for start, end in zip(offsets, offsets[1:])]


def _repeated_strings(array: pa.Array) -> list:
    """A string array of few distinct values as a list: each distinct string made once."""
    encoded = array.dictionary_encode()
    if encoded.null_count:
        return array.to_pylist()
    distinct = encoded.dictionary.to_pylist()
    return list(map(distinct.__getitem__, encoded.indices.to_pylist()))


def _unbase64(text: str | None) -> bytes | None:
    return None if text is None else a2b_base64(text, strict_mode=True)
