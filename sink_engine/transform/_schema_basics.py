"""Private stand-ins, with the same names and contracts, for `struct_of` and `field_value` of main's
transform/schemas.py (Connect's SchemaUtil.copySchemaBasics + SchemaBuilder, Struct.get / getWithoutDefault),
which this branch does not have yet: once both are merged, import those and delete this module."""
from __future__ import annotations

from typing import Any, Iterable

from sink_engine.convert.schema import Field, Schema
from sink_engine.transform.errors import TransformError


def struct_of(fields: Iterable[tuple[str, Schema]], like: Schema | None = None, **changes: Any) -> Schema:
    """A struct schema with these fields in order and the name, version and parameters of `like` (not its
    optional-ness or default: `changes` set those); a repeated name is a TransformError, as SchemaBuilder's."""
    built: list[Field] = []
    for name, schema in fields:
        if any(field.name == name for field in built):
            raise TransformError(f"cannot create field {name!r}: a field of that name already exists")
        built.append(Field(name, schema))
    basics = {} if like is None else {"name": like.name, "version": like.version, "parameters": like.parameters}
    return Schema("struct", fields=tuple(built), **{**basics, **changes})


def field_value(struct: dict, field: Field, with_default: bool = True) -> Any:
    """Struct.get (a null value reads as the field schema's default) or, `with_default` False, getWithoutDefault."""
    value = struct.get(field.name)
    if value is None and with_default:
        return field.schema.default_value()
    return value
