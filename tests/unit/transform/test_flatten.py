"""Flatten, as Kafka's FlattenTest: nested structs and maps, delimiters, optional-ness and defaults inherited
from parents, arrays kept, null fields, tombstones."""

from __future__ import annotations

import decimal

import pytest

from sink_engine.convert.schema import TIMESTAMP, Field, Schema
from sink_engine.transform.errors import TransformError
from sink_engine.transform.flatten import Flatten
from tests.unit.transform.field_records import options, record

SUPPORTED = [
    ("int8", Schema("int8"), 8),
    ("int16", Schema("int16"), 16),
    ("int32", Schema("int32"), 32),
    ("int64", Schema("int64"), 64),
    ("float32", Schema("float32"), 32.0),
    ("float64", Schema("float64"), 64.0),
    ("boolean", Schema("boolean"), True),
    ("string", Schema("string"), "stringy"),
    ("bytes", Schema("bytes"), b"bytes"),
]


def struct(*fields: tuple[str, Schema], **attributes) -> Schema:
    return Schema("struct", fields=tuple(Field(name, schema) for name, schema in fields), **attributes)


def flatten(role: str = "value", **given) -> Flatten:
    return Flatten.from_options(options(role, **given))


@pytest.mark.parametrize("schema, value, match", [(Schema("int32"), 42, "only a struct"), (None, 42, "only a map")])
def test_top_level_struct_or_map_required(schema, value, match):
    with pytest.raises(TransformError, match=match):
        flatten().apply(record(value=value, value_schema=schema))


def test_nested_struct():
    supported = struct(*((name, schema) for name, schema, _ in SUPPORTED))
    two_levels = struct(("A", struct(("B", supported))))
    value = {"A": {"B": {name: item for name, _, item in SUPPORTED}}}

    transformed = flatten().apply(record(value=value, value_schema=two_levels))

    assert transformed.value_schema == struct(*((f"A.B.{name}", schema) for name, schema, _ in SUPPORTED))
    assert transformed.value == {f"A.B.{name}": item for name, _, item in SUPPORTED}


def test_nested_map_with_delimiter():
    value = {"A": {"B": {name: item for name, _, item in SUPPORTED}}}

    transformed = flatten(delimiter="#").apply(record(value=value))

    assert transformed.value_schema is None
    assert transformed.value == {f"A#B#{name}": item for name, _, item in SUPPORTED}


def test_optional_field_struct():
    schema = struct(("B", struct(("opt_int32", Schema("int32", optional=True)))))

    transformed = flatten().apply(record(value={"B": {"opt_int32": None}}, value_schema=schema))

    assert transformed.value == {"B.opt_int32": None}


def test_optional_struct_null_value_passes():
    given = record(value=None, value_schema=struct(("opt_int32", Schema("int32", optional=True)), optional=True))

    assert flatten().apply(given) is given


def test_optional_nested_struct_null():
    schema = struct(("B", struct(("opt_int32", Schema("int32", optional=True)), optional=True)))

    transformed = flatten().apply(record(value={"B": None}, value_schema=schema))

    assert transformed.value_schema == struct(("B.opt_int32", Schema("int32", optional=True)))
    assert transformed.value == {"B.opt_int32": None}


def test_optional_field_map():
    assert flatten().apply(record(value={"B": {"opt_int32": None}})).value == {"B.opt_int32": None}


def test_key():
    transformed = flatten("key").apply(record(key={"A": {"B": 12}}))

    assert transformed.key_schema is None
    assert transformed.key == {"A.B": 12}


def test_schemaless_array_is_kept():
    value = {"foo": ["bar", {"baz": {"lfg": "lfg"}}]}

    assert flatten().apply(record(value=value)).value == value


def test_array_with_schema_is_kept():
    nested = struct(("baz", struct(("lfg", Schema("string")))))
    schema = struct(("foo", Schema("array", items=nested)))
    value = {"foo": [{"baz": {"lfg": "lfg"}}]}

    transformed = flatten().apply(record(value=value, value_schema=schema))

    assert transformed.value == value
    assert transformed.value_schema == schema


def test_optional_and_default_values_nested():
    child_fields = (
        Field("req_field", Schema("string")),
        Field("opt_field", Schema("string", optional=True, default="child_default")),
    )
    schema = Schema(
        "struct", optional=True, fields=child_fields, default={"req_field": "req_default", "opt_field": None}
    )

    transformed = flatten().apply(record(value={"req_field": None, "opt_field": None}, value_schema=schema))

    assert transformed.value_schema == struct(
        ("req_field", Schema("string", optional=True, default="req_default")),
        ("opt_field", Schema("string", optional=True, default="child_default")),
    )


def test_default_of_a_parent_struct_reaches_nested_fields():
    inner = struct(("x", Schema("int32")), default={"x": 7})
    schema = struct(("inner", inner), name="Outer", version=3)

    transformed = flatten().apply(record(value={"inner": None}, value_schema=schema))

    assert transformed.value_schema == struct(("inner.x", Schema("int32", default=7)), name="Outer", version=3)
    assert transformed.value == {"inner.x": 7}


@pytest.mark.parametrize("schema", [None, struct(("magic", Schema("int64", optional=True)), name="name", version=1)])
def test_tombstone_passes(schema):
    given = record(value=None, value_schema=schema)

    assert flatten().apply(given) is given


def test_map_and_struct_with_null_fields_keep_order():
    names = ["firstNull", "firstNonNull", "secondNull", "secondNonNull", "thirdNonNull"]
    value = dict(zip(names, [None, "nonNull", None, "alsoNonNull", None]))
    schema = struct(*((name, Schema("string", optional=True)) for name in names))

    assert list(flatten().apply(record(value=dict(value))).value.items()) == list(value.items())
    assert list(flatten().apply(record(value=dict(value), value_schema=schema)).value.items()) == list(value.items())


def test_logical_types_keep_their_schema():
    at = Schema("int64", name=TIMESTAMP, version=1)
    schema = struct(("a", struct(("at", at))))

    assert flatten().apply(record(value={"a": {"at": None}}, value_schema=schema)).value_schema == struct(("a.at", at))


def test_map_field_with_schema_is_an_error():
    schema = struct(("m", Schema("map", keys=Schema("string"), values=Schema("int32"))))

    with pytest.raises(TransformError, match="map"):
        flatten().apply(record(value={"m": {}}, value_schema=schema))


def test_two_paths_to_one_name_are_an_error_with_a_schema():
    schema = struct(("a.b", Schema("int32")), ("a", struct(("b", Schema("int32")))))

    with pytest.raises(TransformError, match="a.b"):
        flatten().apply(record(value={"a.b": 1, "a": {"b": 2}}, value_schema=schema))


def test_schemaless_unsupported_value_is_an_error():
    with pytest.raises(TransformError, match="Decimal"):
        flatten().apply(record(value={"a": {"b": decimal.Decimal(1)}}))
