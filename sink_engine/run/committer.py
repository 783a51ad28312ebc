"""Commit the topic-partitions' next offsets under the lease, after their files are in S3: up to 99 in one
transaction, with one lease check."""

from __future__ import annotations

from sink_engine import events
from sink_engine.errors import CommitConflictError
from sink_engine.failpoints import failpoint
from sink_engine.model import TaskResult
from sink_engine.offsets import LeaseToken, OffsetStore
from sink_engine.offsets.store import MAX_COMMITS, OffsetCommit


def commit_results(store: OffsetStore, token: LeaseToken, results: list[TaskResult]) -> list[TaskResult]:
    """Commit every result that moves its offset (or pins the first start of a partition); returns those.

    In topic-partition order: the first alone, then the others in transactions of up to MAX_COMMITS (each
    all or nothing). The first alone costs one round trip and keeps a crash between two transactions (one
    partition committed, the others not; failpoint `after_first_commit`) as reachable at any partition count as
    it was when every partition had a transaction of its own. Stops at the first CommitConflictError, which it
    raises after logging COMMIT_CONFLICT for the topic-partition it names.
    """
    moving = [
        r
        for r in sorted(results, key=lambda r: (r.range.topic, r.range.partition))
        if r.next_offset != r.range.expected_committed
    ]
    committed = []
    for batch in [moving[:1]] + [moving[i : i + MAX_COMMITS] for i in range(1, len(moving), MAX_COMMITS)]:
        if not batch:
            continue
        commit_logged(store, token, [(_commit_of(result), len(result.files)) for result in batch])
        committed.extend(batch)
        if len(committed) == len(batch):
            failpoint("after_first_commit")
    return committed


def commit_logged(store: OffsetStore, token: LeaseToken, commits: list[tuple[OffsetCommit, int]]) -> None:
    """Commit `commits` (each with the number of files it settles) in one transaction and log OFFSETS_COMMITTED for
    each; a CommitConflictError is logged as COMMIT_CONFLICT, then raised."""
    try:
        store.commit_all(token, [commit for commit, _ in commits])
    except CommitConflictError as e:
        events.emit(
            events.COMMIT_CONFLICT,
            connector=token.connector,
            topic=e.topic,
            partition=e.partition,
            expected=e.expected_start,
            epoch=token.epoch,
        )
        raise
    for commit, files in commits:
        events.emit(
            events.OFFSETS_COMMITTED,
            connector=token.connector,
            topic=commit.tp.topic,
            partition=commit.tp.partition,
            next_offset=commit.next_offset,
            files=files,
        )


def _commit_of(result: TaskResult) -> OffsetCommit:
    planned = result.range
    return OffsetCommit(
        planned.tp,
        planned.expected_committed,
        result.next_offset,
        result.files[-1].key if result.files else None,
        result.dead_letters,
        result.dlq_scan_from,
        result.skipped,
        planned.start_offset,
    )
