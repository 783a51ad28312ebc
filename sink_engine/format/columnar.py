"""ColumnarEncoder: what the Parquet and Avro encoders share.

Values with a schema of their own (structs; strings, bytes and other values with a schema, wrapped in a struct:
format/wrapped.py) become Arrow tables as they arrive, and the format writes them out as it goes
(`_write_prepared`). Schemaless JSON is spooled (json_spool) and written when the file finishes, once its schema is
known (`_write_spooled`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pyarrow as pa

from sink_engine.convert.schema import Schema
from sink_engine.format.arrow_values import to_arrow_table
from sink_engine.format.base import FileContext
from sink_engine.format.json_spool import JsonSpool
from sink_engine.format.wrapped import wrapped
from sink_engine.records import ValueColumn


class ColumnarEncoder:
    def __init__(self, context: FileContext, spool_bytes: int):
        self._context = context
        self._spool = JsonSpool(context, spool_bytes)
        self._value_schema: Schema | None = None  # the wrapper of the file's values that are not structs

    def prepare(self, values: ValueColumn, offsets: list) -> tuple:
        """(True, JSON lines) for schemaless JSON, else (False, what `_prepare_table` made of the batch). Values that
        are not structs are a one-column record `value` (format/wrapped.py), of one schema per file; Avro writes
        those of a schema'd converter bare."""
        if values.kind == "json" and values.schemas is None:
            return True, self._spool.prepare(values, offsets)
        if values.kind != "struct":
            values = self._wrapped(values, offsets)
        return False, self._prepare_table(to_arrow_table(values), offsets)

    def _wrapped(self, values: ValueColumn, offsets: list) -> ValueColumn:
        column = wrapped(values, "value", None, bare=values.kind == "json")
        assert column.schemas is not None  # a struct column's
        self._value_schema = self._value_schema or column.schemas[0]
        for schema, offset in zip(column.schemas, offsets):
            if schema != self._value_schema:
                inner, first = schema.fields[0].schema, self._value_schema.fields[0].schema
                raise self._context.record_error(
                    offset, f"its value of schema {inner.describe()} cannot join a file of {first.describe()} values"
                )
        return column

    def write(self, prepared: tuple, sizes: list) -> None:
        spooled, payload = prepared
        if spooled:
            self._spool.write(payload)
        else:
            self._write_prepared(payload, sizes)

    def finish(self) -> dict[str, bytes]:
        if self._spool.records:
            for table, rows in self._spool.batches():
                self._write_spooled(table, rows)
            self._spool.close()
        self._close()
        return {}

    def _prepare_table(self, table: pa.Table, offsets: list) -> object:
        """Check a batch's table against the format (raising RecordError) and shape it for `_write_prepared`."""
        raise NotImplementedError

    def _write_prepared(self, prepared: Any, sizes: list) -> None:
        raise NotImplementedError

    def _write_spooled(self, table: pa.Table, rows: Callable[[], list[dict]]) -> None:
        """Write one block of a schemaless JSON file (every block has the file's schema); `rows()` gives the
        block's rows as Python dicts."""
        raise NotImplementedError

    def _close(self) -> None:
        raise NotImplementedError
