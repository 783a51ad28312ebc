"""InsertField, as Kafka's InsertFieldTest: metadata and static fields into maps and structs, `!`/`?` suffixes,
tombstones and null keys unchanged, the Timestamp schema, replace.null.with.default."""

from __future__ import annotations

import datetime

import pytest

from sink_engine.convert.schema import TIMESTAMP, Field, Schema
from sink_engine.errors import ConfigError
from sink_engine.transform.errors import TransformError
from sink_engine.transform.insert_field import InsertField
from tests.unit.transform.field_records import options, record

ALL = {
    "topic_field": "topic_field!",
    "partition_field": "partition_field",
    "timestamp_field": "timestamp_field?",
    "static_field": "instance_id",
    "static_value": "my-instance-id",
}
SIMPLE = Schema("struct", name="name", version=1, fields=(Field("magic", Schema("int64", optional=True)),))
OPTIONAL_TIMESTAMP = Schema("int64", optional=True, name=TIMESTAMP, version=1)


def test_top_level_struct_required():
    insert = InsertField.from_options(options("value", topic_field="topic_field"))

    with pytest.raises(TransformError, match="only a struct"):
        insert.apply(record(value=42, value_schema=Schema("int32"), topic=""))


def test_copy_schema_and_insert_configured_fields():
    # given
    insert = InsertField.from_options(options("value", **ALL))
    # when
    transformed = insert.apply(record(value={"magic": 42}, value_schema=SIMPLE, timestamp=789))
    # then
    schema = transformed.value_schema
    assert (schema.name, schema.version) == ("name", 1)
    assert [(f.name, f.schema) for f in schema.fields] == [
        ("magic", Schema("int64", optional=True)),
        ("topic_field", Schema("string")),
        ("partition_field", Schema("int32", optional=True)),
        ("timestamp_field", OPTIONAL_TIMESTAMP),
        ("instance_id", Schema("string", optional=True)),
    ]
    assert transformed.value == {
        "magic": 42,
        "topic_field": "test",
        "partition_field": 0,
        "timestamp_field": datetime.datetime(1970, 1, 1, 0, 0, 0, 789000, tzinfo=datetime.UTC),
        "instance_id": "my-instance-id",
    }
    # and the schema is built once per input schema
    again = insert.apply(record(value={}, value_schema=SIMPLE, partition=1))
    assert again.value_schema is schema
    assert again.value["timestamp_field"] is None and again.value["magic"] is None


def test_schemaless_insert_configured_fields():
    insert = InsertField.from_options(options("value", **ALL))

    transformed = insert.apply(record(value={"magic": 42}, timestamp=123))

    assert transformed.value_schema is None
    assert transformed.value == {
        "magic": 42,
        "topic_field": "test",
        "partition_field": 0,
        "timestamp_field": 123,
        "instance_id": "my-instance-id",
    }


@pytest.mark.parametrize("schema", [None, SIMPLE])
def test_tombstone_leaves_value_unchanged(schema):
    given = record(value=None, value_schema=schema)

    assert InsertField.from_options(options("value", **ALL)).apply(given) is given


def test_insert_key_fields_into_tombstone_event():
    insert = InsertField.from_options(options("key", **ALL))

    transformed = insert.apply(record(key={"magic": 42}, value=None))

    assert transformed.key == {
        "magic": 42,
        "topic_field": "test",
        "partition_field": 0,
        "instance_id": "my-instance-id",
    }
    assert transformed.value is None


def test_insert_into_null_key_leaves_record_unchanged():
    given = record(key=None, value={"magic": 42})

    assert InsertField.from_options(options("key", **ALL)).apply(given) is given


@pytest.mark.parametrize("replace, expected", [(False, None), (True, 42)])
def test_unset_optional_field(replace, expected):
    magic = Schema("int64", optional=True, default=42)
    schema = Schema("struct", name="name", version=1, fields=(Field("magic_with_default", magic),))
    insert = InsertField.from_options(options("value", replace_null_with_default=replace, **ALL))

    transformed = insert.apply(record(value={"magic_with_default": None}, value_schema=schema, timestamp=789))

    assert transformed.value_schema.field("magic_with_default").schema == magic
    assert transformed.value["magic_with_default"] == expected


def test_offset_field_and_schemaless_overwrite():
    insert = InsertField.from_options(options("value", offset_field="where!", topic_field="topic"))

    transformed = insert.apply(record(value={"topic": "old"}, offset=17))

    assert transformed.value == {"topic": "test", "where": 17}


def test_a_field_of_an_inserted_name_is_an_error_with_a_schema():
    insert = InsertField.from_options(options("value", topic_field="magic"))

    with pytest.raises(TransformError, match="magic"):
        insert.apply(record(value={"magic": 1}, value_schema=SIMPLE))


@pytest.mark.parametrize(
    "given, key",
    [
        ({}, "transforms.t.topic.field"),
        ({"static_field": "s"}, "transforms.t.static.value"),
    ],
)
def test_config_errors(given, key):
    with pytest.raises(ConfigError) as raised:
        InsertField.from_options(options("value", **given))

    assert raised.value.key == key
