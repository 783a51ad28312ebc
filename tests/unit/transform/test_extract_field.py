"""ExtractField, as Kafka's ExtractFieldTest (V1 and V2 field syntax, nulls, unknown fields, defaults)."""

from __future__ import annotations

import pytest

from sink_engine.convert.schema import Field, Schema
from sink_engine.errors import ConfigError
from sink_engine.transform.errors import TransformError
from sink_engine.transform.extract_field import ExtractField
from sink_engine.transform.field_path import split_v2
from tests.unit.transform.field_records import options, record

INT32 = Schema("int32")
V2 = {"field.syntax.version": "V2"}


def struct(*fields: tuple[str, Schema], optional: bool = False) -> Schema:
    return Schema("struct", optional=optional, fields=tuple(Field(name, schema) for name, schema in fields))


def key_extractor(field: str, **more) -> ExtractField:
    return ExtractField.from_options(options("key", field=field, **{k.replace(".", "_"): v for k, v in more.items()}))


def test_schemaless():
    transformed = key_extractor("magic").apply(record(key={"magic": 42}))

    assert transformed.key_schema is None
    assert transformed.key == 42


def test_schemaless_and_nested_path():
    transformed = key_extractor("magic.foo", **V2).apply(record(key={"magic": {"foo": 42}}))

    assert transformed.key_schema is None
    assert transformed.key == 42


def test_null_schemaless():
    transformed = key_extractor("magic").apply(record(key=None))

    assert transformed.key_schema is None
    assert transformed.key is None


def test_with_schema():
    schema = struct(("magic", INT32))

    transformed = key_extractor("magic").apply(record(key={"magic": 42}, key_schema=schema))

    assert transformed.key_schema == INT32
    assert transformed.key == 42


def test_with_schema_and_nested_path():
    schema = struct(("magic", struct(("foo", INT32))))

    transformed = key_extractor("magic.foo", **V2).apply(record(key={"magic": {"foo": 42}}, key_schema=schema))

    assert transformed.key_schema == INT32
    assert transformed.key == 42


def test_null_with_schema_gets_the_field_schema():
    transformed = key_extractor("magic").apply(record(key=None, key_schema=struct(("magic", INT32), optional=True)))

    assert transformed.key_schema == INT32
    assert transformed.key is None


@pytest.mark.parametrize(
    "field, syntax, key",
    [
        ("nonexistent", {}, {"magic": 42}),
        ("magic.nonexistent", V2, {"magic": {"foo": 42}}),
    ],
)
def test_non_existent_field_schemaless_gives_null(field, syntax, key):
    transformed = key_extractor(field, **syntax).apply(record(key=key))

    assert transformed.key_schema is None
    assert transformed.key is None


@pytest.mark.parametrize(
    "field, syntax, schema, key",
    [
        ("nonexistent", {}, struct(("magic", INT32)), {"magic": 42}),
        ("magic.nonexistent", V2, struct(("magic", struct(("foo", INT32)))), {"magic": {"foo": 42}}),
    ],
)
def test_non_existent_field_with_schema_fails(field, syntax, schema, key):
    with pytest.raises(TransformError, match=f"unknown field: {field}"):
        key_extractor(field, **syntax).apply(record(key=key, key_schema=schema))


@pytest.mark.parametrize("role", ["key", "value"])
@pytest.mark.parametrize("replace, expected", [(False, None), (True, 42)])
def test_unset_optional_field_with_a_default(role, replace, expected):
    schema = struct(("optional_with_default", Schema("int32", optional=True, default=42)))
    extractor = ExtractField.from_options(
        options(role, field="optional_with_default", replace_null_with_default=replace)
    )
    given = record(**{role: {"optional_with_default": None}, f"{role}_schema": schema})

    transformed = extractor.apply(given)

    assert (transformed.key if role == "key" else transformed.value) == expected


def test_v1_takes_a_dotted_name_as_one_field():
    transformed = key_extractor("magic.foo").apply(record(key={"magic.foo": 1, "magic": {"foo": 2}}))

    assert transformed.key == 1


def test_a_nested_step_through_a_non_map_fails():
    with pytest.raises(TransformError, match="nested field access"):
        key_extractor("magic.foo", **V2).apply(record(key={"magic": 3}))


@pytest.mark.parametrize(
    "path, steps",
    [
        ("..", ("", "", "")),
        ("foo..", ("foo", "", "")),
        (".bar.", ("", "bar", "")),
        ("..baz", ("", "", "baz")),
        ("", ()),
        ("foobarbaz", ("foobarbaz",)),
        ("foo.bar.baz", ("foo", "bar", "baz")),
        ("foo`bar`baz", ("foo`bar`baz",)),
        ("`foo.bar.baz`", ("foo.bar.baz",)),
        ("foo.`bar.baz`", ("foo", "bar.baz")),
        ("`foo.bar`.baz", ("foo.bar", "baz")),
        ("foo.`bar`.baz", ("foo", "bar", "baz")),
        ("foo.``bar.baz`", ("foo", "`bar.baz")),
        ("foo.`bar.baz``", ("foo", "bar.baz`")),
        ("foo.`ba`r.baz`", ("foo", "ba`r.baz")),
        ("foo.ba`r.baz", ("foo", "ba`r", "baz")),
        ("foo.``bar``.baz", ("foo", "`bar`", "baz")),
        ("``foo.bar.baz``", ("`foo.bar.baz`",)),
        ("foo.`bar\\`.baz`", ("foo", "bar`.baz")),
        ("foo.`bar.`baz`", ("foo", "bar.`baz")),
        ("foo.`bar\\`.`baz`", ("foo", "bar`.`baz")),
        ("foo.`bar\\\\`.\\`baz`", ("foo", "bar\\`.\\`baz")),
    ],
)
def test_v2_path_steps_as_kafka_parses_them(path, steps):
    assert split_v2(path) == steps


@pytest.mark.parametrize(
    "path, position",
    [
        ("`foo.bar.baz", 0),
        ("foo.`bar.baz", 4),
        ("foo.bar.`baz", 8),
        ("foo.bar.`baz\\`", 8),
    ],
)
def test_v2_path_with_an_unclosed_backtick_is_a_config_error(path, position):
    with pytest.raises(ConfigError, match=f"position {position}") as raised:
        key_extractor(path, **V2)

    assert raised.value.key == "transforms.t.field"


def test_unknown_syntax_version_is_a_config_error():
    with pytest.raises(ConfigError) as raised:
        key_extractor("a", **{"field.syntax.version": "V3"})

    assert raised.value.key == "transforms.t.field.syntax.version"
