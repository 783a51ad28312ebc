"""`ObjectOutput`: a range's records as S3 objects (a TopicPartitionWriter's files under deterministic keys), and
what its result says of the offsets in no object; `run_range`, a Spark task's range written so."""

from __future__ import annotations

from collections.abc import Callable

from sink_engine.aws_types import S3Client
from sink_engine.errors import SinkError
from sink_engine.format import format_for
from sink_engine.model import PartitionRange, TaskResult
from sink_engine.partition import partitioner_for
from sink_engine.partition.timestamps import extractor_for
from sink_engine.source.reader import RangeReader
from sink_engine.storage.uploader import Uploader
from sink_engine.target.s3_objects.schema_gate import SchemaGate
from sink_engine.target.s3_objects.writer import TopicPartitionWriter
from sink_engine.task.output import StreamOutput
from sink_engine.task.run import write_to
from sink_engine.task.settings import TaskSettings
from sink_engine.task.sidecars import Sidecars


class ObjectOutput(StreamOutput):
    """Files close when the rotation policy or a schema change says so; the open tail is not written: the range's
    next offset is the first record of an open file (read again by the next run)."""

    writer: TopicPartitionWriter

    def __init__(self, settings: TaskSettings, planned: PartitionRange, uploader: Uploader):
        extractor = extractor_for(settings.partitioning, planned.wallclock_ms)
        self.sidecars = Sidecars.from_settings(settings.sidecars, settings.formats, planned.topic)
        self.partitioner = partitioner_for(settings.partitioning, extractor)
        self.writer = TopicPartitionWriter(
            planned.topic,
            planned.partition,
            planned.start_offset,
            format_for(settings.formats),
            settings.naming,
            settings.rotation.with_extractor(extractor),
            uploader,
            SchemaGate(settings.schema_compatibility, planned.topic, planned.partition, settings.schema_files),
            settings.tombstone_partition,
            self.sidecars,
        )
        self._planned = planned

    def end(self) -> None:
        if self._planned.cut_at_end:  # wall-clock rotation decided with the plan (run/wall_clock.py)
            self.writer.close_all(next_offset=self._planned.end_offset)

    def settle(self, processed: int, error: SinkError | None) -> int:
        next_offset = commit_point(self.writer, processed)
        self.writer.abandon_open()  # the tail is read again by the next run
        return next_offset

    def finish(self, result: TaskResult) -> None:
        result.skipped = skipped_offsets(result)

    def commit_point(self, processed: int) -> int:
        return commit_point(self.writer, processed)

    def cut(self, offset: int) -> None:
        self.writer.close_all(next_offset=offset)

    def has_open_files(self) -> bool:
        return self.writer.first_open_offset is not None


def run_range(
    settings: TaskSettings,
    planned: PartitionRange,
    client: S3Client | None = None,
    progress_dir: str | None = None,
    reader: RangeReader | None = None,
    stop: Callable[[], bool] | None = None,
) -> TaskResult:
    """`write_to` the S3 objects of the range."""
    return write_to(ObjectOutput, settings, planned, client, progress_dir, reader, stop)


def skipped_offsets(result: TaskResult) -> dict[str, int]:
    """The offsets of the committed part of the range in no closed file and no dead letter, by reason (see
    TaskResult.skipped): what is neither written, dead-lettered nor dropped by a transform was ignored; what Kafka
    deleted between the committed offset and the range's start (planner.py) expired."""
    settled = result.next_offset - result.range.start_offset
    ignored = (
        settled - sum(f.record_count for f in result.files) - sum(result.dead_letters.values()) - result.records_dropped
    )
    reasons = (("transforms", result.records_dropped), ("ignored", ignored), ("expired", result.range.expired))
    return {reason: n for reason, n in reasons if n}


def commit_point(writer: TopicPartitionWriter, processed: int) -> int:
    """The first offset not settled: while a file is open the writer's `first_open_offset`, else the first record
    not handled (every record before it is in a closed file, dead-lettered, an ignored null or dropped by a
    transform)."""
    first_open = writer.first_open_offset
    return first_open if first_open is not None else max(writer.next_offset, processed)
