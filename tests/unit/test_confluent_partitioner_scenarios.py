"""Scenarios of kafka-connect-storage-common's partitioner tests (partitioner/src/test/java/io/confluent/connect/
storage/partitioner/FieldPartitionerTest.java and TimeBasedPartitionerTest.java), each named after the test method
it follows: the record (a Struct, as a JsonConverter envelope, read by this engine's converter) and the partitioner
settings of that test, and the encoded partition it asserts."""

from __future__ import annotations

import pytest

from sink_engine.convert import ConverterSettings, converter_for
from sink_engine.partition import PartitionSettings, partitioner_for
from sink_engine.partition.fields import FieldError
from sink_engine.partition.timestamps import extractor_for
from sink_engine.records import RecordChunk
from sink_engine.validation import parse_checked_config
from tests.builders import connector_keys
from tests.confluent_scenarios import envelope, la_ms


def encoded(settings: dict, schema: dict, payloads: list) -> list:
    """The encoded partition of each value (a Struct of `schema`), read as a task reads JsonConverter envelopes."""
    config = parse_checked_config(
        {"name": "c", **connector_keys({"value.converter.schemas.enable": "true", **settings})}
    )
    partitioning = PartitionSettings.from_config(config)
    partitioner = partitioner_for(partitioning, extractor_for(partitioning, 0))
    values = [envelope(schema, payload) for payload in payloads]
    chunk = RecordChunk(
        "t", 0, list(range(len(values))), values, keys=[None] * len(values), timestamps=[0] * len(values)
    )
    column = converter_for(ConverterSettings.from_config(config), "t").convert(chunk)
    return partitioner.encode(chunk, column).as_list(len(values))


def struct(*fields: tuple[str, dict]) -> dict:
    return {"type": "struct", "optional": False, "fields": [{"field": name, **schema} for name, schema in fields]}


def optional(kind: str) -> dict:
    return {"type": kind, "optional": True}


FIELD = {"partitioner.class": "FieldPartitioner"}
ADDRESS = struct(("city", optional("string")))
NESTED = struct(("user", struct(("address", ADDRESS))))
NESTED_OPTIONAL = struct(("user", struct(("address", {**ADDRESS, "optional": True}))))
SCALARS = struct(("string", optional("string")), ("int", optional("int32")), ("boolean", optional("boolean")))

FIELD_CASES = [
    # (test method, partition.field.name, schema, payload, encoded partition)
    ("testBooleanPartition", "boolean", SCALARS, {"boolean": True}, "boolean=true"),
    ("testBooleanPartition (false)", "boolean", SCALARS, {"boolean": False}, "boolean=false"),
    ("testStringPartition (empty)", "string", SCALARS, {"string": ""}, "string="),
    ("testMultiPartition", "string,int", SCALARS, {"string": "def", "int": 12}, "string=def/int=12"),
    ("testMultiPartition (reversed)", "int,string", SCALARS, {"string": "def", "int": 12}, "int=12/string=def"),
    ("testNullPartition", "string", SCALARS, {"string": None}, "string=null"),
    (
        "testMultiPartitionWithNulls",
        "string,int,boolean",
        SCALARS,
        {"string": "def"},
        "string=def/int=null/boolean=null",
    ),
    (
        "testNestedStringPartition",
        "user.address.city",
        NESTED,
        {"user": {"address": {"city": "NYC"}}},
        "user.address.city=NYC",
    ),
    (
        "testNestedNullPartition",
        "user.address.city",
        NESTED,
        {"user": {"address": {"city": None}}},
        "user.address.city=null",
    ),
    # an optional parent not set: DataUtils.getNestedFieldValue's null
    ("testNestedMissingPartition", "user.address.city", NESTED_OPTIONAL, {"user": {}}, "user.address.city=null"),
]


@pytest.mark.parametrize(
    "names, schema, payload, expected", [c[1:] for c in FIELD_CASES], ids=[c[0] for c in FIELD_CASES]
)
def test_field_partitioner(names, schema, payload, expected):
    assert encoded({**FIELD, "partition.field.name": names}, schema, [payload]) == [expected]


def test_custom_delimiter_partition():
    # testCustomDelimiterPartition: directory.delim `|`
    settings = {**FIELD, "partition.field.name": "string,int", "directory.delim": "|"}
    assert encoded(settings, SCALARS, [{"string": "def", "int": 12}]) == ["string=def|int=12"]


def test_missing_field_in_schema_fails_the_record():
    # testMissingFieldInSchemaThrows: a field the schema does not have is an error (a DataException there)
    with pytest.raises(FieldError, match="'missing'"):
        encoded({**FIELD, "partition.field.name": "missing"}, SCALARS, [{"string": "value"}])


# TimeBasedPartitionerTest.createConfig: hourly buckets, its PATH_FORMAT (ending in the delimiter, which
# testRemovePathFormatEndDelim removes), locale en_US, timezone America/Los_Angeles, RecordField on `timestamp`
TIME = {
    "partitioner.class": "TimeBasedPartitioner",
    "partition.duration.ms": 3_600_000,
    "path.format": "'year'=YYYY/'month'=M/'day'=d/'hour'=H/",
    "locale": "en_US",
    "timezone": "America/Los_Angeles",
    "timestamp.extractor": "RecordField",
    "timestamp.field": "timestamp",
}
MOMENT = la_ms(2015, 4, 2, 1)
TIMESTAMP = {"type": "int64", "optional": False, "name": "org.apache.kafka.connect.data.Timestamp", "version": 1}

TIME_FIELD_CASES = [
    # testRecordFieldTimeDateExtractor: the same moment as epoch ms, ISO texts with and without millis, a Timestamp
    ("int64", {"type": "int64", "optional": False}, MOMENT, "year=2015/month=4/day=2/hour=1"),
    (
        "dateTimeNoMillis",
        {"type": "string", "optional": False},
        "2015-04-02T01:00:00-07:00",
        "year=2015/month=4/day=2/hour=1",
    ),
    (
        "dateTime",
        {"type": "string", "optional": False},
        "2015-04-02T01:00:00.000-07:00",
        "year=2015/month=4/day=2/hour=1",
    ),
    ("Timestamp", TIMESTAMP, MOMENT, "year=2015/month=4/day=2/hour=1"),
    ("int32", {"type": "int32", "optional": False}, la_ms(1970, 1, 1, 0), "year=1970/month=1/day=1/hour=0"),
]


@pytest.mark.parametrize(
    "schema, value, expected", [c[1:] for c in TIME_FIELD_CASES], ids=[c[0] for c in TIME_FIELD_CASES]
)
def test_record_field_time_date_extractor(schema, value, expected):
    assert encoded(TIME, struct(("timestamp", schema)), [{"timestamp": value}]) == [expected]


def test_nested_record_field_time_extractor():
    # testNestedRecordFieldTimeExtractor: timestamp.field nested.timestamp
    schema = struct(("nested", struct(("timestamp", {"type": "int64", "optional": False}))))
    settings = {**TIME, "timestamp.field": "nested.timestamp"}
    assert encoded(settings, schema, [{"nested": {"timestamp": MOMENT}}]) == ["year=2015/month=4/day=2/hour=1"]
