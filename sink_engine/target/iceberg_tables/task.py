"""One Spark task's work for one planned range of an IcebergFormat connector: read, convert, write data files (and
the output a continuous run's stream writes into).

The same range work as S3 objects (`sink_engine.task.run.write_to`: record steps, dead letters, uploads), into a
TableWriter (of the table of the topic's routed name, with a RegexRouter) instead of object files, or with fan-out
by field or static routing into the TableWriter of each record's tables (target/iceberg_tables/routing.py). Every
record of the range is written (a table has no open-file tail): the range's next offset is its end, or the record
that stopped it. The data files go to the driver's commit as the result's `TableFiles` (`RoutedFiles` when
routed).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import pyarrow as pa
from pyiceberg.manifest import DataFile

from sink_engine.aws_types import S3Client
from sink_engine.errors import RecordError, SinkError
from sink_engine.model import PartitionRange, TaskResult
from sink_engine.records import Partitions, RecordChunk, ValueColumn
from sink_engine.source.reader import RangeReader
from sink_engine.storage.uploader import Uploader
from sink_engine.target.iceberg_tables.routing import RoutedTableWriter, StaticTableRoutes, TableRoutes
from sink_engine.target.iceberg_tables.settings import IcebergSettings
from sink_engine.target.iceberg_tables.table_writer import TableWriter
from sink_engine.task.output import StreamOutput
from sink_engine.task.run import write_to
from sink_engine.task.settings import TaskSettings


@dataclass(frozen=True)
class TableFiles:
    """A range's data files (pyiceberg DataFiles, not committed), as `TaskResult.target_result`; of an upsert
    table also the keys of every change (a pyarrow Table of its id columns), whose old rows the commit removes."""

    data_files: tuple[DataFile, ...] = ()
    changed_keys: pa.Table | None = None


@dataclass(frozen=True)
class RoutedFiles:
    """With fan-out by field, as `TaskResult.target_result`: per table the range's records went to, its
    TableFiles and the connector's snapshot of it that the range's writer read (None: none), which the commit
    checks is still the connector's newest there."""

    tables: tuple[tuple[str, TableFiles, int | None], ...]  # (table, its files, base snapshot id)


class _OnePartition:
    """A table's rows are not split by encoded partition (its partition spec splits data files)."""

    def encode(self, chunk: RecordChunk, values: ValueColumn) -> Partitions:
        return Partitions.one("")


class TableOutput(StreamOutput):
    """A range's records as data files of its table (or, with fan-out by field, of the table each record names);
    each record before the one that stopped the range is written or dead-lettered."""

    writer: TableWriter | RoutedTableWriter

    def __init__(self, iceberg: IcebergSettings, planned: PartitionRange, connector: str):
        self.partitioner: _OnePartition | TableRoutes | StaticTableRoutes
        if not iceberg.routed:
            self.writer = TableWriter(iceberg, planned.topic, planned.partition, planned.start_offset)
            self.partitioner = _OnePartition()
            return
        self.writer = RoutedTableWriter(iceberg, connector, planned.topic, planned.partition, planned.start_offset)
        if iceberg.static_routes is not None:
            self.partitioner = StaticTableRoutes(iceberg.static_routes)
        else:
            assert iceberg.route_field is not None  # routed: by field or statically
            self.partitioner = TableRoutes(iceberg.route_field, iceberg.route_namespaces)

    def settle(self, processed: int, error: SinkError | None) -> int:
        self.writer.finish()
        return error.offset if isinstance(error, RecordError) else processed

    def finish(self, result: TaskResult) -> None:
        writer = self.writer
        if isinstance(writer, RoutedTableWriter):
            result.target_result = RoutedFiles(
                tuple((table, _files_of(w), writer.bases[table]) for table, w in sorted(writer.writers.items()))
            )
        else:
            result.target_result = _files_of(writer)
        if result.range.expired:  # deleted from Kafka before they were read: counted as S3 objects count them
            result.skipped = {"expired": result.range.expired}

    # a continuous run's (target/iceberg_tables/stream_commit.py): data files close at
    # `iceberg.control.commit.interval-ms` cuts

    def commit_point(self, processed: int) -> int:
        assert isinstance(self.writer, TableWriter)  # continuous runs refuse fan-out (IcebergTablesTarget)
        first_open = self.writer.first_open_offset
        return first_open if first_open is not None else processed

    def cut(self, offset: int) -> None:
        self.writer.finish()

    def let_go(self, point: int) -> None:
        assert isinstance(self.writer, TableWriter)  # continuous runs refuse fan-out (IcebergTablesTarget)
        self.writer.let_go(point)

    def has_open_files(self) -> bool:
        assert isinstance(self.writer, TableWriter)  # continuous runs refuse fan-out (IcebergTablesTarget)
        return self.writer.first_open_offset is not None


def _files_of(writer: TableWriter) -> TableFiles:
    return TableFiles(tuple(writer.data_files), writer.changed_keys)


def run_table_range(
    settings: TaskSettings,
    iceberg: IcebergSettings,
    connector: str,
    planned: PartitionRange,
    client: S3Client | None = None,
    progress_dir: str | None = None,
    reader: RangeReader | None = None,
    stop: Callable[[], bool] | None = None,
) -> TaskResult:
    """Write the range's records as data files of its table and report them (not committed); `write_to`'s
    contract."""

    def output_for(_settings: TaskSettings, range_: PartitionRange, _uploader: Uploader) -> TableOutput:
        return TableOutput(iceberg, range_, connector)

    return write_to(output_for, settings, planned, client, progress_dir, reader, stop)
