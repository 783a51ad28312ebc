"""The yardstick of `make bench`: Kafka to S3 in one plain Python process, with nothing of the engine.

For each partition in turn: consume (confluent-kafka, the same fetch settings as the engine), validate or parse,
encode, and PutObject one object per `flush_size` records on one upload thread (so that reading goes on while
S3 takes an object, as anyone would write it); records after the last full object are not written (as the
engine leaves the tail of a run for the next one). Two encodings, as a user would write them by hand:
  json:    orjson validates each value; the values are joined into JSON lines
  parquet: the values are joined and parsed by `pyarrow.json`; the table is written as Parquet
  avro+registry/parquet: Confluent Schema Registry Avro values (devtools/avro_events.py): the 5-byte header
           stripped, each datum read by fastavro.schemaless_reader, `Table.from_pylist`, Parquet/snappy
"""

from __future__ import annotations

import io
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass

import boto3
import fastavro
import orjson
import pyarrow as pa
import pyarrow.json as pa_json
import pyarrow.parquet as pq
from confluent_kafka import Consumer, KafkaError, TopicPartition

FETCH_SETTINGS = {
    "fetch.queue.backoff.ms": 10,
    "queued.max.messages.kbytes": 65536,
    "fetch.max.bytes": 52428800,
    "max.partition.fetch.bytes": 10485760,
}


@dataclass
class PlainResult:
    records: int
    objects: int
    bytes: int


def json_lines(values: list) -> bytes:
    loads = orjson.loads
    for value in values:
        loads(value)
    return b"\n".join(values) + b"\n"


def parquet_snappy(values: list) -> bytes:
    table = pa_json.read_json(
        pa.BufferReader(b"\n".join(values)), read_options=pa_json.ReadOptions(use_threads=False, block_size=1 << 30)
    )
    out = io.BytesIO()
    pq.write_table(table, out, compression="snappy")
    return out.getvalue()


def avro_registry_parquet_snappy(values: list) -> bytes:
    from devtools.avro_events import CLICK

    parsed, read = fastavro.parse_schema(CLICK), fastavro.schemaless_reader
    rows = [read(io.BytesIO(value[5:]), parsed, None) for value in values]
    out = io.BytesIO()
    pq.write_table(pa.Table.from_pylist(rows), out, compression="snappy")
    return out.getvalue()


ENCODERS: dict[str, tuple[Callable[[list], bytes], str]] = {
    "json": (json_lines, ".json"),
    "parquet/snappy": (parquet_snappy, ".snappy.parquet"),
    "avro+registry/parquet": (avro_registry_parquet_snappy, ".snappy.parquet"),
}


def run(
    bootstrap: str, topic: str, partitions: int, bucket: str, prefix: str, encoding: str, flush_size: int
) -> PlainResult:
    """Write every full `flush_size` run of records of each partition as one object under `prefix`."""
    encode, extension = ENCODERS[encoding]
    s3, result = boto3.client("s3"), PlainResult(0, 0, 0)
    with ThreadPoolExecutor(max_workers=1) as uploads:
        in_flight: list[Future] = []
        for partition in range(partitions):
            for body, key in _objects(bootstrap, topic, partition, encode, flush_size):
                if len(in_flight) == 2:  # at most one object waits while one is sent
                    in_flight.pop(0).result()
                in_flight.append(
                    uploads.submit(s3.put_object, Bucket=bucket, Key=f"{prefix}/{key}{extension}", Body=body)
                )
                result.records, result.objects, result.bytes = (
                    result.records + flush_size,
                    result.objects + 1,
                    result.bytes + len(body),
                )
        for upload in in_flight:
            upload.result()
    return result


def _objects(bootstrap: str, topic: str, partition: int, encode, flush_size: int):
    """(body, key without extension) of each full run of `flush_size` records of the partition."""
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": "plain-pipeline",
            "enable.auto.commit": False,
            "enable.partition.eof": True,
            **FETCH_SETTINGS,
        }
    )
    consumer.assign([TopicPartition(topic, partition, 0)])
    values, first_offset, at_end = [], 0, False
    while not at_end:
        for message in consumer.consume(10_000, 1.0):
            error = message.error()
            if error is not None:
                if error.code() != KafkaError._PARTITION_EOF:
                    raise RuntimeError(f"plain pipeline: {error}")
                at_end = True
                break
            values.append(message.value())
            if len(values) == flush_size:
                yield encode(values), f"{topic}/partition={partition}/{topic}+{partition}+{first_offset:010d}"
                offset = message.offset()
                assert offset is not None  # a record's
                values, first_offset = [], offset + 1
    consumer.close()
