"""The `add.fields` / `add.headers` items of Debezium's ExtractNewRecordState (its FieldReference): a field of a
change event envelope named `field`, `struct.field`, optionally `:newName`, and the name it gets.

An unqualified field is looked up where Debezium looks: `op`, `ts_ms`, `ts_us`, `ts_ns` in the envelope itself,
`id`, `total_order`, `data_collection_order` in `transaction`, anything else in `source`; a field the struct
lacks is taken from the envelope when it has one by that name (a field another transform added), else it is
skipped. The new name is the prefix and `field`, `struct_field`, or `newName`.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from sink_engine.convert.schema import Field, Schema

_ENVELOPE_FIELDS = ("op", "ts_ms", "ts_us", "ts_ns")
_TRANSACTION_FIELDS = ("id", "total_order", "data_collection_order")


@dataclass(frozen=True)
class FieldReference:
    struct: str | None  # the envelope's struct holding the field, None for the envelope itself
    field: str
    new_name: str

    @classmethod
    def parse(cls, prefix: str, item: str) -> FieldReference:
        """ValueError when the item has more than one `:`."""
        parts = item.split(":")
        if len(parts) > 2:
            raise ValueError(f"unexpected field name {item!r}")
        path = parts[0].split(".")
        field = path[0] if len(path) == 1 else path[1]
        struct = _struct_of(field) if len(path) == 1 else path[0]
        if len(parts) == 2:
            return cls(struct, field, prefix + parts[1])
        return cls(struct, field, prefix + (field if len(path) == 1 else f"{struct}_{field}"))

    def schema(self, envelope: Schema) -> Schema | None:
        """The new field's schema: the field's, optional and without a default; None when it is nowhere."""
        found = self._field(envelope)
        return None if found is None else dataclasses.replace(found.schema, optional=True, default=None)

    def value(self, envelope_schema: Schema, envelope: dict) -> Any:
        parent_field = envelope_schema.field(self.struct) if self.struct else None
        if self.struct is None:
            return envelope.get(self.field)
        parent = envelope.get(self.struct)
        if parent is None:
            return None
        if parent_field is not None and parent_field.schema.field(self.field) is not None:
            return parent.get(self.field)
        return envelope.get(self.field)

    def _field(self, envelope: Schema) -> Field | None:
        parent: Schema | None = envelope
        if self.struct is not None:
            holder = envelope.field(self.struct)
            parent = holder.schema if holder is not None else None
        found = parent.field(self.field) if parent is not None else None
        return found if found is not None else envelope.field(self.field)


def parse_references(prefix: str, items: tuple[str, ...]) -> tuple[FieldReference, ...]:
    return tuple(FieldReference.parse(prefix, item) for item in items)


def _struct_of(field: str) -> str | None:
    if field in _ENVELOPE_FIELDS:
        return None
    return "transaction" if field in _TRANSACTION_FIELDS else "source"
