"""Confluent's Drop$Key / Drop$Value: the key or value nulled, its schema per schema.behavior (Confluent's examples)."""

from __future__ import annotations

import pytest

from sink_engine.convert.schema import Field, Schema
from sink_engine.errors import ConfigError
from sink_engine.transform.drop import Drop
from sink_engine.transform.errors import TransformError
from tests.unit.transform.more_records import options, record

INT32, OPTIONAL_INT32 = Schema("int32"), Schema("int32", True)
ROW = Schema("struct", name="Row", fields=(Field("a", INT32),))


def drop(role, behavior=None):
    return Drop.from_options(options(role, schema_behavior=behavior))


@pytest.mark.parametrize(
    "behavior, schema, expected",
    [
        (None, INT32, None),
        ("nullify", INT32, None),
        ("retain", INT32, INT32),
        ("validate", OPTIONAL_INT32, OPTIONAL_INT32),
        ("force_optional", INT32, OPTIONAL_INT32),
        ("force_optional", ROW, Schema("struct", True, name="Row", fields=ROW.fields)),
        ("retain", None, None),
    ],
)
def test_drop_key_nulls_the_key_and_handles_its_schema(behavior, schema, expected):
    given = record(key=24, key_schema=schema, value={"a": 1}, value_schema=ROW)
    transformed = drop("key", behavior).apply(given)
    assert (transformed.key, transformed.key_schema) == (None, expected)
    assert (transformed.value, transformed.value_schema) == ({"a": 1}, ROW)


@pytest.mark.parametrize(
    "behavior, expected",
    [(None, None), ("retain", ROW), ("force_optional", Schema("struct", True, name="Row", fields=ROW.fields))],
)
def test_drop_value_nulls_the_value(behavior, expected):
    transformed = drop("value", behavior).apply(record(key="k", value={"a": 1}, value_schema=ROW))
    assert (transformed.key, transformed.value, transformed.value_schema) == ("k", None, expected)


def test_validate_fails_on_a_required_schema():
    with pytest.raises(TransformError, match="not optional"):
        drop("value", "validate").apply(record(value={"a": 1}, value_schema=ROW))


def test_an_unknown_schema_behavior_names_the_key():
    with pytest.raises(ConfigError, match="transforms.t.schema.behavior"):
        drop("value", "keep")
