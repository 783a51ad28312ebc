"""Kafka's field transforms in one chain end to end (real broker, moto's server, local Spark): Flatten, InsertField,
ReplaceField, MaskField, Cast, TimestampConverter and InsertHeader on schemaless JSON and on values with a schema
(Connect's JSON envelope), through JSON, Parquet and Avro objects read back by independent readers; the output
schema follows the transforms, and a rerun after a crash writes the same bytes (IcebergFormat: tests/iceberg)."""

from __future__ import annotations

from datetime import UTC, datetime

import orjson
import pytest

from sink_engine.driver.job import run_job
from tests.conftest import BUCKET
from tests.functional.test_transforms import FORMATS, read_back
from tests.runs import committed_offsets, rewritten_after_crash
from tests.s3_reader import object_bodies

KAFKA = "org.apache.kafka.connect.transforms"
COUNT, FLUSH = 12, 6
BASE_MS = 1_700_000_000_000

# one chain, alias -> options (Connect's option names)
CHAIN = {
    "flat": {"type": f"{KAFKA}.Flatten$Value", "delimiter": "_"},
    "ins": {
        "type": f"{KAFKA}.InsertField$Value",
        "static.field": "source",
        "static.value": "web",
        "offset.field": "kafka_offset",
    },
    "slim": {"type": f"{KAFKA}.ReplaceField$Value", "exclude": "user_id", "renames": "event_type:type"},
    "mask": {"type": f"{KAFKA}.MaskField$Value", "fields": "region"},
    "cast": {"type": f"{KAFKA}.Cast$Value", "spec": "event_id:string"},
    "when": {
        "type": f"{KAFKA}.TimestampConverter$Value",
        "field": "timestamp",
        "target.type": "string",
        "format": "yyyy-MM-dd HH:mm:ss",
    },
    "hdr": {"type": f"{KAFKA}.InsertHeader", "header": "pipeline", "value.literal": "s3"},
}


def chain_keys() -> dict:
    keys = {"transforms": ",".join(CHAIN)}
    for alias, options in CHAIN.items():
        keys.update({f"transforms.{alias}.{name}": value for name, value in options.items()})
    return keys


def event(i: int) -> dict:
    return {
        "event_id": i,
        "event_type": ("view", "click", "buy")[i % 3],
        "region": "eu-west",
        "timestamp": BASE_MS + i * 1000,
        "user_id": f"user-{i}",
        "geo": {"country": "FR", "city": f"c{i}"},
    }


_GEO = {
    "type": "struct",
    "optional": False,
    "field": "geo",
    "fields": [{"field": "country", "type": "string"}, {"field": "city", "type": "string"}],
}
_SCHEMA = {
    "type": "struct",
    "name": "Click",
    "fields": [
        {"field": "event_id", "type": "int64"},
        {"field": "event_type", "type": "string"},
        {"field": "region", "type": "string"},
        {"field": "timestamp", "type": "int64"},
        {"field": "user_id", "type": "string"},
        _GEO,
    ],
}

VALUES = {
    "schemaless": ({"value.converter.schemas.enable": "false"}, lambda i: orjson.dumps(event(i))),
    "with-schema": (
        {"value.converter.schemas.enable": "true"},
        lambda i: orjson.dumps({"schema": _SCHEMA, "payload": event(i)}),
    ),
}


def expected_row(i: int) -> dict:
    """What Kafka's transforms make of event(i) at offset i (one partition)."""
    when = datetime.fromtimestamp((BASE_MS + i * 1000) / 1000, tz=UTC).strftime("%Y-%m-%d %H:%M:%S")
    return {
        "event_id": str(i),
        "type": ("view", "click", "buy")[i % 3],
        "region": "",
        "timestamp": when,
        "geo_country": "FR",
        "geo_city": f"c{i}",
        "source": "web",
        "kafka_offset": i,
    }


@pytest.mark.parametrize("values", VALUES)
@pytest.mark.parametrize("name", FORMATS)
def test_a_chain_of_field_transforms_lands_in_every_format_and_reruns_byte_identical(
    new_topic, spark, s3, dynamodb, connector, name, values
):
    overrides, extension = FORMATS[name]
    converter, encode = VALUES[values]
    config = connector(
        **{
            "flush.size": FLUSH,
            "sink.lease.duration.ms": 1500,
            "store.kafka.headers": "true",
            "headers.format.class": "JsonFormat",
            **chain_keys(),
            **converter,
            **overrides,
        }
    )
    topic = new_topic(config, 1, [encode(i) for i in range(COUNT)])
    # given a run that dies after its uploads, before any commit; when its objects are gone and the job runs again
    # once the dead run's lease has lapsed
    crashed, after = rewritten_after_crash(config, spark, dynamodb, s3, f"topics/{topic}/")
    # then the same objects hold the same bytes
    assert after == crashed
    data = sorted(k for k in after if k.endswith(extension) and ".headers" not in k)
    assert data == [f"topics/{topic}/partition=0/{topic}+0+{s:010d}{extension}" for s in (0, FLUSH)]
    # and each holds the transformed records in offset order, the schema following the transforms
    for key in data:
        start = int(key.split("+")[2][:10])
        assert read_back(after[key], extension) == [expected_row(i) for i in range(start, start + FLUSH)], key
        # the header the chain inserted is in the headers sidecar, beside each record
        headers = [orjson.loads(line) for line in after[key[: -len(extension)] + ".headers.json"].splitlines()]
        assert headers == [{"headers": [{"key": "pipeline", "value": "s3"}]}] * FLUSH
    assert committed_offsets(dynamodb, config) == {0: COUNT}


_ROW = {
    "type": "struct",
    "name": "dbserver1.inventory.customers.Value",
    "optional": True,
    "fields": [{"field": "id", "type": "int32"}, {"field": "name", "type": "string"}],
}
_ENVELOPE = {
    "type": "struct",
    "name": "dbserver1.inventory.customers.Envelope",
    "fields": [
        {**_ROW, "field": "before"},
        {**_ROW, "field": "after"},
        {
            "type": "struct",
            "name": "io.debezium.connector.postgresql.Source",
            "field": "source",
            "fields": [{"field": "table", "type": "string"}, {"field": "ts_ms", "type": "int64"}],
        },
        {"field": "op", "type": "string"},
        {"field": "ts_ms", "type": "int64", "optional": True},
    ],
}

# Debezium change events of one table (offsets 0-4): create, update, delete, Debezium's tombstone, create
CHANGES = [
    ("c", None, {"id": 1, "name": "a"}),
    ("u", {"id": 1, "name": "a"}, {"id": 1, "name": "b"}),
    ("d", {"id": 2, "name": "x"}, None),
    None,
    ("c", None, {"id": 3, "name": "c"}),
]
CDC_CHAIN = {
    "transforms": "unwrap,key,meta,wrap",
    "transforms.unwrap.type": "io.debezium.transforms.ExtractNewRecordState",
    "transforms.unwrap.delete.tombstone.handling.mode": "rewrite",
    "transforms.unwrap.add.fields": "op",
    "transforms.key.type": f"{KAFKA}.ValueToKey",
    "transforms.key.fields": "id",
    "transforms.meta.type": f"{KAFKA}.SetSchemaMetadata$Value",
    "transforms.meta.schema.name": "com.acme.Customer",
    "transforms.wrap.type": f"{KAFKA}.HoistField$Value",
    "transforms.wrap.field": "customer",
}


def change_event(change) -> bytes | None:
    if change is None:
        return None
    op, before, after = change
    payload = {
        "before": before,
        "after": after,
        "source": {"table": "customers", "ts_ms": BASE_MS},
        "op": op,
        "ts_ms": BASE_MS,
    }
    return orjson.dumps({"schema": _ENVELOPE, "payload": payload})


@pytest.mark.parametrize("name", FORMATS)
def test_debezium_change_events_unwrap_into_every_format(new_topic, spark, s3, dynamodb, connector, name):
    overrides, extension = FORMATS[name]
    # given Debezium's envelopes (Connect JSON with schemas) unwrapped with deletes rewritten, keyed by id,
    # renamed and hoisted; keys written beside the data
    config = connector(
        **{
            "flush.size": 2,
            "value.converter.schemas.enable": "true",
            "store.kafka.keys": "true",
            "keys.format.class": "JsonFormat",
            **CDC_CHAIN,
            **overrides,
        }
    )
    topic = new_topic(config, 1, [change_event(c) for c in CHANGES], keys=[b"k"] * len(CHANGES))
    # when the sink runs
    run_job(config, spark, dynamodb)
    # then each change is its row state (the delete its before state, flagged), Debezium's tombstone is dropped
    # (the commit point moves past it), and each key is the row's id
    bodies = object_bodies(s3, BUCKET, f"topics/{topic}/")
    rows, keys = [], []
    for start in (0, 2):
        stem = f"topics/{topic}/partition=0/{topic}+0+{start:010d}"
        rows += read_back(bodies[stem + extension], extension)
        keys += [orjson.loads(line) for line in bodies[stem + ".keys.json"].splitlines()]
    flag = {"c": "false", "u": "false", "d": "true"}
    assert rows == [
        {"customer": {**(after or before), "__op": op, "__deleted": flag[op]}}
        for op, before, after in (c for c in CHANGES if c is not None)
    ]
    assert keys == [{"id": 1}, {"id": 1}, {"id": 2}, {"id": 3}]
    assert committed_offsets(dynamodb, config) == {0: len(CHANGES)}
