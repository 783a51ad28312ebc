"""The field transforms load by the class names Connect configs use (registry.py) and build from the least
options Kafka accepts; a Key variant works on the key, a Value variant on the value."""

from __future__ import annotations

import pytest

from sink_engine.convert.schema import Field, Schema
from sink_engine.transform.options import TransformOptions
from sink_engine.transform.registry import transform_class
from tests.unit.transform.field_records import record

KAFKA = "org.apache.kafka.connect.transforms"
# class name (without $Key/$Value) -> the least options, a struct value and what the transform makes of it
CASES = {
    "InsertField": ({"topic.field": "t"}, {"a": 1}, {"a": 1, "t": "test"}),
    "ReplaceField": ({"exclude": "a"}, {"a": 1, "b": 2}, {"b": 2}),
    "MaskField": ({"fields": "a"}, {"a": 1, "b": 2}, {"a": 0, "b": 2}),
    "ExtractField": ({"field": "a"}, {"a": 1, "b": 2}, 1),
    "HoistField": ({"field": "h"}, {"a": 1}, {"h": {"a": 1}}),
    "Flatten": ({}, {"a": {"b": 1}}, {"a.b": 1}),
    "Cast": ({"spec": "a:string"}, {"a": 1}, {"a": "1"}),
    "SetSchemaMetadata": ({"schema.name": "n"}, {"a": 1}, {"a": 1}),
}
SCHEMAS = {"a": Schema("int32"), "b": Schema("int32")}


def struct_schema(value: dict) -> Schema:
    return Schema(
        "struct",
        fields=tuple(
            Field(name, struct_schema(item) if isinstance(item, dict) else SCHEMAS[name])
            for name, item in value.items()
        ),
    )


@pytest.mark.parametrize("variant", ["Key", "Value"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_key_and_value_variants_transform_their_part(name, variant):
    # given
    given_options, value, expected = CASES[name]
    cls, role = transform_class(f"{KAFKA}.{name}${variant}", f"transforms.{name}.type")
    transform = cls.from_options(TransformOptions(f"transforms.{name}.", given_options, role))
    operand = (
        {"key": value, "key_schema": struct_schema(value)}
        if variant == "Key"
        else {"value": value, "value_schema": struct_schema(value)}
    )
    # when
    transformed = transform.apply(record(**{"key": "k", "value": "v", **operand}))
    # then
    assert (transformed.key if variant == "Key" else transformed.value) == expected
    assert (transformed.value if variant == "Key" else transformed.key) == ("v" if variant == "Key" else "k")


def test_value_to_key():
    cls, role = transform_class(f"{KAFKA}.ValueToKey", "transforms.v.type")

    transformed = cls.from_options(TransformOptions("transforms.v.", {"fields": "a"}, role)).apply(
        record(key="k", value={"a": 1, "b": 2})
    )

    assert (role, transformed.key, transformed.value) == (None, {"a": 1}, {"a": 1, "b": 2})
