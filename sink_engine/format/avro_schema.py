"""Avro schemas for Arrow tables, and the field-name rules that make any JSON key a valid Avro name.

- A nullable Arrow field becomes the union `["null", T]` with default null; a non-nullable one is `T`.
- bool -> boolean, int8/16/32 -> int, int64 -> long, float32 -> float, float64 -> double,
  string -> string, binary -> bytes, date32 -> int (date), timestamp with a zone -> long
  (timestamp-millis/-micros), without one -> long (local-timestamp-millis/-micros), time32[ms] -> int
  (time-millis), time64[us] -> long (time-micros), decimal -> bytes (decimal, with precision and scale),
  list -> array, struct -> record, null -> null; a map with string keys -> map, any other map -> an array
  of `{key, value}` records (as Kafka Connect's AvroData writes maps whose keys are not strings).
- Records are named `ConnectDefault`, `ConnectDefault2`, ... depth first (as Kafka Connect's AvroData
  names unnamed structs), in namespace `io.confluent.connect.avro`.
- Field names: characters other than letters, digits and `_` become `_`; a name starting with a digit
  (or empty) gets a leading `_`; a name equal to an earlier sibling's after that gets `_2`, `_3`, ...
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, TypeAlias

import pyarrow as pa

# an Avro schema as JSON: a type name, a union (a list) or a complex type (a dict); indexed by kind, so not a union
AvroType: TypeAlias = Any
NAMESPACE = "io.confluent.connect.avro"
_INVALID = re.compile(r"[^A-Za-z0-9_]")
_PRIMITIVES = (
    (pa.types.is_boolean, "boolean"),
    (pa.types.is_int64, "long"),
    (pa.types.is_integer, "int"),
    (pa.types.is_float32, "float"),
    (pa.types.is_floating, "double"),
    (pa.types.is_string, "string"),
    (pa.types.is_large_string, "string"),
    (pa.types.is_binary, "bytes"),
    (pa.types.is_large_binary, "bytes"),
    (pa.types.is_null, "null"),
)


def avro_names(names: list[str]) -> list[str]:
    """Valid, unique Avro names for sibling fields, in order (see the module's rules)."""
    result: list[str] = []
    for name in names:
        candidate = _INVALID.sub("_", name)
        if not candidate or candidate[0].isdigit():
            candidate = "_" + candidate
        unique, suffix = candidate, 2
        while unique in result:
            unique, suffix = f"{candidate}_{suffix}", suffix + 1
        result.append(unique)
    return result


@dataclass
class _Namer:
    count: int = 0
    renamed: list = field(default_factory=list)
    maps: int = 0  # maps seen: their values come from Arrow as lists of pairs and need reshaping

    def record_name(self) -> str:
        self.count += 1
        return "ConnectDefault" if self.count == 1 else f"ConnectDefault{self.count}"


def avro_schema(schema: pa.Schema) -> tuple[dict, bool]:
    """The Avro record schema for rows of this Arrow schema, and whether rows (as `Table.to_pylist` gives
    them) need `renamed_rows`: a field name had to change, or the schema has a map."""
    namer = _Namer()
    record = _record(list(schema), namer)
    record["namespace"] = NAMESPACE
    return record, bool(namer.renamed) or namer.maps > 0


def bare_schema(arrow_field: pa.Field) -> tuple[Any, bool]:
    """The Avro schema of one column written alone (a value, key or header list that is not a record, see
    format/wrapped.py), with its records in NAMESPACE, and whether its values need `renamed_values`."""
    namer = _Namer()
    avro_type = _field_type(arrow_field.type, arrow_field.nullable, namer)
    _in_namespace(avro_type)
    return avro_type, bool(namer.renamed) or namer.maps > 0


def _in_namespace(avro_type: AvroType) -> None:
    """Put the outermost records of `avro_type` in NAMESPACE (a record schema's nested records inherit it)."""
    if isinstance(avro_type, list):
        for branch in avro_type:
            _in_namespace(branch)
    elif isinstance(avro_type, dict) and avro_type["type"] == "record":
        avro_type["namespace"] = NAMESPACE
    elif isinstance(avro_type, dict) and avro_type["type"] in ("array", "map"):
        _in_namespace(avro_type["items" if avro_type["type"] == "array" else "values"])


def _record(fields: list[pa.Field], namer: _Namer) -> dict:
    record: dict[str, Any] = {"type": "record", "name": namer.record_name(), "fields": []}
    names = avro_names([f.name for f in fields])
    for arrow_field, name in zip(fields, names):
        if name != arrow_field.name:
            namer.renamed.append(arrow_field.name)
        avro_type = _field_type(arrow_field.type, arrow_field.nullable, namer)
        entry: dict[str, Any] = {"name": name, "type": avro_type}
        if isinstance(avro_type, list):
            entry["default"] = None
        record["fields"].append(entry)
    return record


def _field_type(arrow_type: pa.DataType, nullable: bool, namer: _Namer) -> AvroType:
    avro_type = _type(arrow_type, namer)
    return ["null", avro_type] if nullable and avro_type != "null" else avro_type


def _type(arrow_type: pa.DataType, namer: _Namer) -> AvroType:
    for predicate, name in _PRIMITIVES:
        if predicate(arrow_type):
            return name
    if pa.types.is_list(arrow_type) or pa.types.is_large_list(arrow_type):
        item = arrow_type.value_field
        return {"type": "array", "items": _field_type(item.type, item.nullable, namer)}
    if pa.types.is_struct(arrow_type):
        return _record(list(arrow_type), namer)
    if pa.types.is_map(arrow_type):
        return _map(arrow_type, namer)
    return _logical(arrow_type)


def _logical(arrow_type: pa.DataType) -> dict:
    if pa.types.is_date32(arrow_type):
        return {"type": "int", "logicalType": "date"}
    if pa.types.is_timestamp(arrow_type) and arrow_type.unit in ("ms", "us"):
        unit = "millis" if arrow_type.unit == "ms" else "micros"
        return {"type": "long", "logicalType": f"{'timestamp' if arrow_type.tz else 'local-timestamp'}-{unit}"}
    if pa.types.is_time32(arrow_type) and arrow_type.unit == "ms":
        return {"type": "int", "logicalType": "time-millis"}
    if pa.types.is_time64(arrow_type) and arrow_type.unit == "us":
        return {"type": "long", "logicalType": "time-micros"}
    if pa.types.is_decimal(arrow_type):
        return {"type": "bytes", "logicalType": "decimal", "precision": arrow_type.precision, "scale": arrow_type.scale}
    raise TypeError(f"Arrow type {arrow_type} has no Avro mapping")


def _map(arrow_type: pa.MapType, namer: _Namer) -> dict:
    namer.maps += 1
    item = arrow_type.item_field
    values = _field_type(item.type, item.nullable, namer)
    if pa.types.is_string(arrow_type.key_type) or pa.types.is_large_string(arrow_type.key_type):
        return {"type": "map", "values": values}
    entry: dict[str, Any] = {
        "type": "record",
        "name": namer.record_name(),
        "fields": [{"name": "key", "type": _type(arrow_type.key_type, namer)}, {"name": "value", "type": values}],
    }
    if isinstance(values, list):
        entry["fields"][1]["default"] = None
    return {"type": "array", "items": entry}


def renamed_rows(rows: list, schema: dict) -> list:
    """Rows (dicts keyed by the original names) re-keyed by the Avro field names, recursively; map values
    (lists of key-value pairs from Arrow) become dicts or `{key, value}` records as the schema says."""
    return [_rename(row, schema) for row in rows]


def renamed_values(values: list, avro_type: AvroType) -> list:
    """`renamed_rows` for values of a bare schema (`bare_schema`)."""
    return [_rename(value, avro_type) for value in values]


def _rename(value: Any, avro_type: AvroType) -> object:
    if value is None:
        return None
    if isinstance(avro_type, list):
        return _rename(value, avro_type[1])
    if isinstance(avro_type, dict) and avro_type["type"] == "map":
        return {key: _rename(item, avro_type["values"]) for key, item in value}
    if isinstance(avro_type, dict) and avro_type["type"] == "array":
        if value and isinstance(value[0], tuple):  # a map whose keys are not strings
            entry = avro_type["items"]["fields"]
            return [{"key": _rename(k, entry[0]["type"]), "value": _rename(v, entry[1]["type"])} for k, v in value]
        return [_rename(item, avro_type["items"]) for item in value]
    if isinstance(avro_type, dict) and avro_type["type"] == "record":
        originals = list(value)
        return {f["name"]: _rename(value[original], f["type"]) for f, original in zip(avro_type["fields"], originals)}
    return value
