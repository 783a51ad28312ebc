"""JsonSpool: the schemaless JSON values of one Parquet or Avro file, kept as text until the file closes.

The file's schema is inferred from all of its records (json_inference), so nothing can be encoded before
the last one. The text stays in memory up to `s3.part.size` bytes (as the pieces written, joined once when the
file closes), then moves to a temporary file on local disk. When the file closes, its schema is inferred block by
block (blocks of about one part), then each block is read with it and handed to the format: one block in memory at
a time, unless a field's values conflict (the Python path reads the whole file). Values are checked when they
arrive, so that a value the file cannot hold is a RecordError that the dead-letter queue can take: a file holds
JSON objects, or only nulls (a tombstone file).
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from typing import IO

import orjson
import pyarrow as pa

from sink_engine.format.base import FileContext
from sink_engine.format.json_inference import (
    block_schema,
    documents,
    json_text_table,
    merge_schemas,
    needs_python,
    read_block,
    rows_in_python,
)
from sink_engine.records import ValueColumn

_OBJECT, _NULL = "object", "null"


class JsonSpool:
    def __init__(self, context: FileContext, memory_bytes: int):
        self._context = context
        self._pieces: list[bytes] = []  # the text while it fits in memory_bytes
        self._file: IO[bytes] | None = None  # a temporary file once it does not
        self._size = 0
        self._block_bytes = memory_bytes
        self._holds: str | None = None  # _OBJECT or _NULL once the first value is in
        self.records = 0

    def prepare(self, values: ValueColumn, offsets: list) -> list:
        """The values' lines; raises RecordError at the first value that is neither an object nor, in a
        file of nulls, null."""
        items = values.items
        if self._holds != _NULL and all(item[:1] == b"{" for item in items):
            return items
        holds = self._holds
        for item, offset in zip(items, offsets):
            found = _OBJECT if item.lstrip()[:1] == b"{" else _NULL if item.strip() == b"null" else None
            if found is None:
                raise self._context.record_error(
                    offset,
                    f"Parquet and Avro output of schemaless JSON needs a JSON object value, got {_type_name(item)}",
                )
            if holds not in (None, found):
                raise self._context.record_error(
                    offset, "a null value (tombstone) and JSON objects cannot share a Parquet or Avro file"
                )
            holds = found
        return items

    def write(self, lines: list) -> None:
        if self._holds is None:
            self._holds = _OBJECT if lines[0].lstrip()[:1] == b"{" else _NULL
        text = b"\n".join(lines)
        if self._file is not None:
            self._file.writelines((text, b"\n"))
        else:
            self._pieces += (text, b"\n")  # no copy of the text until the file closes
        self._size += len(text) + 1
        self.records += len(lines)
        if self._file is None and self._size > self._block_bytes:
            self._file = tempfile.TemporaryFile()  # noqa: SIM115 - open across write() calls until close()
            self._file.writelines(self._pieces)
            self._pieces = []

    def batches(self) -> Iterator[tuple]:
        """The file as (table, function giving its rows as Python dicts) per block, all with the file's
        schema; a tombstone file is one `value` column of nulls."""
        if self._holds == _NULL:
            yield pa.table({"value": pa.nulls(self.records)}), lambda: [{"value": None}] * self.records
            return
        if self._file is None:
            yield json_text_table(self._whole_text(), self._python_error)
            return
        schema, conflict = None, False
        for block in self._blocks():
            found = block_schema(block)[1]
            schema = None if found is None else merge_schemas(schema, found)
            if schema is None:
                conflict = True
                break
        if conflict or needs_python(schema):
            yield rows_in_python(self._whole_text(), self._python_error)
            return
        for block in self._blocks():
            yield read_block(block, schema), lambda block=block: documents(block)

    def close(self) -> None:
        self._pieces = []
        if self._file is not None:
            self._file.close()

    def _blocks(self) -> Iterator[bytes]:
        """The text of a file on disk in blocks of whole lines, each ending at the first line end past
        `block_bytes`."""
        file = self._file
        assert file is not None  # the text moved to disk
        file.seek(0)
        while block := file.read(self._block_bytes):
            yield block + (file.readline() if not block.endswith(b"\n") else b"")

    def _whole_text(self) -> bytes:
        if self._file is None:
            return b"".join(self._pieces)
        self._file.seek(0)
        return self._file.read()

    def _python_error(self, position: int, cause: str) -> Exception:
        return self._context.record_error(self._context.start_offset, f"record {position} of the file: {cause}")


def _type_name(item: bytes) -> str:
    return type(orjson.loads(item)).__name__
