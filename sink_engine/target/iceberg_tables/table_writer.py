"""TableWriter: one range's records into Parquet data files of its table (a Spark task's side of IcebergFormat).

Rows are fitted to the table's schema (`schema_fit`), evolving it first when the records call for it and
`iceberg.tables.evolve-schema-enabled` is on (a metadata commit of its own, retried when another task changed the
table meanwhile), and buffered. An unpartitioned table's buffer becomes a row group of the open data file at
ROW_GROUP_BYTES (`data_file.StreamedDataFile`: its parts upload while the task reads on; a file closes at
`write.target-file-size-bytes` of Arrow bytes, at a schema change and at the end of the range). A partitioned
table's buffer is written by pyiceberg at the target size (or MAX_BUFFER_BYTES) and at the end: one file per
partition and flush. Data files have the table's field ids and lie under its location. Nothing is committed here:
the data files are returned to the driver.

An upsert table's changes are held until the range ends (`changes.RangeChanges`): each key's last change is
written then, and the keys of all go to the driver with the data files.
"""

from __future__ import annotations

import itertools
import sys
import uuid
from collections.abc import Callable, Iterator
from functools import partial
from typing import TypeVar

import pyarrow as pa
from pyiceberg.catalog import Catalog
from pyiceberg.exceptions import CommitFailedException
from pyiceberg.io.pyarrow import _dataframe_to_data_files, schema_to_pyarrow
from pyiceberg.manifest import DataFile
from pyiceberg.table import Table, TableProperties

from sink_engine.dlq.letter import STAGE_TASK_PUT
from sink_engine.dlq.router import qualified_name
from sink_engine.errors import RecordError, StorageError
from sink_engine.model import ClosedFile
from sink_engine.partition.timestamps import FieldTimestamps
from sink_engine.records import Partitions, RecordChunk, ValueColumn
from sink_engine.target.iceberg_tables.catalog import (
    create_table,
    load_table,
    open_catalog,
    reload_table,
    required,
    table_files,
    with_identifier_fields,
)
from sink_engine.target.iceberg_tables.changes import RangeChanges, check_changes, deletes_of
from sink_engine.target.iceberg_tables.data_file import StreamedDataFile
from sink_engine.target.iceberg_tables.errors import TableError, TableSchemaError
from sink_engine.target.iceberg_tables.rows import record_tables
from sink_engine.target.iceberg_tables.schema_fit import FitError, evolution, evolved, fit, table_schema_of
from sink_engine.target.iceberg_tables.settings import IcebergSettings
from sink_engine.task.bad_records import StepFailed
from sink_engine.task.record_writer import RecordWriter

T = TypeVar("T")

MAX_BUFFER_BYTES = 256 * 1024 * 1024  # rows held before data files are written, whatever the target file size
ROW_GROUP_BYTES = 32 * 1024 * 1024  # Arrow bytes of an unpartitioned table's row group
EVOLVE_ATTEMPTS = 10


class TableWriter(RecordWriter):
    """`write` adds records in offset order (RecordWriter); at a record the table cannot take it adds every record
    before it and raises TableSchemaError naming it. `finish` writes what is buffered; `data_files` and `closed`
    then describe every data file written."""

    def __init__(
        self,
        settings: IcebergSettings,
        topic: str,
        partition: int,
        start_offset: int,
        identifier: str | None = None,
        catalog: Catalog | None = None,
    ):
        """`identifier`: the table (default: the topic's, `IcebergSettings.table_identifier`); `catalog`: one to
        share (default: opened with the first records)."""
        self._settings, self.topic, self.partition = settings, topic, partition
        self._identifier = identifier or settings.table_identifier(topic)
        self._record_times = FieldTimestamps(settings.timestamp_field).extract if settings.timestamp_field else None
        self._catalog = catalog
        self._table: Table | None = None  # opened by the first records (`_fitted`)
        self._schema: pa.Schema | None = None
        self._buffer: list[pa.Table] = []
        self._buffered: tuple[int, int | None, int | None] = (0, None, None)  # bytes, first offset, last offset
        self._file: StreamedDataFile | None = None  # an unpartitioned table's open data file
        # first and last offset in the open data file
        self._file_offsets: tuple[int | None, int | None] = (None, None)
        self._write_id, self._counter = uuid.uuid4(), itertools.count()
        self.data_files: list = []
        self.changes = RangeChanges(settings.upsert, self._identifier, topic) if settings.upsert else None
        # of an upsert table, per `finish` with changes: (the offset after its last change, the keys of its changes)
        self.finished_keys: list[tuple[int, pa.Table]] = []
        self._first_change: int | None = None  # offset of the first change held
        self.closed: list[ClosedFile] = []
        self.last_added_offset = start_offset - 1

    def let_go(self, point: int) -> None:
        """Everything before `point` is committed (a continuous run): forget its closed files, their data files and
        the changed keys of what it finished."""
        self.closed = [f for f in self.closed if f.start_offset >= point]
        kept = {f.key for f in self.closed}
        self.data_files = [d for d in self.data_files if d.file_path in kept]
        self.finished_keys = [(end, keys) for end, keys in self.finished_keys if end > point]

    @property
    def first_open_offset(self) -> int | None:
        """The first offset of the rows in no closed data file yet (the open file's, the buffer's, an upsert
        table's changes held); None when there are none."""
        held = (self._file_offsets[0], self._buffered[1], self._first_change)
        return min((offset for offset in held if offset is not None), default=None)

    @property
    def changed_keys(self) -> pa.Table | None:
        """Of an upsert table: the keys of every change finished (a bounded run's range: its changes); else None."""
        if not self.finished_keys:
            return None
        return pa.concat_tables([keys for _, keys in self.finished_keys], promote_options="permissive")

    def finished_parts(self, files: tuple[ClosedFile, ...], point: int) -> list[tuple[list, pa.Table | None]]:
        """(data files, changed keys) of these closed files, all before `point`, in offset order: one part per
        `finish` of an upsert table before it (a later part's keys replace an earlier part's rows), one part of all
        of them without changes."""
        if self.changes is None:
            return [(self.data_files_of(files), None)]
        parts, left = [], list(files)
        for end, keys in (entry for entry in self.finished_keys if entry[0] <= point):
            mine = [f for f in left if f.start_offset < end]
            left = [f for f in left if f.start_offset >= end]
            parts.append((self.data_files_of(tuple(mine)), keys))
        assert not left, "an upsert table's data files are written by a finish"
        return parts

    @property
    def table(self) -> Table | None:
        """The table as this writer last loaded it (None before its first records)."""
        return self._table

    def data_files_of(self, files: tuple[ClosedFile, ...]) -> list:
        """The data files of these closed files."""
        by_path = {d.file_path: d for d in self.data_files}
        return [by_path[f.key] for f in files]

    def write(self, chunk: RecordChunk, values: ValueColumn, partitions: Partitions | None = None) -> None:
        for start, stop, records in self._tables(chunk, values):
            self._add(chunk, values, start, stop, records)

    def write_tombstones(self, chunk: RecordChunk, routed: list | None = None, sidecars: dict | None = None) -> None:
        """Upsert mode: each tombstone deletes the row its key names (`RangeChanges.add_tombstones`); one that
        names none is a bad record (every record before it is added first). Tombstones of a table that does not
        exist yet delete nothing."""
        if self.changes is None:
            super().write_tombstones(chunk, routed)
        assert self.changes is not None  # upsert mode
        if self.open_existing() is None:
            self.last_added_offset = chunk.offsets[-1]
            return
        try:
            self.changes.add_tombstones(chunk, self._opened_schema)
            self._changed(chunk.offsets[0])
        except RecordError as e:
            position = chunk.offsets.index(e.offset)
            if position:
                self.write_tombstones(chunk.slice(0, position))
            # every record before the bad one is written: nothing to write again (resume past it)
            raise StepFailed(e, STAGE_TASK_PUT, qualified_name(self), sys.maxsize) from None
        self.last_added_offset = chunk.offsets[-1]

    def open_existing(self) -> Table | None:
        """Open the table when it exists (without creating it); the table, or None."""
        if self._table is None:
            self._open(None)
        return self._table

    def finish(self) -> None:
        """Write what is held: an upsert table's changes (each key's last) and the buffered rows, closing every file.
        A continuous run's writer goes on after it."""
        if self.changes is not None and self._first_change is not None:
            rows, keys = self.changes.take(self._opened_schema)
            if rows.num_rows:
                self._append(rows, self._first_change, self.last_added_offset)
            self.finished_keys.append((self.last_added_offset + 1, keys))
            self._first_change = None
        self._finish_files()

    def _add(self, chunk: RecordChunk, values: ValueColumn, start: int, stop: int, records: pa.Table) -> None:
        """Add records [start, stop) of one schema; when they do not fit, add them in halves down to the first
        record that does not fit alone, and raise TableSchemaError for it."""
        fitted = self._fitted(records)
        if isinstance(fitted, pa.Table) and self.changes is not None:
            self.changes.add(fitted, deletes_of(records, self.changes.cdc_field))
            self._changed(chunk.offsets[start])
            self.last_added_offset = chunk.offsets[stop - 1]
            return
        if isinstance(fitted, pa.Table):
            self._append(fitted, chunk.offsets[start], chunk.offsets[stop - 1])
            return
        if stop - start == 1:
            raise TableSchemaError(
                self.topic, self.partition, chunk.offsets[start], f"table {self._identifier}: {fitted}"
            )
        middle = (start + stop) // 2
        for low, high in ((start, middle), (middle, stop)):
            sub_chunk, sub_values = chunk.slice(low, high), values.slice(low, high)
            for s, e, part in self._tables(sub_chunk, sub_values):
                self._add(sub_chunk, sub_values, s, e, part)

    def _tables(self, chunk: RecordChunk, values: ValueColumn) -> Iterator[tuple[int, int, pa.Table]]:
        return record_tables(chunk, values, self._settings.extra_columns, self._record_times)

    def _fitted(self, records: pa.Table) -> pa.Table | FitError:
        """The records in the table's schema (evolving the table first when they call for it), or why not."""
        if self._table is None:
            self._open(records.schema)
        changes = evolution(self._schema, records.schema) if self._settings.evolve_schema else None
        try:
            if changes is not None:
                fit(evolved(self._schema, changes), records)  # check first: only records that fit change the table
                self._evolve(records.schema)
            fitted = fit(self._schema, records)
            if self.changes is not None:
                check_changes(records, fitted, self.changes.id_columns, self.changes.cdc_field)
            return fitted
        except FitError as e:
            return e

    def _open(self, records: pa.Schema | None) -> None:
        """Open the table, creating it for `records` when it is missing (and them given)."""
        catalog = self._catalog = self._catalog or open_catalog(self._settings)
        table = load_table(catalog, self._identifier)
        if table is None and records is None:
            return
        if table is None:
            if not self._settings.auto_create:
                raise TableError(
                    f"table {self._identifier} does not exist and iceberg.tables.auto-create-enabled is false"
                )
            assert records is not None  # returned above without
            schema = table_schema_of(records)
            if self.changes is not None:  # identifier fields are required columns
                schema = required(schema, self.changes.id_columns, self.changes.id_key)
            table = create_table(catalog, self._identifier, schema, self._settings)
        if self.changes is not None:
            table = with_identifier_fields(table, self.changes.id_columns, self.changes.id_key)
        self._use(table)

    def _evolve(self, records: pa.Schema) -> None:
        """Apply the records' changes to the table; another task's change meanwhile is read and the changes
        computed again (they may be none by then)."""
        self._finish_files()  # buffered rows and the open file are in the schema they were fitted to
        for _ in range(EVOLVE_ATTEMPTS):
            changes = evolution(self._schema, records)
            if changes is None:
                return
            table = self._opened
            try:
                with table_files(self._identifier, "a schema change"), table.update_schema() as update:
                    update.union_by_name(changes)
                self._use(table)
                return
            except CommitFailedException:
                assert self._catalog is not None  # opened with the table
                self._use(reload_table(self._catalog, self._identifier))
        raise TableError(f"table {self._identifier}: schema change kept losing to concurrent changes")

    def _use(self, table: Table) -> None:
        self._table, self._schema = table, schema_to_pyarrow(table.schema())

    def _changed(self, first: int) -> None:
        self._first_change = first if self._first_change is None else self._first_change

    @property
    def _opened_schema(self) -> pa.Schema:
        assert self._schema is not None  # set with the table
        return self._schema

    @property
    def _opened(self) -> Table:
        assert self._table is not None  # records were fitted to it
        return self._table

    def _append(self, fitted: pa.Table, first: int, last: int) -> None:
        size, start, _ = self._buffered
        self._buffer.append(fitted)
        self._buffered = (size + fitted.nbytes, first if start is None else start, last)
        self.last_added_offset = last
        if self._buffered[0] >= self._buffer_limit():
            self._flush()

    def _target_bytes(self) -> int:
        target = self._opened.metadata.properties.get(TableProperties.WRITE_TARGET_FILE_SIZE_BYTES)
        return int(target or TableProperties.WRITE_TARGET_FILE_SIZE_BYTES_DEFAULT)

    def _buffer_limit(self) -> int:
        if self._opened.spec().is_unpartitioned():
            return min(self._target_bytes(), ROW_GROUP_BYTES)
        return min(self._target_bytes(), MAX_BUFFER_BYTES)

    def _flush(self) -> None:
        """Write the buffered rows: a row group of the open data file (unpartitioned), else pyiceberg's files."""
        if not self._buffer:
            return
        rows = pa.concat_tables(self._buffer)
        _, first, last = self._buffered
        assert first is not None and last is not None  # set with the first buffered rows
        self._buffer, self._buffered, table = [], (0, None, None), self._opened
        if table.spec().is_unpartitioned():
            self._stream(rows, first, last)
            return
        written = self._storing(
            lambda: list(_dataframe_to_data_files(table.metadata, rows, table.io, self._write_id, self._counter))
        )
        for data_file in written:
            self._closed(data_file, first, last)

    def _stream(self, rows: pa.Table, first: int, last: int) -> None:
        """The rows into the open data file, closing it at the target size: rows past it go to the next file (cut
        by the rows' average size, as pyiceberg cuts). A file's offsets are those of the buffers it holds rows of."""
        target, row_bytes, start = self._target_bytes(), rows.nbytes / max(1, rows.num_rows), 0
        while start < rows.num_rows:
            if self._file is None:
                self._file = self._storing(lambda: StreamedDataFile(self._opened, self._write_id, next(self._counter)))
                self._file_offsets = (first, None)
            part = rows.slice(start, max(1, int((target - self._file.bytes) / row_bytes)) if row_bytes else None)
            self._storing(partial(self._file.write, part))
            self._file_offsets, start = (self._file_offsets[0], last), start + part.num_rows
            if self._file.bytes >= target:
                self._close_file()

    def _finish_files(self) -> None:
        self._flush()
        self._close_file()

    def _close_file(self) -> None:
        if self._file is None:
            return
        data_file, (first, last) = self._storing(self._file.close), self._file_offsets
        assert first is not None and last is not None  # the file holds rows
        self._file, self._file_offsets = None, (None, None)
        self._closed(data_file, first, last)

    def _storing(self, write: Callable[[], T]) -> T:
        """`write()`, pyiceberg's file IO failing as a StorageError naming the table."""
        try:
            return write()
        except OSError as e:
            raise StorageError(f"writing data files of table {self._identifier} failed: {e}") from e

    def _closed(self, data_file: DataFile, first: int, last: int) -> None:
        self.data_files.append(data_file)
        spec, schema = self._opened.spec(), self._opened.schema()
        self.closed.append(
            ClosedFile(
                data_file.file_path,
                spec.partition_to_path(data_file.partition, schema),
                first,
                last,
                data_file.record_count,
                data_file.file_size_in_bytes,
            )
        )
