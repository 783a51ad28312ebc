"""MaskField, as Kafka's MaskFieldTest: empty values by type, replacements read as the field's type, the types
that cannot be masked or replaced, and replace.null.with.default (off in Kafka's tests)."""

from __future__ import annotations

import datetime
import decimal

import pytest

from sink_engine.convert.iso_values import parse_date_time
from sink_engine.convert.schema import DATE, DECIMAL, ISO_TIMESTAMP, TIME, TIMESTAMP, Field, Schema
from sink_engine.errors import ConfigError
from sink_engine.transform.errors import TransformError
from sink_engine.transform.java_values import float32
from sink_engine.transform.mask_field import MaskField
from tests.unit.transform.field_records import options, record

UTC = datetime.UTC
EPOCH = datetime.datetime(1970, 1, 1, tzinfo=UTC)
NOW = datetime.datetime(2024, 5, 6, 7, 8, 9, 123000, tzinfo=UTC)
SCHEMA = Schema(
    "struct",
    fields=tuple(
        Field(name, schema)
        for name, schema in [
            ("magic", Schema("int32")),
            ("bool", Schema("boolean")),
            ("byte", Schema("int8")),
            ("short", Schema("int16")),
            ("int", Schema("int32")),
            ("long", Schema("int64")),
            ("float", Schema("float32")),
            ("double", Schema("float64")),
            ("string", Schema("string")),
            ("date", Schema("int32", name=DATE, version=1)),
            ("time", Schema("int32", name=TIME, version=1)),
            ("timestamp", Schema("int64", name=TIMESTAMP, version=1)),
            ("decimal", Schema("bytes", name=DECIMAL, version=1, parameters=(("scale", "0"),))),
            ("array", Schema("array", items=Schema("int32"))),
            ("map", Schema("map", keys=Schema("string"), values=Schema("string"))),
            ("withDefault", Schema("string", optional=True, default="default")),
        ]
    ),
)
VALUES_WITH_SCHEMA = {
    "magic": 42,
    "bool": True,
    "byte": 42,
    "short": 42,
    "int": 42,
    "long": 42,
    "float": 42.0,
    "double": 42.0,
    "string": "hmm",
    "date": NOW.date(),
    "time": NOW.time(),
    "timestamp": NOW,
    "decimal": decimal.Decimal(42),
    "array": [1, 2, 3],
    "map": {"what": "what"},
    "withDefault": None,
}
VALUES = {
    "magic": 42,
    "bool": True,
    "int": 42,
    "long": 42,
    "double": 42.0,
    "string": "55.121.20.20",
    "date": NOW,
    "bigdec": decimal.Decimal("42.0"),
    "list": [42],
    "map": {"key": "value"},
}


def mask(fields, replacement=None, role="value") -> MaskField:
    given = {"fields": ",".join(fields), "replace.null.with.default": False}
    if replacement is not None:
        given["replacement"] = replacement
    return MaskField.from_options(options(role, **{k.replace(".", "_"): v for k, v in given.items()}))


def test_schemaless():
    fields = [name for name in VALUES if name != "magic"]

    updated = mask(fields).apply(record(value=dict(VALUES))).value

    assert updated == {
        "magic": 42,
        "bool": False,
        "int": 0,
        "long": 0,
        "double": 0.0,
        "string": "",
        "date": EPOCH,
        "bigdec": decimal.Decimal(0),
        "list": [],
        "map": {},
    }
    assert type(updated["double"]) is float


def test_with_schema():
    fields = [field.name for field in SCHEMA.fields if field.name != "magic"]

    transformed = mask(fields).apply(record(value=dict(VALUES_WITH_SCHEMA), value_schema=SCHEMA))

    assert transformed.value_schema is SCHEMA
    assert transformed.value == {
        "magic": 42,
        "bool": False,
        "byte": 0,
        "short": 0,
        "int": 0,
        "long": 0,
        "float": 0.0,
        "double": 0.0,
        "string": "",
        "date": datetime.date(1970, 1, 1),
        "time": datetime.time(0),
        "timestamp": EPOCH,
        "decimal": decimal.Decimal(0),
        "array": [],
        "map": {},
        "withDefault": None,
    }


@pytest.mark.parametrize(
    "field, replacement, expected",
    [
        ("int", "123", 123),
        ("long", "123", 123),
        ("double", "123.0", 123.0),
        ("string", "123", "123"),
        ("bigdec", "123.0", decimal.Decimal("123.0")),
        ("long", "1e3", 1000),
        ("int", "12.9", 12),
    ],
)
def test_schemaless_with_replacement(field, replacement, expected):
    updated = mask([field], replacement).apply(record(value=dict(VALUES))).value

    assert updated[field] == expected and type(updated[field]) is type(expected)


@pytest.mark.parametrize(
    "field, replacement, expected",
    [
        ("short", "123", 123),
        ("byte", "123", 123),
        ("int", "123", 123),
        ("long", "123", 123),
        ("float", "123.0", 123.0),
        ("double", "123.0", 123.0),
        ("string", "123", "123"),
        ("decimal", "123.0", decimal.Decimal(123)),
        ("byte", "300", 44),
        ("float", "1.1", float32(1.1)),
    ],
)
def test_with_schema_and_replacement(field, replacement, expected):
    updated = mask([field], replacement).apply(record(value=dict(VALUES_WITH_SCHEMA), value_schema=SCHEMA)).value

    assert updated[field] == expected


@pytest.mark.parametrize("fields", [["date"], ["int", "date"], ["bool"], ["list"], ["map"]])
def test_schemaless_unsupported_replacement_type(fields):
    with pytest.raises(TransformError, match="cannot mask a value of type"):
        mask(fields, "123").apply(record(value=dict(VALUES)))


@pytest.mark.parametrize("field", ["time", "timestamp", "array", "bool"])
def test_with_schema_unsupported_replacement_type(field):
    with pytest.raises(TransformError, match="cannot mask a value of type"):
        mask([field], "123").apply(record(value=dict(VALUES_WITH_SCHEMA), value_schema=SCHEMA))


@pytest.mark.parametrize("fields", [["int"], ["long"], ["double"], ["bigdec"], ["string", "int"]])
def test_replacement_type_mismatch(fields):
    with pytest.raises(TransformError, match="cannot convert the replacement 'foo'"):
        mask(fields, "foo").apply(record(value=dict(VALUES)))


def test_empty_string_replacement_is_a_config_error():
    with pytest.raises(ConfigError) as raised:
        mask(["short"], " ")

    assert raised.value.key == "transforms.t.replacement"


def test_empty_list_and_map_are_new_mutable_values():
    updated = mask(["array", "map"]).apply(record(value=dict(VALUES_WITH_SCHEMA), value_schema=SCHEMA)).value
    updated["array"].append(0)
    updated["map"]["k"] = "v"

    again = mask(["array", "map"]).apply(record(value=dict(VALUES_WITH_SCHEMA), value_schema=SCHEMA)).value

    assert (again["array"], again["map"]) == ([], {})


@pytest.mark.parametrize("replace, expected", [(False, None), (True, "")])
def test_replace_null_with_default_masks_the_default(replace, expected):
    transform = MaskField.from_options(options("value", fields="withDefault", replace_null_with_default=replace))

    updated = transform.apply(record(value=dict(VALUES_WITH_SCHEMA), value_schema=SCHEMA)).value

    assert updated["withDefault"] == expected


def test_schemaless_missing_field_becomes_null_and_null_stays_null():
    updated = mask(["absent", "none"]).apply(record(value={"none": None})).value

    assert updated == {"absent": None, "none": None}


@pytest.mark.parametrize(
    "schema, value", [(Schema("bytes"), b"\x01"), (Schema("struct", fields=(Field("a", Schema("int32")),)), {"a": 1})]
)
def test_bytes_and_structs_cannot_be_masked(schema, value):
    struct = Schema("struct", fields=(Field("f", schema),))

    with pytest.raises(TransformError, match="cannot mask"):
        mask(["f"]).apply(record(value={"f": value}, value_schema=struct))


def test_a_decimal_takes_the_field_scale_and_a_replacement_that_would_round_fails():
    scaled = Schema("struct", fields=(Field("d", Schema("bytes", name=DECIMAL, parameters=(("scale", "2"),))),))
    given = record(value={"d": decimal.Decimal("1.25")}, value_schema=scaled)

    assert str(mask(["d"]).apply(given).value["d"]) == "0.00"
    assert str(mask(["d"], "7").apply(given).value["d"]) == "7.00"
    with pytest.raises(TransformError, match="scale 2"):
        mask(["d"], "7.123").apply(given)


def test_an_iso_timestamp_string_masks_to_empty_text_read_as_the_epoch():
    iso = Schema("struct", fields=(Field("at", Schema("string", name=ISO_TIMESTAMP)),))
    given = record(value={"at": parse_date_time("2024-05-06T07:08:09Z")}, value_schema=iso)

    masked = mask(["at"]).apply(given).value["at"]
    replaced = mask(["at"], "2000-01-01T00:00:00Z").apply(given).value["at"]

    assert (masked, masked.value) == ("", EPOCH)
    assert replaced.value == datetime.datetime(2000, 1, 1, tzinfo=UTC)


def test_tombstone_is_an_error_as_in_kafka():
    with pytest.raises(TransformError, match="only a map"):
        mask(["a"]).apply(record(value=None))
