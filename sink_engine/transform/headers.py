"""Kafka's header transforms: InsertHeader (one literal header on every record), DropHeaders (every header of
the named ones) and HeaderFrom$Key / $Value (fields copied or moved into headers). Headers keep their order;
a new header goes after the existing ones, a same-named one included (Connect's Headers.add)."""

from __future__ import annotations

from sink_engine.convert.schema import Schema
from sink_engine.errors import ConfigError
from sink_engine.transform.errors import TransformError
from sink_engine.transform.header_literals import parse_literal
from sink_engine.transform.options import TransformOptions
from sink_engine.transform.record import Header, TransformRecord
from sink_engine.transform.schemas import field_value, struct_of
from sink_engine.transform.values import operand, require_map, require_struct, with_operand


class InsertHeader:
    """`header` and `value.literal` (typed by header_literals.parse_literal) are required; the literal may be
    empty (an empty string)."""

    def __init__(self, header: Header):
        self.header = header

    @classmethod
    def from_options(cls, options: TransformOptions) -> InsertHeader:
        literal = options.values.get("value.literal")
        if literal is None:
            raise ConfigError(options.key("value.literal"), "is required")
        value, schema = parse_literal(str(literal).strip())
        return cls(Header(options.string("header"), value, schema))

    def apply(self, record: TransformRecord) -> TransformRecord:
        return record.with_changes(headers=record.headers + (self.header,))


class DropHeaders:
    """`headers`: a non-empty list of names."""

    def __init__(self, names: frozenset[str]):
        self.names = names

    @classmethod
    def from_options(cls, options: TransformOptions) -> DropHeaders:
        names = options.strings("headers")
        if not names:
            raise ConfigError(options.key("headers"), "must name at least one header")
        return cls(frozenset(names))

    def apply(self, record: TransformRecord) -> TransformRecord:
        return record.with_changes(headers=tuple(h for h in record.headers if h.name not in self.names))


class HeaderFrom:
    """`fields` and `headers`: lists of the same non-zero length, pairing each field with the header it goes to;
    `operation`: `copy` or `move` (removed from the key/value: with a schema, a struct schema without those
    fields, built once per input schema, with the source's name, version and parameters, as Kafka's
    copySchemaBasics: not optional); `replace.null.with.default` (true): a null field with a default gives the
    default. With a schema a header carries the field's schema (a field the struct lacks is an error); without
    one, the map's value (null when missing) and no schema."""

    def __init__(self, role: str, pairs: tuple[tuple[str, str], ...], move: bool, replace_null_with_default: bool):
        self.role, self.pairs, self.move = role, pairs, move
        self.replace_null_with_default = replace_null_with_default
        self._moved: dict[Schema, Schema] = {}

    @classmethod
    def from_options(cls, options: TransformOptions) -> HeaderFrom:
        fields, headers = options.strings("fields"), options.strings("headers")
        for name, items in (("fields", fields), ("headers", headers)):
            if not items:
                raise ConfigError(options.key(name), "must name at least one")
        if len(fields) != len(headers):
            raise ConfigError(
                options.key("headers"),
                f"must have as many elements as {options.key('fields')} ({len(headers)} against {len(fields)})",
            )
        operation = options.string("operation")
        if operation not in ("copy", "move"):
            raise ConfigError(options.key("operation"), f"{operation!r} is not one of move, copy")
        return cls(
            options.role or "value",
            tuple(zip(fields, headers)),
            operation == "move",
            options.boolean("replace.null.with.default", True),
        )

    def apply(self, record: TransformRecord) -> TransformRecord:
        value, schema = operand(record, self.role)
        purpose = f"header {'move' if self.move else 'copy'}"
        if schema is None:
            value = require_map(value, purpose)
            added = tuple(Header(header, value.get(field)) for field, header in self.pairs)
            moved = {k: v for k, v in value.items() if k not in self._fields()} if self.move else dict(value)
            return with_operand(record, self.role, moved, None).with_changes(headers=record.headers + added)
        struct = require_struct(value, schema, purpose)
        added = tuple(self._header(struct, schema, field, header) for field, header in self.pairs)
        if self.move:
            schema = self._moved_schema(schema)
            struct = {f.name: field_value(struct, f, self.replace_null_with_default) for f in schema.fields}
        return with_operand(record, self.role, struct, schema).with_changes(headers=record.headers + added)

    def _fields(self) -> set[str]:
        return {field for field, _ in self.pairs}

    def _header(self, struct: dict, schema: Schema, field_name: str, header: str) -> Header:
        field = schema.field(field_name)
        if field is None:
            raise TransformError(f"field {field_name!r} is not in the struct ({schema.describe()})")
        return Header(header, field_value(struct, field, self.replace_null_with_default), field.schema)

    def _moved_schema(self, schema: Schema) -> Schema:
        moved = self._moved.get(schema)
        if moved is None:
            moved = struct_of(((f.name, f.schema) for f in schema.fields if f.name not in self._fields()), schema)
            self._moved[schema] = moved
        return moved
