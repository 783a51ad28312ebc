"""Debezium's ExtractNewRecordState: a change event envelope (a value whose schema's name ends in `.Envelope`,
with `before`, `after`, `source`, `op`, `ts_ms`, ...) unwrapped to its `after` state.

`delete.tombstone.handling.mode` (Debezium 2.5+, default `tombstone`) decides deletes and tombstones: `drop` drops
both; `tombstone` turns a delete into a null value (with the `after` schema) and drops Debezium's own tombstones;
`rewrite` makes a delete its `before` state and adds a string field `__deleted` (`true`, and `false` on creates and
updates), dropping tombstones; `rewrite-with-tombstone` the same, keeping tombstones; `delete-to-tombstone` a delete
becomes a tombstone (null value and schema), tombstones are dropped. Without it, Debezium 1.x/2.x's keys are read:
`drop.tombstones` (default true) and `delete.handling.mode` (`drop` (default), `none`: a null value, `rewrite`;
Debezium 3 no longer reads them, a difference docs/transforms lists). A truncate event (no `before`, no `after`) is
dropped.

`add.fields` / `add.headers` (see debezium_fields.py) add envelope fields to the new value (the struct schema
rebuilt once per input schema and operation) / as headers, named with `add.fields.prefix` /
`add.headers.prefix` (default `__`); on a tombstone only an `op` header is added (`d`). `route.by.field`: the
topic becomes that field's value (of `after`, of `before` for a delete; a field the row's schema lacks, or one
that is not a string, is a TransformError, as Debezium's Struct.getString fails). The new value's schema is the
`after` struct's made required, as Debezium 3 gives it. `replace.null.with.default` (true):
null fields with a default read as the default when `__deleted` is added.

Records that are not envelopes pass unchanged, as in Debezium; so do schemaless values (JSON with
`schemas.enable=false`): Debezium's SMT needs the envelope's schema, and so does this one. Not built:
`drop.fields.header.name` (an error when set).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from sink_engine.convert.schema import Schema
from sink_engine.errors import ConfigError
from sink_engine.transform.debezium_fields import FieldReference, parse_references
from sink_engine.transform.errors import TransformError
from sink_engine.transform.options import TransformOptions
from sink_engine.transform.record import Header, TransformRecord
from sink_engine.transform.schemas import field_value, struct_of

DELETED_FIELD = "__deleted"
MODES = ("drop", "tombstone", "rewrite", "rewrite-with-tombstone", "delete-to-tombstone")
_OPTIONAL_STRING = Schema("string", True)


@dataclass(frozen=True)
class Handling:
    """keep_tombstones: Debezium's own tombstones pass; delete: "drop", "after" (a null value with the after
    schema), "tombstone" (null value and schema) or "rewrite" (before + __deleted); rewrite: __deleted added."""

    keep_tombstones: bool
    delete: str
    rewrite: bool


_MODES = {
    "drop": Handling(False, "drop", False),
    "tombstone": Handling(False, "after", False),
    "rewrite": Handling(False, "rewrite", True),
    "rewrite-with-tombstone": Handling(True, "rewrite", True),
    "delete-to-tombstone": Handling(False, "tombstone", False),
}
_LEGACY_DELETES = {"drop": "drop", "none": "after", "rewrite": "rewrite"}


class ExtractNewRecordState:
    def __init__(
        self,
        handling: Handling,
        fields: tuple[FieldReference, ...],
        headers: tuple[FieldReference, ...],
        route_by_field: str | None,
        replace_null_with_default: bool,
    ):
        self.handling, self.fields, self.headers = handling, fields, headers
        self.route_by_field, self.replace_null_with_default = route_by_field, replace_null_with_default
        self._added: dict[tuple[Schema, Schema, Any], Schema] = {}
        self._deleted: dict[Schema, Schema] = {}

    @classmethod
    def from_options(cls, options: TransformOptions) -> ExtractNewRecordState:
        if options.string("drop.fields.header.name", None) is not None:
            raise ConfigError(options.key("drop.fields.header.name"), "is not supported by this engine")
        references = []
        for name in ("fields", "headers"):
            prefix = options.values.get(f"add.{name}.prefix")
            try:
                references.append(
                    parse_references("__" if prefix is None else str(prefix), options.strings(f"add.{name}"))
                )
            except ValueError as error:
                raise ConfigError(options.key(f"add.{name}"), str(error)) from None
        return cls(
            _handling(options),
            references[0],
            references[1],
            options.string("route.by.field", None),
            options.boolean("replace.null.with.default", True),
        )

    def apply(self, record: TransformRecord) -> TransformRecord | None:
        schema = record.value_schema
        envelope = schema is not None and (schema.name or "").endswith(".Envelope") and record.value is not None
        if record.value is None:
            if self.headers:
                record = record.with_changes(headers=record.headers + self._headers(None, None))
            return record if self.handling.keep_tombstones else None
        if not envelope:
            return record
        record = record.with_changes(headers=record.headers + self._headers(schema, record.value))
        after, after_schema = _part(record, "after")
        if after is None:
            before, _ = _part(record, "before")
            return None if before is None else self._deleted_record(record)
        state = record.with_changes(value=after, value_schema=dataclasses.replace(after_schema, optional=False))
        if self.handling.rewrite:
            state = self._with_deleted(state, "false")
        state = self._routed(state, after, after_schema)
        return self._with_fields(record, state)

    def _deleted_record(self, record: TransformRecord) -> TransformRecord | None:
        delete = self.handling.delete
        if delete == "drop":
            return None
        before, before_schema = _part(record, "before")
        if delete == "tombstone":
            state = record.with_changes(value=None, value_schema=None)
        elif delete == "after":
            state = record.with_changes(value=None, value_schema=_part(record, "after")[1])
        else:
            state = self._with_deleted(record.with_changes(value=before, value_schema=before_schema), "true")
        state = self._routed(state, before, before_schema)
        return state if state.value is None else self._with_fields(record, state)

    def _with_deleted(self, state: TransformRecord, flag: str) -> TransformRecord:
        """Kafka's InsertField with static field __deleted (an optional string), as Debezium delegates to it."""
        schema = state.value_schema
        if schema is None or schema.type != "struct" or not isinstance(state.value, dict):
            return state
        updated = self._deleted.get(schema)
        if updated is None:
            updated = struct_of(
                [(f.name, f.schema) for f in schema.fields] + [(DELETED_FIELD, _OPTIONAL_STRING)], schema
            )
            self._deleted[schema] = updated
        value = {f.name: field_value(state.value, f, self.replace_null_with_default) for f in schema.fields}
        return state.with_changes(value={**value, DELETED_FIELD: flag}, value_schema=updated)

    def _routed(self, state: TransformRecord, row: dict, schema: Schema) -> TransformRecord:
        """The state routed to the row's `route.by.field` (Debezium's Struct.getString: a TransformError when the
        row's schema has no such field or it is not a string)."""
        if self.route_by_field is None:
            return state
        field = schema.field(self.route_by_field)
        if field is None or field.schema.type != "string":
            raise TransformError(f"route.by.field {self.route_by_field!r} is not a string field of {schema.describe()}")
        topic = row.get(self.route_by_field)
        return state.with_changes(topic=topic) if topic and topic.strip() else state

    def _with_fields(self, record: TransformRecord, state: TransformRecord) -> TransformRecord:
        if not self.fields:
            return state
        schema, value = state.value_schema, state.value
        if schema is None or schema.type != "struct" or not isinstance(value, dict):
            raise TransformError(
                f"only a struct is supported for source field insertion, found "
                f"{schema.type if schema is not None else type(value).__name__}"
            )
        envelope_schema, envelope = record.value_schema, record.value
        assert envelope_schema is not None  # an envelope's (apply)
        present = [ref for ref in self.fields if ref.schema(envelope_schema) is not None]
        key = (schema, envelope_schema, envelope.get("op"))
        updated = self._added.get(key)
        if updated is None:
            added = [(ref.new_name, found) for ref in present if (found := ref.schema(envelope_schema)) is not None]
            updated = struct_of([(f.name, f.schema) for f in schema.fields] + added, schema)
            self._added[key] = updated
        new_value = {f.name: value.get(f.name) for f in schema.fields}
        new_value.update((ref.new_name, ref.value(envelope_schema, envelope)) for ref in present)
        return state.with_changes(value=new_value, value_schema=updated)

    def _headers(self, schema: Schema | None, envelope: dict | None) -> tuple[Header, ...]:
        if envelope is None:
            return tuple(Header(ref.new_name, "d", Schema("string")) for ref in self.headers if ref.field == "op")
        assert schema is not None  # an envelope's (apply)
        return tuple(
            Header(ref.new_name, ref.value(schema, envelope), ref.schema(schema))
            for ref in self.headers
            if ref.schema(schema) is not None
        )


def _part(record: TransformRecord, name: str) -> tuple[Any, Schema]:
    """Kafka's ExtractField$Value of the envelope's `before` or `after`."""
    envelope_schema = record.value_schema
    assert envelope_schema is not None  # an envelope's (apply)
    field = envelope_schema.field(name)
    if field is None:
        raise TransformError(f"the envelope {envelope_schema.describe()} has no field {name!r}")
    return record.value.get(name), field.schema


def _handling(options: TransformOptions) -> Handling:
    if options.string("delete.tombstone.handling.mode", None) is not None:
        return _MODES[options.choice("delete.tombstone.handling.mode", MODES)]
    legacy = ("drop.tombstones", "delete.handling.mode")
    if all(options.string(name, None) is None for name in legacy):
        return _MODES["tombstone"]
    delete = options.choice("delete.handling.mode", tuple(_LEGACY_DELETES), "drop")
    return Handling(not options.boolean("drop.tombstones", True), _LEGACY_DELETES[delete], delete == "rewrite")
