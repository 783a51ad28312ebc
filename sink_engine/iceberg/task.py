"""One Spark task's work for one planned range of an IcebergFormat connector: read, convert, write data files.

The same record steps as S3 objects (`sink_engine.task.steps`: tombstones, conversion, transforms, dead letters),
then a TableWriter (of the table of the topic's routed name, with a RegexRouter) instead of object files. Every
record of the range is written (a table has no open-file tail): the range's next offset is its end, or the record
that stopped it.
"""
from __future__ import annotations

from sink_engine.dlq import router_for
from sink_engine.errors import RecordError, SinkError
from sink_engine.iceberg.table_writer import TableWriter
from sink_engine.model import PartitionRange, TaskResult
from sink_engine.records import Partitions, RecordChunk
from sink_engine.source.reader import RangeReader
from sink_engine.storage.s3 import upload_client
from sink_engine.storage.uploader import Uploader
from sink_engine.task.deadline import within_deadline
from sink_engine.task.run import read_records, record_steps
from sink_engine.task.settings import TaskSettings
from sink_engine.task.steps import write_range


class _OnePartition:
    """A table's rows are not split by encoded partition (its partition spec splits data files)."""

    def encode(self, chunk: RecordChunk, values) -> Partitions:
        return Partitions.one("")


def run_table_range(settings: TaskSettings, planned: PartitionRange, client=None,
                    reader: RangeReader | None = None) -> TaskResult:
    """Write the range's records as data files of its table (`settings.iceberg`) and report them (not committed).
    Never raises a SinkError: it is returned in the result, with the data files of the records before it. The
    task's `client` and `reader` as in `sink_engine.task.run.run_range`."""
    uploader = Uploader(client or upload_client(settings.s3), settings.bucket, settings.object_options)
    assert settings.iceberg is not None  # an IcebergFormat connector's task
    writer = TableWriter(settings.iceberg, planned.topic, planned.partition, planned.start_offset)
    steps = record_steps(settings, planned.topic, _OnePartition())
    router, handled = router_for(settings.dead_letters, planned, uploader), planned.start_offset
    dropped: list[int] = []
    chunks = within_deadline(read_records(settings, planned, reader), planned)
    result = TaskResult(range=planned, next_offset=planned.start_offset)
    try:
        try:
            for handled in write_range(chunks, writer, steps, router, result, dropped):  # noqa: B007 - read after
                pass  # each chunk written moves `handled` on
        except RecordError as e:  # every record before it is written or dead-lettered
            result.error, result.error_class, handled = str(e), type(e).__name__, e.offset
        except SinkError as e:
            result.error, result.error_class = str(e), type(e).__name__
        writer.finish()
        result.dead_letters, result.dlq_scan_from = router.flush(handled)
        uploader.drain()
    except SinkError as e:  # a data file or a dead letter failed: nothing of this range may be committed
        result.error, result.error_class = str(e), type(e).__name__
        return result
    finally:
        uploader.close()
    result.files, result.table_files, result.next_offset = writer.closed, writer.data_files, handled
    result.records_dropped = sum(1 for offset in dropped if offset < handled)
    return result
