"""Avro schemas as Connect schemas (as Confluent's AvroData maps them), and decoding with fastavro.

boolean, int (int32), long (int64), float (float32), double (float64), bytes, string map to themselves;
fixed to bytes, enum to string, record to struct (named by its full name), array and map (string keys) to
array and map, a union of null and one type to that type made optional. Logical types: decimal to Decimal
(`scale`, `connect.decimal.precision`), date to Date, time-millis to Time, timestamp-millis to Timestamp;
timestamp-micros, time-micros, local-timestamp-millis and local-timestamp-micros keep their integer values
(as AvroData reads them) under this engine's names (schema.py), so that columnar formats type them; other
logical types (uuid, ...) are read as their base type.

Any other union becomes, as in AvroData, a struct named `io.confluent.connect.avro.Union` (optional when the
union holds null) with one optional field per branch, named after the branch: its type name (`string`,
`int`, `long`, `array`, ...) or, for a record, enum or fixed, its name without namespace. A value sets the
field of its branch. Named branches are told apart by name; other branches by the decoded Python value,
first match in union order (as AvroData matches Java classes): a union of `int` and `long`, or of `float`
and `double`, puts every number in the first of the two.
"""

from __future__ import annotations

import io
from typing import Any

import fastavro
import orjson

from sink_engine.convert.avro_arrow import arrow_reader
from sink_engine.convert.schema import (
    DATE,
    DECIMAL,
    LOCAL_TIMESTAMP_MICROS,
    LOCAL_TIMESTAMP_MILLIS,
    TIME,
    TIME_MICROS,
    TIMESTAMP,
    TIMESTAMP_MICROS,
    Field,
    Schema,
)

UNION = "io.confluent.connect.avro.Union"

_PRIMITIVES = {
    "boolean": "boolean",
    "int": "int32",
    "long": "int64",
    "float": "float32",
    "double": "float64",
    "bytes": "bytes",
    "string": "string",
    "fixed": "bytes",
    "enum": "string",
}
_LOGICAL = {"date": DATE, "time-millis": TIME, "timestamp-millis": TIMESTAMP, "decimal": DECIMAL}  # decoded
_INTEGER_LOGICAL = {
    "timestamp-micros": TIMESTAMP_MICROS,
    "time-micros": TIME_MICROS,  # values stay integers
    "local-timestamp-millis": LOCAL_TIMESTAMP_MILLIS,
    "local-timestamp-micros": LOCAL_TIMESTAMP_MICROS,
}


class AvroDecoder:
    """Decodes Avro binary written with one writer schema into the values of its Connect schema; `arrow` reads
    many datums at once into Arrow when the schema allows (avro_arrow.py), else it is None."""

    def __init__(self, avro_schema: Any, version: int | None, references: list | None = None):
        """`avro_schema` is the parsed JSON of an Avro schema (or its text); `version` its registry version;
        `references` the parsed schemas whose named types it uses (schema references), each one after the
        schemas it refers to itself."""
        document = orjson.loads(avro_schema) if isinstance(avro_schema, str) else avro_schema
        named: dict[str, Any] = {}
        reading: dict[str, Any] = {}
        for reference in references or []:
            fastavro.parse_schema(reference, named, _write_hint=False)
            fastavro.parse_schema(_base_types(reference), reading)
        expanded = fastavro.parse_schema(document, dict(named), expand=True, _write_hint=False)
        self.schema = connect_schema(_inline(expanded, named), version)
        self._reader = fastavro.parse_schema(_base_types(document), reading)
        self._unions = _has_union(self.schema)  # values then need reshaping (named branches come as tuples)
        self.arrow = arrow_reader(document, self.schema, references)  # None: no columnar reading (avro_arrow)

    def decode(self, payload: bytes) -> Any:
        """The value of one Avro binary datum; ValueError when it does not match the schema."""
        try:
            value = fastavro.schemaless_reader(io.BytesIO(payload), self._reader, None, return_named_type=self._unions)
        except (EOFError, IndexError, ValueError, TypeError, UnicodeDecodeError) as e:
            raise ValueError(f"Avro payload does not match the writer schema: {e!r}") from None
        return _with_unions(self.schema, value) if self._unions else value


def connect_schema(avro: Any, version: int | None = None, optional: bool = False) -> Schema:
    """The Connect schema of a parsed Avro schema (the top level gets `version`)."""
    if isinstance(avro, list):
        branches = [b for b in avro if b != "null"]
        if len(branches) == 1:
            return connect_schema(branches[0], version, optional=len(branches) != len(avro))
        return _union_schema(branches, optional=len(branches) != len(avro), version=version)
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
    name = _LOGICAL.get(logical) or (_INTEGER_LOGICAL.get(logical) if kind == "long" else None)
    parameters: tuple[tuple[str, str], ...] = ()
    if name == DECIMAL:
        parameters = (
            ("connect.decimal.precision", str(avro.get("precision", 38))),
            ("scale", str(avro.get("scale", 0))),
        )
    return Schema(_PRIMITIVES[kind], optional, None, name, version, parameters)


def _field_schema(field: dict) -> Schema:
    schema = connect_schema(field["type"])
    default = field.get("default")
    if default is None:
        return schema
    if schema.type == "bytes" and isinstance(default, str):
        default = default.encode("latin-1")  # Avro writes bytes defaults as ISO-8859-1 text
    return Schema(**{**schema.__dict__, "default": default})


def _inline(avro: Any, named: dict) -> Any:
    """The schema with every use of a referenced named type replaced by its definition (at any depth)."""
    if isinstance(avro, str):
        return _inline(named[avro], named) if avro in named else avro
    if isinstance(avro, list):
        return [_inline(branch, named) for branch in avro]
    copy = {k: _inline(v, named) if k in ("type", "items", "values") else v for k, v in avro.items()}
    if "fields" in avro:
        copy["fields"] = [{**f, "type": _inline(f["type"], named)} for f in avro["fields"]]
    return copy


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


_UNION_BRANCH_TYPES = {
    "boolean": bool,
    "string": str,
    "bytes": bytes,
    "int32": int,
    "int64": int,
    "float32": float,
    "float64": float,
    "array": list,
    "map": dict,
}


def _union_schema(branches: list, optional: bool, version: int | None) -> Schema:
    fields, names = [], set()
    for branch in branches:
        name = _branch_name(branch)
        if name in names:
            raise ValueError(f"Avro union {branches!r:.120}: two branches map to the Connect union field {name!r}")
        names.add(name)
        fields.append(Field(name, connect_schema(branch, optional=True)))
    return Schema("struct", optional, None, UNION, version, fields=tuple(fields))


def _branch_name(branch: Any) -> str:
    if isinstance(branch, dict) and branch.get("type") in ("record", "enum", "fixed"):
        return branch["name"].rsplit(".", 1)[-1]
    kind = branch if isinstance(branch, str) else branch["type"]
    return kind if isinstance(kind, str) else _branch_name(kind)


def _has_union(schema: Schema) -> bool:
    if schema.name == UNION:
        return True
    nested = [f.schema for f in schema.fields] + [s for s in (schema.items, schema.values) if s is not None]
    return any(_has_union(child) for child in nested)


def _with_unions(schema: Schema, value: Any) -> Any:
    """A value read with named-type tuples, shaped to its Connect schema (union structs set one field)."""
    if value is None:
        return None
    if schema.name == UNION:
        return _union_value(schema, value)
    if isinstance(value, tuple):  # a named type in a union of null and that type
        value = value[1]
    if schema.type == "struct":
        return {f.name: _with_unions(f.schema, value.get(f.name)) for f in schema.fields}
    if schema.type == "array":
        assert schema.items is not None
        return [_with_unions(schema.items, item) for item in value]
    if schema.type == "map":
        assert schema.values is not None
        return {key: _with_unions(schema.values, item) for key, item in value.items()}
    return value


def _union_value(schema: Schema, value: Any) -> dict:
    if isinstance(value, tuple):
        chosen, value = value[0].rsplit(".", 1)[-1], value[1]
    else:
        chosen = next((f.name for f in schema.fields if _branch_holds(f.schema, value)), None)
        if chosen is None:
            raise ValueError(f"no branch of the Avro union holds the value {value!r:.80}")
    return {f.name: _with_unions(f.schema, value) if f.name == chosen else None for f in schema.fields}


def _branch_holds(schema: Schema, value: Any) -> bool:
    if schema.name in _LOGICAL.values():
        return not isinstance(value, (bool, int, float, str, bytes, list, dict))  # Decimal, date, time, datetime
    expected = _UNION_BRANCH_TYPES.get(schema.type)
    return expected is not None and isinstance(value, expected) and not (expected is int and isinstance(value, bool))
