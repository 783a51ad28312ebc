"""The driver's side of IcebergFormat: one snapshot per table and run, exactly once (docs/iceberg.md).

A run's data files for a table are appended in one snapshot (an append) whose summary holds the connector, the
lease epoch, a commit id and each topic-partition's committed start and next offset; the offsets are committed in
DynamoDB after it. So the table is the commit point and DynamoDB may lag it:

- `recover` (before planning) reads the newest snapshot of the connector in each table and moves DynamoDB forward
  to its offsets where they are behind (a run died between the two commits); the run then plans from there and
  never appends those records again.
- `commit` appends only if the newest snapshot of the connector is still the one `recover` saw: another run's
  snapshot (a zombie's, or a newer run's) since then means that run owns the work, and this one stops
  (TableCommitConflictError, exit 4). Before each attempt the lease is renewed (a run that lost it stops there);
  the catalog's optimistic concurrency makes the check and the append one step (the append asserts the head it was
  built on; pyiceberg's own rebasing retry is off, see catalog.without_commit_retries). A lost race with any other
  commit (table maintenance, a schema change, another connector) is retried after looking again; an append whose
  answer was lost is recognised by its commit id.

With fan-out by field (target/iceberg_tables/routing.py) no table holds all of a topic-partition's records, so
`recover` moves
nothing: the rerun reads the records again and each table's writer skips what the table holds (`written-below`);
`commit` checks against the snapshot the tasks' writers read instead of `recover`'s.

Tables commit `iceberg.control.commit.threads` at a time (commit_pool.py), each as above; the offsets follow them all.
"""

from __future__ import annotations

import json
import threading
import time
import uuid
from collections import defaultdict

from pyiceberg.catalog import Catalog
from pyiceberg.exceptions import CommitFailedException, CommitStateUnknownException
from pyiceberg.table.snapshots import Snapshot
from pyiceberg.table.update.snapshot import UpdateSnapshot, _MergeAppendFiles, _OverwriteFiles

from sink_engine import events
from sink_engine.model import TaskResult, TopicPartition
from sink_engine.offsets import Leases, LeaseToken, OffsetStore
from sink_engine.target.iceberg_tables.catalog import (
    load_table,
    open_catalog,
    reload_table,
    table_files,
    without_commit_retries,
)
from sink_engine.target.iceberg_tables.commit_pool import commit_tables
from sink_engine.target.iceberg_tables.errors import TableCommitConflictError, TableError
from sink_engine.target.iceberg_tables.settings import IcebergSettings
from sink_engine.target.iceberg_tables.snapshots import (
    COMMIT_ID,
    CONNECTOR,
    EPOCH,
    OFFSETS,
    WRITTEN_BELOW,
    newest_of_connector,
    snapshot_offsets,
    summary_of,
    written_below,
    written_below_json,
)
from sink_engine.target.iceberg_tables.task import RoutedFiles, TableFiles
from sink_engine.target.iceberg_tables.upsert import changes_in, run_files

COMMIT_ATTEMPTS = 10


class TableCommits:
    def __init__(self, settings: IcebergSettings, catalog: Catalog | None = None) -> None:
        self._settings, self._catalog = settings, catalog
        self._opening = threading.Lock()  # the commit threads share one catalog (commit_pool.py)
        self._seen: dict[str, int | None] = {}  # table -> the connector's newest snapshot when the run planned
        self._routed: set[str] = set()  # tables records named (fan-out by field): they carry `written-below`

    @property
    def catalog(self) -> Catalog:
        with self._opening:
            self._catalog = self._catalog or open_catalog(self._settings)
            return self._catalog

    def recover(self, store: OffsetStore, token: LeaseToken, topics: set[str]) -> bool:
        """Move DynamoDB's offsets forward to the connector's newest snapshot in each table of `topics` where they
        are behind it; True when any moved (the run must plan again)."""
        if self._settings.routed:
            return False  # records are routed to their tables: each table's writer skips what it holds (target/iceberg_tables/routing.py)
        committed = {tp: c.next_offset for tp, c in store.committed(token.connector).items()}
        moved = False
        for identifier in sorted({self._settings.table_identifier(topic) for topic in topics}):
            snapshot = newest_of_connector(load_table(self.catalog, identifier), token.connector)
            self._seen[identifier] = snapshot.snapshot_id if snapshot else None
            if snapshot is None:
                continue
            for entry in snapshot_offsets(snapshot):
                moved |= self._forward(store, token, identifier, snapshot, entry, committed)
        return moved

    def _forward(
        self, store: OffsetStore, token: LeaseToken, identifier: str, snapshot: Snapshot, entry: dict, committed: dict
    ) -> bool:
        tp = TopicPartition(entry["topic"], entry["partition"])
        current = committed.get(tp)
        if current is not None and current >= entry["next"]:
            return False
        if current != entry["start"]:
            raise TableError(
                f"{tp}: DynamoDB holds next offset {current}, neither the start ({entry['start']}) nor "
                f"past the end ({entry['next']}) of snapshot {snapshot.snapshot_id} of table {identifier}"
            )
        store.commit(
            token,
            tp,
            entry["start"],
            entry["next"],
            None,
            entry["dead_letters"],
            entry["dlq_scan_from"],
            entry.get("skipped"),  # absent from snapshots committed before it was recorded
        )
        events.emit(
            events.OFFSETS_RECOVERED,
            connector=token.connector,
            table=identifier,
            topic=tp.topic,
            partition=tp.partition,
            next_offset=entry["next"],
            snapshot=snapshot.snapshot_id,
        )
        return True

    def commit(self, results: list[TaskResult], leases: Leases, token: LeaseToken, lease_ms: int) -> dict[str, int]:
        """Append each table's data files of this run in one snapshot (of an upsert table, with the files it
        rewrites without the changed keys: upsert.run_files); returns table -> snapshot id."""
        files: dict[str, list[TableFiles]] = defaultdict(list)
        entries: dict[str, list] = defaultdict(list)
        for result in sorted(results, key=lambda r: (r.range.topic, r.range.partition)):
            for identifier, part in self._parts(result, token.connector):
                if part is not None:
                    files[identifier].append(part)
                if result.next_offset != result.range.expected_committed:
                    entries[identifier].append(_entry(result))
        return self.commit_files(files, entries, leases, token, lease_ms)

    def _parts(self, result: TaskResult, connector: str) -> list[tuple[str, TableFiles | None]]:
        """(table, the range's files of it) of a result: its topic's table, or with fan-out each table its records
        named, whose base snapshots (what the range's writer skipped by) must agree with the other ranges'."""
        target = result.target_result
        if not isinstance(target, RoutedFiles):
            part = target if isinstance(target, TableFiles) else None
            return [(self._settings.table_identifier(result.range.topic), part)]
        for identifier, _, base in target.tables:
            if identifier in self._routed and self._seen[identifier] != base:
                raise TableCommitConflictError(
                    connector, identifier, f"its ranges read different snapshots of the connector ({base})"
                )
            self._routed.add(identifier)
            self._seen[identifier] = base
        return [(identifier, part) for identifier, part, _ in target.tables]

    def commit_files(
        self,
        files: dict[str, list[TableFiles]],
        entries: dict[str, list],
        leases: Leases,
        token: LeaseToken,
        lease_ms: int,
    ) -> dict[str, int]:
        """Append each table's data files (`files`, with an upsert table's changed keys) in one snapshot whose summary
        records its `entries` (topic, partition, start, next, dead_letters, dlq_scan_from, skipped); a table without
        files gets none. `iceberg.control.commit.threads` tables at once (commit_pool.py); returns table -> snapshot
        id once every table committed, raises naming a table that did not."""
        identifiers = sorted(i for i in files if any(part.data_files or changes_in(part) for part in files[i]))
        if not identifiers:
            return {}

        def commit(identifier: str) -> int:
            return self._commit_table(
                identifier, files[identifier], entries.get(identifier, []), leases, token, lease_ms
            )

        return commit_tables(identifiers, commit, self._settings.commit_threads, token)

    def _commit_table(
        self, identifier: str, parts: list, entries: list, leases: Leases, token: LeaseToken, lease_ms: int
    ) -> int:
        commit_id, started = uuid.uuid4().hex, time.monotonic()
        properties = {
            CONNECTOR: token.connector,
            EPOCH: str(token.epoch),
            COMMIT_ID: commit_id,
            OFFSETS: json.dumps(entries, sort_keys=True),
        }
        for _ in range(COMMIT_ATTEMPTS):
            if not leases.renew(token, lease_ms):
                raise TableCommitConflictError(
                    token.connector, identifier, f"the run's lease (epoch {token.epoch}) is no longer held"
                )
            table = without_commit_retries(reload_table(self.catalog, identifier))
            newest = newest_of_connector(table, token.connector)
            if newest is not None and summary_of(newest).get(COMMIT_ID) == commit_id:
                return self._committed(identifier, newest.snapshot_id, [], token, started)  # answer lost
            if (newest.snapshot_id if newest else None) != self._seen.get(identifier):
                raise TableCommitConflictError(
                    token.connector, identifier, _changed(newest, self._seen.get(identifier))
                )
            if identifier in self._routed:
                properties[WRITTEN_BELOW] = written_below_json(_marks(written_below(newest), entries))
            try:
                # a file IO failure leaves at most an unreferenced file or an appended snapshot that the next
                # run's `recover` finds by its summary: never records twice
                with table_files(identifier, "the snapshot commit"):
                    removed, data_files = run_files(table, parts)
                with (
                    table_files(identifier, "the snapshot commit"),
                    table.transaction() as transaction,
                    _producer(transaction.update_snapshot(snapshot_properties=properties), removed) as append,
                ):
                    for data_file in removed:
                        append.delete_data_file(data_file)
                    for data_file in data_files:
                        append.append_data_file(data_file)
                return self._committed(identifier, append.snapshot_id, data_files, token, started)
            except (CommitFailedException, CommitStateUnknownException):
                continue  # look again: a concurrent commit, or this one's answer lost
        raise TableError(
            f"snapshot commit to table {identifier} kept losing to concurrent commits "
            f"({COMMIT_ATTEMPTS} attempts); nothing was appended"
        )

    def _committed(self, identifier: str, snapshot_id: int, data_files: list, token: LeaseToken, started: float) -> int:
        """`seconds`: from the lease check to the catalog's answer (every attempt)."""
        self._seen[identifier] = snapshot_id
        events.emit(
            events.SNAPSHOT_COMMITTED,
            connector=token.connector,
            epoch=token.epoch,
            table=identifier,
            snapshot=snapshot_id,
            files=len(data_files),
            records=sum(f.record_count for f in data_files),
            seconds=round(time.monotonic() - started, 3),
        )
        return snapshot_id


def _producer(update: UpdateSnapshot, removed: list) -> _MergeAppendFiles | _OverwriteFiles:
    """An append, or an overwrite when the snapshot also removes data files (an upsert's rewrite). The append is
    merge_append: it merges manifests when the table's `commit.manifest-merge.enabled` says so (as pyiceberg's
    Table.append chooses), else appends one manifest as fast_append does."""
    return update.overwrite() if removed else update.merge_append()


def _entry(result: TaskResult) -> dict:
    return {
        "topic": result.range.topic,
        "partition": result.range.partition,
        "start": result.range.expected_committed,
        "next": result.next_offset,
        "dead_letters": result.dead_letters,
        "dlq_scan_from": result.dlq_scan_from,
        "skipped": result.skipped,
    }


def _marks(previous: dict[TopicPartition, int], entries: list[dict]) -> dict[TopicPartition, int]:
    """A routed table's `written-below` after this commit: the previous marks, moved to the next offset of each
    topic-partition whose range had records of the table."""
    marks = dict(previous)
    for entry in entries:
        tp = TopicPartition(entry["topic"], entry["partition"])
        marks[tp] = max(marks.get(tp, 0), entry["next"])
    return marks


def _changed(newest: Snapshot | None, seen: int | None) -> str:
    if newest is None:
        return f"the connector's snapshot {seen} is no longer in the table's metadata"
    return (
        f"snapshot {newest.snapshot_id} of the connector (epoch {summary_of(newest).get(EPOCH)}) was committed "
        "after this run planned"
    )
