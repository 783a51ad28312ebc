"""One Spark task's work for one planned range: read, convert, partition, rotate, encode, upload."""
from __future__ import annotations

from sink_engine.convert import converter_for
from sink_engine.dlq import router_for
from sink_engine.errors import SinkError
from sink_engine.format import format_for
from sink_engine.model import PartitionRange, TaskResult
from sink_engine.partition import partitioner_for
from sink_engine.partition.timestamps import extractor_for
from sink_engine.progress import TaskProgress
from sink_engine.source.reader import RangeReader, read_range
from sink_engine.storage.s3 import upload_client
from sink_engine.storage.uploader import Uploader
from sink_engine.task.deadline import within_deadline
from sink_engine.task.envelope import EnvelopeConverter
from sink_engine.task.schema_gate import SchemaGate
from sink_engine.task.settings import TaskSettings
from sink_engine.task.sidecars import Sidecars
from sink_engine.task.steps import RecordSteps, write_range
from sink_engine.task.writer import TopicPartitionWriter


def run_range(settings: TaskSettings, planned: PartitionRange, client=None,
              progress_dir: str | None = None, reader: RangeReader | None = None) -> TaskResult:
    """Write the closed files of a range and report them. Never raises a SinkError: it is returned in
    the result, with the files closed and uploaded before it, so the driver can commit that much.
    With `progress_dir`, reports how far it got there (progress.TaskProgress). A task's ranges share its S3
    `client` and its `reader` (one Kafka consumer); without them, the range makes its own."""
    if settings.iceberg:  # data files of a table instead of objects (sink_engine/iceberg)
        from sink_engine.iceberg.task import run_table_range

        return run_table_range(settings, planned, client, reader)
    return write_objects(settings, planned, client, progress_dir, reader)


def write_objects(settings: TaskSettings, planned: PartitionRange, client=None,
                  progress_dir: str | None = None, reader: RangeReader | None = None) -> TaskResult:
    """`run_range` for the S3 objects of a range, from its settings."""
    uploader = Uploader(client or upload_client(settings.s3), settings.bucket, settings.object_options)
    extractor = extractor_for(settings.partitioning, planned.wallclock_ms)
    sidecars = Sidecars.from_settings(settings.sidecars, settings.formats, planned.topic)
    writer = TopicPartitionWriter(planned.topic, planned.partition, planned.start_offset,
                                  format_for(settings.formats), settings.naming,
                                  settings.rotation.with_extractor(extractor), uploader,
                                  SchemaGate(settings.schema_compatibility, planned.topic, planned.partition,
                                             settings.schema_files),
                                  settings.tombstone_partition, sidecars)
    result = TaskResult(range=planned, next_offset=planned.start_offset)
    steps = record_steps(settings, planned.topic, partitioner_for(settings.partitioning, extractor), sidecars)
    router, processed = router_for(settings.dead_letters, planned, uploader), planned.start_offset
    dropped: list[int] = []
    chunks = within_deadline(read_records(settings, planned, reader), planned)  # a generator: reads when iterated
    progress = TaskProgress(progress_dir, planned) if progress_dir else None
    try:
        try:
            for processed in write_range(chunks, writer, steps, router, result, dropped):
                if progress:
                    progress.update(processed, result.records_read, len(writer.closed))
            if planned.cut_at_end:  # wall-clock rotation decided with the plan (driver/wall_clock.py)
                writer.close_all(next_offset=planned.end_offset)
        except SinkError as e:
            result.error, result.error_class = str(e), type(e).__name__
        next_offset = _commit_point(writer, processed)
        writer.abandon_open()  # the tail is read again by the next run
        result.dead_letters, result.dlq_scan_from = router.flush(next_offset)
        uploader.drain()
    except SinkError as e:  # an upload failed: nothing of this range may be committed
        result.error, result.error_class = str(e), type(e).__name__
        return result
    finally:
        uploader.close()
        if progress:
            progress.finish(processed, result.records_read, len(writer.closed))
    result.files, result.next_offset = writer.closed, next_offset
    result.records_dropped = sum(1 for offset in dropped if offset < next_offset)  # the tail is read again
    result.skipped = skipped_offsets(result)
    return result


def skipped_offsets(result: TaskResult) -> dict[str, int]:
    """The offsets of the committed part of the range in no closed file and no dead letter, by reason (see
    TaskResult.skipped): what is neither written, dead-lettered nor dropped by a transform was ignored."""
    settled = result.next_offset - result.range.start_offset
    ignored = (settled - sum(f.record_count for f in result.files) - sum(result.dead_letters.values())
               - result.records_dropped)
    return {reason: n for reason, n in (("transforms", result.records_dropped), ("ignored", ignored)) if n}


def record_steps(settings: TaskSettings, topic: str, partitioner, sidecars: Sidecars | None = None) -> RecordSteps:
    """The record steps of a range of `topic`: with `transforms`, a TransformStep between conversion and
    partitioning, which builds the sidecar columns from the transformed records; with EnvelopeFormat, the records
    whole (task/envelope.py), null values kept."""
    if settings.formats.format_class == "envelope":  # records whole; no transforms (config validation)
        return RecordSteps("keep", envelope_converter(settings, topic), partitioner)
    sidecars = sidecars or Sidecars()
    converter = converter_for(settings.values, topic)
    if not settings.transforms:
        return RecordSteps(settings.null_values, sidecars.wrap(converter), partitioner)
    from sink_engine.task.transforms import TransformStep

    keys = settings.transforms.key_converter or settings.sidecars.key_converter
    step = TransformStep(settings.transforms.build(), converter, converter_for(keys, topic) if keys else None,
                         sidecars, settings.null_values)
    return RecordSteps(settings.null_values, converter, partitioner, step)


def envelope_converter(settings: TaskSettings, topic: str) -> EnvelopeConverter:
    """EnvelopeFormat's conversion: the value converter is built and run only for a layout that reads fields of
    the values."""
    reads_fields = settings.values.keep_documents
    return EnvelopeConverter(converter_for(settings.values, topic) if reads_fields else None)


def read_records(settings: TaskSettings, planned: PartitionRange, reader: RangeReader | None):
    """The range's chunks, through the task's `reader` when there is one (a generator: reads when iterated)."""
    return reader.read(planned) if reader is not None else read_range(settings.source, planned)


def _commit_point(writer: TopicPartitionWriter, processed: int) -> int:
    """The first offset not settled: while a file is open the writer's `first_open_offset`, else the first record
    not handled (every record before it is in a closed file, dead-lettered, an ignored null or dropped by a
    transform)."""
    first_open = writer.first_open_offset
    return first_open if first_open is not None else max(writer.next_offset, processed)
