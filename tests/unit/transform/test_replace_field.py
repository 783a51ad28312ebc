"""ReplaceField, as Kafka's ReplaceFieldTest (and its 3.x tests of the blacklist/whitelist aliases)."""

from __future__ import annotations

import pytest

from sink_engine.convert.schema import Field, Schema
from sink_engine.errors import ConfigError
from sink_engine.transform.errors import TransformError
from sink_engine.transform.replace_field import ReplaceField
from tests.unit.transform.field_records import options, record

SCHEMA = Schema(
    "struct",
    name="n",
    version=2,
    fields=(
        Field("dont", Schema("string")),
        Field("abc", Schema("int32")),
        Field("foo", Schema("boolean")),
        Field("etc", Schema("string")),
    ),
)
VALUE = {"dont": "whatever", "abc": 42, "foo": True, "etc": "etc"}


@pytest.mark.parametrize("schema", [None, SCHEMA])
def test_tombstone_passes(schema):
    given = record(value=None, value_schema=schema)

    assert (
        ReplaceField.from_options(options("value", include="abc,foo", renames="abc:xyz,foo:bar")).apply(given) is given
    )


@pytest.mark.parametrize("exclude_key", ["exclude", "blacklist"])
def test_schemaless(exclude_key):
    replace = ReplaceField.from_options(options("value", **{exclude_key: "dont", "renames": "abc:xyz,foo:bar"}))

    transformed = replace.apply(record(value=dict(VALUE)))

    assert transformed.value == {"xyz": 42, "bar": True, "etc": "etc"}


@pytest.mark.parametrize("include_key", ["include", "whitelist"])
def test_with_schema(include_key):
    replace = ReplaceField.from_options(options("value", **{include_key: "abc,foo", "renames": "abc:xyz,foo:bar"}))

    transformed = replace.apply(record(value=dict(VALUE), value_schema=SCHEMA))

    assert transformed.value_schema == Schema(
        "struct", name="n", version=2, fields=(Field("xyz", Schema("int32")), Field("bar", Schema("boolean")))
    )
    assert transformed.value == {"xyz": 42, "bar": True}


def test_exclude_wins_over_include():
    replace = ReplaceField.from_options(options("value", include="abc,foo", exclude="foo"))

    assert replace.apply(record(value=dict(VALUE))).value == {"abc": 42}


@pytest.mark.parametrize("role", ["key", "value"])
@pytest.mark.parametrize("replace_null, expected", [(False, None), (True, 42)])
def test_replace_null_with_default(role, replace_null, expected):
    schema = Schema("struct", fields=(Field("abc", Schema("int32", optional=True, default=42)),))
    replace = ReplaceField.from_options(
        options(
            role,
            include="abc",
            renames="abc:optional_with_default",
            replace_null_with_default=str(replace_null).lower(),
        )
    )

    transformed = replace.apply(record(**{role: {"abc": None}, f"{role}_schema": schema}))

    assert (transformed.key if role == "key" else transformed.value) == {"optional_with_default": expected}


def test_two_fields_renamed_to_one_name_fail_with_a_schema():
    replace = ReplaceField.from_options(options("value", renames="abc:x,foo:x"))

    with pytest.raises(TransformError, match="'x'"):
        replace.apply(record(value=dict(VALUE), value_schema=SCHEMA))


@pytest.mark.parametrize("renames", ["abc", "abc:", "a:b:c"])
def test_invalid_rename_mapping(renames):
    with pytest.raises(ConfigError) as raised:
        ReplaceField.from_options(options("value", renames=renames))

    assert raised.value.key == "transforms.t.renames"


def test_old_and_new_names_with_different_lists_are_an_error():
    with pytest.raises(ConfigError) as raised:
        ReplaceField.from_options(options("value", exclude="a", blacklist="b"))

    assert raised.value.key == "transforms.t.blacklist"


def test_schemaless_operand_must_be_a_map():
    with pytest.raises(TransformError, match="only a map"):
        ReplaceField.from_options(options("value", exclude="a")).apply(record(value=[1]))
