"""Columnar decoding of Avro datums: the datums of one writer schema read by polars' Rust Avro reader in one call.

The datums are framed as the one block of an Avro object container (header with the writer schema, a fixed
sync marker, count, size, the datums back to back) and read into Arrow, then cast to the Arrow schema that
`arrow_types` gives the schema's Connect schema, so that the table is the one the general path (fastavro per
datum, `Table.from_pylist`) builds from the same datums.

Contract of `ArrowAvroReader.read`: a table equal to the general path's, or None (the caller then takes the
general path, which names a bad datum by its offset). None when polars is not installed, when the reader
rejects the block, or when a datum is not exactly one canonically encoded value (`avro_sizes`: the block
has no datum boundaries, so each datum's length is checked against the length of what was read for it), or
when a boolean byte is not 0 or 1, a union index is not the branch read, or an int or long overflows its 32 or 64
bits (polars reads any other boolean byte as false, any non-zero index as the second branch and wraps an overflow,
where fastavro reads true, fails or wraps around the branches, and keeps the big integer).

Covered schemas (`arrow_reader` answers None for others): a top-level record without schema references, of
boolean, int, long, float, double, string, bytes, nested records, arrays, unions of null and one of these (not
booleans, ints, longs or unions inside an array: their bytes could not be checked), and
enums as fields of the top-level record (polars 2.1 panics on an enum in a union, an array or a nested record);
logical types timestamp-millis, timestamp-micros, date, local-timestamp-millis and local-timestamp-micros.
Maps, fixed, decimal, time, unions of several types, schema references and a named type used again by its
name take the general path (polars' reader lacks maps, general unions and named-type references; the others
are not checked byte for byte here).
"""

from __future__ import annotations

import io
from types import ModuleType
from typing import Any

import numpy as np
import orjson
import pyarrow as pa

from sink_engine.convert.arrow_cast import cast_to
from sink_engine.convert.arrow_types import arrow_schema
from sink_engine.convert.avro_sizes import datum_sizes, markers_hold
from sink_engine.convert.native import import_optional, or_none
from sink_engine.convert.schema import Schema

_UNLOADED = object()
polars: Any = _UNLOADED  # the module once an Avro schema asks for it (its import takes ~0.3 s); None if not installed

_SYNC = bytes(16)
_PLAIN = {"boolean", "int", "long", "float", "double", "string", "bytes"}
_MARKED = {"boolean", "int", "long"}  # types whose bytes markers_hold checks (so not taken inside arrays)
_LOGICAL = {
    "timestamp-millis": "long",
    "timestamp-micros": "long",
    "local-timestamp-millis": "long",
    "local-timestamp-micros": "long",
    "date": "int",
}


class ArrowAvroReader:
    """Reads datums of one writer schema into the Arrow table of its Connect schema (module docstring)."""

    def __init__(self, document: dict, connect_schema: Schema) -> None:
        self._document = document
        self._header = _header(orjson.dumps(document))
        self._target = arrow_schema(connect_schema)
        self._markers = _has_markers(document)  # booleans or unions: their bytes are checked (markers_hold)

    def read(self, payloads: list) -> pa.Table | None:
        body = b"".join(payloads)
        block = b"".join((self._header, _long(len(payloads)), _long(len(body)), body, _SYNC))
        read = or_none(lambda: polars.read_avro(io.BytesIO(block)).to_arrow())
        if read is None or read.num_rows != len(payloads):
            return None
        lengths = np.fromiter(map(len, payloads), dtype=np.int64, count=len(payloads))
        if not np.array_equal(datum_sizes(read, self._document), lengths):
            return None
        if self._markers and not markers_hold(read, self._document, lengths, body):
            return None
        return cast_to(read, self._target)


def arrow_reader(document: Any, connect_schema: Schema, references: list | None) -> ArrowAvroReader | None:
    """The columnar reader of a writer schema, or None when polars is missing or the schema is not covered."""
    if references or not isinstance(document, dict) or document.get("type") != "record":
        return None
    if not _covered(document, top=True) or _load_polars() is None:
        return None
    return ArrowAvroReader(document, connect_schema)


def _load_polars() -> ModuleType | None:
    """polars, imported on first use; None without it (every batch then takes the general path)."""
    global polars
    if polars is _UNLOADED:
        polars = import_optional("polars")
    return polars


def _covered(avro: Any, top: bool = False, nested: bool = False, in_array: bool = False) -> bool:
    """Whether polars reads `avro` as the general path does. `nested`: below a top-level field (polars 2.1 panics
    on an enum there); `in_array`: inside an array, where booleans, ints, longs and union indexes, which the
    reader takes more leniently than fastavro, could not be checked byte by byte (avro_sizes.markers_hold)."""
    if isinstance(avro, str):
        return avro in _PLAIN and not (in_array and avro in _MARKED)
    if isinstance(avro, list):
        branches = [b for b in avro if b != "null"]
        return len(avro) == 2 and len(branches) == 1 and not top and not in_array and _covered(branches[0], nested=True)
    kind, logical = avro.get("type"), avro.get("logicalType")
    if isinstance(kind, (dict, list)):
        return logical is None and _covered(kind, nested=nested, in_array=in_array)
    if logical is not None:
        return _LOGICAL.get(logical) == kind and not in_array
    if kind == "record":
        return all(_covered(f["type"], nested=not top, in_array=in_array) for f in avro["fields"])
    if kind == "enum":
        return not nested
    if kind == "array":
        return _covered(avro["items"], nested=True, in_array=True)
    return _covered(kind, in_array=in_array)


def _has_markers(avro: Any) -> bool:
    if isinstance(avro, list):
        return True
    if isinstance(avro, str):
        return avro in _MARKED
    children = [avro.get("type"), avro.get("items")] + [field["type"] for field in avro.get("fields", ())]
    return any(_has_markers(child) for child in children if child is not None)


def _header(schema_json: bytes) -> bytes:
    key = b"avro.schema"
    return b"".join((b"Obj\x01", _long(1), _long(len(key)), key, _long(len(schema_json)), schema_json, _long(0), _SYNC))


def _long(n: int) -> bytes:
    """Avro's zig-zag varint of a long."""
    n = (n << 1) ^ (n >> 63)
    out = bytearray()
    while n > 0x7F:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)
