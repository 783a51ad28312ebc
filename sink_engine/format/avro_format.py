"""AvroFormat: an Avro object container file (`.avro`) written with fastavro (`avro.codec`), block by block.

The schema comes from the file's Arrow schema (see `avro_schema`): the first batch's for values with a
schema of their own, the inferred one for schemaless JSON (written when the file closes). A value, key or header
list that is not a struct is written bare, as the connector writes it (format/wrapped.py): its own type is the
file's schema. The sync marker
is derived from topic, partition and start offset, so that a rerun writes the same bytes; fastavro ends a
block after the record that fills it, so blocks do not depend on how records were batched.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import IO, cast

import fastavro
import pyarrow as pa

from sink_engine.config.keys import DEFAULT_PART_SIZE
from sink_engine.convert.schema import BARE
from sink_engine.format.avro_schema import avro_schema, bare_schema, renamed_rows, renamed_values
from sink_engine.format.base import BinarySink, FileContext, Format
from sink_engine.format.columnar import ColumnarEncoder

CODECS = ("null", "deflate", "snappy", "bzip2", "zstandard", "xz")


def sync_marker(context: FileContext) -> bytes:
    """16 bytes fixed by the file's identity: MD5 of `<topic>+<partition>+<start offset>`."""
    return hashlib.md5(f"{context.topic}+{context.partition}+{context.start_offset}".encode()).digest()


class AvroFormat(Format):
    columnar = True
    extension = ".avro"

    def __init__(self, codec: str = "null", spool_bytes: int = DEFAULT_PART_SIZE):
        self.codec, self.spool_bytes = codec, spool_bytes

    def open(self, context: FileContext, out: BinarySink) -> _AvroEncoder:
        return _AvroEncoder(self, context, out)


class _AvroEncoder(ColumnarEncoder):
    def __init__(self, fmt: AvroFormat, context: FileContext, out: BinarySink):
        super().__init__(context, fmt.spool_bytes)
        self._fmt, self._out = fmt, out
        self._schema: tuple | None = None  # (Avro schema, whether field names were renamed, whether it is bare)
        self._writer: fastavro.write.Writer | None = None

    def _prepare_table(self, table: pa.Table, offsets: list) -> list:
        return self._datums(table.to_pylist(), self._schema or self._schema_of(table, offsets[0]))

    @staticmethod
    def _datums(rows: list, file_schema: tuple) -> list:
        """The rows as the file's datums: re-keyed by their Avro names, or a bare column's values."""
        schema, renamed, bare = file_schema
        if bare:
            values = [next(iter(row.values())) for row in rows]
            return renamed_values(values, schema) if renamed else values
        return renamed_rows(rows, schema) if renamed else rows

    def _write_prepared(self, rows: list, sizes: list) -> None:
        writer = self._writer if self._writer is not None else self._start()
        for row in rows:
            writer.write(row)

    def _write_spooled(self, table: pa.Table, rows: Callable[[], list[dict]]) -> None:
        schema, renamed, _ = self._schema or self._schema_of(table, self._context.start_offset)
        self._write_prepared(renamed_rows(table.to_pylist(), schema) if renamed else rows(), [])

    def _close(self) -> None:
        assert self._writer is not None  # a file has a record
        self._writer.flush()

    def _schema_of(self, table: pa.Table, offset: int) -> tuple:
        bare = (table.schema.metadata or {}).get(BARE.encode()) is not None
        try:
            schema, renamed = bare_schema(table.schema.field(0)) if bare else avro_schema(table.schema)
            self._schema = schema, renamed, bare
        except TypeError as e:
            raise self._context.record_error(offset, f"cannot be written as Avro: {e}") from None
        return self._schema

    def _start(self) -> fastavro.write.Writer:
        """The file's writer, once its schema is known (`_prepare_table` or `_write_spooled` found it)."""
        assert self._schema is not None
        out = cast(IO, self._out)  # fastavro's annotation asks for IO; it calls write, flush, tell and seekable
        self._writer = fastavro.write.Writer(
            out, fastavro.parse_schema(self._schema[0]), codec=self._fmt.codec, sync_marker=sync_marker(self._context)
        )
        return self._writer
