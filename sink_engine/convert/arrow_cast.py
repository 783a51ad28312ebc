"""A table read by a columnar reader (polars' Avro reader, pyarrow's JSON reader) cast to exactly the Arrow schema
the general path builds for the same Connect schema, so that every format writes the same bytes."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc


def cast_to(table: pa.Table, target: pa.Schema) -> pa.Table:
    """`table`'s columns (in `target`'s order) as one batch of exactly `target`'s types and metadata."""
    columns = [_conform(table.column(i).combine_chunks(), field.type) for i, field in enumerate(target)]
    rows = pa.Array.from_buffers(pa.struct(list(target)), table.num_rows, [None], 0, 0, columns)
    return pa.Table.from_batches([pa.RecordBatch.from_struct_array(rows)]).replace_schema_metadata(target.metadata)


def _conform(array: pa.Array, type_: pa.DataType, nullable: bool = True) -> pa.Array:
    """The array as `type_`, built part by part for structs and lists. Under a null struct, polars leaves its
    children null; where a child is not nullable, they get a placeholder (Parquet writes no value there)."""
    if pa.types.is_struct(type_):
        children = [_conform(array.field(i), field.type, field.nullable) for i, field in enumerate(type_)]
        validity = array.buffers()[0] if nullable and array.null_count else None
        return pa.Array.from_buffers(type_, len(array), [validity], -1 if validity else 0, array.offset, children)
    if pa.types.is_list(type_):
        values = _conform(array.values, type_.value_type, type_.value_field.nullable)
        return pa.ListArray.from_arrays(
            array.offsets.cast(pa.int32()),
            values,
            type=type_,
            mask=pc.is_null(array) if nullable and array.null_count else None,
        )
    cast = array.cast(type_)
    return cast if nullable or not cast.null_count else pc.fill_null(cast, _placeholder(type_))


def _placeholder(type_: pa.DataType) -> pa.Scalar:
    if pa.types.is_string(type_) or pa.types.is_binary(type_):
        return pa.scalar("" if pa.types.is_string(type_) else b"", type_)
    return pa.scalar(False if pa.types.is_boolean(type_) else 0, type_)
