"""The driver of a continuous IcebergFormat run: it appends what the tasks staged (iceberg/staging.py), at most one
snapshot per table every `iceberg.control.commit.interval-ms`, then commits the offsets in DynamoDB.

The commit is a bounded run's (iceberg/commit.py): the stages that start at their partition's committed offset are
appended in one snapshot per table whose summary records their offsets (the lease renewed before, the connector's
newest snapshot checked against the one last seen), then the offsets are committed with the lease check. A crash
between the two is what `recover` repairs at the next start, as for a bounded run: each snapshot is followed by its
offsets commit before the next, so the newest snapshot of the connector is the only one DynamoDB can lag.

When: the tasks close their files on the interval's wall-clock boundaries and stage them within a second or so, so
once the interval has passed since the last commit the driver commits as soon as the stages stop changing between
two looks (or QUIET_MAX_MS after it first saw one), to take every partition of the boundary in one snapshot.
"""

from __future__ import annotations

import contextlib
import time
from collections import defaultdict
from collections.abc import Callable

from sink_engine.continuous.commits import CommitCoordinator
from sink_engine.driver.committer import commit_logged
from sink_engine.iceberg.catalog import load_table
from sink_engine.iceberg.commit import TableCommits
from sink_engine.iceberg.errors import TableError
from sink_engine.iceberg.settings import IcebergSettings
from sink_engine.iceberg.staging import Stage, StageStore, read_data_files
from sink_engine.model import TopicPartition
from sink_engine.offsets import Leases, LeaseToken, OffsetStore
from sink_engine.offsets.store import MAX_COMMITS

QUIET_MAX_MS = 5000


class StagedCommits(CommitCoordinator):
    def __init__(
        self,
        settings: IcebergSettings,
        tables: TableCommits,
        stages: StageStore,
        store: OffsetStore,
        leases: Leases,
        token: LeaseToken,
        lease_ms: int,
        interval_ms: int,
        clock: Callable[[], int],
    ):
        self._settings, self._tables, self._stages, self._store = settings, tables, stages, store
        self._leases, self._token, self._lease_ms = leases, token, lease_ms
        self._interval_ms, self._clock = interval_ms, clock
        self._quiet_max_ms = min(QUIET_MAX_MS, interval_ms // 4)
        self._next_ms = 0  # no commit before (the last one's end plus the interval)
        self._seen: tuple[frozenset, int] | None = None  # the ready stages last seen, since when

    def tick(self) -> None:
        now = self._clock()
        if now < self._next_ms:
            return
        ready = self._ready()
        if not ready:
            return
        shown = frozenset((tp, stage.commit.next_offset) for tp, stage in ready.items())
        if self._seen is None or self._seen[0] != shown:
            first = self._seen[1] if self._seen is not None else now
            self._seen = (shown, first)
            if now - first < self._quiet_max_ms:
                return  # more may be on their way: look again
        self._commit(ready)

    def finish(self, budget_s: float) -> None:
        """Commit what is staged, waiting for the interval to pass when it does within `budget_s`; else leave it
        staged for the next run (its tasks go on after it, its driver commits it)."""
        wait_s = (self._next_ms - self._clock()) / 1000
        if wait_s > budget_s:
            return
        time.sleep(max(0.0, wait_s))
        ready = self._ready()
        if ready:
            self._commit(ready)

    def _ready(self) -> dict[TopicPartition, Stage]:
        """The stages that start at their partition's committed offset."""
        committed = {tp: c.next_offset for tp, c in self._store.committed(self._token.connector).items()}
        return {
            tp: stage
            for tp, stage in self._stages.staged(self._token.connector).items()
            if stage.commit.expected == committed.get(tp)
        }

    def _commit(self, ready: dict[TopicPartition, Stage]) -> None:
        files: dict[str, list] = defaultdict(list)
        entries: dict[str, list] = defaultdict(list)
        ios: dict[str, object] = {}
        for tp, stage in sorted(ready.items()):
            identifier = self._settings.table_identifier(tp.topic)
            if stage.manifests:
                io = ios[identifier] = ios.get(identifier) or self._io(identifier)
                files[identifier] += read_data_files(io, stage.manifests)
            entries[identifier].append(_entry(stage))
        self._tables.commit_files(files, entries, self._leases, self._token, self._lease_ms)
        stages = [ready[tp] for tp in sorted(ready)]
        for start in range(0, len(stages), MAX_COMMITS):
            commit_logged(self._store, self._token, [(s.commit, s.files) for s in stages[start : start + MAX_COMMITS]])
        self._next_ms, self._seen = self._clock() + self._interval_ms, None
        for tp, stage in ready.items():  # spent: the snapshot describes their files in manifests of its own
            for path, _ in stage.manifests:
                _delete(ios[self._settings.table_identifier(tp.topic)], path)

    def _io(self, identifier: str):
        table = load_table(self._tables.catalog, identifier)
        if table is None:
            raise TableError(f"table {identifier} of staged data files does not exist")
        return table.io


def _delete(io, path: str) -> None:
    """Delete a spent stage's manifest; one left behind (a failed delete) is an unreferenced file, harmless."""
    with contextlib.suppress(OSError):
        io.delete(path)


def _entry(stage: Stage) -> dict:
    """The stage as a snapshot summary records a partition's offsets (commit.snapshot_offsets)."""
    commit = stage.commit
    return {
        "topic": commit.tp.topic,
        "partition": commit.tp.partition,
        "start": commit.expected,
        "next": commit.next_offset,
        "dead_letters": commit.dead_letters or {},
        "dlq_scan_from": commit.dlq_scan_from,
    }
