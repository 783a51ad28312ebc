"""Fan-out by field (`iceberg.tables.dynamic-enabled`): each record goes to the table its `iceberg.tables.route-field`
names, a Spark task's side.

The field's value, lower-cased as the Iceberg Kafka Connect sink reads it, is the table's `namespace.table`
(`TableRoutes`, the range's partitioner: a record without the field, or whose value names no table, is a bad record
naming its offset). A range's records go to one TableWriter per table (`RoutedTableWriter`), in offset order.

Exactly once across tables: the driver commits one snapshot per table, then the offsets; a crash between two
tables' snapshots leaves the offsets where they were, so the rerun reads those records again. Each table's writer
skips the records of its topic-partition below the table's `written-below` mark (iceberg/snapshots.py), read from
the connector's newest snapshot of the table when the writer opens it: what the crashed run committed to this table
is not appended again, what it did not commit to the others is. The driver appends only while that snapshot is
still the connector's newest in the table (another run's commit meanwhile: exit 4), as for `iceberg.tables`.
"""

from __future__ import annotations

import bisect
import itertools
import re

from pyiceberg.catalog import Catalog

from sink_engine.errors import RecordError
from sink_engine.iceberg.catalog import open_catalog
from sink_engine.iceberg.settings import IcebergSettings
from sink_engine.iceberg.snapshots import newest_of_connector, written_below
from sink_engine.iceberg.table_writer import TableWriter
from sink_engine.model import ClosedFile, TopicPartition
from sink_engine.partition.fields import MISSING, FieldError, field_path, lookup_all
from sink_engine.records import Partitions, RecordChunk, ValueColumn
from sink_engine.task.record_writer import RecordWriter

_TABLE_NAME = re.compile(r"[^.\s/]+(\.[^.\s/]+)+")  # namespace[.namespace...].table
_MEMO_LIMIT = 10_000


class TableRoutes:
    """The partitioner of a routed range: each record's table identifier, from the route field's string value."""

    def __init__(self, route_field: str):
        self._name, self._path = route_field, field_path(route_field)
        self._seen: dict[str, str] = {}  # field value -> identifier (values repeat: a table per source table)

    def encode(self, chunk: RecordChunk, values: ValueColumn) -> Partitions:
        identifiers = []
        for i, value in enumerate(lookup_all(values.documents(), self._path)):
            identifier = self._seen.get(value) if type(value) is str else None
            if identifier is None:
                identifier = self._identifier(chunk, i, value)
                if len(self._seen) < _MEMO_LIMIT:
                    self._seen[value] = identifier
            identifiers.append(identifier)
        return Partitions.per_record(identifiers)

    def _identifier(self, chunk: RecordChunk, i: int, value) -> str:
        def refused(problem: str) -> FieldError:
            return FieldError(chunk.topic, chunk.partition, chunk.offsets[i], self._name, problem)

        if value is MISSING:
            raise refused("(iceberg.tables.route-field) is missing from the value: it names the record's table")
        if type(value) is not str:
            raise refused(f"(iceberg.tables.route-field) is a {type(value).__name__}, not a table's name")
        identifier = value.lower()
        if not _TABLE_NAME.fullmatch(identifier):
            raise refused(f"(iceberg.tables.route-field) is {value!r}, not `namespace.table`")
        return identifier


class RoutedTableWriter(RecordWriter):
    """A range's records into the TableWriter of each one's table (`partitions`: TableRoutes' identifiers), in
    offset order; `bases` holds, per table, the connector's snapshot its writer skipped by (None: none)."""

    def __init__(self, settings: IcebergSettings, connector: str, topic: str, partition: int, start_offset: int):
        self._settings, self._connector = settings, connector
        self._tp, self._start = TopicPartition(topic, partition), start_offset
        self._catalog: Catalog | None = None
        self.writers: dict[str, TableWriter] = {}
        self.bases: dict[str, int | None] = {}
        self._skip_below: dict[str, int] = {}  # table -> records of the range below it are in the table
        self.last_added_offset = start_offset - 1
        self.closed: list[ClosedFile] = []  # every table's, after each write and at the finish

    def write(self, chunk: RecordChunk, values: ValueColumn, partitions: Partitions) -> None:
        position = 0
        for encoded, run in itertools.groupby(partitions.as_list(len(chunk))):
            start = position
            position += sum(1 for _ in run)
            identifier = str(encoded[1] if isinstance(encoded, tuple) else encoded)  # (routed topic, table): routers
            writer = self._writer(identifier)
            first = bisect.bisect_left(chunk.offsets, self._skip_below[identifier], start, position)
            if first < position:
                try:
                    writer.write(chunk.slice(first, position), values.slice(first, position))
                except RecordError:
                    self.last_added_offset = max(self.last_added_offset, writer.last_added_offset)
                    raise
                finally:
                    self._collect_closed()
            self.last_added_offset = chunk.offsets[position - 1]

    def finish(self) -> None:
        try:
            for writer in self.writers.values():
                writer.finish()
        finally:
            self._collect_closed()

    def _collect_closed(self) -> None:
        self.closed = [f for writer in self.writers.values() for f in writer.closed]

    def _writer(self, identifier: str) -> TableWriter:
        writer = self.writers.get(identifier)
        if writer is None:
            self._catalog = self._catalog or open_catalog(self._settings)
            writer = TableWriter(
                self._settings, self._tp.topic, self._tp.partition, self._start, identifier, self._catalog
            )
            newest = newest_of_connector(writer.open_existing(), self._connector)
            self.bases[identifier] = newest.snapshot_id if newest else None
            self._skip_below[identifier] = written_below(newest).get(self._tp, 0)
            self.writers[identifier] = writer
        return writer
