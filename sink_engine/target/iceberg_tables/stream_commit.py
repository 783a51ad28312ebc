"""The driver of a continuous IcebergFormat run: it appends what the tasks staged (target/iceberg_tables/staging.py),
at most one
snapshot per table every `iceberg.control.commit.interval-ms`, then commits the offsets in DynamoDB.

The commit is a bounded run's (target/iceberg_tables/commit.py): the stages that start at their partition's committed
offset are
appended in one snapshot per table whose summary records their offsets (the lease renewed before, the connector's
newest snapshot checked against the one last seen), then the offsets are committed with the lease check. A crash
between the two is what `recover` repairs at the next start, as for a bounded run: each snapshot is followed by its
offsets commit before the next, so the newest snapshot of the connector is the only one DynamoDB can lag.

When: once per window of the interval on the wall clock (boundaries at multiples of it from midnight in `timezone`,
where the tasks cut), `commit_delay_ms` after the window's boundary: the tasks have cut and staged by then, and the
commit is anchored to the boundaries, so it does not drift through the windows as a commit timed from the last one
would (a commit takes time). So a table gets at most one snapshot per window: commits start about an interval apart,
as the Iceberg Kafka Connect sink's coordinator times them (from one commit's start to the next). A stage that comes
later is committed in the window's remaining time (looked for every LOOK_MS, or a tenth of the interval) or the
next.
"""

from __future__ import annotations

import logging
import time
from collections import defaultdict
from collections.abc import Callable
from datetime import tzinfo

from pyiceberg.io import FileIO

from sink_engine import events
from sink_engine.model import TopicPartition
from sink_engine.offsets import Leases, LeaseToken, OffsetStore
from sink_engine.offsets.store import MAX_COMMITS
from sink_engine.partition.time_buckets import next_rotation_ms
from sink_engine.run.committer import commit_logged
from sink_engine.target.contract import CommitCoordinator
from sink_engine.target.iceberg_tables.catalog import load_table
from sink_engine.target.iceberg_tables.commit import TableCommits
from sink_engine.target.iceberg_tables.errors import TableError
from sink_engine.target.iceberg_tables.settings import IcebergSettings
from sink_engine.target.iceberg_tables.staging import Stage, StageStore, read_part
from sink_engine.target.iceberg_tables.task import TableFiles

DELAY_MAX_MS = 5000
LOOK_MS = 500


def commit_delay_ms(interval_ms: int) -> int:
    """How long after a window's boundary its commit starts: half the interval, at most DELAY_MAX_MS."""
    return min(interval_ms // 2, DELAY_MAX_MS)


class StagedCommits(CommitCoordinator):
    """`tick` (the driver's loop, every half second) commits the ready stages once per window (module docstring);
    a conflict (another run's snapshot or offsets, the lease lost) raises and ends the run."""

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
        zone: tzinfo,
        clock: Callable[[], int],
    ):
        self._settings, self._tables, self._stages, self._store = settings, tables, stages, store
        self._leases, self._token, self._lease_ms = leases, token, lease_ms
        self._interval_ms, self._zone, self._clock = interval_ms, zone, clock
        self._delay_ms, self._look_ms = commit_delay_ms(interval_ms), max(LOOK_MS, interval_ms // 10)
        self._done_until = 0  # the end of the window a commit started in
        self._looked = 0

    def tick(self) -> None:
        now = self._clock()
        window_end = next_rotation_ms(now, self._interval_ms, self._zone)
        if now < self._done_until or now - (window_end - self._interval_ms) < self._delay_ms:
            return
        if now - self._looked < self._look_ms:
            return
        self._looked = now
        ready = self._ready()
        if ready:
            self._done_until = window_end
            self._commit(ready)

    def finish(self, budget_s: float) -> None:
        """Commit what is staged, waiting for the next window when this one had its commit and that comes within
        `budget_s`; else leave it staged for the next run (its tasks go on after it, its driver commits it)."""
        wait_s = (self._done_until - self._clock()) / 1000
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
        ios: dict[str, FileIO] = {}
        for tp, stage in sorted(ready.items()):
            identifier = self._settings.table_identifier(tp.topic)
            if stage.parts:
                io = ios[identifier] = ios.get(identifier) or self._io(identifier)
            for part in stage.parts:  # in offset order: an upsert table's later keys replace earlier rows
                data_files, keys = read_part(io, part)
                files[identifier].append(TableFiles(tuple(data_files), keys))
            entries[identifier].append(_entry(stage))
        self._tables.commit_files(files, entries, self._leases, self._token, self._lease_ms)
        stages = [ready[tp] for tp in sorted(ready)]
        for start in range(0, len(stages), MAX_COMMITS):
            commit_logged(self._store, self._token, [(s.commit, s.files) for s in stages[start : start + MAX_COMMITS]])
        if not self._settings.deletes_spent_stages:  # an S3 table bucket removes them (IcebergSettings)
            return
        for tp, stage in ready.items():  # spent: the snapshot describes their files in manifests of its own
            for part in stage.parts:
                for path in part.paths:
                    _delete(ios[self._settings.table_identifier(tp.topic)], path)

    def _io(self, identifier: str) -> FileIO:
        table = load_table(self._tables.catalog, identifier)
        if table is None:
            raise TableError(f"table {identifier} of staged data files does not exist")
        return table.io


def _delete(io: FileIO, path: str) -> None:
    """Delete a spent stage's manifest or keys file; one left behind (a failed delete: STAGE_FILE_KEPT, with S3's
    answer) is an unreferenced file, harmless, and the run goes on."""
    try:
        io.delete(path)
    except OSError as e:
        events.emit(events.STAGE_FILE_KEPT, logging.WARNING, path=path, error=str(e))


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
        "skipped": commit.skipped or {},
    }
