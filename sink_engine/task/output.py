"""`RangeOutput`: what one range's records are written into (S3 objects, a table's data files), as its target
builds it. The rest of a range's work is the same for every output (`run.write_to`): reading, the record steps,
dead letters, uploads, progress and the task's result."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable

from sink_engine.errors import SinkError
from sink_engine.model import PartitionRange, TaskResult
from sink_engine.partition.base import Partitioner
from sink_engine.storage.uploader import Uploader
from sink_engine.task.record_writer import RecordWriter
from sink_engine.task.settings import TaskSettings
from sink_engine.task.sidecars import Sidecars


class RangeOutput(ABC):
    """The writer the record steps feed (`closed`: the files it closed so far), the partitioner they encode with
    and the sidecars they attach; then how the range ends."""

    writer: RecordWriter
    partitioner: Partitioner
    sidecars: Sidecars | None = None

    def end(self) -> None:
        """Every record of the range was handled without an error: close what the plan cuts at its end."""

    @abstractmethod
    def settle(self, processed: int, error: SinkError | None) -> int:
        """The range's next offset once writing stopped at `processed` (the first offset not handled) on `error`
        or at the end; leaves nothing open (what is not settled is read again by the next run). May raise a
        SinkError: then nothing of the range may be committed."""

    def finish(self, result: TaskResult) -> None:
        """Add to the result what only this output knows, once `files`, `next_offset` and `records_dropped` are
        set."""


class StreamOutput(RangeOutput):
    """A continuous run's output (sink_engine/continuous, `ContinuousTarget.stream_output`): one topic-partition's
    records go into it for as long as its task runs."""

    def let_go(self, point: int) -> None:
        """Everything before `point` is committed: forget the files closed before it."""
        self.writer.closed = [f for f in self.writer.closed if f.start_offset >= point]

    @abstractmethod
    def commit_point(self, processed: int) -> int:
        """While writing goes on: the first offset not settled once the records before `processed` were handled
        (every offset before it is in a closed file, a dead letter, or skipped)."""

    @abstractmethod
    def cut(self, offset: int) -> None:
        """Close every open file before `offset` (a wall-clock cut)."""

    @abstractmethod
    def has_open_files(self) -> bool:
        """Whether records are held in files not closed yet."""


# builds a range's output in the task; the uploader is the range's (shared with its dead letters)
OutputFactory = Callable[[TaskSettings, PartitionRange, Uploader], RangeOutput]
StreamOutputFactory = Callable[[TaskSettings, PartitionRange, Uploader], StreamOutput]
