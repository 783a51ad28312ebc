"""How a continuous run's streams commit what they closed, as their target has it (`Target.stream_commits`,
`Target.stream_coordinator`): a task's side (`StreamCommits`) and, where the target needs one, the driver's
(`CommitCoordinator`).

S3 objects (`OffsetCommits`): a task commits a partition's offset as soon as the files before it are uploaded (the
upload is the whole commit). Iceberg tables (sink_engine/target/iceberg_tables/stream_stage.py and stream_commit.py):
tasks stage
what they closed and the driver appends it, one snapshot per table and interval, before it commits the offsets.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable

from sink_engine.continuous.stream import PartitionStream, PendingCommit
from sink_engine.errors import CommitConflictError
from sink_engine.model import TopicPartition
from sink_engine.offsets import LeaseToken, OffsetStore
from sink_engine.offsets.store import MAX_COMMITS
from sink_engine.run.committer import commit_logged
from sink_engine.storage.uploader import Uploader


class StreamCommits(ABC):
    """A task's side. `commit` and `refresh` return True when the lease was lost (nothing more may be committed)."""

    def resume(self, tp: TopicPartition, expected: int | None) -> int | None:
        """Where `tp`'s stream starts when something after its committed offset `expected` is already on its way to
        being committed by an earlier attempt (None: from `expected`)."""
        return None

    def refresh(self, streams: Iterable[PartitionStream]) -> bool:
        """Settle what another process committed for these streams since the last look."""
        return False

    @abstractmethod
    def commit(self, streams: Iterable[PartitionStream], wait: bool) -> bool:
        """Commit (or hand on) what the streams closed since the last time, once its uploads are done. Without
        `wait`, nothing while an upload is under way (the next cycle does it: reading goes on meanwhile)."""


class CommitCoordinator(ABC):
    """The driver's side, called between its looks at the tasks; raises a SinkError that ends the run."""

    @abstractmethod
    def tick(self) -> None:
        """Commit what the tasks handed on, when it is time."""

    @abstractmethod
    def finish(self, budget_s: float) -> None:
        """The tasks ended: commit what they handed on, within `budget_s` seconds if at all."""


class OffsetCommits(StreamCommits):
    """Every stream whose commit point moved is committed in DynamoDB, in one transaction per MAX_COMMITS partitions
    with the lease check."""

    def __init__(self, store: OffsetStore, token: LeaseToken, uploader: Uploader):
        self._store, self._token, self._uploader = store, token, uploader

    def commit(self, streams: Iterable[PartitionStream], wait: bool) -> bool:
        if not wait and self._uploader.busy:
            return False
        pending = [(s, p) for s in streams if (p := s.pending()) is not None]
        if not pending:
            return False
        self._uploader.drain()  # the files and dead letters of these commits are in S3 before their offsets move
        for start in range(0, len(pending), MAX_COMMITS):
            batch: list[tuple[PartitionStream, PendingCommit]] = pending[start : start + MAX_COMMITS]
            try:
                commit_logged(self._store, self._token, [(done.commit, len(done.files)) for _, done in batch])
            except CommitConflictError:
                return True
            for stream, done in batch:
                stream.settled(done)
        return False
