"""`RecordWriter`: what the record steps need of a writer (object files, or an Iceberg table's data files), and
what becomes of a record the writer's output refuses."""

from __future__ import annotations

import bisect
from abc import ABC, abstractmethod

from sink_engine.dlq.letter import STAGE_TASK_PUT
from sink_engine.dlq.router import DeadLetterRouter, qualified_name
from sink_engine.errors import RecordError, SchemaProjectionError
from sink_engine.model import ClosedFile
from sink_engine.records import Partitions, PreparedRecords, RecordChunk, ValueColumn
from sink_engine.task.bad_records import StepFailed, classified, write_around


class RecordWriter(ABC):
    """Takes one topic-partition's records in offset order. `last_added_offset` is the offset of the last record
    added; `closed`, the files it closed so far."""

    last_added_offset: int
    closed: list[ClosedFile]

    @abstractmethod
    def write(self, chunk: RecordChunk, values: ValueColumn, partitions: Partitions) -> None:
        """Add the records. At a record the output refuses, raise RecordError naming it; the records added before
        it are then those up to `last_added_offset` (possibly not all of those before it), none after it."""

    def write_tombstones(self, chunk: RecordChunk, routed: list | None = None, sidecars: dict | None = None) -> None:
        """Add tombstones (behavior.on.null.values=write), each of `routed` topic when routers made them, with their
        keys and headers in `sidecars` columns when they are stored. Object files only: config validation refuses
        the setting for an Iceberg table."""
        raise NotImplementedError(f"{type(self).__name__} takes no tombstones")

    def put(self, prepared: PreparedRecords, router: DeadLetterRouter) -> None:
        """Add the records; a record the output refuses takes the one bad-record path (task/bad_records.py, stage
        TASK_PUT, a bare RecordError as a SchemaProjectionError): to the router once the records before it are
        added, and the records after it follow if the router tolerates it, else its error propagates."""
        records = prepared.records

        def attempt(start: int, stop: int) -> None:
            part = prepared if (start, stop) == (0, len(records)) else prepared.slice(start, stop)
            try:
                self.write(part.records, part.values, part.partitions)
            except RecordError as e:
                added = bisect.bisect_right(records.offsets, self.last_added_offset)
                error = classified(e, SchemaProjectionError)
                raise StepFailed(error, STAGE_TASK_PUT, qualified_name(self), added) from None

        write_around(records, attempt, router)
