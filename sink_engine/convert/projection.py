"""Project a value written with one Connect schema onto another, as Connect's SchemaProjector does.

Struct fields are matched by name: a field of the target missing from the source takes the target field's
default, or null when optional, else the projection fails; source fields missing from the target are
dropped. Numbers widen along int8 < int16 < int32 < int64 < float32 < float64; other type changes,
record name changes and logical-type parameter changes fail. A null value takes the target's default, or
stays null when the target is optional. Failures raise ProjectionError naming the field path.
"""

from __future__ import annotations

from typing import Any

from sink_engine.convert.schema import FLOAT_TYPES, NUMERIC_ORDER, Field, Schema


class ProjectionError(ValueError):
    pass


def project(value: Any, source: Schema, target: Schema, path: str = "") -> Any:
    """`value` (of `source`) as a value of `target`."""
    if source is target or source == target:
        return value
    if value is None:
        return _null(target, path)
    _check_compatible(source, target, path)
    if target.type == "struct":
        return {f.name: _project_field(value, source, f, _join(path, f.name)) for f in target.fields}
    if target.type == "array":
        assert source.items is not None and target.items is not None  # two arrays (_check_compatible)
        return [project(v, source.items, target.items, f"{path}[{i}]") for i, v in enumerate(value)]
    if target.type == "map":
        assert source.keys and source.values and target.keys and target.values  # two maps (_check_compatible)
        return {
            project(k, source.keys, target.keys, path): project(v, source.values, target.values, f"{path}[{k}]")
            for k, v in value.items()
        }
    if target.type in FLOAT_TYPES and source.type not in FLOAT_TYPES:
        return float(value)
    return value


def _project_field(value: dict, source: Schema, target_field: Field, path: str) -> Any:
    source_field = source.field(target_field.name)
    if source_field is None:
        if target_field.schema.default_value() is not None:
            return target_field.schema.default_value()
        if target_field.schema.optional:
            return None
        raise ProjectionError(f"{path}: required field is missing from the record's schema and has no default")
    return project(value.get(target_field.name), source_field.schema, target_field.schema, path)


def _null(target: Schema, path: str) -> Any:
    if target.default_value() is not None:
        return target.default_value()
    if target.optional:
        return None
    raise ProjectionError(f"{path or 'value'}: null, but the current schema's field is required with no default")


def _check_compatible(source: Schema, target: Schema, path: str) -> None:
    where = path or "value"
    if source.type != target.type and not _widens(source.type, target.type):
        raise ProjectionError(f"{where}: {source.type} cannot be projected to {target.type}")
    if source.name != target.name:
        raise ProjectionError(f"{where}: schema name {source.name!r} does not match {target.name!r}")
    if source.parameters != target.parameters:
        raise ProjectionError(
            f"{where}: schema parameters {dict(source.parameters)} do not match {dict(target.parameters)}"
        )


def _widens(source_type: str, target_type: str) -> bool:
    return (
        source_type in NUMERIC_ORDER
        and target_type in NUMERIC_ORDER
        and NUMERIC_ORDER.index(source_type) < NUMERIC_ORDER.index(target_type)
    )


def _join(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name
