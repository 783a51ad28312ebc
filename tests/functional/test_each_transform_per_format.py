"""Each value transform on its own, on schemaless JSON and on Connect JSON envelopes (with a schema), through JSON,
Parquet and Avro objects: a task's whole pipeline in this process (read from the real broker, convert, transform,
partition, rotate, encode, upload to moto's S3; `run_range` without Spark, which adds nothing to the transforms),
read back by independent readers (orjson, pyarrow, fastavro). The inputs and outputs are those of Apache Kafka's
tests of each transform, made one record shape. The chains, routers, Filter, Debezium's unwrap and IcebergFormat
run end to end with Spark in test_field_transforms_formats.py, test_transforms.py and tests/iceberg."""

from __future__ import annotations

from datetime import UTC, datetime

import orjson
import pytest

from sink_engine.model import PartitionRange
from sink_engine.target.s3_objects.output import run_range
from sink_engine.task.settings import TaskSettings
from tests.conftest import BUCKET
from tests.functional.test_transforms import FORMATS, read_back
from tests.s3_reader import object_bodies

KAFKA = "org.apache.kafka.connect.transforms"
COUNT = 3
DAY_MS = 86_400_000
BASE_MS = 1_700_006_400_000  # 2023-11-15T00:00:00Z


def event(i: int) -> dict:
    return {"n": i, "s": "secret", "ts": BASE_MS + i * DAY_MS, "inner": {"x": i}}


_SCHEMA = {
    "type": "struct",
    "name": "com.acme.Event",
    "fields": [
        {"field": "n", "type": "int64"},
        {"field": "s", "type": "string"},
        {"field": "ts", "type": "int64"},
        {"field": "inner", "type": "struct", "fields": [{"field": "x", "type": "int64"}]},
    ],
}
VALUES = {
    "schemaless": ({"value.converter.schemas.enable": "false"}, lambda i: orjson.dumps(event(i))),
    "with-schema": (
        {"value.converter.schemas.enable": "true"},
        lambda i: orjson.dumps({"schema": _SCHEMA, "payload": event(i)}),
    ),
}


def _day(i: int) -> str:
    return datetime.fromtimestamp((BASE_MS + i * DAY_MS) / 1000, tz=UTC).strftime("%Y-%m-%d")


def _without(row: dict, key: str) -> dict:
    return {k: v for k, v in row.items() if k != key}


# name -> (class, options, expected row of event(i), value kinds it applies to)
CASES = {
    "InsertField": (
        "InsertField$Value",
        {"static.field": "src", "static.value": "web"},
        lambda i: {**event(i), "src": "web"},
        VALUES,
    ),
    "ReplaceField": (
        "ReplaceField$Value",
        {"include": "n,s", "renames": "n:num"},
        lambda i: {"num": i, "s": "secret"},
        VALUES,
    ),
    "MaskField": ("MaskField$Value", {"fields": "s,n"}, lambda i: {**event(i), "s": "", "n": 0}, VALUES),
    "Cast": ("Cast$Value", {"spec": "n:string"}, lambda i: {**event(i), "n": str(i)}, VALUES),
    "TimestampConverter": (
        "TimestampConverter$Value",
        {"field": "ts", "target.type": "string", "format": "yyyy-MM-dd"},
        lambda i: {**event(i), "ts": _day(i)},
        VALUES,
    ),
    "ExtractField": ("ExtractField$Value", {"field": "inner"}, lambda i: {"x": i}, VALUES),
    "HoistField": ("HoistField$Value", {"field": "wrapped"}, lambda i: {"wrapped": event(i)}, VALUES),
    "Flatten": ("Flatten$Value", {"delimiter": "_"}, lambda i: {**_without(event(i), "inner"), "inner_x": i}, VALUES),
    "HeaderFrom": (
        "HeaderFrom$Value",
        {"fields": "s", "headers": "h", "operation": "move"},
        lambda i: _without(event(i), "s"),
        VALUES,
    ),
    # Kafka's SetSchemaMetadata requires a schema (schemaless values fail it, as in Kafka)
    "SetSchemaMetadata": (
        "SetSchemaMetadata$Value",
        {"schema.name": "com.acme.Renamed", "schema.version": "2"},
        event,
        ("with-schema",),
    ),
}
MATRIX = [(case, values, name) for case, (_, _, _, kinds) in CASES.items() for values in kinds for name in FORMATS]


@pytest.fixture(scope="module")
def topics(new_topic):
    """One topic per value kind, COUNT records each in partition 0."""
    made = {}
    for kind, (_, encode) in VALUES.items():
        topic = f"each-smt-{kind}-{datetime.now(UTC).strftime('%H%M%S%f')}"
        new_topic(topic, 1, [encode(i) for i in range(COUNT)])
        made[kind] = topic
    return made


@pytest.mark.parametrize("case, values, name", MATRIX)
def test_each_transform_writes_what_kafkas_transform_makes_in_every_format(
    topics, connector, s3, unique, case, values, name
):
    cls, options, expected, _ = CASES[case]
    converter, _ = VALUES[values]
    overrides, extension = FORMATS[name]
    topic = topics[values]
    # (the headers sidecar only where the transform makes headers: a record without any fails it, as Confluent's)
    sidecar = {"store.kafka.headers": "true", "headers.format.class": "JsonFormat"} if case == "HeaderFrom" else {}
    config = connector(
        **{
            "topics": topic,
            "topics.dir": f"each-{unique}",
            "flush.size": COUNT,
            **sidecar,
            "transforms": "t",
            "transforms.t.type": f"{KAFKA}.{cls}",
            **{f"transforms.t.{k}": v for k, v in options.items()},
            **converter,
            **overrides,
        }
    )
    # when a task writes the topic's records
    result = run_range(TaskSettings.from_config(config), PartitionRange(topic, 0, 0, COUNT, None), client=s3)
    assert result.error is None and result.next_offset == COUNT, result.error
    # then its one object holds what Kafka's transform makes of each record, read back by an independent reader
    bodies = object_bodies(s3, BUCKET, f"each-{unique}/{topic}/")
    key = f"each-{unique}/{topic}/partition=0/{topic}+0+0000000000{extension}"
    assert read_back(bodies[key], extension) == [expected(i) for i in range(COUNT)]
    if case == "HeaderFrom":  # the field moved to its header
        headers = [orjson.loads(line) for line in bodies[key[: -len(extension)] + ".headers.json"].splitlines()]
        assert headers == [{"headers": [{"key": "h", "value": "secret"}]}] * COUNT
