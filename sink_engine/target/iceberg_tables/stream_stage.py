"""A continuous IcebergFormat task's commits: it stages what its streams closed (target/iceberg_tables/staging.py) and
lets it go
once the driver has committed it (target/iceberg_tables/stream_commit.py).

A stream has at most one stage waiting: the next is staged once the driver committed the last (its offsets in
DynamoDB reached the stage's next offset), so each stage starts at the partition's committed offset. A task that
starts again (Spark retried it, or a new run) finds a stage of its partition that starts at the committed offset and
goes on after it: that stage's files are uploaded and described, and the driver commits them, so they are neither
written again nor left behind.
"""

from __future__ import annotations

from collections.abc import Iterable

from sink_engine import events
from sink_engine.errors import CommitConflictError
from sink_engine.model import TopicPartition
from sink_engine.offsets import LeaseToken, OffsetStore
from sink_engine.storage.uploader import Uploader
from sink_engine.target.contract import StreamCommits
from sink_engine.target.iceberg_tables.staging import Stage, StageStore, write_part
from sink_engine.target.iceberg_tables.table_writer import TableWriter
from sink_engine.task.stream import PartitionStream, PendingCommit


class TableStaging(StreamCommits):
    def __init__(self, stages: StageStore, store: OffsetStore, token: LeaseToken, uploader: Uploader):
        self._stages, self._store, self._token, self._uploader = stages, store, token, uploader
        self._waiting: dict[TopicPartition, PendingCommit] = {}  # staged, not committed yet
        self._found: dict[TopicPartition, Stage] | None = None

    def resume(self, tp: TopicPartition, expected: int | None) -> int | None:
        if self._found is None:
            self._found = self._stages.staged(self._token.connector)
        stage = self._found.get(tp)
        if stage is None or stage.commit.expected != expected:
            return None  # none, or spent
        self._waiting[tp] = PendingCommit(stage.commit, ())
        return stage.commit.next_offset

    def refresh(self, streams: Iterable[PartitionStream]) -> bool:
        """True when a partition's committed offset is neither its stage's start nor its end (another run's)."""
        if not self._waiting:
            return False
        committed = self._store.committed(self._token.connector)
        for stream in streams:
            waiting = self._waiting.get(stream.tp)
            if waiting is None:
                continue
            held = committed.get(stream.tp)
            now = held.next_offset if held is not None else None
            if now == waiting.commit.next_offset:
                stream.settled(waiting)
                del self._waiting[stream.tp]
            elif now != waiting.commit.expected:
                return True
        return False

    def commit(self, streams: Iterable[PartitionStream], wait: bool) -> bool:
        if not wait and self._uploader.busy:
            return False
        pending = [
            (s, p)
            for s in streams
            if s.tp not in self._waiting and (p := s.pending()) is not None and p.commit.next_offset != s.committed
        ]  # (not a first commit that would only pin the partition's start: the first stage with records does)
        if not pending:
            return False
        self._uploader.drain()  # dead letters are in place before the driver commits past them
        for stream, done in pending:
            writer = stream.output.writer
            assert isinstance(writer, TableWriter)  # IcebergTablesTarget.stream_output's
            table, point = writer.table, done.commit.next_offset
            parts = (
                [write_part(table, files, keys) for files, keys in writer.finished_parts(done.files, point)]
                if table
                else []  # no record reached the table
            )
            kept = tuple(part for part in parts if part.paths)
            stage = Stage(done.commit, kept, len(done.files), sum(f.record_count for f in done.files))
            try:
                self._stages.put(self._token, stage)
            except CommitConflictError:
                return True
            self._waiting[stream.tp] = done
            events.emit(
                events.FILES_STAGED,
                connector=self._token.connector,
                topic=stream.tp.topic,
                partition=stream.tp.partition,
                next_offset=done.commit.next_offset,
                files=stage.files,
                records=stage.records,
            )
        return False
