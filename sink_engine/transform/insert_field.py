"""InsertField (`$Key` / `$Value`): adds fields from the record's metadata or a static value to the key or value.

Options (each a field name; suffix `!` for a required field, `?` or nothing for an optional one): `topic.field`
(string), `partition.field` (int32), `offset.field` (int64), `timestamp.field` (Connect Timestamp with a schema,
epoch milliseconds without), `static.field` with `static.value` (string); `replace.null.with.default` (default
true): the existing fields' nulls take their defaults in the copy. At least one field is required.

As in Kafka: a null operand passes unchanged (tombstones, null keys); without a schema the operand must be a map
(an existing entry of the same name is overwritten), with one a struct (a field of the same name is an error);
a null timestamp is not inserted. The new struct schema keeps the name, version and parameters of the old one."""

from __future__ import annotations

import datetime
from dataclasses import dataclass
from typing import Any

from sink_engine.convert.schema import TIMESTAMP, Schema
from sink_engine.errors import ConfigError
from sink_engine.transform.options import TransformOptions
from sink_engine.transform.record import TransformRecord
from sink_engine.transform.schemas import SchemaCache, field_value, struct_of
from sink_engine.transform.values import operand, require_map, require_struct, with_operand

PURPOSE = "field insertion"
_EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.UTC)
# option -> schema type and logical name of the inserted field
_KINDS = {
    "topic.field": ("string", None),
    "partition.field": ("int32", None),
    "offset.field": ("int64", None),
    "timestamp.field": ("int64", TIMESTAMP),
    "static.field": ("string", None),
}


@dataclass(frozen=True)
class Insertion:
    """One field to insert: the option it comes from, its name and whether it is optional."""

    option: str
    name: str
    optional: bool

    @classmethod
    def parse(cls, option: str, spec: str) -> Insertion:
        if spec.endswith("?"):
            return cls(option, spec[:-1], True)
        if spec.endswith("!"):
            return cls(option, spec[:-1], False)
        return cls(option, spec, True)

    def schema(self) -> Schema:
        type_, logical = _KINDS[self.option]
        return Schema(type_, optional=self.optional, name=logical, version=1 if logical else None)


class InsertField:
    def __init__(
        self,
        role: str,
        insertions: tuple[Insertion, ...],
        static_value: str | None = None,
        replace_null_with_default: bool = True,
    ):
        self.role, self.insertions, self.static_value = role, insertions, static_value
        self.replace_null_with_default = replace_null_with_default
        self._schemas = SchemaCache(self._updated_schema)

    @classmethod
    def from_options(cls, options: TransformOptions) -> InsertField:
        insertions = tuple(
            Insertion.parse(option, options.string(option))
            for option in _KINDS
            if options.string(option, None) is not None
        )
        if not insertions:
            raise ConfigError(
                options.key("topic.field"),
                f"no field insertion configured (set one of {', '.join(options.key(o) for o in _KINDS)})",
            )
        raw_static = options.values.get("static.value")
        static_value = None if raw_static is None else str(raw_static).strip()
        if any(i.option == "static.field" for i in insertions) and static_value is None:
            raise ConfigError(options.key("static.value"), "no value specified for the static field")
        return cls(
            options.role or "value", insertions, static_value, options.boolean("replace.null.with.default", True)
        )

    def apply(self, record: TransformRecord) -> TransformRecord:
        value, schema = operand(record, self.role)
        if value is None:
            return record
        if schema is None:
            updated = dict(require_map(value, PURPOSE))
            updated.update(self._inserted(record, with_schema=False))
            return with_operand(record, self.role, updated, None)
        require_struct(value, schema, PURPOSE)
        updated_schema = self._schemas.get(schema)
        updated = {field.name: field_value(value, field, self.replace_null_with_default) for field in schema.fields}
        updated.update(self._inserted(record, with_schema=True))
        for field in updated_schema.fields:
            updated.setdefault(field.name, None)
        return with_operand(record, self.role, updated, updated_schema)

    def _inserted(self, record: TransformRecord, with_schema: bool) -> dict[str, Any]:
        values: dict[str, Any] = {}
        for insertion in self.insertions:
            value = self._metadata(record, insertion.option, with_schema)
            if value is not None:
                values[insertion.name] = value
        return values

    def _metadata(self, record: TransformRecord, option: str, with_schema: bool) -> Any:
        if option == "topic.field":
            return record.topic
        if option == "partition.field":
            return record.partition
        if option == "offset.field":
            return record.offset
        if option == "static.field":
            return self.static_value
        if record.timestamp is None or not with_schema:
            return record.timestamp
        return _EPOCH + datetime.timedelta(milliseconds=record.timestamp)

    def _updated_schema(self, schema: Schema) -> Schema:
        fields = [(field.name, field.schema) for field in schema.fields]
        fields += [(insertion.name, insertion.schema()) for insertion in self.insertions]
        return struct_of(fields, like=schema)
