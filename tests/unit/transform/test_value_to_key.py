"""ValueToKey, as Kafka's ValueToKeyTest."""

from __future__ import annotations

import pytest

from sink_engine.convert.schema import Field, Schema
from sink_engine.errors import ConfigError
from sink_engine.transform.errors import TransformError
from sink_engine.transform.value_to_key import ValueToKey
from tests.unit.transform.field_records import options, record

INT32 = Schema("int32")


def test_schemaless():
    transformed = ValueToKey.from_options(options(None, fields="a,b")).apply(record(value={"a": 1, "b": 2, "c": 3}))

    assert transformed.key_schema is None
    assert transformed.key == {"a": 1, "b": 2}


def test_with_schema():
    schema = Schema("struct", fields=(Field("a", INT32), Field("b", INT32), Field("c", INT32)))

    transformed = ValueToKey.from_options(options(None, fields="a,b")).apply(
        record(value={"a": 1, "b": 2, "c": 3}, value_schema=schema)
    )

    assert transformed.key_schema == Schema("struct", fields=(Field("a", INT32), Field("b", INT32)))
    assert transformed.key == {"a": 1, "b": 2}
    assert transformed.value == {"a": 1, "b": 2, "c": 3}


def test_non_existing_field():
    schema = Schema("struct", fields=(Field("a", INT32),))

    with pytest.raises(TransformError, match="field does not exist: not_exist"):
        ValueToKey.from_options(options(None, fields="not_exist")).apply(record(value={"a": 1}, value_schema=schema))


@pytest.mark.parametrize("replace, expected", [(False, None), (True, 42)])
def test_replace_null_with_default(replace, expected):
    schema = Schema("struct", fields=(Field("optional_with_default", Schema("int32", optional=True, default=42)),))
    transform = ValueToKey.from_options(
        options(None, fields="optional_with_default", replace_null_with_default=replace)
    )

    transformed = transform.apply(record(value={"optional_with_default": None}, value_schema=schema))

    assert transformed.key == {"optional_with_default": expected}


def test_tombstone_is_an_error_as_in_kafka():
    with pytest.raises(TransformError, match="only a map"):
        ValueToKey.from_options(options(None, fields="a")).apply(record(value=None))


def test_fields_required():
    with pytest.raises(ConfigError) as raised:
        ValueToKey.from_options(options(None))

    assert raised.value.key == "transforms.t.fields"
