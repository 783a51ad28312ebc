"""Avro schemas as Connect schemas (as Confluent's AvroData maps them), and decoding with fastavro.

boolean, int (int32), long (int64), float (float32), double (float64), bytes, string map to themselves;
fixed to bytes, enum to string, record to struct (named by its full name), array and map (string keys) to
array and map, a union of null and one type to that type made optional. Logical types: decimal to Decimal
(`scale`, `connect.decimal.precision`), date to Date, time-millis to Time, timestamp-millis to Timestamp;
other logical types (uuid, time-micros, timestamp-micros, ...) are read as their base type, as AvroData does.
Other unions are not supported (a clear error).
"""
from __future__ import annotations

import io
from typing import Any

import fastavro
import orjson

from sink_engine.convert.schema import DATE, DECIMAL, TIME, TIMESTAMP, Field, Schema

_PRIMITIVES = {"boolean": "boolean", "int": "int32", "long": "int64", "float": "float32", "double": "float64",
               "bytes": "bytes", "string": "string", "fixed": "bytes", "enum": "string"}
_LOGICAL = {"date": DATE, "time-millis": TIME, "timestamp-millis": TIMESTAMP, "decimal": DECIMAL}


class AvroDecoder:
    """Decodes Avro binary written with one writer schema into the values of its Connect schema."""

    def __init__(self, avro_schema: Any, version: int | None):
        """`avro_schema` is the parsed JSON of an Avro schema (or its text); `version` its registry version."""
        document = orjson.loads(avro_schema) if isinstance(avro_schema, str) else avro_schema
        self.schema = connect_schema(fastavro.schema.expand_schema(document), version)
        self._reader = fastavro.parse_schema(_base_types(document))

    def decode(self, payload: bytes) -> Any:
        """The value of one Avro binary datum; ValueError when it does not match the schema."""
        try:
            return fastavro.schemaless_reader(io.BytesIO(payload), self._reader, None)
        except (EOFError, IndexError, ValueError, TypeError, UnicodeDecodeError) as e:
            raise ValueError(f"Avro payload does not match the writer schema: {e!r}") from None


def connect_schema(avro: Any, version: int | None = None, optional: bool = False) -> Schema:
    """The Connect schema of a parsed Avro schema (the top level gets `version`)."""
    if isinstance(avro, list):
        branches = [b for b in avro if b != "null"]
        if len(branches) != 1:
            raise ValueError(f"Avro union {avro!r:.120} is not supported (only a union of null and one type)")
        return connect_schema(branches[0], version, optional=len(branches) != len(avro))
    if isinstance(avro, str):
        avro = {"type": avro}
    kind, logical = avro["type"], avro.get("logicalType")
    if isinstance(kind, (dict, list)):
        return connect_schema(kind, version, optional)
    if kind == "record":
        fields = tuple(Field(f["name"], _field_schema(f)) for f in avro["fields"])
        return Schema("struct", optional, None, avro.get("name"), version, fields=fields)
    if kind == "array":
        return Schema("array", optional, version=version, items=connect_schema(avro["items"]))
    if kind == "map":
        return Schema("map", optional, version=version, keys=Schema("string"), values=connect_schema(avro["values"]))
    name = _LOGICAL.get(logical)
    parameters = ()
    if name == DECIMAL:
        parameters = (("connect.decimal.precision", str(avro.get("precision", 38))), ("scale", str(avro.get("scale", 0))))
    return Schema(_PRIMITIVES[kind], optional, None, name, version, parameters)


def _field_schema(field: dict) -> Schema:
    schema = connect_schema(field["type"])
    default = field.get("default")
    if default is None:
        return schema
    if schema.type == "bytes" and isinstance(default, str):
        default = default.encode("latin-1")  # Avro writes bytes defaults as ISO-8859-1 text
    return Schema(**{**schema.__dict__, "default": default})


def _base_types(avro: Any) -> Any:
    """The schema fastavro reads with: logical types that map to their base type lose their annotation."""
    if isinstance(avro, list):
        return [_base_types(b) for b in avro]
    if not isinstance(avro, dict):
        return avro
    copy = {k: _base_types(v) if k in ("type", "items", "values") else v for k, v in avro.items()}
    if "fields" in avro:
        copy["fields"] = [{**f, "type": _base_types(f["type"])} for f in avro["fields"]]
    if copy.get("logicalType") is not None and copy["logicalType"] not in _LOGICAL:
        del copy["logicalType"]
    return copy
