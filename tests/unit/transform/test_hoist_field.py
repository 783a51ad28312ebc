"""HoistField, as Kafka's HoistFieldTest: the key wrapped in a map or a struct under `field`."""

from __future__ import annotations

import pytest

from sink_engine.convert.schema import Field, Schema
from sink_engine.transform.errors import TransformError
from sink_engine.transform.hoist_field import HoistField
from tests.unit.transform.field_records import options, record

INT32 = Schema("int32")


def test_schemaless_key_is_wrapped_in_a_map():
    # given
    hoist = HoistField.from_options(options("key", field="magic"))
    # when
    transformed = hoist.apply(record(key=42))
    # then
    assert transformed.key_schema is None
    assert transformed.key == {"magic": 42}


def test_key_with_a_schema_is_wrapped_in_a_struct_keeping_its_schema():
    hoist = HoistField.from_options(options("key", field="magic"))

    transformed = hoist.apply(record(key=42, key_schema=INT32))

    assert transformed.key_schema == Schema("struct", fields=(Field("magic", INT32),))
    assert transformed.key == {"magic": 42}


def test_the_wrapped_map_is_a_new_mutable_map():
    hoist = HoistField.from_options(options("key", field="magic"))

    key = hoist.apply(record(key=420)).key
    key["k"] = "v"

    assert key == {"magic": 420, "k": "v"}


def test_a_null_value_is_wrapped_too_and_the_key_is_untouched():
    hoist = HoistField.from_options(options("value", field="payload"))

    transformed = hoist.apply(record(key="k", value=None, value_schema=Schema("string", optional=True)))

    assert transformed.value == {"payload": None}
    assert transformed.value_schema.fields == (Field("payload", Schema("string", optional=True)),)
    assert transformed.key == "k"


def test_one_struct_schema_per_input_schema():
    hoist = HoistField.from_options(options("value", field="v"))

    first = hoist.apply(record(value=1, value_schema=INT32)).value_schema
    second = hoist.apply(record(value=2, value_schema=Schema("int32"))).value_schema

    assert first is second


def test_a_null_of_a_required_schema_is_refused_as_connect_struct_does():
    hoist = HoistField.from_options(options("value", field="payload"))

    with pytest.raises(TransformError, match="null used for required field 'payload'"):
        hoist.apply(record(value=None, value_schema=INT32))
