"""The harness of the tests ported from the Confluent S3 sink's own suites (kafka-connect-storage-cloud's
TopicPartitionWriterTest, DataWriter*Test, S3SinkTaskTest; kafka-connect-storage-common's partitioner tests):
records as Kafka Connect's converters write them, through one task's range (target/s3_objects/output.py
`run_range`, with a
reader that yields them instead of Kafka's) into S3 (moto, in process), and the objects read back.

`connect_record` builds the Struct that most of those tests write (StorageSinkTestBase.createRecord: boolean,
int, long, float, double); `envelope` writes a value as JsonConverter does with schemas.enable=true (type names
from apache/kafka connect/json JsonSchema.java: `float` and `double` for FLOAT32 and FLOAT64)."""

from __future__ import annotations

import gzip
import io
import json
from dataclasses import dataclass, field

import fastavro
import orjson
import pyarrow.parquet as pq

from sink_engine.model import PartitionRange, TaskResult
from sink_engine.records import RecordChunk
from sink_engine.target.s3_objects.output import run_range
from sink_engine.task.settings import TaskSettings
from sink_engine.validation import parse_checked_config
from tests.builders import connector_keys
from tests.kafka_message import Message
from tests.s3_reader import list_keys

TOPIC = "t"
BASE = {"s3.region": "us-east-1", "s3.bucket.name": "lake", "topics": TOPIC, "flush.size": 3}


@dataclass
class Rec:
    """One Kafka record: value and key bytes, record time (epoch ms), headers [(name, bytes)]."""

    value: bytes | None
    key: bytes | None = b"key"
    timestamp: int = 0
    headers: list = field(default_factory=list)


class ListReader:
    """A RangeReader of records given in a list (their offsets from the range's start), in chunks."""

    def __init__(self, records: list[Rec], chunk_size: int):
        self._records, self._chunk_size = records, chunk_size

    def read(self, planned: PartitionRange):
        for first in range(planned.start_offset, planned.end_offset, self._chunk_size):
            stop = min(planned.end_offset, first + self._chunk_size)
            picked = [self._records[i - planned.start_offset] for i in range(first, stop)]
            messages = [Message(r.key, r.value, r.headers or None, (1, r.timestamp)) for r in picked]
            yield RecordChunk(
                planned.topic, planned.partition, list(range(first, stop)), [r.value for r in picked], messages=messages
            )


def run_records(
    s3, keys: dict, records: list[Rec], chunk_size: int = 100, wallclock_ms: int = 0, start: int = 0
) -> TaskResult:
    """One range [start, start + len(records)) of topic `t` partition 0 written with connector `keys` (on top of
    BASE and tests/builders.py's), as a task writes it; its result (error, files, next offset)."""
    config = parse_checked_config({"name": "c", **connector_keys({**BASE, **keys})})
    planned = PartitionRange(TOPIC, 0, start, start + len(records), None, wallclock_ms=wallclock_ms)
    return run_range(TaskSettings.from_config(config), planned, s3, reader=ListReader(records, chunk_size))


def landed(s3, prefix: str = f"topics/{TOPIC}/") -> dict[str, list]:
    """Every object under `prefix`, by key, as the records it holds (JSON lines parsed, Avro datums, Parquet
    rows as dicts)."""
    return {key: read_records(s3, key) for key in list_keys(s3, "lake", prefix)}


def read_records(s3, key: str) -> list:
    body = s3.get_object(Bucket="lake", Key=key)["Body"].read()
    if key.endswith(".avro"):
        return list(fastavro.reader(io.BytesIO(body)))
    if key.endswith(".parquet"):
        return pq.read_table(io.BytesIO(body)).to_pylist()
    if key.endswith(".gz"):
        body = gzip.decompress(body)
    return [json.loads(line) for line in body.decode().splitlines()]


def avro_schema_of(s3, key: str):
    """The writer schema of an Avro object, as fastavro reads it."""
    return fastavro.reader(io.BytesIO(s3.get_object(Bucket="lake", Key=key)["Body"].read())).writer_schema


def parquet_schema_of(s3, key: str):
    return pq.read_schema(io.BytesIO(s3.get_object(Bucket="lake", Key=key)["Body"].read()))


# StorageSinkTestBase.createSchema / createRecord as JsonConverter writes them (its asJsonSchema: the struct's
# fields in order, each with its `field` name, `optional` always written).
RECORD_SCHEMA = {
    "type": "struct",
    "name": "record",
    "version": 1,
    "optional": False,
    "fields": [
        {"field": "boolean", "type": "boolean", "optional": False},
        {"field": "int", "type": "int32", "optional": False},
        {"field": "long", "type": "int64", "optional": False},
        {"field": "float", "type": "float", "optional": False},
        {"field": "double", "type": "double", "optional": False},
    ],
}


def connect_record(i: int = 0) -> dict:
    """createRecord's values, with `int` and `long` 12 + i (createRecordBatches varies them so)."""
    return {"boolean": True, "int": 12 + i, "long": 12 + i, "float": 12.2, "double": 12.2}


def envelope(schema: dict | None, payload) -> bytes:
    """A value as JsonConverter.fromConnectData writes it with schemas.enable=true."""
    return orjson.dumps({"schema": schema, "payload": payload})


def key_of(offset: int, encoded: str = "partition=0", extension: str = ".json") -> str:
    """FileUtils.fileKeyToCommit's key for topics.dir `topics` and the default zero padding."""
    return f"topics/{TOPIC}/{encoded}/{TOPIC}+0+{offset:010d}{extension}"


def batch_record(ibase: int, fbase: float = 12.2) -> dict:
    """TopicPartitionWriterTest.createRecord(schema, ibase, fbase): `int` and `long` ibase, `float` and `double`
    fbase."""
    return {"boolean": True, "int": ibase, "long": ibase, "float": fbase, "double": fbase}


def record_batches(batch_size: int, batches: int) -> list[dict]:
    """TopicPartitionWriterTest.createRecordBatches: `batches` times the batch of `int` 16, 17, ... (`float` 12.2,
    13.2, ...)."""
    return [batch_record(16 + i, 12.2 + i) for _ in range(batches) for i in range(batch_size)]


def structs(
    values: list[dict],
    schema: dict = RECORD_SCHEMA,
    stamps: list | None = None,
    key: bytes = b"key",
    headers: list | None = None,
) -> list[Rec]:
    """Records of Struct values of `schema` as JsonConverter envelopes, with record times `stamps` (0)."""
    stamps = stamps or [0] * len(values)
    return [Rec(envelope(schema, value), key, stamp, list(headers or [])) for value, stamp in zip(values, stamps)]


def la_ms(year: int, month: int, day: int, hour: int, minute: int = 0) -> int:
    """Epoch ms of a wall time in America/Los_Angeles (the tests' `new DateTime(..., forID("America/Los_Angeles"))`)."""
    from datetime import datetime
    from zoneinfo import ZoneInfo

    return int(datetime(year, month, day, hour, minute, tzinfo=ZoneInfo("America/Los_Angeles")).timestamp() * 1000)


# S3SinkConnectorTestBase.createProps: the partitioner settings every TopicPartitionWriterTest starts from (locale
# `en`, timezone America/Los_Angeles, partition.field.name `int`); JsonConverter envelopes in.
WRITER_BASE = {
    "value.converter.schemas.enable": "true",
    "locale": "en",
    "timezone": "America/Los_Angeles",
    "partition.field.name": "int",
    "format.class": "AvroFormat",
}
HOURLY = {
    "partitioner.class": "io.confluent.connect.storage.partitioner.HourlyPartitioner",
    "timestamp.extractor": "Record",
}
