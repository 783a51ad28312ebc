"""MaskField (`$Key` / `$Value`): replaces the named top-level fields (`fields`) with the empty value of their
type, or with `replacement` read as their type.

Empty values: numbers 0, booleans false, strings "", Decimal 0 (at the field's scale), Date/Time/Timestamp the
epoch, arrays [] and maps {}; bytes and structs cannot be masked (a TransformError, as in Kafka). `replacement`
(non-empty) applies to numbers (read as Java's `new BigDecimal(text)`, then narrowed as Java narrows it: `300` in
an int8 is 44), Decimals and strings; any other type, or a text that is not a number for a number, is a
TransformError. A null field stays null; `replace.null.with.default` (default true) first reads a null as its
default. Without a schema, the type is the value's (JSON integers are int64, JSON numbers float64), and a named
field the map lacks is set to null, as in Kafka.

As in Kafka there is no tombstone pass-through: a null operand is a TransformError (a map or struct is required).
This engine's additions: a Decimal mask or replacement takes the field's scale (Kafka's `BigDecimal.ZERO` at
another scale fails in the converters after it), and an ISO-8601 string (`ISO_TIMESTAMP` / `ISO_DATE`) masks to
"" read as the epoch by columnar formats, its replacement parsed as ISO-8601.
"""

from __future__ import annotations

import datetime
import decimal
from typing import Any

from sink_engine.convert.iso_values import IsoText, parse_date, parse_date_time
from sink_engine.convert.schema import (
    DATE,
    DECIMAL,
    FLOAT_TYPES,
    INTEGER_TYPES,
    ISO_DATE,
    ISO_TIMESTAMP,
    TIME,
    TIMESTAMP,
    Schema,
)
from sink_engine.errors import ConfigError
from sink_engine.transform import java_values
from sink_engine.transform.errors import TransformError
from sink_engine.transform.options import TransformOptions
from sink_engine.transform.record import TransformRecord
from sink_engine.transform.schemas import field_value
from sink_engine.transform.values import operand, require_map, require_struct, with_operand

PURPOSE = "mask fields"
_UTC = datetime.UTC
_EPOCHS = {
    DATE: datetime.date(1970, 1, 1),
    TIME: datetime.time(0),
    TIMESTAMP: datetime.datetime(1970, 1, 1, tzinfo=_UTC),
}
_ISO = {
    ISO_TIMESTAMP: (parse_date_time, datetime.datetime(1970, 1, 1, tzinfo=_UTC)),
    ISO_DATE: (parse_date, datetime.date(1970, 1, 1)),
}


class MaskField:
    def __init__(
        self, role: str, fields: frozenset[str], replacement: str | None = None, replace_null_with_default: bool = True
    ):
        self.role, self.fields, self.replacement = role, fields, replacement
        self.replace_null_with_default = replace_null_with_default

    @classmethod
    def from_options(cls, options: TransformOptions) -> MaskField:
        fields = options.strings("fields")
        if not fields:
            raise ConfigError(options.key("fields"), "is required: one field at least")
        raw = options.values.get("replacement")
        replacement = None if raw is None else str(raw).strip()
        if replacement == "":
            raise ConfigError(options.key("replacement"), "must be non-empty when set")
        return cls(
            options.role or "value", frozenset(fields), replacement, options.boolean("replace.null.with.default", True)
        )

    def apply(self, record: TransformRecord) -> TransformRecord:
        value, schema = operand(record, self.role)
        if schema is None:
            updated = dict(require_map(value, PURPOSE))
            for name in sorted(self.fields):
                updated[name] = self._masked(updated.get(name), None)
            return with_operand(record, self.role, updated, None)
        require_struct(value, schema, PURPOSE)
        updated = {}
        for field in schema.fields:
            original = field_value(value, field, self.replace_null_with_default)
            updated[field.name] = self._masked(original, field.schema) if field.name in self.fields else original
        return with_operand(record, self.role, updated, schema)

    def _masked(self, value: Any, schema: Schema | None) -> Any:
        if value is None:
            return None
        kind = _kind(value, schema)
        if self.replacement is None:
            return _empty(kind, schema)
        try:
            return _replacement(kind, schema, self.replacement)
        except (ValueError, decimal.InvalidOperation):
            raise TransformError(f"cannot convert the replacement {self.replacement!r} to {kind}") from None


def _kind(value: Any, schema: Schema | None) -> str:
    """The value's type for masking: a logical name or Connect type with a schema, the Python type's without."""
    if schema is not None:
        return schema.name if schema.name in (DECIMAL, *_EPOCHS, *_ISO) else schema.type
    if isinstance(value, bool):
        return "boolean"
    for python_type, kind in (
        (int, "int64"),
        (float, "float64"),
        (str, "string"),
        (decimal.Decimal, DECIMAL),
        (datetime.datetime, TIMESTAMP),
        (datetime.date, DATE),
        (datetime.time, TIME),
        (list, "array"),
        (dict, "map"),
    ):
        if isinstance(value, python_type):
            return kind
    return type(value).__name__


def _empty(kind: str, schema: Schema | None) -> Any:
    if kind in INTEGER_TYPES:
        return 0
    if kind in FLOAT_TYPES:
        return 0.0
    simple = {"boolean": False, "string": "", "array": [], "map": {}}
    if kind in simple:
        return simple[kind]
    if kind in _EPOCHS:
        return _EPOCHS[kind]
    if kind == DECIMAL:
        return _at_scale(decimal.Decimal(0), schema)
    if kind in _ISO:
        masked = IsoText("")
        masked.value = _ISO[kind][1]
        return masked
    raise TransformError(f"cannot mask a value of type {kind}")


def _replacement(kind: str, schema: Schema | None, text: str) -> Any:
    if kind in INTEGER_TYPES:
        return java_values.narrow(java_values.big_decimal(text), kind)
    if kind in FLOAT_TYPES:
        number = float(java_values.big_decimal(text))
        return java_values.float32(number) if kind == "float32" else number
    if kind == "string":
        return text
    if kind == DECIMAL:
        return _at_scale(java_values.big_decimal(text), schema)
    if kind in _ISO:
        return _ISO[kind][0](text)
    raise TransformError(f"cannot mask a value of type {kind} with a custom replacement")


def _at_scale(number: decimal.Decimal, schema: Schema | None) -> decimal.Decimal:
    """The number at the Decimal schema's scale; a TransformError when that would round it."""
    if schema is None:
        return number
    scale = int(schema.parameter("scale", "0"))
    scaled = number.quantize(decimal.Decimal(1).scaleb(-scale), context=decimal.Context(prec=1000))
    if scaled != number:
        raise TransformError(f"the replacement {number} does not fit the Decimal scale {scale}")
    return scaled
