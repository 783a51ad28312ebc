"""JSON Schema values of a schema the columnar reader covers, end to end (real broker, moto, local Spark, the test
registry): the click events land in Parquet as the general path types them, and a bad value in the middle of a
batch is dead-lettered by its offset while its neighbours still land."""

from __future__ import annotations

import datetime
import io
import json

import orjson
import pyarrow as pa
import pyarrow.parquet as pq

from devtools.avro_events import click_event
from devtools.json_schema_events import CLICK_JSON_SCHEMA, json_schema_values
from sink_engine.driver.job import run_job
from tests.conftest import BUCKET
from tests.dlq_corpus import Sample, produce_samples, read_dlq_s3
from tests.runs import committed
from tests.s3_reader import list_keys
from tests.schema_registry_server import SchemaRegistryServer

BAD = 12  # the offset of the value whose event_id is not an integer


def expected_row(i: int) -> dict:
    row = click_event(i)
    return {**row, "timestamp": datetime.datetime.fromtimestamp(row["timestamp"] / 1000, datetime.UTC)}


def test_covered_json_schema_values_land_typed_and_a_bad_one_is_dead_lettered(
    stack, new_topic, spark, s3, dynamodb, connector
):
    with SchemaRegistryServer() as registry:
        config = connector(
            **{
                "value.converter": "io.confluent.connect.json.JsonSchemaConverter",
                "value.converter.schema.registry.url": registry.url,
                "format.class": "ParquetFormat",
                "flush.size": 10,
                "errors.tolerance": "all",
                "errors.deadletterqueue.s3.prefix": "jsr-dlq",
            }
        )
        topic = config["topics"][0]
        schema_id = registry.register(f"{topic}-value", json.dumps(CLICK_JSON_SCHEMA), schema_type="JSON")["id"]
        # given 31 click events as JSON Schema values, the one at offset 12 with a fractional event_id
        values = json_schema_values(31, schema_id)
        values[BAD] = values[BAD][:5] + orjson.dumps({**click_event(BAD), "event_id": 12.5})
        new_topic(topic, 1)
        produce_samples(stack.bootstrap_servers, topic, {0: [Sample(None, value) for value in values]})
        # when the sink runs
        run_job(config, spark, dynamodb)
        # then the good events landed in Parquet files of 10, typed as the Connect schema gives them
        keys = list_keys(s3, BUCKET, f"topics/{topic}/partition=0/")
        tables = [pq.read_table(io.BytesIO(s3.get_object(Bucket=BUCKET, Key=key)["Body"].read())) for key in keys]
        assert [t.num_rows for t in tables] == [10, 10, 10]
        assert [row for t in tables for row in t.to_pylist()] == [expected_row(i) for i in range(31) if i != BAD]
        assert tables[0].schema.field("timestamp").type == pa.timestamp("ms", tz="UTC")
        assert tables[0].schema.field("device").type == pa.struct(
            [pa.field("os", pa.string(), nullable=False), pa.field("version", pa.int32(), nullable=False)]
        )
        # and the bad one is a dead letter naming its field
        letters = read_dlq_s3(s3, BUCKET, f"jsr-dlq/{topic}/")
        assert [(d["offset"], d["error"]["class"]) for d in letters] == [(BAD, "ConversionError")]
        assert "event_id: expected an int64" in letters[0]["error"]["message"]
        assert committed(dynamodb, config)[0].next_offset == 31
