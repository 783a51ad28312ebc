"""ValueToKey: replaces the record's key with the value's fields named in `fields` (a map without a schema, a
struct with one: a plain struct schema whose fields keep the value's field schemas, in the order of `fields`).

As in Kafka: the value must be a map (schemaless; a missing field gives null) or a struct (a field it lacks is an
error), so a tombstone is a TransformError; `replace.null.with.default` (default true): null fields with a
default take it in the key."""

from __future__ import annotations

from sink_engine.convert.schema import Schema
from sink_engine.errors import ConfigError
from sink_engine.transform.errors import TransformError
from sink_engine.transform.options import TransformOptions
from sink_engine.transform.record import TransformRecord
from sink_engine.transform.schemas import SchemaCache, field_value, struct_of
from sink_engine.transform.values import require_map, require_struct

PURPOSE = "copying fields from value to key"


class ValueToKey:
    def __init__(self, fields: tuple[str, ...], replace_null_with_default: bool = True):
        self.fields, self.replace_null_with_default = fields, replace_null_with_default
        self._schemas = SchemaCache(self._key_schema)

    @classmethod
    def from_options(cls, options: TransformOptions) -> ValueToKey:
        fields = options.strings("fields")
        if not fields:
            raise ConfigError(options.key("fields"), "is required: one field at least")
        return cls(fields, options.boolean("replace.null.with.default", True))

    def apply(self, record: TransformRecord) -> TransformRecord:
        if record.value_schema is None:
            value = require_map(record.value, PURPOSE)
            return record.with_changes(key={name: value.get(name) for name in self.fields}, key_schema=None)
        value = require_struct(record.value, record.value_schema, PURPOSE)
        key_schema = self._schemas.get(record.value_schema)
        key = {field.name: field_value(value, field, self.replace_null_with_default) for field in key_schema.fields}
        return record.with_changes(key=key, key_schema=key_schema)

    def _key_schema(self, value_schema: Schema) -> Schema:
        fields = []
        for name in self.fields:
            field = value_schema.field(name)
            if field is None:
                raise TransformError(f"field does not exist: {name}")
            fields.append((name, field.schema))
        return struct_of(fields)
