"""Routing, a Spark task's side. Fan-out by field (`iceberg.tables.dynamic-enabled`): each record goes to the table
its `iceberg.tables.route-field` names. Static routing (target/iceberg_tables/static_routes.py): each record goes to
the tables of `iceberg.tables` its route-regexes pick (`StaticTableRoutes`), several or none.

With fan-out by field, the field's value, lower-cased as the Iceberg Kafka Connect sink reads it, is the table's
`namespace.table`, or a bare table name in `iceberg.tables.default-namespace` (`TableRoutes`, the range's
partitioner: a record without the field, whose value names no table, or whose table lies outside the namespaces the
connector declares, target/iceberg_tables/route_namespaces.py, is a bad record naming its offset). A range's records
go to one TableWriter per table (`RoutedTableWriter`).

Exactly once across tables: the driver commits one snapshot per table, then the offsets; a crash between two
tables' snapshots leaves the offsets where they were, so the rerun reads those records again. Each table's writer
skips the records of its topic-partition below the table's `written-below` mark (target/iceberg_tables/snapshots.py),
read from
the connector's newest snapshot of the table when the writer opens it: what the crashed run committed to this table
is not appended again, what it did not commit to the others is. The driver appends only while that snapshot is
still the connector's newest in the table (another run's commit meanwhile: exit 4), as for `iceberg.tables`.
"""

from __future__ import annotations

from pyiceberg.catalog import Catalog

from sink_engine.errors import RecordError
from sink_engine.model import ClosedFile, TopicPartition
from sink_engine.partition.fields import MISSING, FieldError, field_path, lookup_all, memoized_by_string, scalar_text
from sink_engine.records import Partitions, RecordChunk, ValueColumn
from sink_engine.target.iceberg_tables.catalog import open_catalog
from sink_engine.target.iceberg_tables.route_namespaces import RouteNamespaces
from sink_engine.target.iceberg_tables.settings import IcebergSettings
from sink_engine.target.iceberg_tables.snapshots import newest_of_connector, written_below
from sink_engine.target.iceberg_tables.static_routes import TABLE_NAME, StaticRoutes
from sink_engine.target.iceberg_tables.table_writer import TableWriter
from sink_engine.task.record_writer import RecordWriter

_MEMO_LIMIT = 10_000
_SEPARATOR = "\n"  # between the tables of a record's encoded partition (no table name holds whitespace)


class TableRoutes:
    """The partitioner of a routed range: each record's table identifier, from the route field's string value."""

    def __init__(self, route_field: str, namespaces: RouteNamespaces):
        self._name, self._path, self._namespaces = route_field, field_path(route_field), namespaces
        self._seen: dict[str, str] = {}  # field value -> identifier (values repeat: a table per source table)

    def encode(self, chunk: RecordChunk, values: ValueColumn) -> Partitions:
        raw = lookup_all(values.documents(), self._path)
        identify = lambda i, value: self._identifier(chunk, i, value)  # noqa: E731
        return Partitions.per_record(memoized_by_string(raw, identify, self._seen, _MEMO_LIMIT))

    def _identifier(self, chunk: RecordChunk, i: int, value: object) -> str:
        def refused(problem: str) -> FieldError:
            return FieldError(chunk.topic, chunk.partition, chunk.offsets[i], self._name, problem)

        if value is MISSING:
            raise refused("(iceberg.tables.route-field) is missing from the value: it names the record's table")
        if type(value) is not str:
            raise refused(f"(iceberg.tables.route-field) is a {type(value).__name__}, not a table's name")
        identifier = self._namespaces.identifier(value.lower())
        if not TABLE_NAME.fullmatch(identifier):
            bare = "" if self._namespaces.default else " (iceberg.tables.default-namespace names a bare table's)"
            raise refused(f"(iceberg.tables.route-field) is {value!r}, not `namespace.table`{bare}")
        outside = self._namespaces.outside(identifier)
        if outside:
            raise refused(f"(iceberg.tables.route-field) {outside}")
        return identifier


class StaticTableRoutes:
    """The partitioner of a statically routed range: each record's tables (StaticRoutes.tables_for) as one encoded
    partition, the tables joined by newlines ("" for none). The route field's value is read as the Iceberg sink
    reads it (its `toString()`): text as it is, numbers as written, `true`/`false`; a record without it, or with
    null, goes to no table; a map or list is a bad record naming its offset."""

    def __init__(self, routes: StaticRoutes):
        self._routes = routes
        self._path = field_path(routes.field) if routes.field else None
        self._seen: dict[str, str] = {}  # field value -> its tables, encoded

    def encode(self, chunk: RecordChunk, values: ValueColumn) -> Partitions:
        if self._path is None:
            return Partitions.one(_SEPARATOR.join(self._routes.tables))
        raw = lookup_all(values.documents(), self._path)
        tables = lambda i, value: _SEPARATOR.join(self._routes.tables_for(self._text(chunk, i, value)))  # noqa: E731
        return Partitions.per_record(memoized_by_string(raw, tables, self._seen, _MEMO_LIMIT))

    def _text(self, chunk: RecordChunk, i: int, value: object) -> str | None:
        if value is MISSING or value is None:
            return None
        text = scalar_text(value)
        if text is None:
            raise FieldError(
                chunk.topic,
                chunk.partition,
                chunk.offsets[i],
                str(self._routes.field),
                f"(iceberg.tables.route-field) is a {type(value).__name__}, not a value a route-regex can match",
            )
        return text


def tables_of(encoded: object) -> tuple[str, ...]:
    """The tables of a record's encoded partition (TableRoutes' or StaticTableRoutes'; with a routed topic,
    `(topic, tables)`)."""
    tables = str(encoded[1] if isinstance(encoded, tuple) else encoded)
    return tuple(tables.split(_SEPARATOR)) if tables else ()


class RoutedTableWriter(RecordWriter):
    """A range's records into the TableWriter of each of its tables (`partitions`: TableRoutes' identifiers or
    StaticTableRoutes' tables, `tables_of`); `bases` holds, per table, the connector's snapshot its writer skipped
    by (None: none).

    A chunk's records go to each table at once, in offset order within the table (records of several tables
    interleaved record by record cost no more than one table's). So when a table refuses a record, other tables
    may hold records after it: each table then takes only records past what it holds (`_added_below`), so that the
    records the bad-record path hands in again are not added twice, and `last_added_offset` is the end of the
    chunk's prefix that every table holds."""

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
        encoded = partitions.as_list(len(chunk))
        decoded = {e: tables_of(e) for e in set(encoded)}
        tables = [decoded[e] for e in encoded]
        positions: dict[str, list[int]] = {}
        for position, names in enumerate(tables):
            for table in names:
                positions.setdefault(table, []).append(position)
        try:
            for table, where in positions.items():
                writer, below = self._writer(table), self._added_below(table)
                where = [i for i in where if chunk.offsets[i] >= below]
                if len(where) == len(chunk):
                    writer.write(chunk, values)
                elif where:
                    writer.write(chunk.select(where), values.select(where))
        except RecordError:
            self.last_added_offset = (
                next(
                    (o for o, names in zip(chunk.offsets, tables) if any(o >= self._added_below(t) for t in names)),
                    chunk.offsets[-1] + 1,
                )
                - 1
            )
            raise
        finally:
            self._collect_closed()
        self.last_added_offset = chunk.offsets[-1]

    def _added_below(self, table: str) -> int:
        """Every record of the range below this offset that goes to `table` is in it, or in its writer (none for a
        table not opened yet)."""
        writer = self.writers.get(table)
        return max(self._skip_below[table], writer.last_added_offset + 1) if writer else self._start

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
