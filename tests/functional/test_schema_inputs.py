"""Schema'd inputs end to end: Confluent Schema Registry Avro, AWS Glue Schema Registry Avro, JsonConverter
envelopes, and schema evolution under each schema.compatibility mode (real broker, moto, local Spark)."""

from __future__ import annotations

import io
import json
import uuid
import zlib

import boto3
import fastavro
import orjson
import pyarrow.parquet as pq
import pytest
from confluent_kafka.schema_registry import SchemaRegistryClient
from confluent_kafka.schema_registry.avro import AvroSerializer
from confluent_kafka.serialization import MessageField, SerializationContext

from sink_engine.driver.job import TaskFailedError, run_job
from tests.conftest import BUCKET
from tests.runs import committed_offsets
from tests.s3_reader import list_keys, read_json_lines
from tests.schema_registry_server import SchemaRegistryServer

USER_INFO = "sink:s3cret"
ORDER_V1 = {
    "type": "record",
    "name": "Order",
    "namespace": "shop",
    "fields": [{"name": "id", "type": "int"}, {"name": "item", "type": "string"}],
}
ORDER_V2 = {
    **ORDER_V1,
    "fields": ORDER_V1["fields"]
    + [
        {"name": "note", "type": "string", "default": "none"},
        {"name": "qty", "type": ["null", "long"], "default": None},
    ],
}


@pytest.fixture(scope="module")
def registry():
    with SchemaRegistryServer(user_info=USER_INFO) as server:
        yield server


def read_parquet(s3, key: str) -> list[dict]:
    return pq.read_table(io.BytesIO(s3.get_object(Bucket=BUCKET, Key=key)["Body"].read())).to_pylist()


def file_names(s3, topic: str) -> list[str]:
    return [k.rsplit("/", 1)[1] for k in list_keys(s3, BUCKET, f"topics/{topic}/")]


def test_registry_avro_topic_lands_as_parquet(new_topic, spark, s3, dynamodb, connector, registry):
    # given records serialized by confluent-kafka's AvroSerializer: 4 with schema v1, then 4 with v2
    config = connector(
        **{
            "value.converter": "io.confluent.connect.avro.AvroConverter",
            "value.converter.schema.registry.url": registry.url,
            "value.converter.basic.auth.credentials.source": "USER_INFO",
            "value.converter.basic.auth.user.info": USER_INFO,
            "format.class": "io.confluent.connect.s3.format.parquet.ParquetFormat",
            "schema.compatibility": "BACKWARD",
            "flush.size": 4,
        }
    )
    topic = config["topics"][0]
    client = SchemaRegistryClient({"url": registry.url, "basic.auth.user.info": USER_INFO})
    context = SerializationContext(topic, MessageField.VALUE)
    v1, v2 = (AvroSerializer(client, json.dumps(s)) for s in (ORDER_V1, ORDER_V2))
    values = [v1({"id": i, "item": f"i{i}"}, context) for i in range(4)]
    values += [v2({"id": i, "item": f"i{i}", "note": "n", "qty": i}, context) for i in range(4, 8)]
    new_topic(topic, 1, values)
    # when the sink runs
    run_job(config, spark, dynamodb)
    # then one Parquet file per schema version, each with its schema's columns, read back with pyarrow
    assert file_names(s3, topic) == [f"{topic}+0+0000000000.snappy.parquet", f"{topic}+0+0000000004.snappy.parquet"]
    first, second = (read_parquet(s3, k) for k in list_keys(s3, BUCKET, f"topics/{topic}/"))
    assert first == [{"id": i, "item": f"i{i}"} for i in range(4)]
    assert second == [{"id": i, "item": f"i{i}", "note": "n", "qty": i} for i in range(4, 8)]
    assert committed_offsets(dynamodb, config) == {0: 8}


def test_glue_registry_topic_lands_as_parquet(new_topic, spark, s3, dynamodb, connector, unique):
    # given a Glue registry schema and records in the Glue wire format, some zlib-compressed
    glue = boto3.client("glue")
    glue.create_registry(RegistryName=f"reg-{unique}")
    created = glue.create_schema(
        RegistryId={"RegistryName": f"reg-{unique}"},
        SchemaName=f"orders-{unique}",
        DataFormat="AVRO",
        Compatibility="BACKWARD",
        SchemaDefinition=json.dumps(ORDER_V1),
    )
    version_id = uuid.UUID(created["SchemaVersionId"])
    parsed = fastavro.parse_schema(ORDER_V1)

    def glue_record(i: int) -> bytes:
        buffer = io.BytesIO()
        fastavro.schemaless_writer(buffer, parsed, {"id": i, "item": f"i{i}"})
        if i % 2:
            return bytes([3, 5]) + version_id.bytes + zlib.compress(buffer.getvalue())
        return bytes([3, 0]) + version_id.bytes + buffer.getvalue()

    config = connector(
        **{
            "value.converter": "com.amazonaws.services.schemaregistry.kafkaconnect.AWSKafkaAvroConverter",
            "value.converter.region": "us-east-1",
            "value.converter.registry.name": f"reg-{unique}",
            "format.class": "io.confluent.connect.s3.format.parquet.ParquetFormat",
            "flush.size": 3,
        }
    )
    topic = new_topic(config, 1, [glue_record(i) for i in range(6)])
    # when the sink runs
    run_job(config, spark, dynamodb)
    # then two Parquet files of three rows each
    keys = list_keys(s3, BUCKET, f"topics/{topic}/")
    assert [read_parquet(s3, k) for k in keys] == [
        [{"id": i, "item": f"i{i}"} for i in r] for r in (range(3), range(3, 6))
    ]


def envelope(version: int, record_id: int) -> bytes:
    fields = [{"field": "id", "type": "int32"}]
    payload = {"id": record_id}
    if version == 2:
        fields += [
            {"field": "note", "type": "string", "default": "none"},
            {"field": "score", "type": "float64", "optional": True},
        ]
        payload.update(note=f"n{record_id}", score=0.5)
    return orjson.dumps(
        {"schema": {"type": "struct", "name": "Ev", "version": version, "fields": fields}, "payload": payload}
    )


V1_ROW = lambda i: {"id": i}  # noqa: E731
V2_ROW = lambda i: {"id": i, "note": f"n{i}", "score": 0.5}  # noqa: E731
UP = lambda i: {"id": i, "note": "none", "score": None}  # noqa: E731  (a v1 record projected to v2)

# Offsets 0..5 carry schema versions 1, 2, 1, 1, 1, 1 with flush.size 3. Expected files (start offset: rows)
# and committed offset, worked out from the Confluent connector's rules (see target/s3_objects/schema_gate.py).
EVOLUTION = {
    "NONE": ({0: [V1_ROW(0)], 1: [V2_ROW(1)], 2: [V1_ROW(2), V1_ROW(3), V1_ROW(4)]}, 5),
    "BACKWARD": ({0: [V1_ROW(0)], 1: [V2_ROW(1), UP(2), UP(3)]}, 4),
    "FULL": ({0: [V1_ROW(0)], 1: [V2_ROW(1), UP(2), UP(3)]}, 4),
    "FORWARD": ({0: [V1_ROW(0), V1_ROW(1), V1_ROW(2)], 3: [V1_ROW(3), V1_ROW(4), V1_ROW(5)]}, 6),
}


@pytest.mark.parametrize("mode", sorted(EVOLUTION))
def test_schema_evolution_rotates_and_projects_by_compatibility(new_topic, spark, s3, dynamodb, connector, mode):
    # given JsonConverter envelopes whose schema goes v1, v2, then back to v1
    config = connector(
        **{
            "value.converter.schemas.enable": "true",
            "schema.compatibility": mode,
            "flush.size": 3,
            "sink.schema.files": "rotate",
        }
    )  # NONE: the connector's files (see test_schema_files.py)
    topic = new_topic(config, 1, [envelope(v, i) for i, v in enumerate((1, 2, 1, 1, 1, 1))])
    # when the sink runs
    run_job(config, spark, dynamodb)
    # then files start where the mode rotates, and rows are projected to each file's schema
    expected_files, expected_commit = EVOLUTION[mode]
    keys = list_keys(s3, BUCKET, f"topics/{topic}/")
    assert [k.rsplit("+", 1)[1] for k in keys] == [f"{start:010d}.json" for start in expected_files]
    assert [read_json_lines(s3, BUCKET, k) for k in keys] == list(expected_files.values())
    assert committed_offsets(dynamodb, config) == {0: expected_commit}


def test_a_record_that_cannot_be_projected_fails_the_run_naming_it(new_topic, spark, s3, dynamodb, connector):
    # given v2 adds a required field without a default, and a v1 record follows a v2 record
    strict = orjson.dumps(
        {
            "schema": {
                "type": "struct",
                "name": "Ev",
                "version": 2,
                "fields": [{"field": "id", "type": "int32"}, {"field": "must", "type": "string"}],
            },
            "payload": {"id": 1, "must": "x"},
        }
    )
    config = connector(
        **{"value.converter.schemas.enable": "true", "schema.compatibility": "BACKWARD", "flush.size": 10}
    )
    topic = new_topic(config, 1, [envelope(1, 0), strict, envelope(1, 2)])
    # when the sink runs, then the run fails naming the record and the field
    with pytest.raises(TaskFailedError, match=rf"{topic}-0@2: .*must: required field is missing"):
        run_job(config, spark, dynamodb)
    # and the file closed by the schema change (offset 0) is committed, nothing after it
    assert file_names(s3, topic) == [f"{topic}+0+0000000000.json"]
    assert committed_offsets(dynamodb, config) == {0: 1}
