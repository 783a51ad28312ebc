"""`store.kafka.keys` / `store.kafka.headers`: sidecar objects beside each data object, as the Confluent
S3 sink writes them: `<stem>.keys<ext>` and `<stem>.headers<ext>`, in `keys.format.class` and
`headers.format.class`, one record per data record in the same order.

Keys are converted with `key.converter`; headers are written as a list of `{"key", "value"}` with the
value as UTF-8 text (base64 when it is not UTF-8). As the connector's writers write them (RecordViews' KeyRecordView
and HeaderRecordView; format/wrapped.py): in JSON a key is the converted value and the headers `{"headers": [...]}`
(JsonRecordWriterProvider envelopes the headers only); in Avro both are bare (a string key an Avro `"string"`, the
headers an array); in Parquet both are wrapped in a struct (`RecordKey{key}`, `RecordHeaders{headers}`). A null key
or a record without headers fails the run, as in the connector (the sidecars would no longer line up with the
data). With single message transforms the sidecars hold each record's key and headers as the transforms left
them (`transformed_columns`).
"""

from __future__ import annotations

import base64
from typing import TYPE_CHECKING

import orjson

from sink_engine.convert.base import Converter
from sink_engine.convert.schema import Field, Schema
from sink_engine.errors import RecordError
from sink_engine.format.base import Format
from sink_engine.format.wrapped import wrapped, wrapper
from sink_engine.records import RecordChunk, ValueColumn
from sink_engine.task.transforms import column, key_kind_of
from sink_engine.transform.record import Header

if TYPE_CHECKING:
    from sink_engine.format.settings import FormatSettings
    from sink_engine.task.settings import SidecarSettings

_HEADER = Schema("struct", fields=(Field("key", Schema("string")), Field("value", Schema("string", optional=True))))
HEADERS_SCHEMA = wrapper(Schema("array", items=_HEADER), "headers", "RecordHeaders")


class Sidecars:
    """Attaches key and header columns to converted values; encodes them when a file closes."""

    def __init__(
        self,
        key_converter: Converter | None = None,
        key_format: Format | None = None,
        header_format: Format | None = None,
    ) -> None:
        self._key_converter = key_converter
        self.formats = {name: fmt for name, fmt in (("keys", key_format), ("headers", header_format)) if fmt}

    @classmethod
    def from_settings(cls, sidecars: SidecarSettings, formats: FormatSettings, topic: str) -> Sidecars:
        from sink_engine.convert.registry import converter_for  # imports pyarrow
        from sink_engine.format.registry import format_for  # imports pyarrow

        return cls(
            converter_for(sidecars.key_converter, topic) if sidecars.key_converter is not None else None,
            format_for(formats, sidecars.keys_format) if sidecars.keys_format is not None else None,
            format_for(formats, sidecars.headers_format) if sidecars.headers_format is not None else None,
        )

    def attach(self, chunk: RecordChunk, values: ValueColumn) -> ValueColumn:
        """`values` with the sidecar columns of the same records."""
        if not self.formats:
            return values
        sidecars = {}
        if "keys" in self.formats:
            sidecars["keys"] = self._keys(chunk)
        if "headers" in self.formats:
            sidecars["headers"] = _headers(chunk, chunk.headers)
        return values.with_sidecars(sidecars)

    def wrap(self, converter: Converter) -> _AttachingConverter:
        """A converter that converts values with `converter` and attaches the sidecar columns."""
        return _AttachingConverter(converter, self)

    def transformed_columns(self, chunk: RecordChunk, records: list, key_kind: str | None) -> dict:
        """The sidecar columns of records after single message transforms (task/transforms.py): their keys
        (converted by key.converter before the transforms: `key_kind` that column's kind) and their headers (a
        header a transform made as Connect's SimpleHeaderConverter serializes it)."""
        sidecars = {}
        if "keys" in self.formats:
            _check_keys(chunk, [record.key for record in records])
            kinds = {key_kind_of(record, key_kind) for record in records}
            if len(kinds) > 1:
                raise RecordError(
                    chunk.topic,
                    chunk.partition,
                    chunk.offsets[0],
                    "the keys after transforms mix "
                    f"{' and '.join(sorted(map(str, kinds)))} values; the keys sidecar takes one kind per "
                    "file",
                )
            kind = kinds.pop()
            assert kind is not None  # _check_keys refused null keys
            sidecars["keys"] = self._wrapped_keys(column(records, kind, part="key"))
        if "headers" in self.formats:
            sidecars["headers"] = _headers(
                chunk,
                [[(h.name, header_bytes(h)) for h in record.headers] for record in records],
            )
        return sidecars

    def _keys(self, chunk: RecordChunk) -> ValueColumn:
        _check_keys(chunk, chunk.keys)
        assert self._key_converter is not None  # given with the keys' format (from_settings)
        column = self._key_converter.convert(
            RecordChunk(
                chunk.topic, chunk.partition, chunk.offsets, chunk.keys, keys=chunk.keys, timestamps=[0] * len(chunk)
            )
        )
        return self._wrapped_keys(column)

    def _wrapped_keys(self, column: ValueColumn) -> ValueColumn:
        """Keys for Parquet and Avro as `RecordKey{key}` (Avro writes the key alone); as they are otherwise, and
        for schemaless JSON keys (whose file infers its schema)."""
        if not self.formats["keys"].columnar or column.kind == "json" and column.schemas is None:
            return column
        return wrapped(column, "key", "RecordKey")


class _AttachingConverter:
    def __init__(self, converter: Converter, sidecars: Sidecars) -> None:
        self._converter, self._sidecars = converter, sidecars

    def convert(self, chunk: RecordChunk) -> ValueColumn:
        return self._sidecars.attach(chunk, self._converter.convert(chunk))


def _check_keys(chunk: RecordChunk, keys: list) -> None:
    for position, key in enumerate(keys):
        if key is None:
            raise RecordError(
                chunk.topic, chunk.partition, chunk.offsets[position], "key cannot be null with store.kafka.keys=true"
            )


def header_bytes(header: Header) -> bytes | None:
    """A header's value as Kafka carries it: a header read from Kafka its bytes; one a transform made (with a
    schema, or a schemaless field's value: HeaderFrom on schemaless values) as Connect's SimpleHeaderConverter
    writes it: text as UTF-8, bytes as they are, numbers and booleans as Java prints them, maps, arrays and
    structs as JSON."""
    value = header.value
    if value is None or isinstance(value, bytes):
        return value
    if isinstance(value, bool):
        return b"true" if value else b"false"
    if isinstance(value, (int, float, str)):
        return str(value).encode("utf-8")
    return orjson.dumps(value, default=str)


def _headers(chunk: RecordChunk, headers_of: list) -> ValueColumn:
    items = []
    for position, headers in enumerate(headers_of):
        if not headers:
            raise RecordError(
                chunk.topic,
                chunk.partition,
                chunk.offsets[position],
                "headers cannot be empty with store.kafka.headers=true",
            )
        items.append({"headers": [{"key": name, "value": _text(value)} for name, value in headers]})
    return ValueColumn("struct", items, items, [HEADERS_SCHEMA] * len(items))


def _text(value: bytes | None) -> str | None:
    if value is None:
        return None
    try:
        return value.decode("utf-8")
    except UnicodeDecodeError:
        return base64.b64encode(value).decode("ascii")
