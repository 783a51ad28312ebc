"""The bridge from converted values to Arrow, for the columnar formats (Parquet, Avro).

`to_arrow_table` dispatches on `ValueColumn.kind`. A new kind registers a builder in `_BUILDERS`:
a function `(values, context) -> pyarrow.Table` that returns one row per value, in order, with a
schema that depends only on the values (so that a rerun encodes the same bytes), and raises
RecordError (see `record_error`) for a value it cannot represent.
"""
from __future__ import annotations

from typing import Callable

import pyarrow as pa

from sink_engine.convert.arrow_types import struct_table
from sink_engine.convert.base import ValueColumn
from sink_engine.errors import RecordError
from sink_engine.format.base import FileContext
from sink_engine.format.json_inference import json_table


def to_arrow_table(values: ValueColumn, context: FileContext) -> pa.Table:
    """The values of one file as an Arrow table: one row per value, in order."""
    builder = _BUILDERS.get(values.kind)
    if builder is None:
        raise AssertionError(f"no Arrow builder for value kind {values.kind!r}")
    return builder(values, context)


def record_error(context: FileContext, position: int, cause: str) -> RecordError:
    """A RecordError naming the record at `position` of the file."""
    return RecordError(context.topic, context.partition, context.offsets[position], cause)


def _single_column(arrow_type: pa.DataType) -> Callable[[ValueColumn, FileContext], pa.Table]:
    """StringConverter / ByteArrayConverter values: one column named `value`."""
    def build(values: ValueColumn, context: FileContext) -> pa.Table:
        return pa.table({"value": pa.array(values.items, type=arrow_type)})
    return build


_BUILDERS: dict[str, Callable[[ValueColumn, FileContext], pa.Table]] = {
    "json": lambda values, context: json_table(values, lambda i, cause: record_error(context, i, cause)),
    "string": _single_column(pa.string()),
    "bytes": _single_column(pa.binary()),
    "struct": lambda values, context: struct_table(values),
}
