"""One value cast to a Connect type, by Kafka Cast's rules (`cast_value`).

Casts from int8..int64, float32, float64, boolean, string and bytes (a Decimal is bytes) to int8..int64, float32,
float64, boolean and string:
- numbers narrow as Java narrows them (an int32 300 to int8 is 44, a float 1e20 to int32 is 2147483647, a
  Decimal truncates), booleans are 1 / 0, strings parse as Java's `Integer.parseInt` etc. (out of range: error);
- to boolean: a number is true when its `longValue()` is not 0 (0.5 is false), a string when it is "true" in any
  case;
- to string: Java's `toString` (`Float.toString` digits for float32, `BigDecimal.toString` for a Decimal),
  bytes as base64, a Date, Time or Timestamp as Connect's `Values.dateFormatFor` text in UTC (`HH:mm:ss.SSS'Z'`
  before the second day of 1970, `yyyy-MM-dd` at a midnight, else `yyyy-MM-dd'T'HH:mm:ss.SSS'Z'`);
- to a number, a Date is its days since the epoch, a Time its milliseconds of the day, a Timestamp its epoch
  milliseconds, then narrowed.
Without a schema the Connect type is the value's (JSON integers int64, numbers float64); lists, maps and any
other value are a TransformError, as are bytes to anything but string.
"""

from __future__ import annotations

import base64
import datetime
import decimal
from typing import Any

from sink_engine.convert.schema import DATE, FLOAT_TYPES, INTEGER_TYPES, TIME, TIMESTAMP, Schema
from sink_engine.transform import java_values
from sink_engine.transform.errors import TransformError

INPUT_TYPES = INTEGER_TYPES + FLOAT_TYPES + ("boolean", "string", "bytes")
OUTPUT_TYPES = INTEGER_TYPES + FLOAT_TYPES + ("boolean", "string")
_UTC = datetime.UTC
_EPOCH = datetime.datetime(1970, 1, 1, tzinfo=_UTC)
_ONE_MS = datetime.timedelta(milliseconds=1)


def cast_value(schema: Schema | None, value: Any, target: str) -> Any:
    """`value` (of `schema`, or schemaless when None) cast to the Connect type `target`."""
    if value is None:
        return None
    source = schema.type if schema is not None else _schemaless_type(value)
    if source not in INPUT_TYPES:
        raise TransformError(
            f"cast does not support casting from {source}; supported types are {', '.join(INPUT_TYPES)}"
        )
    logical = schema.name if schema is not None and schema.name in (DATE, TIME, TIMESTAMP) else None
    if logical is not None:
        millis = _millis(logical, value)
        if target == "string":
            return java_values.date_text(millis)
        value = millis // java_values.MILLIS_PER_DAY if logical == DATE else millis
    try:
        return _cast(value, source, target)
    except ValueError:
        raise TransformError(f"value ({value}) was out of range for requested data type {target}") from None


def _cast(value: Any, source: str, target: str) -> Any:
    number = isinstance(value, (int, float, decimal.Decimal)) and not isinstance(value, bool)
    if target == "string":
        if isinstance(value, (bytes, bytearray, memoryview)):
            return base64.b64encode(bytes(value)).decode("ascii")
        return str(value) if isinstance(value, str) else java_values.to_string(value, source)
    if isinstance(value, bool):
        if target == "boolean":
            return value
        return float(value) if target in FLOAT_TYPES else int(value)
    if target == "boolean":
        if number:
            return java_values.narrow(value, "int64") != 0
        if isinstance(value, str):
            return value.lower() == "true"
    elif target in INTEGER_TYPES:
        if number:
            return java_values.narrow(value, target)
        if isinstance(value, str):
            return java_values.parse_integer(value, target)
    elif target in FLOAT_TYPES:
        if number:
            return java_values.float32(float(value)) if target == "float32" else float(value)
        if isinstance(value, str):
            return java_values.parse_float(value, target)
    raise TransformError(f"cast cannot cast a {source} value ({type(value).__name__}) to {target}")


def _schemaless_type(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    for python_type, type_ in (
        (int, "int64"),
        (float, "float64"),
        (str, "string"),
        ((bytes, bytearray, memoryview), "bytes"),
        (list, "array"),
        (dict, "map"),
    ):
        if isinstance(value, python_type):
            return type_
    raise TransformError(
        f"cast was passed a value of type {type(value).__name__}, which is not one of Connect's schemaless types"
    )


def _millis(logical: str, value: Any) -> int:
    """The java.util.Date milliseconds of a Date, Time or Timestamp value."""
    if logical == DATE:
        return (value - datetime.date(1970, 1, 1)).days * java_values.MILLIS_PER_DAY
    if logical == TIME:
        return ((value.hour * 60 + value.minute) * 60 + value.second) * 1000 + value.microsecond // 1000
    moment = value if value.tzinfo is not None else value.replace(tzinfo=_UTC)
    return (moment - _EPOCH) // _ONE_MS
