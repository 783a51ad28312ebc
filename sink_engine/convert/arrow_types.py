"""Connect schemas as Arrow types, for columnar formats (Parquet) built from struct values.

int8..int64 and float32/64 map to their Arrow widths, boolean to bool, string to utf8, bytes to binary,
struct to a struct (a top-level struct to the table schema), array to list, map to map. Logical types:
Decimal to decimal128(precision, scale) (precision from the `connect.decimal.precision` parameter, else 38;
decimal256 past 38 digits), Date to date32, Time to time32[ms], Timestamp to timestamp[ms, UTC]; this
engine's (schema.py): TIMESTAMP_MICROS to timestamp[us, UTC], TIME_MICROS to time64[us], LOCAL_TIMESTAMP_MILLIS
/ _MICROS to timestamp[ms] / timestamp[us] (no zone), ISO_TIMESTAMP to timestamp[us, UTC], ISO_DATE to date32.
Parquet stores them as its DECIMAL, DATE, TIME and TIMESTAMP logical types. Optional means nullable.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache

import pyarrow as pa

from sink_engine.convert.schema import (
    BARE,
    DATE,
    DECIMAL,
    ISO_DATE,
    ISO_TIMESTAMP,
    LOCAL_TIMESTAMP_MICROS,
    LOCAL_TIMESTAMP_MILLIS,
    TIME,
    TIME_MICROS,
    TIMESTAMP,
    TIMESTAMP_MICROS,
    Schema,
)
from sink_engine.records import ValueColumn

_PRIMITIVES = {
    "int8": pa.int8(),
    "int16": pa.int16(),
    "int32": pa.int32(),
    "int64": pa.int64(),
    "float32": pa.float32(),
    "float64": pa.float64(),
    "boolean": pa.bool_(),
    "string": pa.string(),
    "bytes": pa.binary(),
}
_LOGICAL = {
    DATE: pa.date32(),
    TIME: pa.time32("ms"),
    TIMESTAMP: pa.timestamp("ms", tz="UTC"),
    TIMESTAMP_MICROS: pa.timestamp("us", tz="UTC"),
    TIME_MICROS: pa.time64("us"),
    LOCAL_TIMESTAMP_MILLIS: pa.timestamp("ms"),
    LOCAL_TIMESTAMP_MICROS: pa.timestamp("us"),
    ISO_TIMESTAMP: pa.timestamp("us", tz="UTC"),
    ISO_DATE: pa.date32(),
}
_ISO = (ISO_TIMESTAMP, ISO_DATE)
DEFAULT_DECIMAL_PRECISION = 38


@lru_cache(maxsize=256)
def arrow_schema(schema: Schema) -> pa.Schema:
    """The table schema of a struct schema: one column per field; a BARE struct's (format/wrapped.py) says so in
    its metadata."""
    if schema.type != "struct":
        raise ValueError(f"only a struct schema is a table schema, not {schema.describe()}")
    metadata = {"connect.name": schema.name or "", "connect.version": str(schema.version or "")}
    if schema.parameter(BARE):
        metadata[BARE] = "true"
    return pa.schema([_field(f.name, f.schema) for f in schema.fields], metadata=metadata)


def arrow_type(schema: Schema) -> pa.DataType:
    logical = _logical(schema)
    if logical is not None:
        return logical
    if schema.type == "struct":
        return pa.struct([_field(f.name, f.schema) for f in schema.fields])
    if schema.type == "array":
        assert schema.items is not None
        return pa.list_(_field("element", schema.items))
    if schema.type == "map":
        assert schema.keys is not None and schema.values is not None
        return pa.map_(pa.field("key", arrow_type(schema.keys), nullable=False), _field("value", schema.values))
    return _PRIMITIVES[schema.type]


def _field(name: str, schema: Schema) -> pa.Field:
    return pa.field(name, arrow_type(schema), nullable=schema.optional)


def _logical(schema: Schema) -> pa.DataType | None:
    if schema.name == DECIMAL:
        precision = int(schema.parameter("connect.decimal.precision", str(DEFAULT_DECIMAL_PRECISION)))
        scale = int(schema.parameter("scale", "0"))
        return pa.decimal128(precision, scale) if precision <= 38 else pa.decimal256(precision, scale)
    return _LOGICAL.get(schema.name) if schema.name is not None else None


def struct_table(values: ValueColumn) -> pa.Table:
    """A "struct" ValueColumn of one schema (a file's column) as a table of that schema's columns."""
    rows = values.items
    to_arrow = _row_converter(values.schema)
    if to_arrow is not None:
        rows = [to_arrow(row) for row in rows]
    return pa.Table.from_pylist(rows, schema=arrow_schema(values.schema))


@lru_cache(maxsize=256)
def _row_converter(schema: Schema) -> Callable | None:
    """A function giving a struct value with its ISO texts replaced by their parsed values, or None when the
    schema has no ISO text field (the values go to Arrow as they are)."""
    return _converter(schema)


def _converter(schema: Schema) -> Callable | None:
    if schema.name in _ISO:
        return lambda value: None if value is None else value.value
    if schema.type == "struct":
        fields = [(f.name, _converter(f.schema)) for f in schema.fields]
        if all(convert is None for _, convert in fields):
            return None
        return lambda value: (
            None
            if value is None
            else {name: (convert(value.get(name)) if convert else value.get(name)) for name, convert in fields}
        )
    if schema.type == "array":
        assert schema.items is not None
        item = _converter(schema.items)
        return None if item is None else lambda value: None if value is None else [item(v) for v in value]
    if schema.type == "map":
        assert schema.keys is not None and schema.values is not None
        key, val = _converter(schema.keys), _converter(schema.values)
        if key is None and val is None:
            return None
        key, val = key or (lambda k: k), val or (lambda v: v)
        return lambda value: None if value is None else {key(k): val(v) for k, v in value.items()}
    return None
