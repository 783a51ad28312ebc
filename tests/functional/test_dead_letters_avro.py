"""Dead letters of Schema Registry Avro input: truncated records, a wrong magic byte and an unknown schema id
go to the dead-letter queue; an unreachable registry fails the run instead; registering the missing schema
and replaying brings the unknown-id records into S3 once."""

from __future__ import annotations

import io
import json
import socket
import struct

import fastavro
import pytest

from sink_engine.dlq.replay import replay
from sink_engine.dlq.replay_request import request_from_payload
from sink_engine.dlq.settings import DeadLetterSettings
from sink_engine.driver.job import TaskFailedError, run_job
from tests.conftest import BUCKET
from tests.dlq_corpus import Sample, produce_samples, read_dlq_s3
from tests.runs import committed
from tests.s3_reader import landed_records, list_keys
from tests.schema_registry_server import SchemaRegistryServer

ORDER = {
    "type": "record",
    "name": "Order",
    "namespace": "shop",
    "fields": [{"name": "id", "type": "int"}, {"name": "item", "type": "string"}],
}
LATER = {**ORDER, "name": "LaterOrder"}  # registered only after the records that use its id


def wire(schema_id: int, schema: dict, record: dict) -> bytes:
    body = io.BytesIO()
    fastavro.schemaless_writer(body, fastavro.parse_schema(schema), record)
    return b"\x00" + struct.pack(">I", schema_id) + body.getvalue()


def avro_connector(connector, url: str):
    return connector(
        **{
            "value.converter": "io.confluent.connect.avro.AvroConverter",
            "value.converter.schema.registry.url": url,
            "flush.size": 1,
            "errors.tolerance": "all",
            "errors.deadletterqueue.s3.prefix": "avro-dlq",
        }
    )


def test_bad_avro_is_dead_lettered_and_replayed_once_its_schema_exists(
    stack, new_topic, spark, s3, dynamodb, connector
):
    with SchemaRegistryServer() as registry:
        order_id = registry.register("orders-value", json.dumps(ORDER))["id"]
        later_id = order_id + 1
        good = [wire(order_id, ORDER, {"id": i, "item": f"i{i}"}) for i in range(4)]
        samples = [
            Sample(b"g0", good[0]),
            Sample(b"cut", good[1][:7], error_class="ConversionError"),
            Sample(b"g2", good[2]),
            Sample(b"magic", b"\x01" + good[3][1:], error_class="ConversionError"),
            Sample(b"later", wire(later_id, LATER, {"id": 9, "item": "late"}), error_class="ConversionError"),
            Sample(b"g3", good[3]),
        ]
        config = avro_connector(connector, registry.url)
        topic = new_topic(config, 1)
        produce_samples(stack.bootstrap_servers, topic, {0: samples})
        # when the sink runs
        run_job(config, spark, dynamodb)
        # then the three good records landed, the three bad ones are dead letters with their cause
        assert [d["id"] for d in landed_records(s3, topic)] == [0, 2, 3]
        letters = read_dlq_s3(s3, BUCKET, f"avro-dlq/{topic}/")
        assert [(d["offset"], d["key"], d["error"]["class"]) for d in letters] == [
            (1, b"cut", "ConversionError"),
            (3, b"magic", "ConversionError"),
            (4, b"later", "ConversionError"),
        ]
        assert f"schema id {later_id}" in letters[2]["error"]["message"]
        assert committed(dynamodb, config)[0].next_offset == 6
        # when the missing schema is registered and the unknown-id records are replayed, then the sink runs
        registry.register("orders-value", json.dumps(LATER))
        settings = DeadLetterSettings.from_config(config)
        request = request_from_payload({"connector": config.name, "window": {"from_offset": 4}}, settings)
        assert replay(settings, request, dynamodb, s3).to_dict()["totals"]["replayed"] == 1
        run_job(config, spark, dynamodb)
        # then it landed once, after the others, and nothing new was dead-lettered
        assert [d["id"] for d in landed_records(s3, topic)] == [0, 2, 3, 9]
        assert len(read_dlq_s3(s3, BUCKET, f"avro-dlq/{topic}/")) == 3


def test_unreachable_registry_fails_the_run_and_dead_letters_nothing(stack, new_topic, spark, s3, dynamodb, connector):
    with socket.socket() as unused:
        unused.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{unused.getsockname()[1]}"
    config = avro_connector(connector, url)
    topic = new_topic(config, 1)
    produce_samples(stack.bootstrap_servers, topic, {0: [Sample(b"k", wire(1, ORDER, {"id": 1, "item": "a"}))]})
    with pytest.raises(TaskFailedError, match="unreachable"):
        run_job(config, spark, dynamodb)
    assert list_keys(s3, BUCKET, f"avro-dlq/{topic}/") == []
    assert committed(dynamodb, config)[0].next_offset == 0


def test_a_record_that_cannot_be_projected_is_dead_lettered(stack, new_topic, spark, s3, dynamodb, connector):
    # given v2 of the schema adds a field without a default, so v1 records cannot be projected up to it
    v2 = {**ORDER, "fields": ORDER["fields"] + [{"name": "note", "type": "string"}]}
    with SchemaRegistryServer() as registry:
        v1_id = registry.register("proj-value", json.dumps(ORDER))["id"]
        v2_id = registry.register("proj-value", json.dumps(v2))["id"]
        samples = [
            Sample(b"a", wire(v1_id, ORDER, {"id": 0, "item": "a"})),
            Sample(b"b", wire(v2_id, v2, {"id": 1, "item": "b", "note": "n"})),
            Sample(b"c", wire(v1_id, ORDER, {"id": 2, "item": "c"}), error_class="SchemaProjectionError"),
            Sample(b"d", wire(v2_id, v2, {"id": 3, "item": "d", "note": "n"})),
            Sample(b"e", wire(v2_id, v2, {"id": 4, "item": "e", "note": "n"})),
        ]
        config = connector(
            **{
                "value.converter": "io.confluent.connect.avro.AvroConverter",
                "value.converter.schema.registry.url": registry.url,
                "flush.size": 3,
                "schema.compatibility": "BACKWARD",
                "errors.tolerance": "all",
                "errors.deadletterqueue.s3.prefix": "proj-dlq",
            }
        )
        topic = new_topic(config, 1)
        produce_samples(stack.bootstrap_servers, topic, {0: samples})
        # when the sink runs
        run_job(config, spark, dynamodb)
    # then the v1 record after v2 went to the dead-letter queue with its cause, and the rest landed once
    # (a alone: the schema change closed its file; then b, d, e)
    assert [d["id"] for d in landed_records(s3, topic)] == [0, 1, 3, 4]
    letters = read_dlq_s3(s3, BUCKET, f"proj-dlq/{topic}/")
    assert [(d["offset"], d["key"], d["error"]["class"]) for d in letters] == [(2, b"c", "SchemaProjectionError")]
    assert "cannot be projected" in letters[0]["error"]["message"]
    assert committed(dynamodb, config)[0].next_offset == 5
