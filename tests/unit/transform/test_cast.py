"""Cast, as Kafka's CastTest: spec errors, null operands, whole-value casts with and without a schema (defaults
cast), logical types to primitives and strings, field casts of every supported type."""

from __future__ import annotations

import datetime
import decimal

import pytest

from sink_engine.convert.schema import DATE, DECIMAL, TIME, TIMESTAMP, Field, Schema
from sink_engine.errors import ConfigError
from sink_engine.transform.cast import Cast
from sink_engine.transform.errors import TransformError
from sink_engine.transform.java_values import float32
from tests.unit.transform.field_records import options, record

UTC = datetime.UTC
STRING = Schema("string")
DATE_SCHEMA = Schema("int32", name=DATE, version=1)
TIME_SCHEMA = Schema("int32", name=TIME, version=1)
TIMESTAMP_SCHEMA = Schema("int64", name=TIMESTAMP, version=1)


def decimal_schema(scale: int = 0) -> Schema:
    return Schema("bytes", name=DECIMAL, version=1, parameters=(("scale", str(scale)),))


def struct(*fields: tuple[str, Schema]) -> Schema:
    return Schema("struct", fields=tuple(Field(name, schema) for name, schema in fields))


def cast(spec: str, role: str = "value", **more) -> Cast:
    return Cast.from_options(options(role, spec=spec, **more))


@pytest.mark.parametrize(
    "spec", ["", "foo:faketype", "foo:array", "array", "foo:bytes", "foo:int8:extra", "foo:int8,int32"]
)
def test_config_errors(spec):
    with pytest.raises(ConfigError) as raised:
        cast(spec, "key")

    assert raised.value.key == "transforms.t.spec"


@pytest.mark.parametrize(
    "role, given",
    [
        ("value", record(key="key", key_schema=STRING, value=None, value_schema=STRING)),
        ("value", record(key="key", key_schema=STRING, value=None)),
        ("key", record(key=None, key_schema=STRING, value="value", value_schema=STRING)),
        ("key", record(key=None, value="value", value_schema=STRING)),
    ],
)
def test_null_operand_passes(role, given):
    assert cast("foo:int64", role).apply(given) is given


@pytest.mark.parametrize("replace, expected", [(False, None), (True, "10")])
def test_cast_field_with_default_value(replace, expected):
    schema = struct(("magic", Schema("int32", optional=True, default=10)))

    transformed = cast("magic:string", replace_null_with_default=replace).apply(
        record(key="key", key_schema=STRING, value={"magic": None}, value_schema=schema)
    )

    assert transformed.value_schema.field("magic").schema == Schema("string", optional=True, default="10")
    assert transformed.value == {"magic": expected}


def test_cast_whole_record_key_with_schema():
    transformed = cast("int8", "key").apply(
        record(key=42, key_schema=Schema("int32"), value="bogus", value_schema=STRING)
    )

    assert (transformed.key_schema, transformed.key) == (Schema("int8"), 42)


@pytest.mark.parametrize(
    "target, value, expected",
    [
        ("int8", 42, 42),
        ("int16", 42, 42),
        ("int32", 42, 42),
        ("int64", 42, 42),
        ("float32", 42, 42.0),
        ("float64", 42, 42.0),
        ("boolean", 42, True),
        ("boolean", 0, False),
        ("string", 42, "42"),
    ],
)
@pytest.mark.parametrize("with_schema", [True, False])
def test_cast_whole_record_value(target, value, expected, with_schema):
    transformed = cast(target).apply(record(value=value, value_schema=Schema("int32") if with_schema else None))

    assert transformed.value_schema == (Schema(target) if with_schema else None)
    assert transformed.value == expected and type(transformed.value) is type(expected)


def test_cast_whole_big_decimal_to_string():
    transformed = cast("string").apply(record(value=decimal.Decimal(42), value_schema=decimal_schema(0)))

    assert (transformed.value_schema, transformed.value) == (STRING, "42")


def test_cast_whole_timestamp_to_string():
    day_and_a_millisecond = datetime.datetime(1970, 1, 2, 0, 0, 0, 1000, tzinfo=UTC)

    transformed = cast("string").apply(record(value=day_and_a_millisecond, value_schema=TIMESTAMP_SCHEMA))

    assert (transformed.value_schema, transformed.value) == (STRING, "1970-01-02T00:00:00.001Z")


def test_cast_whole_record_default_value():
    transformed = cast("int32").apply(record(value=42.125, value_schema=Schema("float32", default=-42.125)))

    assert transformed.value_schema == Schema("int32", default=-42)
    assert transformed.value == 42


def test_cast_whole_record_key_schemaless():
    transformed = cast("int8", "key").apply(record(key=42, value="bogus", value_schema=STRING))

    assert (transformed.key_schema, transformed.key) == (None, 42)


def test_cast_whole_record_value_schemaless_unsupported_type():
    with pytest.raises(TransformError, match="array"):
        cast("int8").apply(record(value=["foo"]))


def test_cast_logical_to_primitive():
    spec = (
        "date_to_int32:int32,timestamp_to_int64:int64,time_to_int64:int64,decimal_to_int32:int32,"
        "timestamp_to_float64:float64,null_timestamp_to_int32:int32"
    )
    schema = struct(
        ("date_to_int32", DATE_SCHEMA),
        ("timestamp_to_int64", TIMESTAMP_SCHEMA),
        ("time_to_int64", TIME_SCHEMA),
        ("decimal_to_int32", decimal_schema(0)),
        ("timestamp_to_float64", TIMESTAMP_SCHEMA),
        ("null_timestamp_to_int32", Schema("int64", optional=True, name=TIMESTAMP, version=1)),
    )
    value = {
        "date_to_int32": datetime.date(1970, 1, 2),
        "timestamp_to_int64": datetime.datetime(1970, 1, 1, tzinfo=UTC),
        "time_to_int64": datetime.time(0, 0, 0, 1000),
        "decimal_to_int32": decimal.Decimal(2**31),
        "timestamp_to_float64": datetime.datetime(9999, 12, 31, 23, 59, 59, 999000, tzinfo=UTC),
        "null_timestamp_to_int32": None,
    }

    transformed = cast(spec).apply(record(value=value, value_schema=schema))

    assert transformed.value == {
        "date_to_int32": 1,
        "timestamp_to_int64": 0,
        "time_to_int64": 1,
        "decimal_to_int32": -(2**31),
        "timestamp_to_float64": 253402300799999.0,
        "null_timestamp_to_int32": None,
    }
    assert [f.schema for f in transformed.value_schema.fields] == [
        Schema("int32"),
        Schema("int64"),
        Schema("int64"),
        Schema("int32"),
        Schema("float64"),
        Schema("int32", optional=True),
    ]


def test_cast_logical_to_string():
    schema = struct(
        ("date", DATE_SCHEMA), ("decimal", decimal_schema(0)), ("time", TIME_SCHEMA), ("timestamp", TIMESTAMP_SCHEMA)
    )
    value = {
        "date": datetime.date(1970, 1, 2),
        "decimal": decimal.Decimal(1982),
        "time": datetime.time(1),
        "timestamp": datetime.datetime(2024, 5, 6, 7, 8, 9, 123000, tzinfo=UTC),
    }

    transformed = cast("date:string,decimal:string,time:string,timestamp:string").apply(
        record(value=value, value_schema=schema)
    )

    assert transformed.value == {
        "date": "1970-01-02",
        "decimal": "1982",
        "time": "01:00:00.000Z",
        "timestamp": "2024-05-06T07:08:09.123Z",
    }
    assert all(field.schema == STRING for field in transformed.value_schema.fields)


def test_cast_fields_with_schema():
    spec = (
        "int8:int16,int16:int32,int32:int64,int64:boolean,float32:float64,float64:boolean,boolean:int8,"
        "string:int32,bigdecimal:string,date:string,optional:int32,bytes:string,byteArray:string"
    )
    schema = struct(
        ("int8", Schema("int8")),
        ("int16", Schema("int16", optional=True)),
        ("int32", Schema("int32", default=2)),
        ("int64", Schema("int64")),
        ("float32", Schema("float32")),
        ("float64", Schema("float64", default=-1.125)),
        ("boolean", Schema("boolean")),
        ("string", STRING),
        ("bigdecimal", decimal_schema(0)),
        ("date", DATE_SCHEMA),
        ("optional", Schema("float32", optional=True)),
        ("timestamp", TIMESTAMP_SCHEMA),
        ("bytes", Schema("bytes")),
        ("byteArray", Schema("bytes")),
    )
    epoch = datetime.datetime(1970, 1, 1, tzinfo=UTC)
    raw = bytes([0xFE, 0xDC, 0xBA, 0x98, 0x76, 0x54, 0x32, 0x10])
    value = {
        "int8": 8,
        "int16": 16,
        "int32": 32,
        "int64": 64,
        "float32": 32.0,
        "float64": -64.0,
        "boolean": True,
        "string": "42",
        "bigdecimal": decimal.Decimal(42),
        "date": datetime.date(1970, 1, 2),
        "optional": None,
        "timestamp": epoch,
        "bytes": raw,
        "byteArray": bytearray(raw),
    }

    transformed = cast(spec).apply(record(value=value, value_schema=schema))

    assert transformed.value == {
        "int8": 8,
        "int16": 16,
        "int32": 32,
        "int64": True,
        "float32": 32.0,
        "float64": True,
        "boolean": 1,
        "string": 42,
        "bigdecimal": "42",
        "date": "1970-01-02",
        "optional": None,
        "timestamp": epoch,
        "bytes": "/ty6mHZUMhA=",
        "byteArray": "/ty6mHZUMhA=",
    }
    fields = {field.name: field.schema for field in transformed.value_schema.fields}
    assert fields == {
        "int8": Schema("int16"),
        "int16": Schema("int32", optional=True),
        "int32": Schema("int64", default=2),
        "int64": Schema("boolean"),
        "float32": Schema("float64"),
        "float64": Schema("boolean", default=True),
        "boolean": Schema("int8"),
        "string": Schema("int32"),
        "bigdecimal": STRING,
        "date": STRING,
        "optional": Schema("int32", optional=True),
        "timestamp": TIMESTAMP_SCHEMA,
        "bytes": STRING,
        "byteArray": STRING,
    }


def test_cast_fields_schemaless():
    spec = "int8:int16,int16:int32,int32:int64,int64:boolean,float32:float64,float64:boolean,boolean:int8,string:int32"
    value = {
        "int8": 8,
        "int16": 16,
        "int32": 32,
        "int64": 64,
        "float32": 32.0,
        "float64": -64.0,
        "boolean": True,
        "string": "42",
    }

    transformed = cast(spec).apply(record(value=value))

    assert transformed.value_schema is None
    assert transformed.value == {
        "int8": 8,
        "int16": 16,
        "int32": 32,
        "int64": True,
        "float32": 32.0,
        "float64": True,
        "boolean": 1,
        "string": 42,
    }


@pytest.mark.parametrize(
    "schema, value, target, expected",
    [
        (Schema("int32"), 300, "int8", 44),
        (Schema("float64"), 1e20, "int32", 2**31 - 1),
        (Schema("float64"), 1e20, "int8", -1),
        (Schema("float64"), float("nan"), "int64", 0),
        (Schema("float64"), 0.5, "boolean", False),
        (Schema("float64"), 1.1, "float32", float32(1.1)),
        (Schema("float32"), float32(1.1), "string", "1.1"),
        (Schema("float64"), 1e7, "string", "1.0E7"),
        (Schema("float64"), 100.0, "string", "100.0"),
        (Schema("boolean"), True, "string", "true"),
        (Schema("boolean"), False, "float64", 0.0),
        (STRING, "TRUE", "boolean", True),
        (STRING, "yes", "boolean", False),
        (STRING, "-12", "int16", -12),
        (STRING, "1.5e3", "float64", 1500.0),
        (STRING, "2.5f", "float32", 2.5),
        (decimal_schema(2), decimal.Decimal("-3.99"), "int32", -3),
        (decimal_schema(2), decimal.Decimal("2.50"), "string", "2.50"),
        (decimal_schema(2), decimal.Decimal("0.25"), "float64", 0.25),
        (TIMESTAMP_SCHEMA, datetime.datetime(1969, 12, 31, 23, 59, 59, 999000, tzinfo=UTC), "string", "23:59:59.999Z"),
        (TIMESTAMP_SCHEMA, datetime.datetime(2024, 1, 1, tzinfo=UTC), "string", "2024-01-01"),
        (DATE_SCHEMA, datetime.date(1970, 1, 1), "string", "00:00:00.000Z"),
        (TIMESTAMP_SCHEMA, datetime.datetime(2024, 1, 1, tzinfo=UTC), "int64", 1704067200000),
    ],
)
def test_java_value_rules(schema, value, target, expected):
    transformed = cast(target).apply(record(value=value, value_schema=schema))

    assert transformed.value == expected and type(transformed.value) is type(expected)
    assert transformed.value_schema == Schema(target)


@pytest.mark.parametrize(
    "schema, value, target",
    [
        (STRING, "300", "int8"),
        (STRING, "1.5", "int32"),
        (STRING, "x", "float64"),
        (STRING, "1_000", "int64"),
    ],
)
def test_unparsable_strings_are_transform_errors(schema, value, target):
    with pytest.raises(TransformError, match="out of range"):
        cast(target).apply(record(value=value, value_schema=schema))


@pytest.mark.parametrize("target", ["int32", "boolean", "float64"])
def test_bytes_cast_only_to_string(target):
    with pytest.raises(TransformError, match="bytes"):
        cast(target).apply(record(value=b"\x01", value_schema=Schema("bytes")))


def test_struct_with_a_default_cannot_be_cast_as_in_kafka():
    schema = Schema("struct", fields=(Field("a", Schema("int32")),), default={"a": 1})

    with pytest.raises(TransformError, match="struct"):
        cast("a:string").apply(record(value={"a": 2}, value_schema=schema))


def test_struct_basics_kept_and_schema_cached():
    schema = Schema("struct", name="n", version=3, optional=True, fields=(Field("a", Schema("int32")),))
    transform = cast("a:string")

    first = transform.apply(record(value={"a": 1}, value_schema=schema))
    second = transform.apply(record(value={"a": 2}, value_schema=schema))

    assert first.value_schema == Schema("struct", name="n", version=3, optional=True, fields=(Field("a", STRING),))
    assert second.value_schema is first.value_schema
    assert second.value == {"a": "2"}


def test_schemaless_missing_field_becomes_null():
    assert cast("a:int32").apply(record(value={"b": 1})).value == {"b": 1, "a": None}
