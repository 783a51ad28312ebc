"""store.kafka.keys / store.kafka.headers: sidecar objects beside each data object, read back independently."""

from __future__ import annotations

import io

import fastavro
import orjson
import pyarrow.parquet as pq
import pytest
from confluent_kafka import Producer

from sink_engine.driver.job import TaskFailedError, run_job
from tests.conftest import BUCKET
from tests.runs import committed_offsets
from tests.s3_reader import list_keys, read_json_lines


def produce_with_headers(bootstrap: str, topic: str, count: int, key_of=lambda i: f"k{i}".encode()) -> None:
    """One partition; the last record goes alone after a flush so that the end offset is exact."""
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5})
    for i in range(count):
        if i == count - 1:
            producer.flush(30)
        producer.produce(
            topic,
            value=orjson.dumps({"n": i}),
            key=key_of(i),
            partition=0,
            headers=[("trace", f"t{i}".encode()), ("raw", b"\xff\x00")],
        )
    assert producer.flush(30) == 0


def body(s3, key: str) -> bytes:
    return s3.get_object(Bucket=BUCKET, Key=key)["Body"].read()


def test_json_keys_and_headers_sidecars_line_up_with_the_data(stack, new_topic, spark, s3, dynamodb, connector):
    # given 4 records with keys and headers, flush.size 2, JSON sidecars
    config = connector(
        **{
            "store.kafka.keys": "true",
            "store.kafka.headers": "true",
            "flush.size": 2,
            "keys.format.class": "io.confluent.connect.s3.format.json.JsonFormat",
            "headers.format.class": "JsonFormat",
        }
    )
    topic = new_topic(config, 1)
    produce_with_headers(stack.bootstrap_servers, topic, 4)
    # when the sink runs
    run_job(config, spark, dynamodb)
    # then each data object has its keys and headers objects, named as the Confluent connector names them
    stem = f"topics/{topic}/partition=0/{topic}+0+"
    assert list_keys(s3, BUCKET, f"topics/{topic}/") == sorted(
        f"{stem}{start:010d}{suffix}" for start in (0, 2) for suffix in (".json", ".keys.json", ".headers.json")
    )
    # and record i of each sidecar belongs to record i of the data object
    assert read_json_lines(s3, BUCKET, f"{stem}0000000002.json") == [{"n": 2}, {"n": 3}]
    assert read_json_lines(s3, BUCKET, f"{stem}0000000002.keys.json") == ["k2", "k3"]
    # (headers enveloped as the connector's JsonRecordWriterProvider writes them: {"headers": [...]})
    assert read_json_lines(s3, BUCKET, f"{stem}0000000002.headers.json") == [
        {"headers": [{"key": "trace", "value": f"t{i}"}, {"key": "raw", "value": "/wA="}]} for i in (2, 3)
    ]


def test_parquet_keys_and_avro_headers_sidecars(stack, new_topic, spark, s3, dynamodb, connector):
    config = connector(
        **{
            "store.kafka.keys": "true",
            "store.kafka.headers": "true",
            "flush.size": 3,
            "format.class": "ParquetFormat",
            "keys.format.class": "ParquetFormat",
        }
    )
    topic = new_topic(config, 1)
    produce_with_headers(stack.bootstrap_servers, topic, 3)
    run_job(config, spark, dynamodb)
    stem = f"topics/{topic}/partition=0/{topic}+0+0000000000"
    keys = pq.read_table(io.BytesIO(body(s3, f"{stem}.keys.snappy.parquet"))).to_pylist()
    assert keys == [{"key": f"k{i}"} for i in range(3)]
    # (Avro headers bare, as the connector's AvroRecordWriterProvider writes HeaderRecordView unenveloped)
    headers = list(fastavro.reader(io.BytesIO(body(s3, f"{stem}.headers.avro"))))
    assert headers[1] == [{"key": "trace", "value": "t1"}, {"key": "raw", "value": "/wA="}]


def test_a_null_key_fails_the_run_when_keys_are_stored(stack, new_topic, spark, s3, dynamodb, connector):
    config = connector(**{"store.kafka.keys": "true", "keys.format.class": "JsonFormat", "flush.size": 1})
    topic = new_topic(config, 1)
    produce_with_headers(stack.bootstrap_servers, topic, 3, key_of=lambda i: None if i == 1 else b"k")
    with pytest.raises(TaskFailedError, match=rf"{topic}-0@1: .*key cannot be null"):
        run_job(config, spark, dynamodb)
    assert committed_offsets(dynamodb, config) == {0: 1}
