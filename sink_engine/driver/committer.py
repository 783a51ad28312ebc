"""Commit each topic-partition's next offset under the lease, after its files are in S3."""
from __future__ import annotations

from sink_engine import events
from sink_engine.errors import CommitConflictError
from sink_engine.failpoints import failpoint
from sink_engine.model import TaskResult
from sink_engine.offsets import LeaseToken, OffsetStore


def commit_results(store: OffsetStore, token: LeaseToken, results: list[TaskResult]) -> list[TaskResult]:
    """Commit every result that moves its offset (or pins the first start of a partition); returns those.

    Stops at the first CommitConflictError, which it raises after logging COMMIT_CONFLICT.
    """
    committed = []
    for result in sorted(results, key=lambda r: (r.range.topic, r.range.partition)):
        planned = result.range
        if result.next_offset == planned.expected_committed:
            continue
        last_file = result.files[-1].key if result.files else None
        try:
            store.commit(token, planned.tp, planned.expected_committed, result.next_offset, last_file,
                         result.dead_letters, result.dlq_scan_from, result.skipped, planned.start_offset)
        except CommitConflictError as e:
            events.emit(events.COMMIT_CONFLICT, connector=token.connector, topic=planned.topic,
                        partition=planned.partition, expected=planned.expected_committed, epoch=token.epoch)
            raise e
        events.emit(events.OFFSETS_COMMITTED, connector=token.connector, topic=planned.topic,
                    partition=planned.partition, next_offset=result.next_offset, files=len(result.files))
        committed.append(result)
        if len(committed) == 1:
            failpoint("after_first_commit")
    return committed
