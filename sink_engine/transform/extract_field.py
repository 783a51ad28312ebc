"""ExtractField (`$Key` / `$Value`): replaces the key or value with one of its fields (`field`), read from a struct
(with a schema) or a map (without).

As in Kafka: a null operand stays null (with a schema, it gets the field's schema); a field missing from a map
gives null, one missing from the struct schema is a TransformError ("unknown field"). `field.syntax.version=V2`
reads a nested path (`a.b`, see field_path.py). `replace.null.with.default` (default true): a null field with a
default reads as that default."""

from __future__ import annotations

from sink_engine.transform.errors import TransformError
from sink_engine.transform.field_path import FieldPath
from sink_engine.transform.options import TransformOptions
from sink_engine.transform.record import TransformRecord
from sink_engine.transform.values import operand, require_map, require_struct, with_operand

PURPOSE = "field extraction"


class ExtractField:
    def __init__(self, role: str, path: FieldPath, replace_null_with_default: bool = True):
        self.role, self.path, self.replace_null_with_default = role, path, replace_null_with_default

    @classmethod
    def from_options(cls, options: TransformOptions) -> ExtractField:
        return cls(
            options.role or "value",
            FieldPath.from_options(options, "field"),
            options.boolean("replace.null.with.default", True),
        )

    def apply(self, record: TransformRecord) -> TransformRecord:
        value, schema = operand(record, self.role)
        if schema is None:
            extracted = None if value is None else self.path.value_in(require_map(value, PURPOSE), None)
            return with_operand(record, self.role, extracted, None)
        field = self.path.field_in(schema) if schema.type == "struct" else None
        if value is not None:
            require_struct(value, schema, PURPOSE)
        if field is None:
            raise TransformError(f"unknown field: {self.path.text}")
        extracted = None if value is None else self.path.value_in(value, schema, self.replace_null_with_default)
        return with_operand(record, self.role, extracted, field.schema)
