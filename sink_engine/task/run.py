"""One Spark task's work for one planned range: read, convert, partition, rotate, encode, upload."""
from __future__ import annotations

import bisect

from sink_engine.config import SinkConfig
from sink_engine.convert import converter_for
from sink_engine.dlq import DeadLetterRouter, router_for
from sink_engine.dlq.letter import STAGE_TASK_PUT, STAGE_VALUE_CONVERTER
from sink_engine.errors import (
    ConversionError, NullValueError, PartitioningError, RecordError, SchemaProjectionError, SinkError,
)
from sink_engine.format import format_for
from sink_engine.model import PartitionRange, TaskResult
from sink_engine.partition import partitioner_for
from sink_engine.partition.timestamps import extractor_for
from sink_engine.progress import TaskProgress
from sink_engine.records import RecordChunk
from sink_engine.source.reader import read_range
from sink_engine.storage.naming import ObjectNaming
from sink_engine.storage.object_options import ObjectOptions
from sink_engine.storage.s3 import upload_client
from sink_engine.storage.uploader import Uploader
from sink_engine.task.rotation import RotationPolicy
from sink_engine.task.schema_gate import SchemaGate
from sink_engine.task.sidecars import Sidecars
from sink_engine.task.tombstones import null_runs
from sink_engine.task.writer import TopicPartitionWriter


def run_range(config: SinkConfig, planned: PartitionRange, client=None, progress_dir: str | None = None) -> TaskResult:
    """Write the closed files of a range and report them. Never raises a SinkError: it is returned in
    the result, with the files closed and uploaded before it, so the driver can commit that much.
    With `progress_dir`, reports how far it got there (progress.TaskProgress)."""
    if config["format.class"] == "iceberg":  # data files of a table instead of objects (sink_engine/iceberg)
        from sink_engine.iceberg.task import run_table_range

        return run_table_range(config, planned, client)
    uploader = Uploader(client or upload_client(config), config["s3.bucket.name"], ObjectOptions.from_config(config))
    extractor = extractor_for(config, planned.wallclock_ms)
    sidecars = Sidecars.from_config(config, planned.topic)
    writer = TopicPartitionWriter(planned.topic, planned.partition, planned.start_offset, format_for(config),
                                  ObjectNaming.from_config(config), RotationPolicy.from_config(config, extractor),
                                  uploader, SchemaGate(config["schema.compatibility"], planned.topic, planned.partition),
                                  config["tombstone.encoded.partition"], sidecars)
    result = TaskResult(range=planned, next_offset=planned.start_offset)
    steps = (config["behavior.on.null.values"], sidecars.wrap(converter_for(config, "value", planned.topic)),
             partitioner_for(config, extractor))
    router, processed = router_for(config, planned, uploader), planned.start_offset
    progress = TaskProgress(progress_dir, planned) if progress_dir else None
    try:
        try:
            for chunk in read_range(config, planned):
                result.records_read += len(chunk)
                _write(writer, steps, chunk, router)
                processed = chunk.offsets[-1] + 1
                if progress:
                    progress.update(processed, result.records_read, len(writer.closed))
            if planned.cut_at_end:  # wall-clock rotation decided with the plan (rotation/schedule.py)
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
    return result


RETRY_PIECE = 32  # records tried at once after a bad record; doubles after each clean piece


def _commit_point(writer: TopicPartitionWriter, processed: int) -> int:
    """The first offset not settled: the first record of an open file, else the first record not handled
    (every record before it is in a closed file, dead-lettered or an ignored null)."""
    first_open = writer.first_open_offset
    return first_open if first_open is not None else max(writer.next_offset, processed)


def _write(writer: TopicPartitionWriter, steps: tuple, chunk: RecordChunk, router: DeadLetterRouter) -> None:
    """Filter nulls, convert, partition and write a chunk. On a bad record, the records before it are
    written first, then the router takes it; the rest of the chunk follows if the router tolerates it,
    else the RecordError propagates (everything before the bad record can still be committed)."""
    if steps[0] == "write" and None in chunk.values:
        for run, tombstones in null_runs(chunk):
            if tombstones:
                writer.write_tombstones(run)
            else:
                _write(writer, steps, run, router)
        return
    start, size = 0, len(chunk)
    while start < len(chunk):
        stop = min(len(chunk), start + size)
        piece = chunk if (start, stop) == (0, len(chunk)) else chunk.slice(start, stop)
        try:
            kept, values, partitions = _prepare(steps, piece)
        except _StepFailed as failed:
            position = piece.offsets.index(failed.error.offset)
            _write(writer, steps, piece.slice(0, position), router)
            router.report(piece, position, failed.error, failed.stage, failed.step)
            if not router.tolerates:
                raise failed.error from None
            # after a bad record, go on in small pieces, so that many bad records cost no more than few
            start, size = start + position + 1, RETRY_PIECE
            continue
        if len(kept):
            _write_prepared(writer, (kept, values, partitions), router)
        start, size = start + len(piece), size * 2


def _write_prepared(writer: TopicPartitionWriter, prepared: tuple, router: DeadLetterRouter) -> None:
    """Add converted records; a record the writer refuses (schema projection) goes to the router like the
    others, after the records before it that the writer had not added yet."""
    kept, values, partitions = prepared
    try:
        writer.write(kept, values, partitions)
        return
    except RecordError as e:
        error = SchemaProjectionError(e.topic, e.partition, e.offset, e.cause) if type(e) is RecordError else e
        position = kept.offsets.index(e.offset)
    resume = bisect.bisect_right(kept.offsets, writer.last_added_offset)
    if resume < position:
        _write_prepared(writer, _slice(prepared, resume, position), router)
    router.report(kept, position, error, STAGE_TASK_PUT, writer)
    if not router.tolerates:
        raise error
    if position + 1 < len(kept):
        _write_prepared(writer, _slice(prepared, position + 1, len(kept)), router)


def _slice(prepared: tuple, start: int, stop: int) -> tuple:
    kept, values, partitions = prepared
    return (kept.slice(start, stop), values.slice(start, stop),
            partitions if isinstance(partitions, str) else partitions[start:stop])


class _StepFailed(Exception):
    def __init__(self, error: RecordError, stage: str, step: object):
        self.error, self.stage, self.step = error, stage, step


def _prepare(steps: tuple, chunk: RecordChunk) -> tuple:
    """Nulls, conversion and partitioning of a chunk; a RecordError is classified by the step that raised it."""
    null_behavior, converter, partitioner = steps
    kept = _run_step(lambda: _handle_nulls(chunk, null_behavior), NullValueError, STAGE_TASK_PUT, _handle_nulls)
    if not len(kept):
        return kept, None, None
    values = _run_step(lambda: converter.convert(kept), ConversionError, STAGE_VALUE_CONVERTER, converter)
    partitions = _run_step(lambda: partitioner.encode(kept, values), PartitioningError, STAGE_TASK_PUT, partitioner)
    return kept, values, partitions


def _run_step(step, error_class: type, stage: str, owner: object):
    try:
        return step()
    except RecordError as e:
        error = e
        if type(e) is RecordError:
            error = error_class(e.topic, e.partition, e.offset, e.cause).with_traceback(e.__traceback__)
        raise _StepFailed(error, stage, owner) from None


def _handle_nulls(chunk: RecordChunk, behavior: str) -> RecordChunk:
    """Apply `behavior.on.null.values` to records with a null value (tombstones)."""
    if None not in chunk.values:
        return chunk
    nulls = [i for i, value in enumerate(chunk.values) if value is None]
    if behavior == "fail":
        raise NullValueError(chunk.topic, chunk.partition, chunk.offsets[nulls[0]],
                             "null value (tombstone) with behavior.on.null.values=fail")
    nulls_set = set(nulls)
    return chunk.select([i for i in range(len(chunk)) if i not in nulls_set])
