"""TimestampConverter reproduces Kafka's TimestampConverterTest: the same conversions with and without a schema,
in this engine's value model (Timestamp a UTC datetime, Date a date, Time a time; a schemaless java.util.Date a
JavaDate of epoch milliseconds)."""

from __future__ import annotations

import datetime

import orjson
import pytest

from sink_engine.convert.schema import DATE, TIME, TIMESTAMP, Field, Schema
from sink_engine.errors import ConfigError
from sink_engine.transform.errors import TransformError
from sink_engine.transform.timestamp_converter import JavaDate, TimestampConverter
from tests.unit.transform.more_records import options, record

UTC = datetime.UTC
TIMESTAMP_SCHEMA = Schema("int64", name=TIMESTAMP, version=1)
DATE_SCHEMA = Schema("int32", name=DATE, version=1)
TIME_SCHEMA = Schema("int32", name=TIME, version=1)
OPTIONAL_TIMESTAMP = Schema("int64", True, name=TIMESTAMP, version=1)
OPTIONAL_DATE = Schema("int32", True, name=DATE, version=1)
OPTIONAL_TIME = Schema("int32", True, name=TIME, version=1)
STRING, OPTIONAL_STRING = Schema("string"), Schema("string", True)
INT64, OPTIONAL_INT64 = Schema("int64"), Schema("int64", True)

DATE_PLUS_TIME_UNIX = 86_401_234  # 1970-01-02T00:00:01.234Z
DATE_PLUS_TIME = datetime.datetime(1970, 1, 2, 0, 0, 1, 234000, tzinfo=UTC)
DATE_VALUE = datetime.date(1970, 1, 2)
TIME_VALUE = datetime.time(0, 0, 1, 234000)
STRING_DATE_FMT = "yyyy MM dd HH mm ss SSS z"
DATE_PLUS_TIME_STRING = "1970 01 02 00 00 01 234 UTC"


def converter(role="value", **values):
    return TimestampConverter.from_options(options(role, **values))


def apply_value(value, schema=None, **values):
    return converter(**values).apply(record(value=value, value_schema=schema))


@pytest.mark.parametrize(
    "values, key",
    [
        ({}, "target.type"),
        ({"target_type": "invalid"}, "target.type"),
        ({"target_type": "timestamp"}, "target.type"),  # ValidString is case-sensitive
        ({"target_type": "unix", "unix_precision": "invalid"}, "unix.precision"),
        ({"target_type": "string"}, "format"),
        ({"target_type": "string", "format": "bad-format"}, "format"),
    ],
)
def test_bad_options_name_their_key(values, key):
    with pytest.raises(ConfigError) as caught:
        converter(**values)
    assert caught.value.key == f"transforms.t.{key}"


def test_valid_unix_precision_is_accepted():
    assert converter(target_type="unix", unix_precision="seconds").precision == "seconds"


# Without a schema: a Date in, the other types out (Kafka's testSchemaless*)
@pytest.mark.parametrize(
    "target, expected",
    [
        ("Timestamp", JavaDate(DATE_PLUS_TIME_UNIX)),
        ("Date", JavaDate(86_400_000)),
        ("Time", JavaDate(1234)),
        ("unix", DATE_PLUS_TIME_UNIX),
        ("string", DATE_PLUS_TIME_STRING),
    ],
)
def test_schemaless_timestamp_to_each_type(target, expected):
    transformed = apply_value(JavaDate(DATE_PLUS_TIME_UNIX), target_type=target, format=STRING_DATE_FMT)
    assert transformed.value_schema is None
    assert transformed.value == expected and type(transformed.value) is type(expected)


@pytest.mark.parametrize(
    "given, expected",
    [
        (JavaDate(86_400_000), JavaDate(86_400_000)),  # a Date: no change, the source is coarser
        (JavaDate(1234), JavaDate(1234)),  # a Time
        (DATE_PLUS_TIME_UNIX, JavaDate(DATE_PLUS_TIME_UNIX)),
        (DATE_PLUS_TIME_STRING, JavaDate(DATE_PLUS_TIME_UNIX)),
        (DATE_PLUS_TIME, JavaDate(DATE_PLUS_TIME_UNIX)),  # a datetime another transform made
    ],
)
def test_schemaless_each_type_to_timestamp(given, expected):
    transformed = apply_value(given, target_type="Timestamp", format=STRING_DATE_FMT)
    assert transformed.value_schema is None and transformed.value == expected


def test_a_schemaless_date_is_written_as_epoch_millis_like_jacksons_java_util_date():
    transformed = apply_value({"ts": JavaDate(DATE_PLUS_TIME_UNIX)}, target_type="Date", field="ts")
    assert orjson.dumps(transformed.value) == b'{"ts":86400000}'


# With a schema (Kafka's testWithSchema*)
@pytest.mark.parametrize(
    "target, schema, expected",
    [
        ("Timestamp", TIMESTAMP_SCHEMA, DATE_PLUS_TIME),
        ("Date", DATE_SCHEMA, DATE_VALUE),
        ("Time", TIME_SCHEMA, TIME_VALUE),
        ("unix", INT64, DATE_PLUS_TIME_UNIX),
        ("string", STRING, DATE_PLUS_TIME_STRING),
    ],
)
def test_with_schema_timestamp_to_each_type(target, schema, expected):
    transformed = apply_value(DATE_PLUS_TIME, TIMESTAMP_SCHEMA, target_type=target, format=STRING_DATE_FMT)
    assert transformed.value_schema == schema and transformed.value == expected


@pytest.mark.parametrize(
    "schema, given, expected",
    [
        (DATE_SCHEMA, DATE_VALUE, datetime.datetime(1970, 1, 2, tzinfo=UTC)),
        (TIME_SCHEMA, TIME_VALUE, datetime.datetime(1970, 1, 1, 0, 0, 1, 234000, tzinfo=UTC)),
        (INT64, DATE_PLUS_TIME_UNIX, DATE_PLUS_TIME),
        (STRING, DATE_PLUS_TIME_STRING, DATE_PLUS_TIME),
    ],
)
def test_with_schema_each_type_to_timestamp(schema, given, expected):
    transformed = apply_value(given, schema, target_type="Timestamp", format=STRING_DATE_FMT)
    assert transformed.value_schema == TIMESTAMP_SCHEMA and transformed.value == expected


TARGET_SCHEMAS = {
    "Timestamp": OPTIONAL_TIMESTAMP,
    "Date": OPTIONAL_DATE,
    "Time": OPTIONAL_TIME,
    "string": OPTIONAL_STRING,
    "unix": OPTIONAL_INT64,
}
SOURCE_SCHEMAS = (OPTIONAL_INT64, OPTIONAL_TIME, OPTIONAL_DATE, OPTIONAL_STRING, OPTIONAL_TIMESTAMP)


@pytest.mark.parametrize("target", TARGET_SCHEMAS)
def test_schemaless_null_value_and_null_field_stay_null(target):
    for field in ("", "ts"):
        transformed = apply_value(None, target_type=target, format=STRING_DATE_FMT, field=field)
        assert transformed.value is None and transformed.value_schema is None


@pytest.mark.parametrize("target", TARGET_SCHEMAS)
@pytest.mark.parametrize("source", SOURCE_SCHEMAS)
def test_with_schema_null_value_gets_the_optional_target_schema(target, source):
    transformed = apply_value(None, source, target_type=target, format=STRING_DATE_FMT)
    assert transformed.value is None and transformed.value_schema == TARGET_SCHEMAS[target]


@pytest.mark.parametrize("target", TARGET_SCHEMAS)
@pytest.mark.parametrize("source", SOURCE_SCHEMAS)
def test_with_schema_null_field_and_null_struct(target, source):
    struct = Schema("struct", fields=(Field("ts", source), Field("other", STRING)))
    expected = Schema("struct", fields=(Field("ts", TARGET_SCHEMAS[target]), Field("other", STRING)))
    transform = converter(target_type=target, format=STRING_DATE_FMT, field="ts")

    transformed = transform.apply(record(value={"ts": None, "other": "test"}, value_schema=struct))
    assert transformed.value_schema == expected and transformed.value == {"ts": None, "other": "test"}

    optional = Schema("struct", True, fields=struct.fields)
    transformed = transform.apply(record(value=None, value_schema=optional))
    assert transformed.value is None
    assert transformed.value_schema == Schema("struct", True, fields=expected.fields)


def test_schemaless_field_conversion():
    transformed = apply_value({"ts": JavaDate(DATE_PLUS_TIME_UNIX)}, target_type="Date", field="ts")
    assert transformed.value == {"ts": JavaDate(86_400_000)} and transformed.value_schema is None


def test_with_schema_field_conversion_keeps_the_other_fields():
    struct = Schema("struct", fields=(Field("ts", INT64), Field("other", STRING)))
    transformed = apply_value({"ts": DATE_PLUS_TIME_UNIX, "other": "test"}, struct, target_type="Timestamp", field="ts")
    assert transformed.value_schema == Schema("struct", fields=(Field("ts", TIMESTAMP_SCHEMA), Field("other", STRING)))
    assert transformed.value == {"ts": DATE_PLUS_TIME, "other": "test"}


@pytest.mark.parametrize("replace, expected", [("false", None), ("true", datetime.datetime(1970, 1, 1, tzinfo=UTC))])
def test_null_field_with_a_default_follows_replace_null_with_default(replace, expected):
    struct = Schema("struct", fields=(Field("ts", Schema("int64", True, 0)), Field("other", STRING)))
    transformed = apply_value(
        {"ts": None, "other": "test"}, struct, target_type="Timestamp", field="ts", replace_null_with_default=replace
    )
    assert transformed.value_schema.fields[0] == Field("ts", OPTIONAL_TIMESTAMP)
    assert transformed.value == {"ts": expected, "other": "test"}


@pytest.mark.parametrize(
    "precision, given, expected",
    [
        ("microseconds", 86_401_234_123, DATE_PLUS_TIME),
        ("nanoseconds", 86_401_234_123_456, DATE_PLUS_TIME),
        ("seconds", 86_401, datetime.datetime(1970, 1, 2, 0, 0, 1, tzinfo=UTC)),
    ],
)
def test_with_schema_unix_precisions(precision, given, expected):
    struct = Schema("struct", fields=(Field("ts", INT64),))
    transformed = apply_value({"ts": given}, struct, target_type="Timestamp", field="ts", unix_precision=precision)
    assert transformed.value == {"ts": expected}


@pytest.mark.parametrize(
    "precision, expected",
    [
        ("microseconds", 86_401_234_000),  # the sub-millisecond part is lost, as in Kafka
        ("nanoseconds", 86_401_234_000_000),
        ("seconds", 86_401),
    ],
)
def test_schemaless_string_to_unix_precisions(precision, expected):
    transformed = apply_value(
        DATE_PLUS_TIME_STRING, target_type="unix", unix_precision=precision, format=STRING_DATE_FMT
    )
    assert transformed.value == expected


def test_unix_seconds_of_an_instant_before_the_epoch_truncate_towards_zero_like_java():
    assert apply_value(JavaDate(-1500), target_type="unix", unix_precision="seconds").value == -1


def test_key_variant_converts_the_key():
    transformed = converter("key", target_type="Timestamp").apply(record(key=JavaDate(DATE_PLUS_TIME_UNIX)))
    assert transformed.key == JavaDate(DATE_PLUS_TIME_UNIX) and transformed.key_schema is None


def test_a_struct_default_is_converted_with_the_schema():
    struct = Schema("struct", True, {"ts": 0, "other": "x"}, fields=(Field("ts", INT64), Field("other", STRING)))
    transformed = apply_value(None, struct, target_type="string", field="ts", format="yyyy-MM-dd")
    assert transformed.value_schema.default_value() == {"ts": "1970-01-01", "other": "x"}


@pytest.mark.parametrize(
    "value, schema, reason",
    [
        ("not a date", STRING, "does not match pattern"),
        (1.5, None, "does not support float"),
        (True, None, "does not support bool"),
        (b"\x00", Schema("bytes"), "known timestamp type"),
    ],
)
def test_a_value_that_is_no_timestamp_is_a_transform_error(value, schema, reason):
    with pytest.raises(TransformError, match=reason):
        apply_value(value, schema, target_type="Timestamp", format="yyyy-MM-dd")


def test_schemas_are_cached_per_input_schema():
    struct = Schema("struct", fields=(Field("ts", INT64),))
    transform = converter(target_type="Timestamp", field="ts")
    first = transform.apply(record(value={"ts": 1}, value_schema=struct)).value_schema
    assert transform.apply(record(value={"ts": 2}, value_schema=struct)).value_schema is first
