"""SetSchemaMetadata (`$Key` / `$Value`): sets the name (`schema.name`) and/or version (`schema.version`) of the key's
or value's schema, keeping everything else of it (type, optional-ness, default, parameters, fields).

As in Kafka: at least one of the two is required; a record whose operand and schema are both null passes as it is;
a schemaless non-null operand is a TransformError (a schema is required). A struct value is copied under the new
schema; with `replace.null.with.default` (default true) its null top-level fields take their defaults."""

from __future__ import annotations

import dataclasses

from sink_engine.errors import ConfigError
from sink_engine.transform.errors import TransformError
from sink_engine.transform.options import TransformOptions
from sink_engine.transform.record import TransformRecord
from sink_engine.transform.schemas import field_value
from sink_engine.transform.values import operand, with_operand


class SetSchemaMetadata:
    def __init__(self, role: str, name: str | None, version: int | None, replace_null_with_default: bool = True):
        self.role, self.name, self.version = role, name, version
        self.replace_null_with_default = replace_null_with_default

    @classmethod
    def from_options(cls, options: TransformOptions) -> SetSchemaMetadata:
        name, version = options.string("schema.name", None), options.integer("schema.version", None)
        if name is None and version is None:
            raise ConfigError(options.key("schema.name"), "neither schema.name nor schema.version is set")
        return cls(options.role or "value", name, version, options.boolean("replace.null.with.default", True))

    def apply(self, record: TransformRecord) -> TransformRecord:
        value, schema = operand(record, self.role)
        if value is None and schema is None:
            return record
        if schema is None:
            raise TransformError("a schema is required for updating schema metadata")
        updated = dataclasses.replace(
            schema,
            name=self.name if self.name is not None else schema.name,
            version=self.version if self.version is not None else schema.version,
        )
        if isinstance(value, dict) and schema.type == "struct":
            value = {field.name: field_value(value, field, self.replace_null_with_default) for field in updated.fields}
        return with_operand(record, self.role, value, updated)
