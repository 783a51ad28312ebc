"""Columnar decoding of JSON Schema values: the payloads of one schema id read by pyarrow's JSON reader in one call.

The payloads are joined with newlines and read with an explicit schema derived from the Connect schema (every
field nullable, extra fields ignored), then checked and cast to the Arrow schema that `arrow_types` gives the
Connect schema, so that the table is the one the general path (orjson and `connect_json` per payload,
`Table.from_pylist`) builds from the same payloads.

Contract of `ArrowJsonReader.read`: that table, or None (the caller then takes the general path, which names a
bad payload by its offset). The reader refuses (ArrowInvalid, so None) a value of the wrong JSON type, an integer
out of its type's range or written with a fraction or exponent, and a key given twice. None besides when a payload
is not valid JSON to orjson (pyarrow's parser also takes NaN, Infinity, invalid UTF-8 and nesting past orjson's
1024 levels), does not start with `{` or holds a line break (one line per payload, so one row per payload), when
a required field without a default is missing or null, a Timestamp or Date is out of Python's datetime range, or
a number column holds a negative zero while the text has an integer `-0` (the general path reads 0.0), or the
run's text passes the reader's 2 GiB block.

Covered schemas (`arrow_reader` answers None for others): a top-level struct of int8..int64, float32, float64,
boolean, string, Connect Timestamp and Date (integers, as JsonSchemaData writes them), nested structs and arrays
of these, optional or not; a default on a top-level field of a primitive type. Not covered: bytes (base64 text),
Decimal (base64 text or a number), Time, ISO date-time / date strings (parsed by Python's `fromisoformat`), maps,
oneOf structs, defaults on nested fields and on objects and arrays, structs without fields.
"""

from __future__ import annotations

import re
from collections import deque

import numpy as np
import orjson
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.json as pa_json

from sink_engine.convert.arrow_cast import cast_to
from sink_engine.convert.arrow_types import arrow_schema, arrow_type
from sink_engine.convert.connect_json import ONE_OF
from sink_engine.convert.schema import DATE, TIMESTAMP, Schema

_READ_AS = {TIMESTAMP: pa.int64(), DATE: pa.int32()}  # read as integers, range-checked, then cast
# the values Python's datetime holds: epoch milliseconds of years 1..9999, days likewise
_RANGES = {TIMESTAMP: (-62_135_596_800_000, 253_402_300_799_999), DATE: (-719_162, 2_932_896)}
_PLAIN = ("int8", "int16", "int32", "int64", "float64", "boolean", "string")
_INTEGER_ZERO = re.compile(rb"-0(?![.eE0-9])")
_MAX_BLOCK = 2**31 - 1


class ArrowJsonReader:
    """Reads payloads of one Connect schema into its Arrow table (module docstring)."""

    def __init__(self, schema: Schema):
        self._fields = schema.fields
        self._read_schema = pa.schema([pa.field(f.name, _read_type(f.schema, top=True)) for f in schema.fields])
        self._parse_options = pa_json.ParseOptions(
            explicit_schema=self._read_schema, unexpected_field_behavior="ignore"
        )
        self._target = arrow_schema(schema)

    def read(self, payloads: list) -> pa.Table | None:
        body = b"\n".join(payloads)
        if (
            not all(payload[:1] == b"{" for payload in payloads)
            or body.count(b"\n") != len(payloads) - 1
            or b"\r" in body
            or len(body) >= _MAX_BLOCK
        ):
            return None
        try:
            deque(map(orjson.loads, payloads), maxlen=0)  # parsed and dropped at C speed
            table = pa_json.read_json(
                pa.BufferReader(body), read_options=_options(len(body)), parse_options=self._parse_options
            )
        except (orjson.JSONDecodeError, pa.ArrowInvalid):
            return None
        columns = []
        for field, column in zip(self._fields, table.columns):
            array = _filled(column.combine_chunks(), field.schema)
            if not _holds(array, field.schema, None, body):
                return None
            columns.append(array)
        return cast_to(pa.Table.from_arrays(columns, schema=self._read_schema), self._target)


def arrow_reader(schema: Schema) -> ArrowJsonReader | None:
    """The columnar reader of a Connect schema mapped from JSON Schema, or None when it is not covered."""
    if schema.type != "struct" or schema.name == ONE_OF or not schema.fields:
        return None
    if any(_read_type(field.schema, top=True) is None for field in schema.fields):
        return None
    return ArrowJsonReader(schema)


def _read_type(schema: Schema, top: bool = False) -> pa.DataType | None:
    """The Arrow type pyarrow's reader reads a value of `schema` as (every field nullable), None if not covered.
    `top`: a field of the top-level struct, where a primitive type's default is covered."""
    if schema.default is not None and (not top or schema.type in ("struct", "array")):
        return None
    if schema.name in _READ_AS:
        return _READ_AS[schema.name]
    if schema.type == "struct":
        if schema.name == ONE_OF or not schema.fields:
            return None
        fields = [(f.name, _read_type(f.schema)) for f in schema.fields]
        return None if any(t is None for _, t in fields) else pa.struct(fields)
    if schema.type == "array":
        assert schema.items is not None
        item = _read_type(schema.items)
        return None if item is None else pa.list_(item)
    if schema.name is not None:
        return None
    if schema.type == "float32":
        return pa.float64()  # then cast, as from_pylist narrows the Python float
    return arrow_type(schema) if schema.type in _PLAIN else None


def _filled(array: pa.Array, schema: Schema) -> pa.Array:
    """A top-level column with its field's default where the value is missing or null, as the decoder fills it."""
    default = schema.default_value()
    if default is None or not array.null_count:
        return array
    return pc.fill_null(array, pa.scalar(default, arrow_type(schema)).cast(array.type))


def _holds(array: pa.Array, schema: Schema, valid: pa.Array | None, body: bytes) -> bool:
    """Whether the general path reads these values as they are: no null in a required field where its parent is
    present (`valid`, None: everywhere), Timestamps and Dates in range, no negative zero read from `-0`."""
    if not schema.optional and array.null_count:
        nulls = pc.is_null(array) if valid is None else pc.and_(pc.is_null(array), valid)
        if pc.any(nulls).as_py():
            return False
    if schema.type == "struct":
        inner = pc.is_valid(array) if valid is None else pc.and_(valid, pc.is_valid(array))
        inner = None if array.null_count == 0 and valid is None else inner
        return all(_holds(array.field(i), f.schema, inner, body) for i, f in enumerate(schema.fields))
    if schema.type == "array":
        assert schema.items is not None
        return _holds(array.flatten(), schema.items, None, body)
    if schema.name in _RANGES:
        low, high = _RANGES[schema.name]
        bounds = pc.min_max(array).as_py()
        return bounds["min"] is None or (low <= bounds["min"] and bounds["max"] <= high)
    if schema.type in ("float32", "float64"):
        values = array.to_numpy(zero_copy_only=False)
        return not (np.signbit(values) & (values == 0)).any() or _INTEGER_ZERO.search(body) is None
    return True


def _options(size: int) -> pa_json.ReadOptions:
    """One block, one thread: rows in payload order."""
    return pa_json.ReadOptions(use_threads=False, block_size=max(size + 1, 1 << 20))
