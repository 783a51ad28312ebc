"""What `make bench-peers` measures on either side, the same way for sink-engine and its peers: the peak RSS of a set
of processes, when each Iceberg snapshot first became visible and which records it made visible (read from its added
data files, so that it needs nothing the writer recorded), and the records that landed, read back by real readers
(pyiceberg's scan of the table; S3's GetObject of each JSON object)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

import boto3
import orjson
import psutil
import pyarrow.parquet as pq
from pyiceberg.manifest import ManifestEntryStatus
from pyiceberg.table import Table

LOOK_EVERY_S = 0.25


class PeakRss:
    """`with PeakRss(processes) as peak:` samples every 0.5 s the summed RSS of what `processes()` returns;
    `peak.mb` is the highest sum seen."""

    def __init__(self, processes: Callable[[], list[psutil.Process]]):
        self._processes, self.mb = processes, 0.0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> PeakRss:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()

    def _run(self) -> None:
        while True:
            total = 0
            for process in self._processes():
                try:
                    total += process.memory_info().rss
                except psutil.NoSuchProcess:
                    continue
            self.mb = max(self.mb, total / 2**20)
            if self._stop.wait(0.5):
                return


def cpu_seconds(pid: int) -> float:
    """User and system CPU seconds of one process, all its threads."""
    times = psutil.Process(pid).cpu_times()
    return times.user + times.system


class SnapshotsSeen:
    """`with SnapshotsSeen(load) as seen:` looks every LOOK_EVERY_S at the table `load()` returns (None before it
    exists); `seen.first_ms[snapshot id]` is when a look first showed that snapshot, what a scan then reads."""

    def __init__(self, load: Callable[[], Table | None]):
        self._load = load
        self.first_ms: dict[int, int] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> SnapshotsSeen:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()
        self._look()  # (a snapshot committed since the thread's last look)

    def _run(self) -> None:
        while not self._stop.wait(LOOK_EVERY_S):
            self._look()

    def _look(self) -> None:
        table, now = self._load(), int(time.time() * 1000)
        for snapshot in table.metadata.snapshots if table else []:
            self.first_ms.setdefault(snapshot.snapshot_id, now)

    def ages(self, table: Table, produce_ms: list[int]) -> list[int]:
        """Each record's ms from its produce (`produce_ms[event_id]`) to the first look showing its snapshot (rows of
        other ids, past `produce_ms`, not counted)."""
        ages = []
        for snapshot in table.metadata.snapshots:
            shown = self.first_ms.get(snapshot.snapshot_id)
            if shown is None:
                continue
            ages += [shown - produce_ms[i] for i in added_event_ids(table, snapshot.snapshot_id) if i < len(produce_ms)]
        return ages


def added_event_ids(table: Table, snapshot_id: int) -> list[int]:
    """The `event_id` of every row in the data files snapshot `snapshot_id` added."""
    snapshot = table.snapshot_by_id(snapshot_id)
    assert snapshot is not None
    ids: list[int] = []
    for manifest in snapshot.manifests(table.io):
        if manifest.added_snapshot_id != snapshot_id:
            continue
        for entry in manifest.fetch_manifest_entry(table.io, discard_deleted=True):
            if entry.status == ManifestEntryStatus.ADDED and entry.snapshot_id == snapshot_id:
                with table.io.new_input(entry.data_file.file_path).open() as stream:
                    ids += pq.read_table(stream, columns=["event_id"]).column("event_id").to_pylist()
    return ids


def table_records(table: Table | None) -> int:
    """Rows of the table's current snapshot (its summary's `total-records`), 0 before the first."""
    snapshot = table.current_snapshot() if table else None
    return int(snapshot.summary["total-records"] or 0) if snapshot and snapshot.summary else 0


def table_files(table: Table | None) -> int:
    snapshot = table.current_snapshot() if table else None
    return int(snapshot.summary["total-data-files"] or 0) if snapshot and snapshot.summary else 0


def table_event_ids(table: Table) -> list[int]:
    """Every row's `event_id`, as pyiceberg's scan reads them."""
    return table.scan(selected_fields=("event_id",)).to_arrow().column("event_id").to_pylist()


def object_keys(bucket: str, prefix: str) -> list[str]:
    pages = boto3.client("s3").get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix)
    return [item["Key"] for page in pages for item in page.get("Contents", [])]


def object_event_ids(bucket: str, prefix: str) -> list[int]:
    """Every record's `event_id` in the JSON-lines objects under `prefix`, each object read with GetObject."""
    s3, ids = boto3.client("s3"), []
    for key in object_keys(bucket, prefix):
        body = s3.get_object(Bucket=bucket, Key=key)["Body"].read()
        ids += [orjson.loads(line)["event_id"] for line in body.splitlines() if line]
    return ids
