"""Registry Protobuf values of a schema the columnar reader covers (convert/protobuf_arrow.py), end to end (real broker,
moto, local Spark, the test registry): the click events land in Parquet as ProtobufData maps them, and a bad payload
in the middle of a partition is dead-lettered by its offset while its neighbours land."""

from __future__ import annotations

import datetime
import io

import pyarrow.parquet as pq
import pytest

from devtools.avro_events import click_event
from devtools.protobuf_events import CLICK_PROTO, registry_values
from sink_engine.driver.job import run_job
from tests.conftest import BUCKET
from tests.dlq_corpus import Sample, produce_samples, read_dlq_s3
from tests.runs import committed_offsets
from tests.s3_reader import list_keys
from tests.schema_registry_server import SchemaRegistryServer

pytest.importorskip("ptars")
UTC = datetime.UTC


def expected_row(i: int) -> dict:
    """Click event i as the general path maps its Protobuf message (Timestamp to a UTC datetime)."""
    event = click_event(i)
    return {**event, "timestamp": datetime.datetime.fromtimestamp(event["timestamp"] / 1000, UTC)}


def test_protobuf_click_events_land_in_parquet_and_a_bad_payload_is_dead_lettered(
    stack, new_topic, spark, s3, dynamodb, connector, unique
):
    with SchemaRegistryServer() as registry:
        schema_id = registry.register(f"events-{unique}-value", CLICK_PROTO, schema_type="PROTOBUF")["id"]
        values = registry_values(10, schema_id)
        # given six good events in partition 0, and in partition 1 three good ones around a truncated payload
        samples = {
            0: [Sample(b"%d" % i, values[i]) for i in range(6)],
            1: [
                Sample(b"6", values[6]),
                Sample(b"7", values[7]),
                Sample(b"cut", values[8][:-4], error_class="ConversionError"),
                Sample(b"9", values[9]),
            ],
        }
        config = connector(
            **{
                "value.converter": "io.confluent.connect.protobuf.ProtobufConverter",
                "value.converter.schema.registry.url": registry.url,
                "format.class": "ParquetFormat",
                "flush.size": 3,
                "errors.tolerance": "all",
                "errors.deadletterqueue.s3.prefix": "pb-dlq",
            }
        )
        topic = new_topic(config, 2)
        produce_samples(stack.bootstrap_servers, topic, samples)
        # when the sink runs
        run_job(config, spark, dynamodb)
    # then each partition's files hold its good events in order, typed and valued as the general path maps them
    landed = {}
    for key in list_keys(s3, BUCKET, f"topics/{topic}/"):
        body = s3.get_object(Bucket=BUCKET, Key=key)["Body"].read()
        landed.setdefault(key.split("/")[-2], []).extend(pq.read_table(io.BytesIO(body)).to_pylist())
    assert landed == {
        "partition=0": [expected_row(i) for i in range(6)],
        "partition=1": [expected_row(i) for i in (6, 7, 9)],
    }
    # and the truncated payload is a dead letter at its offset, past which partition 1 is committed
    letters = read_dlq_s3(s3, BUCKET, f"pb-dlq/{topic}/")
    assert [(d["partition"], d["offset"], d["key"], d["error"]["class"]) for d in letters] == [
        (1, 2, b"cut", "ConversionError")
    ]
    assert committed_offsets(dynamodb, config) == {0: 6, 1: 4}
