"""A continuous run's commits of S3 objects (`S3ObjectsTarget.stream_commits`): a task commits a partition's offset
as soon as the files before it are uploaded (the upload is the whole commit)."""

from __future__ import annotations

from collections.abc import Iterable

from sink_engine.errors import CommitConflictError
from sink_engine.offsets import LeaseToken, OffsetStore
from sink_engine.offsets.store import MAX_COMMITS
from sink_engine.run.committer import commit_logged
from sink_engine.storage.uploader import Uploader
from sink_engine.target.contract import StreamCommits
from sink_engine.task.stream import PartitionStream, PendingCommit


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
