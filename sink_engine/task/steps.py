"""The record steps of a task: null values (`behavior.on.null.values`, tombstones: task/null_values.py), value
conversion, single message transforms (`transforms`, task/transforms.py: with a chain, null values are handled
after it) and partitioning, then a writer. A record a step fails takes the one bad-record path
(task/bad_records.py): to the dead-letter router, which tolerates it or stops the task (`errors.tolerance`)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from sink_engine.convert.base import Converter
from sink_engine.dlq.letter import STAGE_TASK_PUT, STAGE_VALUE_CONVERTER
from sink_engine.dlq.router import DeadLetterRouter
from sink_engine.errors import ConversionError, PartitioningError
from sink_engine.model import TaskResult
from sink_engine.partition.base import Partitioner
from sink_engine.records import PreparedRecords, RecordChunk, Tombstones, Transformed, ValueColumn
from sink_engine.task.bad_records import run_step, write_around
from sink_engine.task.null_values import TOMBSTONE, converted_runs, null_runs
from sink_engine.task.record_writer import RecordWriter

if TYPE_CHECKING:  # built only with `transforms` (task/run.py imports it then)
    from sink_engine.task.sidecars import Sidecars
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
    sidecars: Sidecars | None = None  # store.kafka.keys / headers: a tombstone's keys and headers go with it

    def prepare(self, chunk: RecordChunk) -> PreparedRecords | Transformed | None:
        """Nulls (task/null_values.py), conversion and partitioning of a chunk: its records, or with tombstones
        to write, its parts in offset order; None when no record is left (ignored nulls); with transforms, what
        they made of it. Raises StepFailed, with the RecordError classified by the step that raised it."""
        if self.transforms is not None:
            return self.transforms.prepare(chunk, self.partitioner)
        parts: list[PreparedRecords | Tombstones] = []
        for run, tombstones in null_runs(chunk, self.null_behavior):
            parts.extend([self._tombstones(run)] if tombstones else self._prepared(run))
        if not parts:
            return None
        only = parts[0]
        return only if len(parts) == 1 and isinstance(only, PreparedRecords) else Transformed(parts, [])

    def _prepared(self, records: RecordChunk) -> list[PreparedRecords | Tombstones]:
        """The converted records, partitioned; values the converter read as null take `behavior.on.null.values`
        (task/null_values.py `converted_runs`), so the records around them may come in several parts."""
        values = run_step(
            lambda: self.converter.convert(records), ConversionError, STAGE_VALUE_CONVERTER, self.converter
        )
        nulls = values.null_positions() if self.null_behavior != "keep" else []
        if not nulls:
            return [self._partitioned(records, values)]
        parts: list[PreparedRecords | Tombstones] = []
        for positions, kind in converted_runs(records, nulls, self.null_behavior):
            run = records.select(positions)
            parts.append(
                self._tombstones(run) if kind == TOMBSTONE else self._partitioned(run, values.select(positions))
            )
        return parts

    def _tombstones(self, records: RecordChunk) -> Tombstones:
        """Tombstones to write, with their keys and headers when those are stored."""
        sidecars = self.sidecars
        if sidecars is None or not sidecars.formats:
            return Tombstones(records)
        columns = run_step(
            lambda: sidecars.attach(records, ValueColumn("json", [b"null"] * len(records))).sidecars,
            ConversionError,
            STAGE_VALUE_CONVERTER,
            sidecars,
        )
        return Tombstones(records, None, columns)

    def _partitioned(self, records: RecordChunk, values: ValueColumn) -> PreparedRecords:
        partitions = run_step(
            lambda: self.partitioner.encode(records, values), PartitioningError, STAGE_TASK_PUT, self.partitioner
        )
        return PreparedRecords(records, values, partitions)


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
    transforms dropped. A bad record takes the one bad-record path (task/bad_records.py `write_around`): the
    records before it are written, the router takes it, the rest follows if the router tolerates it, else the
    RecordError propagates (everything before the bad record can still be committed)."""
    dropped: list = []

    def attempt(start: int, stop: int) -> None:
        piece = chunk if (start, stop) == (0, len(chunk)) else chunk.slice(start, stop)
        prepared = steps.prepare(piece)
        if isinstance(prepared, Transformed):
            _write_parts(writer, prepared, router)
            dropped.extend(prepared.dropped)
        elif prepared is not None:
            writer.put(prepared, router)

    write_around(chunk, attempt, router, RETRY_PIECE)
    return dropped


def _write_parts(writer: RecordWriter, transformed: Transformed, router: DeadLetterRouter) -> None:
    for part in transformed.parts:
        if isinstance(part, PreparedRecords):
            writer.put(part, router)
        else:
            writer.write_tombstones(part.records, part.routed, part.sidecars)
