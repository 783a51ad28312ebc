"""Connect schemas as Arrow types, for columnar formats (Parquet) built from struct values.

int8..int64 and float32/64 map to their Arrow widths, boolean to bool, string to utf8, bytes to binary,
struct to a struct (a top-level struct to the table schema), array to list, map to map. Logical types:
Decimal to decimal128(precision, scale) (precision from the `connect.decimal.precision` parameter, else 38),
Date to date32, Time to time32[ms], Timestamp to timestamp[ms, UTC]. Optional means nullable.
"""
from __future__ import annotations

from functools import lru_cache

import pyarrow as pa

from sink_engine.convert.schema import DATE, DECIMAL, TIME, TIMESTAMP, Schema

_PRIMITIVES = {
    "int8": pa.int8(), "int16": pa.int16(), "int32": pa.int32(), "int64": pa.int64(),
    "float32": pa.float32(), "float64": pa.float64(), "boolean": pa.bool_(), "string": pa.string(),
    "bytes": pa.binary(),
}
DEFAULT_DECIMAL_PRECISION = 38


@lru_cache(maxsize=256)
def arrow_schema(schema: Schema) -> pa.Schema:
    """The table schema of a struct schema: one column per field."""
    if schema.type != "struct":
        raise ValueError(f"only a struct schema is a table schema, not {schema.describe()}")
    metadata = {"connect.name": schema.name or "", "connect.version": str(schema.version or "")}
    return pa.schema([_field(f.name, f.schema) for f in schema.fields], metadata=metadata)


def arrow_type(schema: Schema) -> pa.DataType:
    logical = _logical(schema)
    if logical is not None:
        return logical
    if schema.type == "struct":
        return pa.struct([_field(f.name, f.schema) for f in schema.fields])
    if schema.type == "array":
        return pa.list_(_field("element", schema.items))
    if schema.type == "map":
        return pa.map_(pa.field("key", arrow_type(schema.keys), nullable=False), _field("value", schema.values))
    return _PRIMITIVES[schema.type]


def _field(name: str, schema: Schema) -> pa.Field:
    return pa.field(name, arrow_type(schema), nullable=schema.optional)


def _logical(schema: Schema) -> pa.DataType | None:
    if schema.name == DECIMAL:
        precision = int(schema.parameter("connect.decimal.precision", str(DEFAULT_DECIMAL_PRECISION)))
        return pa.decimal128(precision, int(schema.parameter("scale", "0")))
    return {DATE: pa.date32(), TIME: pa.time32("ms"), TIMESTAMP: pa.timestamp("ms", tz="UTC")}.get(schema.name)


def struct_table(values) -> pa.Table:
    """A "struct" ValueColumn of one schema (a file's column) as a table of that schema's columns."""
    return pa.Table.from_pylist(values.items, schema=arrow_schema(values.schema))
