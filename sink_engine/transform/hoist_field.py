"""HoistField (`$Key` / `$Value`): wraps the key or value in a struct (with a schema) or a map (without) under one
field, `field`. As in Kafka a null is wrapped too (`{field: None}`), except a null of a required schema (Connect's
Struct refuses it: a TransformError); the new struct schema is a plain required struct whose one field keeps the
operand's schema."""

from __future__ import annotations

from sink_engine.convert.schema import Schema
from sink_engine.transform.errors import TransformError
from sink_engine.transform.options import TransformOptions
from sink_engine.transform.record import TransformRecord
from sink_engine.transform.schemas import SchemaCache, struct_of
from sink_engine.transform.values import operand, with_operand


class HoistField:
    def __init__(self, role: str, field: str):
        self.role, self.field = role, field
        self._schemas = SchemaCache(self._wrapped)

    @classmethod
    def from_options(cls, options: TransformOptions) -> HoistField:
        return cls(options.role or "value", options.string("field"))

    def apply(self, record: TransformRecord) -> TransformRecord:
        value, schema = operand(record, self.role)
        if value is None and schema is not None and not schema.optional:
            raise TransformError(
                f"invalid value: null used for required field {self.field!r}, schema type {schema.type}"
            )
        wrapped = {self.field: value}
        return with_operand(record, self.role, wrapped, None if schema is None else self._schemas.get(schema))

    def _wrapped(self, schema: Schema) -> Schema:
        return struct_of([(self.field, schema)])
