"""A Kafka Connect style schema: the one model that JSON envelopes and Avro schemas are mapped to.

Types follow Connect (`int8`..`int64`, `float32`, `float64`, `boolean`, `string`, `bytes`, `struct`,
`array`, `map`); logical types are named as in Connect (`DECIMAL`, `DATE`, `TIME`, `TIMESTAMP` below) on
their base type. Values of a schema are plain Python: dicts for structs, lists, dicts for maps, bytes,
`decimal.Decimal`, `datetime.date`, `datetime.time` and timezone-aware `datetime.datetime` (UTC).

Connect has no names for the logical types below; this engine adds them so that columnar formats type the
columns while JSON output stays what Kafka Connect writes (the base value):
- on int64, values kept as the integer: `TIMESTAMP_MICROS` (epoch microseconds, Avro timestamp-micros),
  `TIME_MICROS` (microseconds of the day), `LOCAL_TIMESTAMP_MILLIS` / `_MICROS` (wall time, no zone);
- on string, values `iso_values.IsoText` (the text, with the parsed value beside it): `ISO_TIMESTAMP`
  (JSON Schema `format: date-time`) and `ISO_DATE` (`format: date`).
`Schema` is frozen and hashable: equal schemas are the same schema for rotation (NONE compatibility).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, overload

DECIMAL = "org.apache.kafka.connect.data.Decimal"
DATE = "org.apache.kafka.connect.data.Date"
TIME = "org.apache.kafka.connect.data.Time"
TIMESTAMP = "org.apache.kafka.connect.data.Timestamp"
TIMESTAMP_MICROS = "sink_engine.data.TimestampMicros"
TIME_MICROS = "sink_engine.data.TimeMicros"
LOCAL_TIMESTAMP_MILLIS = "sink_engine.data.LocalTimestampMillis"
LOCAL_TIMESTAMP_MICROS = "sink_engine.data.LocalTimestampMicros"
ISO_TIMESTAMP = "sink_engine.data.IsoTimestamp"
ISO_DATE = "sink_engine.data.IsoDate"
BARE = "sink_engine.avro.bare"  # a one-field struct's parameter: AvroFormat writes the field alone (format/wrapped.py)

INTEGER_TYPES = ("int8", "int16", "int32", "int64")
FLOAT_TYPES = ("float32", "float64")
PRIMITIVE_TYPES = INTEGER_TYPES + FLOAT_TYPES + ("boolean", "string", "bytes")
TYPES = PRIMITIVE_TYPES + ("struct", "array", "map")
# Connect's SchemaProjector promotions: a value of a type may be read as any type to its right.
NUMERIC_ORDER = INTEGER_TYPES + FLOAT_TYPES

NO_DEFAULT = None  # Connect has no separate "no default": a null default is no default


@dataclass(frozen=True)
class Field:
    name: str
    schema: Schema


@dataclass(frozen=True)
class Schema:
    type: str
    optional: bool = False
    default: Any = field(default=NO_DEFAULT, compare=True)
    name: str | None = None
    version: int | None = None
    parameters: tuple[tuple[str, str], ...] = ()
    fields: tuple[Field, ...] = ()  # struct
    items: Schema | None = None  # array
    keys: Schema | None = None  # map
    values: Schema | None = None  # map

    def __post_init__(self) -> None:
        if self.type not in TYPES:
            raise ValueError(f"unknown schema type {self.type!r}; expected one of {', '.join(TYPES)}")
        if isinstance(self.default, (dict, list)):  # keep the schema hashable
            object.__setattr__(self, "default", _Frozen(self.default))

    def field(self, name: str) -> Field | None:
        for candidate in self.fields:
            if candidate.name == name:
                return candidate
        return None

    @overload
    def parameter(self, name: str) -> str | None: ...

    @overload
    def parameter(self, name: str, fallback: str) -> str: ...

    def parameter(self, name: str, fallback: str | None = None) -> str | None:
        return dict(self.parameters).get(name, fallback)

    def default_value(self) -> Any:
        return self.default.value if isinstance(self.default, _Frozen) else self.default

    def describe(self) -> str:
        """Short text for error messages: name and version, or the type."""
        label = self.name or self.type
        return f"{label} v{self.version}" if self.version is not None else label


class _Frozen:
    """A hashable holder for a dict or list default (compared by value)."""

    def __init__(self, value: dict | list) -> None:
        self.value = value

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Frozen) and self.value == other.value

    def __hash__(self) -> int:
        return hash(repr(self.value))

    def __repr__(self) -> str:
        return repr(self.value)
