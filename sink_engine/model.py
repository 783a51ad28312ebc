"""Small value objects passed between the planner, the Spark tasks and the committer."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True, order=True)
class TopicPartition:
    topic: str
    partition: int

    def __str__(self) -> str:
        return f"{self.topic}-{self.partition}"


@dataclass(frozen=True)
class CommittedOffset:
    """What DynamoDB holds for one topic-partition: the next offset to read and the last commit."""

    next_offset: int
    committed_at_ms: int
    last_file: str | None
    dead_letters: dict = field(default_factory=dict)  # error class -> records sent to the DLQ, all runs
    skipped: dict = field(default_factory=dict)  # reason -> offsets in no object and no dead letter, all runs
    first_offset: int | None = None  # where the first committed range started (None: committed before it was kept)


@dataclass(frozen=True)
class PartitionRange:
    """Records [start_offset, end_offset) of one topic-partition that a run reads.

    `expected_committed` is the committed next offset the plan started from (None: nothing committed yet);
    the commit is conditional on it still being there. `cut_at_end`: close every open file at the end offset
    (wall-clock rotation); `wallclock_ms`: the time the Wallclock extractor gives every record of the range.
    `deadline_ms`: the epoch ms after which the range stops reading (`sink.run.timeout.ms`; set by the driver for
    this run only, never recorded with a plan).
    Both are recorded with the plan before any upload, so that a rerun after a crash repeats them.
    """

    topic: str
    partition: int
    start_offset: int
    end_offset: int
    expected_committed: int | None
    cut_at_end: bool = False
    wallclock_ms: int | None = None
    deadline_ms: int | None = None

    @property
    def tp(self) -> TopicPartition:
        return TopicPartition(self.topic, self.partition)

    def __len__(self) -> int:
        return max(0, self.end_offset - self.start_offset)

    @property
    def expired(self) -> int:
        """The offsets from the committed offset to the start (the planner starts at the partition's log start when
        the commit is below it): records Kafka deleted unread, by retention or DeleteRecords."""
        committed = self.expected_committed
        return self.start_offset - committed if committed is not None and committed < self.start_offset else 0


@dataclass(frozen=True)
class ClosedFile:
    """An object uploaded to S3: its key and the records it holds."""

    key: str
    encoded_partition: str
    start_offset: int
    end_offset: int  # offset of the last record in the file
    record_count: int
    size_bytes: int


@dataclass
class TaskResult:
    """What a task returns for one range: closed files, the offset to commit, the error that stopped it, and what
    its target's commit takes beyond the offsets (`target_result`, e.g. a table's data files)."""

    range: PartitionRange
    next_offset: int  # first offset not in a closed file; equals range.start_offset when nothing closed
    records_read: int = 0
    records_dropped: int = 0  # by single message transforms (settled, not written)
    files: list[ClosedFile] = field(default_factory=list)
    error: str | None = None
    error_class: str | None = None
    dead_letters: dict = field(default_factory=dict)  # error class -> records before next_offset sent to the DLQ
    dlq_scan_from: int | None = None  # dead-letter topic position to scan from on the next run (see sink_engine.dlq)
    target_result: object = None  # the target's own immutable result of the range, for its commit (None: nothing)
    # offsets before next_offset in no closed file and no dead letter, by reason: `transforms` (dropped by a
    # transform), `ignored` (ignored tombstones, and offsets Kafka holds no record at: compacted away,
    # transaction markers, aborted transactions' records) and `expired` (deleted from Kafka before they were read:
    # the committed offset was below the partition's log start offset); what `sink-engine verify` accounts with
    skipped: dict = field(default_factory=dict)
