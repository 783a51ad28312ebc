"""TimestampConverter$Key / $Value: a timestamp, the whole key/value or one top-level field, converted between
epoch numbers (`unix`), text (`string`, a SimpleDateFormat `format` in UTC) and Connect's Date, Time and
Timestamp, through epoch milliseconds as Kafka's does (sub-millisecond parts are lost).

The input's kind comes from its schema (the Timestamp, Date or Time logical name; otherwise string or int64),
or without one from the value (an int is unix, a str is string, a datetime/date/time or `JavaDate` is
Timestamp). Values with a schema follow convert/schema.py (Timestamp an aware UTC datetime, Date a date, Time a
time). Without a schema Kafka gives a java.util.Date, which the Confluent S3 sink's JsonFormat writes (Jackson)
as epoch milliseconds: here that is a `JavaDate`, an int of epoch milliseconds that JSON writes as that number
and that a later TimestampConverter reads as a Timestamp again.
"""

from __future__ import annotations

import datetime
from typing import Any

from sink_engine.convert.schema import DATE, TIME, TIMESTAMP, Schema
from sink_engine.errors import ConfigError
from sink_engine.transform.date_format import DateFormat
from sink_engine.transform.errors import TransformError
from sink_engine.transform.options import TransformOptions
from sink_engine.transform.record import TransformRecord
from sink_engine.transform.schemas import field_value, struct_of
from sink_engine.transform.values import operand, require_map, with_operand

STRING, UNIX, DATE_TYPE, TIME_TYPE, TIMESTAMP_TYPE = "string", "unix", "Date", "Time", "Timestamp"
_TARGETS = (STRING, UNIX, DATE_TYPE, TIME_TYPE, TIMESTAMP_TYPE)
_PER_SECOND = {"seconds": 1, "milliseconds": 1000, "microseconds": 1_000_000, "nanoseconds": 1_000_000_000}
_LOGICAL = {TIMESTAMP: TIMESTAMP_TYPE, DATE: DATE_TYPE, TIME: TIME_TYPE}
_DAY_MS = 86_400_000
_EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.UTC)
_PURPOSE = "converting timestamp formats"


class JavaDate(int):
    """A java.util.Date without a schema: epoch milliseconds (JSON writes the number, as Jackson does)."""

    def __repr__(self) -> str:
        return f"JavaDate({int(self)})"


class TimestampConverter:
    def __init__(
        self,
        role: str,
        field: str,
        target: str,
        date_format: DateFormat | None,
        precision: str,
        replace_null_with_default: bool,
    ):
        self.role, self.field, self.target, self.format = role, field, target, date_format
        self.precision, self.replace_null_with_default = precision, replace_null_with_default
        self._schemas: dict[Schema, Schema] = {}

    @classmethod
    def from_options(cls, options: TransformOptions) -> TimestampConverter:
        target = _exact(options, "target.type", _TARGETS, None)
        precision = _exact(options, "unix.precision", tuple(_PER_SECOND), "milliseconds")
        pattern = options.string("format", "")
        if target == STRING and not pattern:
            raise ConfigError(options.key("format"), "is required when target.type is string")
        try:
            date_format = DateFormat(pattern) if pattern else None
        except ValueError as error:
            raise ConfigError(
                options.key("format"), f"{pattern!r} is not a SimpleDateFormat pattern: {error}"
            ) from None
        return cls(
            options.role or "value",
            options.string("field", ""),
            target,
            date_format,
            precision,
            options.boolean("replace.null.with.default", True),
        )

    def apply(self, record: TransformRecord) -> TransformRecord:
        value, schema = operand(record, self.role)
        if schema is None:
            return with_operand(record, self.role, self._schemaless(value), None)
        if not self.field:
            return with_operand(
                record,
                self.role,
                self._convert(value, _kind_of_schema(schema), True),
                _target_schema(self.target, schema.optional),
            )
        if schema.type != "struct" or (value is not None and not isinstance(value, dict)):
            raise TransformError(f"only a struct is supported for {_PURPOSE}, found {schema.type}")
        return with_operand(record, self.role, self._convert_struct(value, schema), self._updated_schema(schema))

    def _schemaless(self, value: Any) -> Any:
        if value is None or not self.field:
            return self._convert(value, None, False)
        updated = dict(require_map(value, _PURPOSE))
        updated[self.field] = self._convert(value.get(self.field), None, False)
        return updated

    def _updated_schema(self, schema: Schema) -> Schema:
        updated = self._schemas.get(schema)
        if updated is None:
            fields = [
                (f.name, _target_schema(self.target, f.schema.optional) if f.name == self.field else f.schema)
                for f in schema.fields
            ]
            default = self._convert_struct(schema.default_value(), schema)
            updated = struct_of(fields, schema, optional=schema.optional, default=default)
            self._schemas[schema] = updated
        return updated

    def _convert_struct(self, value: dict | None, schema: Schema) -> dict | None:
        """The struct's field values, `field` converted by its schema in `schema` (the input's)."""
        if value is None:
            return None
        result = {}
        for field in schema.fields:
            current = field_value(value, field, self.replace_null_with_default)
            if field.name == self.field:
                current = self._convert(current, _kind_of_schema(field.schema), True)
            result[field.name] = current
        return result

    def _convert(self, value: Any, kind: str | None, with_schema: bool) -> Any:
        if value is None:
            return None
        millis = _to_millis(value, kind or _infer_kind(value), self)
        return _from_millis(millis, self.target, self, with_schema)


def _exact(options: TransformOptions, name: str, choices: tuple[str, ...], default: str | None) -> str:
    """A Connect ValidString: compared exactly (case-sensitive)."""
    value = options.string(name, default) if default is not None else options.string(name)
    if value not in choices:
        raise ConfigError(options.key(name), f"{value!r} is not one of {', '.join(choices)}")
    return value


def _kind_of_schema(schema: Schema) -> str:
    """Connect's timestampTypeFromSchema: the logical name, else string or int64."""
    kind = (_LOGICAL.get(schema.name) if schema.name is not None else None) or {"string": STRING, "int64": UNIX}.get(
        schema.type
    )
    if kind is None:
        raise TransformError(f"schema {schema.describe()} does not correspond to a known timestamp type format")
    return kind


def _infer_kind(value: Any) -> str:
    """Connect's inferTimestampType for a value without a schema."""
    if isinstance(value, (JavaDate, datetime.date, datetime.time)):
        return TIMESTAMP_TYPE
    if isinstance(value, int) and not isinstance(value, bool):
        return UNIX
    if isinstance(value, str):
        return STRING
    raise TransformError(f"TimestampConverter does not support {type(value).__name__} values as timestamps")


def _target_schema(target: str, optional: bool) -> Schema:
    if target == STRING:
        return Schema("string", optional)
    if target == UNIX:
        return Schema("int64", optional)
    name = {DATE_TYPE: DATE, TIME_TYPE: TIME, TIMESTAMP_TYPE: TIMESTAMP}[target]
    return Schema("int32" if target != TIMESTAMP_TYPE else "int64", optional, name=name, version=1)


def _to_millis(value: Any, kind: str, converter: TimestampConverter) -> int:
    """The value as epoch milliseconds (Connect's java.util.Date pivot)."""
    if kind == STRING:
        if not isinstance(value, str):
            raise TransformError(f"expected a string timestamp, found {type(value).__name__}")
        if converter.format is None:
            raise TransformError("a string timestamp needs the format option to be parsed")
        try:
            return converter.format.parse(value)
        except ValueError as error:
            raise TransformError(
                f"could not parse timestamp: value ({value}) does not match pattern "
                f"({converter.format.pattern}): {error}"
            ) from None
    if kind == UNIX:
        if isinstance(value, bool) or not isinstance(value, int):
            raise TransformError(f"expected a Unix timestamp (an int64), found {type(value).__name__}")
        per_second = _PER_SECOND[converter.precision]
        return value * (1000 // per_second) if per_second <= 1000 else _truncating_div(value, per_second // 1000)
    return _date_like_millis(value, kind)


def _date_like_millis(value: Any, kind: str) -> int:
    if isinstance(value, JavaDate):
        return int(value)
    if isinstance(value, datetime.datetime):
        moment = value if value.tzinfo is not None else value.replace(tzinfo=datetime.UTC)
        delta = moment - _EPOCH
        return (delta.days * 86_400 + delta.seconds) * 1000 + delta.microseconds // 1000
    if isinstance(value, datetime.date):
        return (value.toordinal() - _EPOCH.toordinal()) * _DAY_MS
    if isinstance(value, datetime.time):
        return ((value.hour * 60 + value.minute) * 60 + value.second) * 1000 + value.microsecond // 1000
    raise TransformError(f"expected a {kind} (a java.util.Date), found {type(value).__name__}")


def _from_millis(millis: int, target: str, converter: TimestampConverter, with_schema: bool) -> Any:
    if target == STRING:
        assert converter.format is not None  # from_options requires format with target.type string
        try:
            return converter.format.format(millis)
        except ValueError as error:
            raise TransformError(f"cannot format timestamp {millis}: {error}") from None
    if target == UNIX:
        per_second = _PER_SECOND[converter.precision]
        return millis * (per_second // 1000) if per_second >= 1000 else _truncating_div(millis, 1000 // per_second)
    if target == DATE_TYPE:
        millis -= millis % _DAY_MS
    elif target == TIME_TYPE:
        millis %= _DAY_MS
    if not with_schema:
        return JavaDate(millis)
    return _typed(millis, target)


def _typed(millis: int, target: str) -> Any:
    """The engine's value of a Date, Time or Timestamp schema."""
    try:
        moment = _EPOCH + datetime.timedelta(milliseconds=millis)
    except OverflowError:
        raise TransformError(f"timestamp {millis} ms is outside years 1-9999") from None
    if target == DATE_TYPE:
        return moment.date()
    if target == TIME_TYPE:
        return moment.time()
    return moment


def _truncating_div(value: int, divisor: int) -> int:
    """Java's long division (towards zero), as TimeUnit conversions do."""
    quotient = abs(value) // divisor
    return quotient if value >= 0 else -quotient
