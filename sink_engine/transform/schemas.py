"""Schema building blocks the transforms share, as Connect's SchemaUtil and SchemaBuilder provide them.

- `basics(source, type)`: Connect's `SchemaUtil.copySchemaBasics`: a new schema of `type` with the source's name,
  version and parameters (this model has no docs), required and without a default (those are not "basics").
- `struct_of(fields, ...)`: a struct schema from (name, schema) pairs; a repeated name is a TransformError, as
  SchemaBuilder refuses it.
- `field_value(struct, field, with_default)`: Connect's `Struct.get` (a null field reads as its schema's default)
  or, `with_default` False, `Struct.getWithoutDefault` (the `replace.null.with.default=false` of the SMTs).
- `SchemaCache`: per-input-schema results, least recently used first out (Kafka's SMTs keep 16).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Iterable
from typing import Any

from sink_engine.convert.schema import Field, Schema
from sink_engine.transform.errors import TransformError


def basics(source: Schema, type_: str | None = None, **changes: Any) -> Schema:
    """A schema of `type_` (the source's type when None) carrying the source's name, version and parameters;
    an array keeps its element schema. `changes` set the other attributes (optional, default, fields, ...)."""
    type_ = type_ or source.type
    items = source.items if type_ == "array" and source.type == "array" else None
    attributes: dict[str, Any] = {
        "name": source.name,
        "version": source.version,
        "parameters": source.parameters,
        "items": items,
    }
    attributes.update(changes)
    return Schema(type_, **attributes)


def struct_of(fields: Iterable[tuple[str, Schema]], like: Schema | None = None, **changes: Any) -> Schema:
    """A struct schema with these fields in order, with the basics of `like` when given."""
    built: list[Field] = []
    seen: set[str] = set()
    for name, schema in fields:
        if name in seen:
            raise TransformError(f"cannot create field {name!r}: a field of that name already exists")
        seen.add(name)
        built.append(Field(name, schema))
    if like is None:
        return Schema("struct", fields=tuple(built), **changes)
    return basics(like, "struct", fields=tuple(built), **changes)


def field_value(struct: dict, field: Field, with_default: bool = True) -> Any:
    """The field's value in a struct; a null one reads as the field schema's default when `with_default`."""
    value = struct.get(field.name)
    if value is None and with_default:
        return field.schema.default_value()
    return value


class SchemaCache:
    """What a transform built for an input schema, keyed by that schema (frozen, compared by value)."""

    def __init__(self, build: Callable[[Schema], Any], size: int = 16):
        self._build, self._size = build, size
        self._entries: OrderedDict[Schema, Any] = OrderedDict()

    def get(self, schema: Schema) -> Any:
        try:
            self._entries.move_to_end(schema)
            return self._entries[schema]
        except KeyError:
            built = self._build(schema)
            self._entries[schema] = built
            if len(self._entries) > self._size:
                self._entries.popitem(last=False)
            return built
