"""Private helpers of this package's struct-rebuilding transforms, after Connect's SchemaUtil and Struct:
a struct schema built from another's basics, and a field's value with or without its schema default."""
from __future__ import annotations

from typing import Any, Iterable

from sink_engine.convert.schema import Field, Schema


def struct_like(source: Schema, fields: Iterable[Field], optional: bool = False, default: Any = None) -> Schema:
    """A struct schema with `source`'s name, version and parameters (SchemaUtil.copySchemaBasics: neither its
    optional-ness nor its default) and these fields."""
    return Schema("struct", optional, default, source.name, source.version, source.parameters, tuple(fields))


def field_value(struct: dict, field: Field, replace_null_with_default: bool) -> Any:
    """Struct.get (a null value reads as the field schema's default) or Struct.getWithoutDefault."""
    value = struct.get(field.name)
    if value is None and replace_null_with_default:
        return field.schema.default_value()
    return value
