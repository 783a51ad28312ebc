"""Cast (`$Key` / `$Value`): casts top-level fields, or the whole key or value, to another primitive type.

`spec`: `field:type,...` for fields of a map or struct, or one `type` for the whole key or value (not both);
types int8, int16, int32, int64, float32, float64, boolean, string (bytes cannot be a target, as in Kafka).
`replace.null.with.default` (default true): a null field first reads as its default. The value rules are in
cast_values.py.

As in Kafka: a null operand passes unchanged; a cast field keeps its optional-ness, its default is cast too, and
it loses any logical type (a Timestamp cast to string is a plain string); the other fields keep their schemas; the
new struct keeps the old one's name, version and parameters; a struct schema with a default value cannot be
cast (Kafka casts that default as a struct and fails). A named field missing from a map becomes null. A
whole-value cast keeps the schema's name, version and parameters and optional-ness, its default cast, except
that, unlike Kafka, a logical type's name and parameters are dropped (the result is a plain string or number,
which this engine's formats would otherwise read as the logical type's value).
"""

from __future__ import annotations

from sink_engine.convert.schema import (
    DATE,
    DECIMAL,
    ISO_DATE,
    ISO_TIMESTAMP,
    LOCAL_TIMESTAMP_MICROS,
    LOCAL_TIMESTAMP_MILLIS,
    TIME,
    TIME_MICROS,
    TIMESTAMP,
    TIMESTAMP_MICROS,
    TYPES,
    Schema,
)
from sink_engine.errors import ConfigError
from sink_engine.transform.cast_values import OUTPUT_TYPES, cast_value
from sink_engine.transform.errors import TransformError
from sink_engine.transform.options import TransformOptions
from sink_engine.transform.record import TransformRecord
from sink_engine.transform.schemas import SchemaCache, basics, field_value, struct_of
from sink_engine.transform.values import operand, require_map, require_struct, with_operand

PURPOSE = "cast types"
LOGICAL_NAMES = (
    DECIMAL,
    DATE,
    TIME,
    TIMESTAMP,
    TIMESTAMP_MICROS,
    TIME_MICROS,
    LOCAL_TIMESTAMP_MILLIS,
    LOCAL_TIMESTAMP_MICROS,
    ISO_TIMESTAMP,
    ISO_DATE,
)


class Cast:
    def __init__(
        self, role: str, casts: dict[str, str], whole: str | None = None, replace_null_with_default: bool = True
    ):
        self.role, self.casts, self.whole = role, casts, whole
        self.replace_null_with_default = replace_null_with_default
        self._schemas = SchemaCache(self._updated_schema)

    @classmethod
    def from_options(cls, options: TransformOptions) -> Cast:
        casts, whole = parse_spec(options)
        return cls(options.role or "value", casts, whole, options.boolean("replace.null.with.default", True))

    def apply(self, record: TransformRecord) -> TransformRecord:
        value, schema = operand(record, self.role)
        if value is None:
            return record
        if schema is None:
            return with_operand(record, self.role, self._schemaless(value), None)
        updated_schema = self._schemas.get(schema)
        if self.whole is not None:
            return with_operand(record, self.role, cast_value(schema, value, self.whole), updated_schema)
        require_struct(value, schema, PURPOSE)
        updated = {}
        for field in schema.fields:
            original = field_value(value, field, self.replace_null_with_default)
            target = self.casts.get(field.name)
            updated[field.name] = original if target is None else cast_value(field.schema, original, target)
        return with_operand(record, self.role, updated, updated_schema)

    def _schemaless(self, value: object) -> object:
        if self.whole is not None:
            return cast_value(None, value, self.whole)
        updated = dict(require_map(value, PURPOSE))
        for name, target in self.casts.items():
            updated[name] = cast_value(None, updated.get(name), target)
        return updated

    def _updated_schema(self, schema: Schema) -> Schema:
        if self.whole is not None:
            built = basics(schema, self.whole) if schema.name not in LOGICAL_NAMES else Schema(self.whole)
        else:
            if schema.type != "struct":
                raise TransformError(f"only a struct is supported for {PURPOSE} of fields, found {schema.type}")
            built = struct_of(
                [(field.name, self._field_schema(field.schema, self.casts.get(field.name))) for field in schema.fields],
                like=schema,
            )
        default = schema.default_value()
        return Schema(
            built.type,
            optional=schema.optional,
            name=built.name,
            version=built.version,
            parameters=built.parameters,
            fields=built.fields,
            default=None if default is None else cast_value(schema, default, built.type),
        )

    @staticmethod
    def _field_schema(schema: Schema, target: str | None) -> Schema:
        if target is None:
            return schema
        default = schema.default_value()
        return Schema(
            target, optional=schema.optional, default=None if default is None else cast_value(schema, default, target)
        )


def parse_spec(options: TransformOptions) -> tuple[dict[str, str], str | None]:
    """`spec` as field -> type and the whole-value type (None when fields are cast); ConfigError naming it."""
    key, mappings = options.key("spec"), options.strings("spec")
    if not mappings:
        raise ConfigError(key, "must name at least one field to cast, or one type")
    casts: dict[str, str] = {}
    whole = None
    for mapping in mappings:
        parts = mapping.split(":")
        while len(parts) > 1 and parts[-1] == "":
            parts.pop()
        if len(parts) > 2:
            raise ConfigError(key, f"invalid cast mapping {mapping!r} (expected field:type or type)")
        target = _target(key, parts[-1].strip())
        if len(parts) == 1:
            whole = target
        else:
            casts[parts[0].strip()] = target
    if whole is not None and len(mappings) > 1:
        raise ConfigError(key, "a cast of the whole value to a type must be the only cast in the spec")
    return casts, whole


def _target(key: str, name: str) -> str:
    type_ = name.lower()
    if type_ not in TYPES:
        raise ConfigError(key, f"invalid type found in casting spec: {name}")
    if type_ not in OUTPUT_TYPES:
        raise ConfigError(
            key, f"cast does not support casting to {type_}; supported types are {', '.join(OUTPUT_TYPES)}"
        )
    return type_
