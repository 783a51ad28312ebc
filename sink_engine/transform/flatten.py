"""Flatten (`$Key` / `$Value`): nested structs (with a schema) or maps (without) become top-level fields named by
the path joined with `delimiter` (default `.`): `{"A": {"B": 1}}` -> `{"A.B": 1}`. Arrays and their contents
are kept as they are.

With a schema, as Kafka builds it: the new struct keeps the old one's name, version and parameters; a flattened
field is optional when it or any struct above it is optional, and its default is its own or else the one the
default of a struct above it gives (`req_field` of an optional struct whose default holds "req_default" becomes
an optional string with default "req_default"); a field below a null struct is null; map fields are a
TransformError, and so are two paths that flatten to one name. Without a schema, values other than JSON's (and
bytes) are a TransformError, and a later path of the same name overwrites an earlier one. A null operand
(tombstone) passes unchanged.
"""

from __future__ import annotations

from typing import Any

from sink_engine.convert.schema import PRIMITIVE_TYPES, Schema
from sink_engine.transform.errors import TransformError
from sink_engine.transform.options import TransformOptions
from sink_engine.transform.record import TransformRecord
from sink_engine.transform.schemas import SchemaCache, basics, field_value, struct_of
from sink_engine.transform.values import operand, require_map, require_struct, with_operand

PURPOSE = "flattening"
_KEPT = PRIMITIVE_TYPES + ("array",)
_SCHEMALESS_KEPT = (bool, int, float, str, bytes, bytearray, list)


class Flatten:
    def __init__(self, role: str, delimiter: str = "."):
        self.role, self.delimiter = role, delimiter
        self._schemas = SchemaCache(self._flat_schema)

    @classmethod
    def from_options(cls, options: TransformOptions) -> Flatten:
        raw = options.values.get("delimiter")
        return cls(options.role or "value", "." if raw is None else str(raw).strip())

    def apply(self, record: TransformRecord) -> TransformRecord:
        value, schema = operand(record, self.role)
        if value is None:
            return record
        if schema is None:
            flat: dict[str, Any] = {}
            self._flatten_map(require_map(value, PURPOSE), "", flat)
            return with_operand(record, self.role, flat, None)
        require_struct(value, schema, PURPOSE)
        flat_schema = self._schemas.get(schema)
        flat = dict.fromkeys((field.name for field in flat_schema.fields), None)
        self._flatten_struct(value, schema, "", flat)
        return with_operand(record, self.role, flat, flat_schema)

    def _name(self, prefix: str, name: str) -> str:
        return f"{prefix}{self.delimiter}{name}" if prefix else name

    def _flatten_map(self, value: dict, prefix: str, flat: dict[str, Any]) -> None:
        for key, item in value.items():
            name = self._name(prefix, key)
            if isinstance(item, dict):
                self._flatten_map(item, name, flat)
            elif item is None or isinstance(item, _SCHEMALESS_KEPT):
                flat[name] = item
            else:
                raise TransformError(
                    f"flatten does not support {type(item).__name__} for records without schemas (field {name})"
                )

    def _flatten_struct(self, value: dict | None, schema: Schema, prefix: str, flat: dict[str, Any]) -> None:
        if value is None:
            return
        for field in schema.fields:
            name = self._name(prefix, field.name)
            if field.schema.type == "struct":
                self._flatten_struct(field_value(value, field), field.schema, name, flat)
            else:
                flat[name] = field_value(value, field)

    def _flat_schema(self, schema: Schema) -> Schema:
        fields: list[tuple[str, Schema]] = []
        self._flat_fields(schema, "", schema.optional, schema.default_value(), fields)
        return struct_of(fields, like=schema)

    def _flat_fields(
        self, schema: Schema, prefix: str, optional: bool, parent_default: dict | None, fields: list[tuple[str, Schema]]
    ) -> None:
        for field in schema.fields:
            name = self._name(prefix, field.name)
            field_optional = optional or field.schema.optional
            default = field.schema.default_value()
            if default is None and parent_default is not None:
                default = parent_default.get(field.name)
            if field.schema.type in _KEPT:
                fields.append((name, basics(field.schema, optional=field_optional, default=default)))
            elif field.schema.type == "struct":
                self._flat_fields(field.schema, name, field_optional, default, fields)
            else:
                raise TransformError(
                    f"flatten does not support {field.schema.type} for records with schemas (field {name})"
                )
