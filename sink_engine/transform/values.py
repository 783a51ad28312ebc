"""What `$Key` / `$Value` transforms share: the operated part of a record by role, and checks of its shape."""

from __future__ import annotations

from typing import Any

from sink_engine.convert.schema import Schema
from sink_engine.transform.errors import TransformError
from sink_engine.transform.record import TransformRecord


def operand(record: TransformRecord, role: str) -> tuple[Any, Schema | None]:
    """The (value, schema) a `$Key` (role "key") or `$Value` (role "value") transform works on."""
    return (record.key, record.key_schema) if role == "key" else (record.value, record.value_schema)


def with_operand(record: TransformRecord, role: str, value: Any, schema: Schema | None) -> TransformRecord:
    """The record with its key or value (and that one's schema) replaced."""
    if role == "key":
        return record.with_changes(key=value, key_schema=schema)
    return record.with_changes(value=value, value_schema=schema)


def require_map(value: Any, purpose: str) -> dict:
    """A schemaless value that must be a map (Connect's Requirements.requireMap)."""
    if not isinstance(value, dict):
        raise TransformError(f"only a map is supported for {purpose} without a schema, found {type(value).__name__}")
    return value


def require_struct(value: Any, schema: Schema | None, purpose: str) -> dict:
    """A value with a schema that must be a struct (Connect's Requirements.requireStruct)."""
    if schema is None or schema.type != "struct" or not isinstance(value, dict):
        found = schema.type if schema is not None else type(value).__name__
        raise TransformError(f"only a struct is supported for {purpose}, found {found}")
    return value
