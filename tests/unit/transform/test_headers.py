"""InsertHeader, DropHeaders and HeaderFrom reproduce Kafka's InsertHeaderTest, DropHeadersTest and HeaderFromTest
(schemaless and with a schema, for the key and the value); literals are typed as Connect's Values.parseString."""

from __future__ import annotations

import datetime
import decimal

import pytest

from sink_engine.convert.schema import DATE, DECIMAL, TIME, TIMESTAMP, Field, Schema
from sink_engine.errors import ConfigError
from sink_engine.transform.errors import TransformError
from sink_engine.transform.header_literals import parse_literal
from sink_engine.transform.headers import DropHeaders, HeaderFrom, InsertHeader
from sink_engine.transform.record import Header
from tests.unit.transform.more_records import options, record

STRING = Schema("string")
UTC = datetime.UTC


def string_header(name, value):
    return Header(name, value, STRING)


def assert_only_headers_changed(original, transformed):
    assert (
        transformed.topic,
        transformed.key,
        transformed.key_schema,
        transformed.value,
        transformed.value_schema,
        transformed.timestamp,
    ) == (original.topic, original.key, original.key_schema, original.value, original.value_schema, original.timestamp)


# InsertHeader (Kafka's InsertHeaderTest)
@pytest.mark.parametrize(
    "name, literal, existing, added",
    [
        ("inserted", "inserted-value", "existing", string_header("inserted", "inserted-value")),
        ("existing", "inserted-value", "existing", string_header("existing", "inserted-value")),
        ("inserted", "1", "existing", Header("inserted", 1, Schema("int8"))),
    ],
)
def test_insert_header_adds_after_the_existing_ones(name, literal, existing, added):
    original = record(key="key", value="value", headers=(string_header(existing, "existing-value"),))
    transformed = InsertHeader.from_options(options(header=name, value_literal=literal)).apply(original)
    assert_only_headers_changed(original, transformed)
    assert transformed.headers == (string_header(existing, "existing-value"), added)


@pytest.mark.parametrize("values, key", [({"value_literal": "1"}, "header"), ({"header": "h"}, "value.literal")])
def test_insert_header_requires_both_options(values, key):
    with pytest.raises(ConfigError) as caught:
        InsertHeader.from_options(options(**values))
    assert caught.value.key == f"transforms.t.{key}"


@pytest.mark.parametrize(
    "text, value, schema",
    [
        ("", "", STRING),
        ("null", None, None),
        ("true", True, Schema("boolean")),
        ("false", False, Schema("boolean")),
        ("True", "True", STRING),
        ("127", 127, Schema("int8")),
        ("-129", -129, Schema("int16")),
        ("40000", 40000, Schema("int32")),
        ("+3000000000", 3000000000, Schema("int64")),
        ("1.0", 1, Schema("int8")),  # a whole BigDecimal is an integer
        ("1e3", 1000, Schema("int16")),
        ("1.5", 1.5, Schema("float32")),
        ("1.5e300", 1.5e300, Schema("float64")),
        (
            "99999999999999999999",
            decimal.Decimal("99999999999999999999"),
            Schema("bytes", name=DECIMAL, version=1, parameters=(("scale", "0"),)),
        ),
        ("2024-01-15", datetime.date(2024, 1, 15), Schema("int32", name=DATE, version=1)),
        ("10:15:30.250Z", datetime.time(10, 15, 30, 250000), Schema("int32", name=TIME, version=1)),
        (
            "2024-01-15T10:15:30.250Z",
            datetime.datetime(2024, 1, 15, 10, 15, 30, 250000, tzinfo=UTC),
            Schema("int64", name=TIMESTAMP, version=1),
        ),
        ("12abc", "12abc", STRING),
        ("hello world", "hello world", STRING),
        ("[1,2]", "[1,2]", STRING),
    ],
)
def test_literals_are_typed_as_connect_parses_them(text, value, schema):
    parsed_value, parsed_schema = parse_literal(text)
    assert parsed_schema == schema
    assert parsed_value == value and type(parsed_value) is type(value)


# DropHeaders (Kafka's DropHeadersTest)
@pytest.mark.parametrize(
    "headers",
    [
        (string_header("existing", "existing-value"), string_header("to-drop", "existing-value")),
        (
            string_header("existing", "existing-value"),
            string_header("to-drop", "existing-value"),
            string_header("to-drop", "existing-other-value"),
        ),
        (string_header("existing", "existing-value"),),
    ],
)
def test_drop_headers_drops_every_header_of_the_names(headers):
    original = record(key="key", value="value", headers=headers)
    transformed = DropHeaders.from_options(options(headers="to-drop")).apply(original)
    assert_only_headers_changed(original, transformed)
    assert transformed.headers == (string_header("existing", "existing-value"),)


@pytest.mark.parametrize("names", [[], "", " , "])
def test_drop_headers_rejects_an_empty_list(names):
    with pytest.raises(ConfigError, match="transforms.t.headers"):
        DropHeaders.from_options(options(headers=names))


# HeaderFrom (Kafka's HeaderFromTest)
OPTIONAL_WITH_DEFAULT = Schema("string", True, "default")
FOO = Schema("struct", fields=(Field("foo", STRING),))
CASES = [
    # description, fields (name, schema, value), transform fields, headers, operation, replace, kept fields, added
    (
        "basic copy",
        [("field1", STRING, "field1-value"), ("field2", STRING, "field2-value")],
        ["field1"],
        ["inserted1"],
        "copy",
        True,
        ["field1", "field2"],
        [("inserted1", STRING, "field1-value")],
    ),
    (
        "basic move",
        [("field1", STRING, "field1-value"), ("field2", STRING, "field2-value")],
        ["field1"],
        ["inserted1"],
        "move",
        True,
        ["field2"],
        [("inserted1", STRING, "field1-value")],
    ),
    (
        "copy with struct value",
        [("field1", FOO, {"foo": "foo-value"}), ("field2", STRING, "field2-value")],
        ["field1"],
        ["inserted1"],
        "copy",
        True,
        ["field1", "field2"],
        [("inserted1", FOO, {"foo": "foo-value"})],
    ),
    (
        "move with struct value",
        [("field1", FOO, {"foo": "foo-value"}), ("field2", STRING, "field2-value")],
        ["field1"],
        ["inserted1"],
        "move",
        True,
        ["field2"],
        [("inserted1", FOO, {"foo": "foo-value"})],
    ),
    (
        "two headers from same field",
        [("field1", STRING, "field1-value"), ("field2", STRING, "field2-value")],
        ["field1", "field1"],
        ["inserted1", "inserted2"],
        "move",
        True,
        ["field2"],
        [("inserted1", STRING, "field1-value"), ("inserted2", STRING, "field1-value")],
    ),
    (
        "two fields to same header",
        [("field1", STRING, "field1-value"), ("field2", STRING, "field2-value")],
        ["field1", "field2"],
        ["inserted1", "inserted1"],
        "move",
        True,
        [],
        [("inserted1", STRING, "field1-value"), ("inserted1", STRING, "field2-value")],
    ),
    (
        "copy null field without default",
        [("field1", OPTIONAL_WITH_DEFAULT, "field1-value"), ("field2", OPTIONAL_WITH_DEFAULT, None)],
        ["field1", "field2"],
        ["inserted1", "inserted2"],
        "copy",
        False,
        ["field1", "field2"],
        [("inserted1", OPTIONAL_WITH_DEFAULT, "field1-value"), ("inserted2", OPTIONAL_WITH_DEFAULT, None)],
    ),
    (
        "move null field without default",
        [("field1", OPTIONAL_WITH_DEFAULT, "field1-value"), ("field2", OPTIONAL_WITH_DEFAULT, None)],
        ["field1", "field2"],
        ["inserted1", "inserted2"],
        "move",
        False,
        [],
        [("inserted1", OPTIONAL_WITH_DEFAULT, "field1-value"), ("inserted2", OPTIONAL_WITH_DEFAULT, None)],
    ),
    (
        "move null field with default",
        [("field1", OPTIONAL_WITH_DEFAULT, None), ("field2", STRING, "v")],
        ["field1"],
        ["inserted1"],
        "move",
        True,
        ["field2"],
        [("inserted1", OPTIONAL_WITH_DEFAULT, "default")],
    ),
]
EXISTING = Header("header1", "existing-value", STRING)


def header_from(role, fields, headers, operation, replace):
    return HeaderFrom.from_options(
        options(role, fields=fields, headers=headers, operation=operation, replace_null_with_default=replace)
    )


def operand_record(role, value, schema):
    if role == "key":
        return record(key=value, key_schema=schema, value="value", headers=(EXISTING,))
    return record(key="key", value=value, value_schema=schema, headers=(EXISTING,))


@pytest.mark.parametrize("role", ["key", "value"])
@pytest.mark.parametrize("case", CASES, ids=[case[0] for case in CASES])
def test_header_from_with_schema(role, case):
    _, given, fields, headers, operation, replace, kept, added = case
    schema = Schema("struct", fields=tuple(Field(name, field_schema) for name, field_schema, _ in given))
    value = {name: field_value for name, _, field_value in given}

    transformed = header_from(role, fields, headers, operation, replace).apply(operand_record(role, value, schema))

    expected_schema = Schema("struct", fields=tuple(f for f in schema.fields if f.name in kept))
    got_value, got_schema = (
        (transformed.key, transformed.key_schema) if role == "key" else (transformed.value, transformed.value_schema)
    )
    assert got_schema == expected_schema
    assert got_value == {name: value[name] for name in kept}
    assert transformed.headers == (EXISTING,) + tuple(Header(n, v, s) for n, s, v in added)


@pytest.mark.parametrize("role", ["key", "value"])
@pytest.mark.parametrize("case", CASES[:-1], ids=[case[0] for case in CASES[:-1]])
def test_header_from_schemaless(role, case):
    _, given, fields, headers, operation, replace, kept, added = case
    value = {name: field_value for name, _, field_value in given}
    schemaless_existing = Header("header1", "existing-value")
    original = operand_record(role, value, None).with_changes(headers=(schemaless_existing,))

    transformed = header_from(role, fields, headers, operation, replace).apply(original)

    assert (transformed.key if role == "key" else transformed.value) == {name: value[name] for name in kept}
    assert transformed.headers == (schemaless_existing,) + tuple(Header(n, v) for n, _, v in added)


def test_header_from_moves_keep_the_struct_name_but_not_optional_as_kafkas_copy_schema_basics():
    schema = Schema("struct", True, name="Row", version=2, fields=(Field("a", STRING), Field("b", STRING)))
    transformed = header_from("value", "a", "h", "move", True).apply(
        record(value={"a": "x", "b": "y"}, value_schema=schema)
    )
    assert transformed.value_schema == Schema("struct", name="Row", version=2, fields=(Field("b", STRING),))


@pytest.mark.parametrize("fields, headers", [("foo,bar", "foo"), ("foo", "foo,bar"), ("", "")])
def test_header_from_rejects_lists_of_different_or_no_length(fields, headers):
    with pytest.raises(ConfigError):
        header_from("value", fields, headers, "copy", True)


def test_header_from_rejects_an_unknown_operation():
    with pytest.raises(ConfigError, match="transforms.t.operation"):
        header_from("value", "a", "h", "cut", True)


@pytest.mark.parametrize(
    "value, schema",
    [
        (None, None),
        ("text", None),
        ({"b": "x"}, Schema("struct", fields=(Field("b", STRING),))),  # field a missing from the struct
        ("text", STRING),
    ],
)
def test_header_from_needs_a_map_or_a_struct_with_the_field(value, schema):
    with pytest.raises(TransformError):
        header_from("value", "a", "h", "copy", True).apply(record(value=value, value_schema=schema))
