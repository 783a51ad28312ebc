"""SetSchemaMetadata, as Kafka's SetSchemaMetadataTest."""

from __future__ import annotations

import pytest

from sink_engine.convert.schema import Field, Schema
from sink_engine.errors import ConfigError
from sink_engine.transform.errors import TransformError
from sink_engine.transform.set_schema_metadata import SetSchemaMetadata
from tests.unit.transform.field_records import options, record

EMPTY_STRUCT = Schema("struct")
ORIGINAL = Schema(
    "struct", name="my.orig.SchemaDefn", fields=(Field("f1", Schema("string")), Field("f2", Schema("int32")))
)


@pytest.mark.parametrize(
    "given, name, version",
    [
        ({"schema_name": "foo"}, "foo", None),
        ({"schema_version": 42}, None, 42),
        ({"schema_name": "foo", "schema_version": "42"}, "foo", 42),
    ],
)
def test_name_and_version_update(given, name, version):
    transform = SetSchemaMetadata.from_options(options("value", **given))

    updated = transform.apply(record(value_schema=EMPTY_STRUCT)).value_schema

    assert (updated.name, updated.version) == (name, version)
    assert updated.type == "struct"


def test_name_and_version_update_with_struct_keeps_fields_and_values():
    transform = SetSchemaMetadata.from_options(options("value", schema_name="foo", schema_version="42"))

    transformed = transform.apply(record(value={"f1": "value1", "f2": 1}, value_schema=ORIGINAL))

    assert transformed.value_schema == Schema("struct", name="foo", version=42, fields=ORIGINAL.fields)
    assert transformed.value == {"f1": "value1", "f2": 1}


@pytest.mark.parametrize("replace, expected", [(False, None), (True, "default")])
def test_struct_with_null_field_and_default(replace, expected):
    schema = Schema(
        "struct",
        name="my.orig.SchemaDefn",
        fields=(Field("f1", Schema("string", optional=True, default="default")), Field("f2", Schema("int32"))),
    )
    transform = SetSchemaMetadata.from_options(
        options("value", schema_name="foo", schema_version="42", replace_null_with_default=replace)
    )

    transformed = transform.apply(record(value={"f1": None, "f2": 1}, value_schema=schema))

    assert (transformed.value_schema.name, transformed.value_schema.version) == ("foo", 42)
    assert transformed.value == {"f1": expected, "f2": 1}


def test_value_schema_required():
    with pytest.raises(TransformError, match="schema is required"):
        SetSchemaMetadata.from_options(options("value", schema_name="foo")).apply(record(value=42))


def test_record_with_null_value_and_no_schema_passes():
    given = record(value=None)

    assert SetSchemaMetadata.from_options(options("value", schema_name="foo")).apply(given) is given


def test_non_struct_schema_keeps_everything_but_name_and_version():
    schema = Schema("array", optional=True, items=Schema("int32"), parameters=(("p", "v"),))
    transform = SetSchemaMetadata.from_options(options("key", schema_name="n", schema_version=3))

    transformed = transform.apply(record(key=[1, 2], key_schema=schema))

    assert transformed.key_schema == Schema(
        "array", optional=True, items=Schema("int32"), parameters=(("p", "v"),), name="n", version=3
    )
    assert transformed.key == [1, 2]


def test_neither_name_nor_version_is_a_config_error():
    with pytest.raises(ConfigError, match="neither"):
        SetSchemaMetadata.from_options(options("value"))


def test_version_must_be_an_integer():
    with pytest.raises(ConfigError) as raised:
        SetSchemaMetadata.from_options(options("value", schema_version="one"))

    assert raised.value.key == "transforms.t.schema.version"
