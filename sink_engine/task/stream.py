"""One topic-partition of a continuous run: its output (the open files), record steps and dead letters, kept across
cycles, and the commit that settles what closed since the last one.

The same decisions as a bounded run's range from the same start: the writer closes files on the rotation policy
(`flush.size`, `rotate.interval.ms`, schema changes), a wall-clock cut closes every open file at the offset reached
(recorded before any upload, `cut`), and the commit point is the first offset of an open file, so the keys and
bytes are those a bounded run would write, and a bounded run after the continuous one goes on where it stopped.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass

from sink_engine.dlq import router_for
from sink_engine.model import ClosedFile, PartitionRange, TopicPartition
from sink_engine.offsets.store import OffsetCommit
from sink_engine.records import RecordChunk
from sink_engine.storage.uploader import Uploader
from sink_engine.task.output import StreamOutputFactory
from sink_engine.task.run import record_steps
from sink_engine.task.settings import TaskSettings
from sink_engine.task.steps import write_chunk

OPEN_END = 2**63 - 1  # a stream's range has no end offset


@dataclass(frozen=True)
class PendingCommit:
    """A stream's commit (`OffsetCommit`) and the closed files it settles."""

    commit: OffsetCommit
    files: tuple[ClosedFile, ...]


class PartitionStream:
    """Contract: `feed` takes the partition's records in offset order from `start`; `cut(offset)` closes every open
    file before `offset`; `pending()` is the commit that settles what closed since the last one (None while the
    commit point has not moved) and `settled(pending)` says it was committed. `recorded_cut`: the offset at which
    an earlier attempt of this task cut after `start` (a recorded plan): `feed` cuts there again. `expire(log_start)`
    skips what Kafka deleted unread. `output_for` builds the output the records go into (its target's
    `ContinuousTarget.stream_output`)."""

    def __init__(
        self,
        output_for: StreamOutputFactory,
        settings: TaskSettings,
        tp: TopicPartition,
        start: int,
        expected: int | None,
        uploader: Uploader,
        recorded_cut: int | None = None,
    ):
        self.tp = tp
        self.range = PartitionRange(tp.topic, tp.partition, start, OPEN_END, expected)
        self.output = output_for(settings, self.range, uploader)
        self._steps = record_steps(settings, tp.topic, self.output.partitioner, self.output.sidecars)
        self._router = router_for(settings.dead_letters, self.range, uploader)
        self.processed = start  # the first offset not handled
        self.committed, self.expected = start, expected  # the offset committed last (expected by the next commit)
        self.recorded_cut = recorded_cut if recorded_cut is not None and recorded_cut > start else None
        self._last_cut: int | None = None
        self.records_read = self.records_written = self.files_written = 0
        self._dropped: list[int] = []
        self._unsettled: list[tuple[int, int]] = []  # (last offset, first record's time) of each chunk not settled
        self._expired: list[tuple[int, int]] = []  # [first, end) offsets Kafka deleted before they were read

    @property
    def has_open_files(self) -> bool:
        return self.output.has_open_files()

    @property
    def oldest_unsettled_ms(self) -> int | None:
        """The time (Kafka's, epoch ms) of the oldest record read but not settled (not yet in S3), to the chunk: the
        first record of the chunk that holds it; None when everything read is settled."""
        return self._unsettled[0][1] if self._unsettled else None

    def feed(self, chunk: RecordChunk, first_time_ms: int) -> None:
        """Write the chunk's records (`first_time_ms`: its first record's time); a RecordError the dead-letter
        router does not tolerate propagates (the records before it are handled, `processed` stays at the chunk's
        start)."""
        self._unsettled.append((chunk.offsets[-1], first_time_ms))
        cut = self.recorded_cut
        if cut is not None and chunk.offsets[-1] >= cut:
            position = bisect.bisect_left(chunk.offsets, cut)
            if position:
                self._write(chunk.slice(0, position))
            self.cut(cut)
            chunk = chunk.slice(position, len(chunk))
            if not len(chunk):
                return
        self._write(chunk)
        if self.recorded_cut is not None and self.processed >= self.recorded_cut:
            self.cut(self.recorded_cut)

    def expire(self, log_start: int) -> int:
        """Kafka deleted the records from `processed` up to `log_start` before they were read (retention,
        DeleteRecords): they are settled unread, counted as `skipped.expired` by the commit that passes them, and
        reading goes on at `log_start`. Returns how many (0 when `log_start` is not past `processed`)."""
        if log_start <= self.processed:
            return 0
        self._expired.append((self.processed, log_start))
        gap, self.processed = log_start - self.processed, log_start
        return gap

    @property
    def cuts_committed(self) -> bool:
        """Whether the commit point has passed the last cut (a new cut may be recorded: the plan holds one)."""
        return self._last_cut is None or self.committed >= self._last_cut

    def cut(self, offset: int) -> None:
        """Close every open file before `offset` (the first offset not handled when the cut was decided)."""
        self.output.cut(offset)
        self.processed = max(self.processed, offset)
        self.recorded_cut, self._last_cut = None, offset

    def pending(self) -> PendingCommit | None:
        """The commit of what is settled since the last one (the first commit of a partition also pins its
        start), with its dead letters handed to their destination; None while nothing moved."""
        point = self.output.commit_point(self.processed)
        if point <= self.committed and self.expected is not None:
            return None
        files = tuple(f for f in self.output.writer.closed if f.start_offset < point)
        letters, scan_from = self._router.flush(point)
        dropped = sum(1 for offset in self._dropped if offset < point)
        expired = sum(min(end, point) - first for first, end in self._expired if first < point)
        written = sum(f.record_count for f in files) + sum(letters.values())
        ignored = point - self.committed - written - dropped - expired
        reasons = (("transforms", dropped), ("ignored", ignored), ("expired", expired))
        skipped = {reason: n for reason, n in reasons if n}
        commit = OffsetCommit(
            self.tp,
            self.expected,
            point,
            files[-1].key if files else None,
            letters,
            scan_from,
            skipped,
            self.range.start_offset,
        )
        return PendingCommit(commit, files)

    def settled(self, pending: PendingCommit) -> None:
        """`pending` was committed: what it settled is let go."""
        point = pending.commit.next_offset
        self.output.let_go(point)
        self._dropped = [offset for offset in self._dropped if offset >= point]
        self._unsettled = [entry for entry in self._unsettled if entry[0] >= point]
        self._expired = [(max(first, point), end) for first, end in self._expired if end > point]
        self.committed = self.expected = point
        self.records_written += sum(f.record_count for f in pending.files)
        self.files_written += len(pending.files)

    def _write(self, chunk: RecordChunk) -> None:
        self.records_read += len(chunk)
        self._dropped += write_chunk(self.output.writer, self._steps, chunk, self._router)
        self.processed = chunk.offsets[-1] + 1
