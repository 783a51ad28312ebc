"""Table upkeep (`sink-engine iceberg maintain`): rewrite small data files into target-size ones, expire old
snapshots. Neither changes what the table holds, and neither can break the connector's exactly-once commit:

- A rewrite is an overwrite snapshot (pyiceberg 0.12 has no replace operation) that deletes the small files and
  adds files holding exactly their rows, committed with pyiceberg's retry, which checks that the files it deletes
  are still there. It carries no `sink-engine.connector`, so a run's commit that meets it looks again and appends
  on top of it (commit.py), and a rewrite that meets a run's append retries on top of that.
- Expiry removes the snapshots older than the table's `history.expire.max-snapshot-age-ms` (or the command's
  `--older-than-hours`), so that a table a continuous run appends to every `iceberg.control.commit.interval-ms`
  holds at most about (that age + the time between two maintenance runs) / the interval snapshots. It never
  removes the current snapshot, a branch or tag head, the `retain_last` newest snapshots, nor the newest snapshot
  of each sink-engine connector: that one holds the offsets a run recovers after a crash between its snapshot and
  its DynamoDB commit. Expired snapshots leave the metadata only; their files are not deleted.

A partition whose files have delete files (another writer's row-level deletes) is not rewritten.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from pyiceberg.expressions import AlwaysTrue
from pyiceberg.io.pyarrow import ArrowScan, _dataframe_to_data_files
from pyiceberg.table import FileScanTask, Table, TableProperties

from sink_engine.target.iceberg_tables.snapshots import CONNECTOR

MAINTENANCE = "sink-engine.maintenance"  # snapshot summary property of a rewrite
SMALL_SHARE = 0.75  # a file under this share of write.target-file-size-bytes is small


@dataclass
class Upkeep:
    """What maintenance did to one table."""

    table: str
    files_rewritten: int = 0
    files_written: int = 0
    rows_rewritten: int = 0
    snapshots_expired: list[int] = field(default_factory=list)
    partitions_skipped: int = 0  # small files with delete files, left as they are


def rewrite_small_files(table: Table, upkeep: Upkeep, min_files: int = 2) -> None:
    """Rewrite each partition's small files (at least `min_files` of them) as target-size files, in one snapshot."""
    target = int(
        table.metadata.properties.get(
            TableProperties.WRITE_TARGET_FILE_SIZE_BYTES, TableProperties.WRITE_TARGET_FILE_SIZE_BYTES_DEFAULT
        )
    )
    small: defaultdict[tuple, list[FileScanTask]] = defaultdict(list)
    for task in table.scan().plan_files():
        if task.file.file_size_in_bytes < target * SMALL_SHARE and task.file.spec_id == table.spec().spec_id:
            # pyiceberg's Record has no __iter__ in its type; it iterates by __getitem__ and __len__
            small[tuple(task.file.partition)].append(task)  # type: ignore[arg-type]
    groups = {key: tasks for key, tasks in small.items() if len(tasks) >= min_files}
    upkeep.partitions_skipped = sum(1 for tasks in groups.values() if any(t.delete_files for t in tasks))
    groups = {key: tasks for key, tasks in groups.items() if not any(t.delete_files for t in tasks)}
    if not groups:
        return
    scan = ArrowScan(table.metadata, table.io, table.schema(), AlwaysTrue())
    replaced, written = [], []
    for tasks in groups.values():
        rows = scan.to_table(tasks)
        replaced += [t.file for t in tasks]
        written += list(_dataframe_to_data_files(table.metadata, rows, table.io))
        upkeep.rows_rewritten += rows.num_rows
    with (
        table.transaction() as transaction,
        transaction.update_snapshot(snapshot_properties={MAINTENANCE: "rewrite-small-files"}).overwrite() as overwrite,
    ):
        for data_file in replaced:
            overwrite.delete_data_file(data_file)
        for data_file in written:
            overwrite.append_data_file(data_file)
    upkeep.files_rewritten, upkeep.files_written = len(replaced), len(written)


def expire_snapshots(table: Table, upkeep: Upkeep, older_than: timedelta | None, retain_last: int | None) -> None:
    """Expire snapshots older than `older_than`, keeping those the module docstring names. Unset, `older_than` and
    `retain_last` are the table's `history.expire.max-snapshot-age-ms` (default 5 days) and
    `history.expire.min-snapshots-to-keep` (default 1), as Iceberg's own expiry reads them."""
    properties = table.metadata.properties
    if older_than is None:
        age_ms = properties.get(TableProperties.MAX_SNAPSHOT_AGE_MS, TableProperties.MAX_SNAPSHOT_AGE_MS_DEFAULT)
        older_than = timedelta(milliseconds=int(age_ms))
    if retain_last is None:
        retain_last = int(
            properties.get(TableProperties.MIN_SNAPSHOTS_TO_KEEP, TableProperties.MIN_SNAPSHOTS_TO_KEEP_DEFAULT)
        )
    snapshots = sorted(table.metadata.snapshots, key=lambda s: s.sequence_number or 0)  # None: pyiceberg's initial, 0
    kept = {s.snapshot_id for s in snapshots[-retain_last:]} if retain_last else set()
    kept |= {ref.snapshot_id for ref in table.metadata.refs.values()}
    newest_by_connector = {}
    for snapshot in snapshots:
        if snapshot.summary and snapshot.summary.get(CONNECTOR):
            newest_by_connector[snapshot.summary.get(CONNECTOR)] = snapshot.snapshot_id
    kept |= set(newest_by_connector.values())
    cutoff_ms = int((datetime.now(UTC) - older_than).timestamp() * 1000)
    expired = [s.snapshot_id for s in snapshots if s.timestamp_ms < cutoff_ms and s.snapshot_id not in kept]
    if expired:
        table.maintenance.expire_snapshots().by_ids(expired).commit()
    upkeep.snapshots_expired = expired
