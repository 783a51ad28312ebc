"""The envelope: each Kafka record whole, as one row (EnvelopeFormat). This module is the contract a restore
reads back; docs/output/envelope.md documents it for users.

Fields, in this order (Parquet/Arrow types; Avro in AVRO_SCHEMA; JSON in `json_line`):
  topic           string, not null     the record's topic
  partition       int32, not null      its Kafka partition
  offset          int64, not null      its offset
  timestamp       int64, nullable      epoch milliseconds as Kafka gave it; null when Kafka has none (-1)
  timestamp_type  string, not null     CreateTime, LogAppendTime or NoTimestampType (Kafka's TimestampType names)
  key             binary, nullable     the key's bytes; null for a null key (b"" is an empty key)
  value           binary, nullable     the value's bytes; null for a tombstone (b"" is an empty value)
  headers         list<struct<key: string not null, value: binary nullable>>, not null
                                       every header in Kafka's order, repeated names kept; [] without headers
"""

from __future__ import annotations

import base64
from typing import NamedTuple

import orjson
import pyarrow as pa

from sink_engine.records import RecordChunk, ValueColumn

KIND = "envelope"  # ValueColumn.kind of envelope rows
# confluent_kafka's Message.timestamp() type codes -> Kafka's TimestampType names
TIMESTAMP_TYPES = {0: "NoTimestampType", 1: "CreateTime", 2: "LogAppendTime"}
NO_TIMESTAMP = -1  # Kafka's RecordBatch.NO_TIMESTAMP

HEADER_TYPE = pa.struct([pa.field("key", pa.string(), nullable=False), pa.field("value", pa.binary())])
ARROW_SCHEMA = pa.schema(
    [
        pa.field("topic", pa.string(), nullable=False),
        pa.field("partition", pa.int32(), nullable=False),
        pa.field("offset", pa.int64(), nullable=False),
        pa.field("timestamp", pa.int64()),
        pa.field("timestamp_type", pa.string(), nullable=False),
        pa.field("key", pa.binary()),
        pa.field("value", pa.binary()),
        pa.field("headers", pa.list_(pa.field("element", HEADER_TYPE, nullable=False)), nullable=False),
    ]
)
AVRO_SCHEMA = {
    "type": "record",
    "name": "KafkaRecord",
    "namespace": "sink_engine.envelope",
    "fields": [
        {"name": "topic", "type": "string"},
        {"name": "partition", "type": "int"},
        {"name": "offset", "type": "long"},
        {"name": "timestamp", "type": ["null", "long"], "default": None},
        {"name": "timestamp_type", "type": "string"},
        {"name": "key", "type": ["null", "bytes"], "default": None},
        {"name": "value", "type": ["null", "bytes"], "default": None},
        {
            "name": "headers",
            "type": {
                "type": "array",
                "items": {
                    "type": "record",
                    "name": "KafkaHeader",
                    "fields": [
                        {"name": "key", "type": "string"},
                        {"name": "value", "type": ["null", "bytes"], "default": None},
                    ],
                },
            },
        },
    ],
}


class EnvelopeRecord(NamedTuple):
    """One row of the envelope; `headers` a list of (key, bytes or None) in Kafka's order."""

    topic: str
    partition: int
    offset: int
    timestamp: int | None
    timestamp_type: str
    key: bytes | None
    value: bytes | None
    headers: list


def envelope_column(chunk: RecordChunk, documents: list | None = None) -> ValueColumn:
    """The chunk's records whole, as a ValueColumn of kind "envelope" (items: EnvelopeRecords); `documents`, when
    given, are the converted values that partitioners and timestamp extractors read fields from."""
    topic, partition = chunk.topic, chunk.partition
    rows = [
        EnvelopeRecord(
            topic,
            partition,
            offset,
            None if stamp == NO_TIMESTAMP else stamp,
            TIMESTAMP_TYPES.get(kind, "CreateTime"),
            key,
            value,
            list(headers),
        )
        for offset, stamp, kind, key, value, headers in zip(
            chunk.offsets, chunk.timestamps, chunk.timestamp_types, chunk.keys, chunk.values, chunk.headers
        )
    ]
    return ValueColumn(KIND, rows, documents)


def check_kind(values: ValueColumn) -> list:
    """The envelope rows of `values`; an AssertionError for any other kind (the steps make envelope columns for
    EnvelopeFormat, and config validation refuses what would bypass them)."""
    if values.kind != KIND:
        raise AssertionError(f"EnvelopeFormat was given {values.kind!r} values, not envelope rows")
    return values.items


def arrow_table(rows: list) -> pa.Table:
    """The rows as a table of ARROW_SCHEMA."""
    columns: list = list(zip(*rows)) if rows else [[] for _ in ARROW_SCHEMA]
    header_offsets, names, data = [0], [], []
    for headers in columns[7]:
        for name, value in headers:
            names.append(name)
            data.append(value)
        header_offsets.append(len(names))
    entries = pa.StructArray.from_arrays(
        [pa.array(names, pa.string()), pa.array(data, pa.binary())], fields=list(HEADER_TYPE)
    )
    headers = pa.ListArray.from_arrays(
        pa.array(header_offsets, pa.int32()), entries, type=ARROW_SCHEMA.field("headers").type
    )
    arrays = [pa.array(column, field.type) for column, field in zip(columns[:7], ARROW_SCHEMA)]
    return pa.Table.from_arrays(arrays + [headers], schema=ARROW_SCHEMA)


def avro_row(row: EnvelopeRecord) -> dict:
    return {
        "topic": row.topic,
        "partition": row.partition,
        "offset": row.offset,
        "timestamp": row.timestamp,
        "timestamp_type": row.timestamp_type,
        "key": row.key,
        "value": row.value,
        "headers": [{"key": name, "value": value} for name, value in row.headers],
    }


def json_line(row: EnvelopeRecord) -> bytes:
    """One JSON object on one line: the fields in order, bytes as base64 strings (standard alphabet, padded),
    null as JSON null."""
    return orjson.dumps(
        {
            "topic": row.topic,
            "partition": row.partition,
            "offset": row.offset,
            "timestamp": row.timestamp,
            "timestamp_type": row.timestamp_type,
            "key": _base64(row.key),
            "value": _base64(row.value),
            "headers": [{"key": name, "value": _base64(value)} for name, value in row.headers],
        }
    )


def _base64(data: bytes | None) -> str | None:
    return None if data is None else base64.b64encode(data).decode("ascii")
