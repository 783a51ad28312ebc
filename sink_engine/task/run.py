"""One Spark task's work for one planned range: read, convert, partition, write into the range's output, upload,
settle. `write_to` is the same for every target (S3 objects: target/s3_objects/output.py `run_range`)."""

from __future__ import annotations

from collections.abc import Callable, Iterator

from sink_engine.aws_types import S3Client
from sink_engine.convert import converter_for
from sink_engine.dlq import router_for
from sink_engine.errors import SinkError
from sink_engine.model import PartitionRange, TaskResult
from sink_engine.partition.base import Partitioner
from sink_engine.progress import TaskProgress
from sink_engine.records import RecordChunk
from sink_engine.source.reader import RangeReader, read_range
from sink_engine.storage.s3 import upload_client
from sink_engine.storage.uploader import Uploader
from sink_engine.task.deadline import within_deadline
from sink_engine.task.envelope import EnvelopeConverter
from sink_engine.task.output import OutputFactory
from sink_engine.task.settings import TaskSettings
from sink_engine.task.sidecars import Sidecars
from sink_engine.task.steps import RecordSteps, write_range
from sink_engine.task.transforms import TransformStep


def write_to(
    output_for: OutputFactory,
    settings: TaskSettings,
    planned: PartitionRange,
    client: S3Client | None = None,
    progress_dir: str | None = None,
    reader: RangeReader | None = None,
    stop: Callable[[], bool] | None = None,
) -> TaskResult:
    """Write the range's records into the output `output_for` builds and report what it closed. Never raises a
    SinkError: it is returned in the result, with the files closed and uploaded before it, so the driver can
    commit that much. With `progress_dir`, reports how far it got there (progress.TaskProgress). A task's ranges
    share its S3 `client` and its `reader` (one Kafka consumer); without them, the range makes its own. `stop`
    (task/deadline.py) ends the range early, as its deadline does."""
    uploader = Uploader(client or upload_client(settings.s3), settings.bucket, settings.object_options)
    output = output_for(settings, planned, uploader)
    writer, result = output.writer, TaskResult(range=planned, next_offset=planned.start_offset)
    steps = record_steps(settings, planned.topic, output.partitioner, output.sidecars)
    router, processed = router_for(settings.dead_letters, planned, uploader), planned.start_offset
    dropped: list[int] = []
    chunks = within_deadline(read_records(settings, planned, reader), planned, stop=stop)  # reads when iterated
    progress = TaskProgress(progress_dir, planned) if progress_dir else None
    try:
        error = None
        try:
            for processed in write_range(chunks, writer, steps, router, result, dropped):
                if progress:
                    progress.update(processed, result.records_read, len(writer.closed))
            output.end()
        except SinkError as e:
            error, result.error, result.error_class = e, str(e), type(e).__name__
        next_offset = output.settle(processed, error)
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
    output.finish(result)
    return result


def record_steps(
    settings: TaskSettings, topic: str, partitioner: Partitioner, sidecars: Sidecars | None = None
) -> RecordSteps:
    """The record steps of a range of `topic`: with `transforms`, a TransformStep between conversion and
    partitioning, which builds the sidecar columns from the transformed records; with EnvelopeFormat, the records
    whole (task/envelope.py), null values kept."""
    if settings.formats.format_class == "envelope":  # records whole; no transforms (config validation)
        return RecordSteps("keep", envelope_converter(settings, topic), partitioner)
    sidecars = sidecars or Sidecars()
    converter = converter_for(settings.values, topic)
    if not settings.transforms:
        return RecordSteps(settings.null_values, sidecars.wrap(converter), partitioner, sidecars=sidecars)

    keys = settings.transforms.key_converter or settings.sidecars.key_converter
    step = TransformStep(
        settings.transforms.build(),
        converter,
        converter_for(keys, topic) if keys else None,
        sidecars,
        settings.null_values,
    )
    return RecordSteps(settings.null_values, converter, partitioner, step)


def envelope_converter(settings: TaskSettings, topic: str) -> EnvelopeConverter:
    """EnvelopeFormat's conversion: the value converter is built and run only for a layout that reads fields of
    the values."""
    reads_fields = settings.values.keep_documents
    return EnvelopeConverter(converter_for(settings.values, topic) if reads_fields else None)


def read_records(settings: TaskSettings, planned: PartitionRange, reader: RangeReader | None) -> Iterator[RecordChunk]:
    """The range's chunks, through the task's `reader` when there is one (a generator: reads when iterated)."""
    return reader.read(planned) if reader is not None else read_range(settings.source, planned)
