"""EnvelopeFormat: each Kafka record whole, read back by independent readers (pyarrow, fastavro, json + base64) in
every encoding; the steps that make envelope rows (no converter, tombstones kept; a converter only to partition
by fields); the config keys it refuses."""

from __future__ import annotations

import base64
import gzip
import io
import os

import fastavro
import orjson
import pyarrow.parquet as pq
import pytest

from sink_engine.convert.json_converter import SchemalessJsonConverter
from sink_engine.errors import ConfigError, ConversionError
from sink_engine.format.base import FileContext
from sink_engine.format.envelope_format import EnvelopeFormat
from sink_engine.format.envelope_schema import envelope_column
from sink_engine.format.settings import FormatSettings
from sink_engine.partition.default import DefaultPartitioner
from sink_engine.partition.field import FieldPartitioner
from sink_engine.records import RecordChunk
from sink_engine.target.s3_objects.verify.counters import RecordCounter
from sink_engine.target.s3_objects.verify.listing import StoredObject
from sink_engine.task.bad_records import StepFailed
from sink_engine.task.envelope import EnvelopeConverter
from sink_engine.task.steps import RecordSteps
from sink_engine.validation import parse_checked_config
from tests.builders import connector_keys
from tests.kafka_message import Message

RANDOM = os.urandom(64)
# (key, value, headers as confluent_kafka gives them, (timestamp type code, timestamp)), at offsets 40, 41, ...
MESSAGES = [
    (b"k1", b'{"region": "eu"}', [("trace", b"\x00\xff\x10"), ("trace", None), ("trace", b"")], (1, 1_700_000_000_000)),
    (None, b'{"region": "us"}', None, (2, 1_700_000_000_005)),  # null key, LogAppendTime, no headers
    (b"", b"", [("h", b"v")], (1, 0)),  # empty key and value (not null)
    (b"k2", None, [], (1, 1_700_000_000_010)),  # tombstone
    (b"k3", RANDOM, [("bin", RANDOM)], (0, -1)),  # a value no converter reads; NoTimestampType
]
TYPES = {0: "NoTimestampType", 1: "CreateTime", 2: "LogAppendTime"}


def chunk_of(messages, topic="orders", partition=3, first=40) -> RecordChunk:
    kafka = [Message(*m) for m in messages]
    return RecordChunk(
        topic, partition, list(range(first, first + len(kafka))), [m.value() for m in kafka], messages=kafka
    )


def expected_rows(messages, topic="orders", partition=3, first=40) -> list:
    """The records as the contract of docs/output/envelope.md says a reader sees them (bytes as bytes)."""
    return [
        {
            "topic": topic,
            "partition": partition,
            "offset": first + i,
            "timestamp": None if stamp == -1 else stamp,
            "timestamp_type": TYPES[kind],
            "key": key,
            "value": value,
            "headers": [{"key": name, "value": data} for name, data in headers or []],
        }
        for i, (key, value, headers, (kind, stamp)) in enumerate(messages)
    ]


def read_json(body: bytes) -> list:
    """JSON lines with base64 bytes, decoded back to bytes."""

    def unbase64(text):
        return None if text is None else base64.b64decode(text, validate=True)

    rows = [orjson.loads(line) for line in body.splitlines()]
    for row in rows:
        row["key"], row["value"] = unbase64(row["key"]), unbase64(row["value"])
        row["headers"] = [{"key": h["key"], "value": unbase64(h["value"])} for h in row["headers"]]
    return rows


READERS = {
    "parquet": lambda body: pq.read_table(io.BytesIO(body), use_threads=False).to_pylist(),
    "avro": lambda body: list(fastavro.reader(io.BytesIO(body))),
    "json": read_json,
}
CONTEXT = FileContext("orders", 3, 40)


@pytest.mark.parametrize("encoding", READERS)
def test_every_record_reads_back_whole(encoding):
    # given records with keys, null and empty keys and values, repeated and binary headers, every timestamp type
    fmt = EnvelopeFormat(encoding)
    # when they are encoded as one envelope file
    body = fmt.encode(envelope_column(chunk_of(MESSAGES)), CONTEXT).body
    # then an independent reader gives each record back exactly, in offset order
    assert READERS[encoding](body) == expected_rows(MESSAGES)


def test_json_keeps_null_apart_from_empty_and_gzips():
    body = EnvelopeFormat("json", compression="gzip").encode(envelope_column(chunk_of(MESSAGES)), CONTEXT).body
    lines = gzip.decompress(body).splitlines()
    assert b'"key":"","value":""' in lines[2] and b'"value":null' in lines[3] and b'"key":null' in lines[1]
    assert read_json(gzip.decompress(body)) == expected_rows(MESSAGES)


def test_parquet_schema_is_the_documented_contract():
    body = EnvelopeFormat("parquet").encode(envelope_column(chunk_of(MESSAGES)), CONTEXT).body
    schema = pq.read_schema(io.BytesIO(body))
    assert [(f.name, str(f.type), f.nullable) for f in schema] == [
        ("topic", "string", False),
        ("partition", "int32", False),
        ("offset", "int64", False),
        ("timestamp", "int64", True),
        ("timestamp_type", "string", False),
        ("key", "binary", True),
        ("value", "binary", True),
        ("headers", "list<element: struct<key: string not null, value: binary> not null>", False),
    ]


@pytest.mark.parametrize(
    "encoding, options, extension",
    [
        ("parquet", {}, ".envelope.snappy.parquet"),
        ("parquet", {"parquet_codec": "none"}, ".envelope.parquet"),
        ("parquet", {"parquet_codec": "zstd"}, ".envelope.zstd.parquet"),
        ("avro", {}, ".envelope.avro"),
        ("avro", {"avro_codec": "deflate"}, ".envelope.avro"),
        ("json", {}, ".envelope.json"),
        ("json", {"compression": "gzip"}, ".envelope.json.gz"),
    ],
)
def test_bytes_do_not_depend_on_batches(encoding, options, extension):
    # given the same records encoded at once, and written in three batches
    fmt = EnvelopeFormat(encoding, **options)
    column = envelope_column(chunk_of(MESSAGES * 3))
    whole = fmt.encode(column, CONTEXT).body
    out = io.BytesIO()
    encoder = fmt.open(CONTEXT, out)
    for start, stop in ((0, 1), (1, 9), (9, 15)):
        part = column.slice(start, stop)
        encoder.write(encoder.prepare(part, list(range(40 + start, 40 + stop))), [1] * len(part))
    encoder.finish()
    # then the objects are the same bytes, under the documented extension
    assert out.getvalue() == whole and fmt.extension == extension
    assert READERS[encoding](gzip.decompress(whole) if extension.endswith(".gz") else whole) == expected_rows(
        MESSAGES * 3
    )


def test_steps_keep_tombstones_and_unreadable_values_without_a_converter():
    # given EnvelopeFormat's steps for a layout that reads no field
    steps = RecordSteps("keep", EnvelopeConverter(), DefaultPartitioner())
    # when a chunk with a tombstone and random bytes is prepared
    prepared = steps.prepare(chunk_of(MESSAGES))
    # then every record is kept, whole, in its Kafka partition's folder
    assert [row.value for row in prepared.values.items] == [m[1] for m in MESSAGES]
    assert prepared.partitions.shared == "partition=3"


def test_a_converter_runs_to_partition_by_a_field_only():
    steps = RecordSteps(
        "keep", EnvelopeConverter(SchemalessJsonConverter(keep_documents=True)), FieldPartitioner(("region",), "/")
    )
    prepared = steps.prepare(chunk_of(MESSAGES[:2]))
    assert prepared.partitions.each == ["region=eu", "region=us"]
    assert [row.value for row in prepared.values.items] == [MESSAGES[0][1], MESSAGES[1][1]]  # the bytes, as read


@pytest.mark.parametrize(
    "message, problem",
    [
        (MESSAGES[4], ""),  # random bytes: the converter's own error
        (MESSAGES[3], "a tombstone (null value) has no fields to partition by"),
    ],
)
def test_a_value_the_field_converter_cannot_read_is_a_bad_record(message, problem):
    steps = RecordSteps(
        "keep", EnvelopeConverter(SchemalessJsonConverter(keep_documents=True)), FieldPartitioner(("region",), "/")
    )
    with pytest.raises(StepFailed) as failed:
        steps.prepare(chunk_of([MESSAGES[0], message]))
    assert isinstance(failed.value.error, ConversionError) and failed.value.error.offset == 41
    assert problem in failed.value.error.cause
    assert failed.value.stage == "VALUE_CONVERTER"


BASE = connector_keys({"format.class": "EnvelopeFormat"})


@pytest.mark.parametrize(
    "key, value",
    [
        ("behavior.on.null.values", "ignore"),
        ("behavior.on.null.values", "fail"),
        ("tombstone.encoded.partition", "gone"),
        ("transforms", "drop"),
        ("store.kafka.keys", "true"),
        ("store.kafka.headers", "true"),
    ],
)
def test_keys_that_would_change_or_move_records_are_refused(key, value):
    extra = {"transforms.drop.type": "org.apache.kafka.connect.transforms.Filter"} if key == "transforms" else {}
    with pytest.raises(ConfigError) as caught:
        parse_checked_config({**BASE, key: value, **extra})
    assert caught.value.key == key and "EnvelopeFormat" in str(caught.value)


def test_encoding_is_read_and_only_with_the_envelope():
    config = parse_checked_config(
        {**BASE, "format.envelope.encoding": "avro", "value.converter": "StringConverter", "store.kafka.keys": "false"}
    )
    assert (config["format.class"], config["format.envelope.encoding"]) == ("envelope", "avro")
    with pytest.raises(ConfigError) as caught:
        parse_checked_config({**BASE, "format.class": "JsonFormat", "format.envelope.encoding": "json"})
    assert caught.value.key == "format.envelope.encoding"


class WholeObjects:
    """An S3 client's GetObject over one object in memory (ranges honoured)."""

    def __init__(self, body: bytes):
        self.body = body

    def get_object(self, Bucket: str, Key: str, Range: str | None = None) -> dict:
        body = self.body
        if Range:
            first, last = Range[len("bytes=") :].split("-")
            body = body[-int(last) :] if not first else body[int(first) : int(last) + 1]
        return {"Body": io.BytesIO(body)}


@pytest.mark.parametrize("encoding", READERS)
def test_verify_counts_envelope_objects_as_their_encoding(encoding):
    body = EnvelopeFormat(encoding).encode(envelope_column(chunk_of(MESSAGES * 2)), CONTEXT).body
    formats = FormatSettings(
        "envelope", "none", -1, "base64", "snappy", "null", 1 << 20, ".bin", "\n", 1 << 20, encoding
    )
    entry = RecordCounter(WholeObjects(body), "b", formats, tagged=False).entry(
        StoredObject("k", "t", 0, 40, len(body))
    )
    assert entry.count == 2 * len(MESSAGES)
