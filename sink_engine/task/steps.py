"""The record steps of a task: null values (`behavior.on.null.values`, tombstones), value conversion, single
message transforms (`transforms`, task/transforms.py: with a chain, null values are handled after it) and
partitioning, then a writer. A record a step fails goes to the dead-letter router, which tolerates it or stops
the task (`errors.tolerance`)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from sink_engine.convert.base import Converter
from sink_engine.dlq.letter import STAGE_TASK_PUT, STAGE_VALUE_CONVERTER
from sink_engine.dlq.router import DeadLetterRouter, qualified_name
from sink_engine.errors import ConversionError, NullValueError, PartitioningError, RecordError
from sink_engine.model import TaskResult
from sink_engine.partition.base import Partitioner
from sink_engine.records import PreparedRecords, RecordChunk, Transformed
from sink_engine.task.record_writer import RecordWriter
from sink_engine.task.tombstones import null_runs

if TYPE_CHECKING:  # transforms.py imports this module
    from sink_engine.task.transforms import TransformStep

RETRY_PIECE = 32  # records tried at once after a bad record; doubles after each clean piece


@dataclass(frozen=True)
class RecordSteps:
    """What is done to a chunk's records before a writer takes them, in this order."""

    null_behavior: str  # behavior.on.null.values: ignore, fail, or write (tombstone files); keep (EnvelopeFormat:
    # a null value goes to the converter as any other)
    converter: Converter
    partitioner: Partitioner
    transforms: TransformStep | None = None  # None without `transforms`

    def prepare(self, chunk: RecordChunk) -> PreparedRecords | Transformed | None:
        """Nulls, conversion and partitioning of a chunk; None when no record is left (ignored nulls); with
        transforms, what they made of it. Raises StepFailed, with the RecordError classified by the step that
        raised it."""
        if self.transforms is not None:
            return self.transforms.prepare(chunk, self.partitioner)
        kept = run_step(lambda: _handle_nulls(chunk, self.null_behavior), NullValueError, STAGE_TASK_PUT, _handle_nulls)
        if not len(kept):
            return None
        values = run_step(lambda: self.converter.convert(kept), ConversionError, STAGE_VALUE_CONVERTER, self.converter)
        partitions = run_step(
            lambda: self.partitioner.encode(kept, values), PartitioningError, STAGE_TASK_PUT, self.partitioner
        )
        return PreparedRecords(kept, values, partitions)


class StepFailed(Exception):
    """A step failed a record: its error, the Kafka Connect stage and the step's name for the dead letter."""

    def __init__(self, error: RecordError, stage: str, executing_class: str):
        self.error, self.stage, self.executing_class = error, stage, executing_class


def write_range(
    chunks: Iterable[RecordChunk],
    writer: RecordWriter,
    steps: RecordSteps,
    router: DeadLetterRouter,
    result: TaskResult,
    dropped: list | None = None,
) -> Iterator[int]:
    """Write each chunk (`write_chunk`), counted in `result.records_read` before it is written; yields the offset
    after each chunk once it is written (every record before it handled). The offsets of records the transforms
    dropped are added to `dropped`."""
    dropped = [] if dropped is None else dropped
    for chunk in chunks:
        result.records_read += len(chunk)
        dropped += write_chunk(writer, steps, chunk, router)
        yield chunk.offsets[-1] + 1


def write_chunk(writer: RecordWriter, steps: RecordSteps, chunk: RecordChunk, router: DeadLetterRouter) -> list:
    """Filter nulls, convert, transform, partition and write a chunk; returns the offsets of the records the
    transforms dropped. On a bad record, the records before it are written first, then the router takes it; the
    rest of the chunk follows if the router tolerates it, else the RecordError propagates (everything before the
    bad record can still be committed)."""
    dropped: list = []
    if steps.transforms is None and steps.null_behavior == "write" and None in chunk.values:
        for run, tombstones in null_runs(chunk):
            if tombstones:
                writer.write_tombstones(run)
            else:
                write_chunk(writer, steps, run, router)
        return dropped
    start, size = 0, len(chunk)
    while start < len(chunk):
        stop = min(len(chunk), start + size)
        piece = chunk if (start, stop) == (0, len(chunk)) else chunk.slice(start, stop)
        try:
            prepared = steps.prepare(piece)
        except StepFailed as failed:
            position = piece.offsets.index(failed.error.offset)
            dropped += write_chunk(writer, steps, piece.slice(0, position), router)
            router.report(piece, position, failed.error, failed.stage, failed.executing_class)
            if not router.tolerates:
                raise failed.error from None
            # after a bad record, go on in small pieces, so that many bad records cost no more than few
            start, size = start + position + 1, RETRY_PIECE
            continue
        if isinstance(prepared, Transformed):
            _write_parts(writer, prepared, router)
            dropped += prepared.dropped
        elif prepared is not None:
            writer.put(prepared, router)
        start, size = start + len(piece), size * 2
    return dropped


def _write_parts(writer: RecordWriter, transformed: Transformed, router: DeadLetterRouter) -> None:
    for part in transformed.parts:
        if isinstance(part, PreparedRecords):
            writer.put(part, router)
        else:
            writer.write_tombstones(part.records, part.routed)


def run_step(step, error_class: type, stage: str, owner: object):
    try:
        return step()
    except RecordError as e:
        error = e
        if type(e) is RecordError:
            error = error_class(e.topic, e.partition, e.offset, e.cause).with_traceback(e.__traceback__)
        raise StepFailed(error, stage, qualified_name(owner)) from None


def _handle_nulls(chunk: RecordChunk, behavior: str) -> RecordChunk:
    """Apply `behavior.on.null.values` to records with a null value (tombstones)."""
    if behavior == "keep" or None not in chunk.values:
        return chunk
    nulls = [i for i, value in enumerate(chunk.values) if value is None]
    if behavior == "fail":
        raise NullValueError(
            chunk.topic,
            chunk.partition,
            chunk.offsets[nulls[0]],
            "null value (tombstone) with behavior.on.null.values=fail",
        )
    nulls_set = set(nulls)
    return chunk.select([i for i in range(len(chunk)) if i not in nulls_set])
