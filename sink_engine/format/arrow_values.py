"""The bridge from converted values with a schema of their own to Arrow, for the columnar formats.

`to_arrow_table` dispatches on `ValueColumn.kind` (values that are not structs are wrapped in one first:
format/wrapped.py). A new kind registers a builder in `_BUILDERS`: a function
`values -> pyarrow.Table` that returns one row per value, in order, with a schema that depends only on the
values' schema (so that the batches of one file share it and a rerun encodes the same bytes). Schemaless
JSON has no schema until its file is complete: see `json_spool` and `json_inference`.
"""

from __future__ import annotations

from collections.abc import Callable

import pyarrow as pa

from sink_engine.convert.arrow_column import ArrowStructColumn
from sink_engine.convert.arrow_types import struct_table
from sink_engine.records import ValueColumn


def to_arrow_table(values: ValueColumn) -> pa.Table:
    """The values as an Arrow table: one row per value, in order."""
    builder = _BUILDERS.get(values.kind)
    if builder is None:
        raise AssertionError(f"no Arrow builder for value kind {values.kind!r}")
    return builder(values)


def _struct_table(values: ValueColumn) -> pa.Table:
    """Struct values: the table an ArrowStructColumn read columnarly (the same table), else built from items."""
    table = values.arrow_table() if isinstance(values, ArrowStructColumn) else None
    return table if table is not None else struct_table(values)


_BUILDERS: dict[str, Callable[[ValueColumn], pa.Table]] = {
    "struct": _struct_table,
}
