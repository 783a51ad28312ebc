"""Fit records (as Arrow) to an Iceberg table's schema, and the schema evolution they call for.

Pure functions over pyarrow types and arrays; the table's schema comes in as the Arrow schema pyiceberg derives
from it (`schema_to_pyarrow`, with field ids). The rules:

- Types are first put as Iceberg holds them (`iceberg_type`): int8/int16 as int32, time as time64[us],
  timestamps in microseconds (with or without UTC), date64 as date32; a field whose values are all null (a
  schemaless JSON field seen only as null) has no type yet and is left out.
- A field the table lacks is a new optional column (`evolution`, with schema evolution on), else it is dropped.
- A wider type than the column's that Iceberg can promote to (int to long, float to double, a decimal of larger
  precision and the same scale) widens the column (with schema evolution on).
- Otherwise values are cast to the column's type only where no value can change: integers between widths and
  to floating point, floating point to integers when whole, float to double, decimals to other decimals, and
  between string (or binary) widths. A value that does not fit, and any other type change (a string where the
  column holds numbers, a struct where it holds a list, ...), is a `FitError` naming the column.
- Columns the records lack are null.
"""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc


class FitError(Exception):
    """Records that cannot be written to the table's schema; `column` is the dotted path at fault."""

    def __init__(self, column: str, reason: str):
        self.column, self.reason = column, reason
        super().__init__(f"column {column}: {reason}")


def iceberg_type(arrow_type: pa.DataType) -> pa.DataType | None:
    """The type as an Iceberg column holds it (see the module rules); None for a type without values (null)."""
    t = arrow_type
    if pa.types.is_null(t):
        return None
    if pa.types.is_dictionary(t):
        return iceberg_type(t.value_type)
    if pa.types.is_struct(t):
        fields = [f.with_type(kept) for f in t if (kept := iceberg_type(f.type)) is not None]
        return pa.struct(fields) if fields else None
    if _is_list(t):
        element = iceberg_type(t.value_type)
        return None if element is None else pa.list_(t.value_field.with_type(element))
    if pa.types.is_map(t):
        key, item = iceberg_type(t.key_type), iceberg_type(t.item_type)
        return None if key is None or item is None else pa.map_(key, item)
    if pa.types.is_integer(t):
        return (
            pa.int64() if t.bit_width == 64 or (t.bit_width == 32 and pa.types.is_unsigned_integer(t)) else pa.int32()
        )
    if pa.types.is_time(t):
        return pa.time64("us")
    if pa.types.is_timestamp(t):
        return pa.timestamp("us", tz=None if t.tz is None else "UTC")
    if pa.types.is_date(t):
        return pa.date32()
    if pa.types.is_float16(t):
        return pa.float32()
    if pa.types.is_fixed_size_binary(t):
        return pa.binary()
    return t


def table_schema_of(records: pa.Schema) -> pa.Schema:
    """The schema of a table created from these records: Iceberg types, every column optional."""
    return pa.schema(
        [_optional(f.with_type(iceberg_type(f.type))) for f in records if iceberg_type(f.type) is not None]
    )


def evolution(table: pa.Schema, records: pa.Schema) -> pa.Schema | None:
    """The changes the records call for, as a schema for pyiceberg's `union_by_name` (only new and widened fields,
    nested as they are); None when there are none."""
    changes = _struct_changes(pa.struct(list(table)), pa.struct(list(records)))
    return None if changes is None else pa.schema(list(changes))


def evolved(table: pa.Schema, changes: pa.Schema) -> pa.Schema:
    """The table's schema with `changes` (from `evolution`) applied, as pyiceberg's union_by_name applies them
    (field ids of new fields aside): to check that records fit before the table is changed for them."""
    return pa.schema(list(_union(pa.struct(list(table)), pa.struct(list(changes)))))


def fit(table: pa.Schema, records: pa.Table) -> pa.Table:
    """The records in the table's schema (field ids kept). Raises FitError naming the first column that does not
    fit."""
    columns = []
    for field in table:
        if field.name in records.column_names:
            columns.append(cast_to(records.column(field.name).combine_chunks(), field.type, field.name))
        else:
            columns.append(pa.nulls(len(records), field.type))
    return pa.Table.from_arrays(columns, schema=table)


def cast_to(array: pa.Array, target: pa.DataType, path: str) -> pa.Array:
    """`array` as `target` by the module's rules; raises FitError naming `path` (a dotted column)."""
    source = array.type
    if pa.types.is_null(source):
        return pa.nulls(len(array), target)
    if pa.types.is_dictionary(source):
        return cast_to(array.dictionary_decode(), target, path)
    if source == target:
        return array
    if pa.types.is_struct(target):
        return _cast_struct(array, target, path)
    if _is_list(target):
        return _cast_list(array, target, path)
    if pa.types.is_map(target):
        return _cast_map(array, target, path)
    if not _castable(source, target):
        raise FitError(path, f"values of type {source} cannot be written to a column of type {target}")
    try:
        return pc.cast(array, target, safe=True)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as e:
        raise FitError(path, f"a {source} value does not fit the column's type {target}: {e}") from None


def _struct_changes(table: pa.StructType, records: pa.StructType) -> pa.StructType | None:
    changes = []
    for field in records:
        wanted = iceberg_type(field.type)
        if wanted is None:
            continue
        index = table.get_field_index(field.name)
        if index < 0:
            changes.append(_optional(field.with_type(wanted)))
            continue
        change = _type_change(table.field(index).type, wanted)
        if change is not None:
            changes.append(_optional(field.with_type(change)))
    return pa.struct(changes) if changes else None


def _union(current: pa.DataType, change: pa.DataType) -> pa.DataType:
    if pa.types.is_struct(current) and pa.types.is_struct(change):
        fields = {f.name: f for f in current}
        for field in change:
            fields[field.name] = (
                field.with_type(_union(fields[field.name].type, field.type)) if field.name in fields else field
            )
        return pa.struct(list(fields.values()))
    if _is_list(current) and _is_list(change):
        return pa.list_(current.value_field.with_type(_union(current.value_type, change.value_type)))
    if pa.types.is_map(current) and pa.types.is_map(change):
        return pa.map_(current.key_type, _union(current.item_type, change.item_type))
    return change


def _type_change(current: pa.DataType, wanted: pa.DataType) -> pa.DataType | None:
    """What a column of type `current` must become for values of type `wanted` (None: nothing)."""
    if pa.types.is_struct(current) and pa.types.is_struct(wanted):
        return _struct_changes(current, wanted)
    if _is_list(current) and _is_list(wanted):
        element = _type_change(current.value_type, wanted.value_type)
        return None if element is None else pa.list_(wanted.value_field.with_type(element))
    if pa.types.is_map(current) and pa.types.is_map(wanted):
        item = _type_change(current.item_type, wanted.item_type)
        return None if item is None else pa.map_(wanted.key_type, item)
    if _promotes(current, wanted):
        return wanted
    return None


def _promotes(current: pa.DataType, wanted: pa.DataType) -> bool:
    """Iceberg's type promotions: int to long, float to double, decimal(P, S) to decimal(P', S) with P' > P."""
    if pa.types.is_int32(current) and pa.types.is_int64(wanted):
        return True
    if pa.types.is_float32(current) and pa.types.is_float64(wanted):
        return True
    return (
        pa.types.is_decimal(current)
        and pa.types.is_decimal(wanted)
        and current.scale == wanted.scale
        and wanted.precision > current.precision
    )


def _castable(source: pa.DataType, target: pa.DataType) -> bool:
    """Value casts that never change a value that passes a safe cast (see the module rules)."""
    kinds = (
        (pa.types.is_integer, pa.types.is_integer),
        (pa.types.is_integer, pa.types.is_floating),
        (pa.types.is_floating, pa.types.is_integer),
        (pa.types.is_decimal, pa.types.is_decimal),
        (_is_text, _is_text),
        (_is_bytes, _is_bytes),
        (pa.types.is_time, pa.types.is_time),
        (pa.types.is_date, pa.types.is_date),
    )
    if any(is_source(source) and is_target(target) for is_source, is_target in kinds):
        return True
    if pa.types.is_floating(source) and pa.types.is_floating(target):
        return target.bit_width >= source.bit_width
    return (
        pa.types.is_timestamp(source) and pa.types.is_timestamp(target) and (source.tz is None) == (target.tz is None)
    )


def _cast_struct(array: pa.Array, target: pa.StructType, path: str) -> pa.Array:
    if not pa.types.is_struct(array.type):
        raise FitError(path, f"values of type {array.type} cannot be written to a struct column")
    array = _flat(array)
    children = []
    for field in target:
        index = array.type.get_field_index(field.name)
        child = array.field(index) if index >= 0 else pa.nulls(len(array), field.type)
        children.append(cast_to(child, field.type, f"{path}.{field.name}"))
    return pa.StructArray.from_arrays(children, fields=list(target), mask=array.is_null())


def _cast_list(array: pa.Array, target: pa.DataType, path: str) -> pa.Array:
    if not _is_list(array.type):
        raise FitError(path, f"values of type {array.type} cannot be written to a list column")
    array = _flat(array)
    values = cast_to(array.values, target.value_type, f"{path}.element")
    offsets = pc.cast(array.offsets, pa.int64() if pa.types.is_large_list(target) else pa.int32())
    cls = pa.LargeListArray if pa.types.is_large_list(target) else pa.ListArray
    return cls.from_arrays(offsets, values, type=target, mask=array.is_null())


def _cast_map(array: pa.Array, target: pa.MapType, path: str) -> pa.Array:
    if not pa.types.is_map(array.type):
        raise FitError(path, f"values of type {array.type} cannot be written to a map column")
    array = _flat(array)
    keys = cast_to(array.keys, target.key_type, f"{path}.key")
    items = cast_to(array.items, target.item_type, f"{path}.value")
    return pa.MapArray.from_arrays(array.offsets, keys, items, type=target, mask=array.is_null())


def _flat(array: pa.Array) -> pa.Array:
    """The array without a slice offset, so that its children and offsets line up from zero."""
    return pa.concat_arrays([array]) if array.offset else array


def _optional(field: pa.Field) -> pa.Field:
    return field.with_nullable(True)


def _is_list(t: pa.DataType) -> bool:
    return pa.types.is_list(t) or pa.types.is_large_list(t)


def _is_text(t: pa.DataType) -> bool:
    return pa.types.is_string(t) or pa.types.is_large_string(t)


def _is_bytes(t: pa.DataType) -> bool:
    return pa.types.is_binary(t) or pa.types.is_large_binary(t) or pa.types.is_fixed_size_binary(t)
