"""Upsert techniques for Iceberg tables, measured (`make bench-upsert`; docs/iceberg.md, "Upsert tables").

A table of N rows (an int64 id and about 100 bytes of other columns, data files of 128 MiB target) in a local SQL
catalog on the local file system (no S3: this measures the work, not the network). Each run changes a share of the
ids, chosen at random (the worst case for pruning: every data file holds a changed key), and commits them:

- copy-on-write: the engine's own (`sink_engine.target.iceberg_tables.upsert.rewrite_without`): the files holding a
changed key
  are rewritten without its row, and the run's rows appended, in one overwrite snapshot. Read by pyiceberg.
- equality deletes (merge-on-read, as Flink's and Tabular's writers do): the run's rows and one equality-delete
  file of their ids in one snapshot; pyiceberg 0.12 writes neither delete files nor delete manifests, so this bench
  writes them itself (`_EqualityDeleteAppend`). pyiceberg refuses to read them: read by DuckDB's iceberg
  extension, which needs a duckdb matching its wheel (`--duckdb-path`, a `pip install --target` of
  duckdb==1.5.5 duckdb-extension-iceberg==1.5.5 duckdb-extension-avro==1.5.5; the project's duckdb 2.0.0 has no
  extension wheel yet), in a subprocess.
- position deletes: their commit must first find each changed key's file and row, which is the first (key-only)
  pass of copy-on-write, timed alone as `key lookup`; what follows (writing a small delete file) is cheaper than
  the rewrite. Not built further here.

Each figure is seconds on this machine (2 shared cores); `read` is a full scan to Arrow of the table after the
runs, `fresh` a scan of a table freshly written with the same rows, `maintained` after `iceberg maintain`'s rewrite.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, fields
from pathlib import Path
from typing import TypeVar

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from pyiceberg.catalog.sql import SqlCatalog
from pyiceberg.manifest import DataFile, DataFileContent, FileFormat, ManifestContent, ManifestWriterV2
from pyiceberg.table import Table
from pyiceberg.table.update.snapshot import _FastAppendFiles
from pyiceberg.typedef import Record

from sink_engine.target.iceberg_tables.maintain import Upkeep, rewrite_small_files
from sink_engine.target.iceberg_tables.task import TableFiles
from sink_engine.target.iceberg_tables.upsert import holds_keys, last_changes, run_files

TARGET_BYTES = 128 * 1024 * 1024
T = TypeVar("T")


def rows(ids: np.ndarray, version: int) -> pa.Table:
    n = len(ids)
    return pa.table(
        {
            "id": pa.array(ids, pa.int64()),
            "version": pa.array(np.full(n, version), pa.int32()),
            "amount": pa.array(np.random.default_rng(version).random(n)),
            "name": pa.array(np.char.add("customer-", ids.astype(str)).astype(object), pa.string()),
            "note": pa.array(np.full(n, "x" * 60).astype(object), pa.string()),
        }
    )


def new_table(catalog: SqlCatalog, name: str, first: pa.Table) -> Table:
    table = catalog.create_table(
        f"bench.{name}", schema=first.schema, properties={"write.target-file-size-bytes": str(TARGET_BYTES)}
    )
    for start in range(0, first.num_rows, 1_000_000):  # as a connector's runs wrote it
        table.append(first.slice(start, 1_000_000))
    return table


def timed(step: Callable[..., T], *args) -> tuple[float, T]:
    started = time.perf_counter()
    value = step(*args)
    return time.perf_counter() - started, value


def cow_commit(table: Table, changes: pa.Table) -> None:
    """The engine's commit of one range of changes: its rows' data files, and the rewrite (upsert.run_files)."""
    kept, keys = last_changes(changes, pa.array([False] * changes.num_rows), ("id",))
    removed, added = run_files(table, [TableFiles(tuple(_files(table, kept)), keys)])
    with table.transaction() as tx, tx.update_snapshot().overwrite() as overwrite:
        for data_file in removed:
            overwrite.delete_data_file(data_file)
        for data_file in added:
            overwrite.append_data_file(data_file)


def key_lookup(table: Table, changes: pa.Table) -> int:
    """The first pass of a position-delete commit: which rows of which files hold a changed key."""
    from pyiceberg.expressions import AlwaysTrue
    from pyiceberg.io.pyarrow import ArrowScan

    ids = ArrowScan(table.metadata, table.io, table.schema().select("id"), AlwaysTrue())
    return sum(int(holds_keys(ids.to_table([t]), changes.select(["id"])).true_count) for t in table.scan().plan_files())


def _files(table: Table, new_rows: pa.Table) -> list:
    from pyiceberg.io.pyarrow import _dataframe_to_data_files

    return list(_dataframe_to_data_files(table.metadata, new_rows, table.io))


class _DeleteManifestWriter(ManifestWriterV2):
    def content(self) -> ManifestContent:
        return ManifestContent.DELETES

    @property
    def _meta(self) -> dict[str, str]:
        return {**super()._meta, "content": "deletes"}


class _EqualityDeleteAppend(_FastAppendFiles):
    """A fast append that also adds delete files, in a delete manifest of their own."""

    delete_files: list

    def _manifests(self):
        manifests = super()._manifests()
        from pyiceberg.manifest import ManifestEntry, ManifestEntryStatus

        writer = _DeleteManifestWriter(
            self._transaction.table_metadata.spec(),
            self.schema(),
            self.new_manifest_output(),
            self._snapshot_id,
            self._compression,
        )
        with writer:
            for delete_file in self.delete_files:
                writer.add(
                    ManifestEntry.from_args(
                        status=ManifestEntryStatus.ADDED, snapshot_id=self._snapshot_id, data_file=delete_file
                    )
                )
        return [*manifests, writer.to_manifest_file()]


def equality_commit(table: Table, changes: pa.Table, run: int) -> None:
    path = f"{table.location()}/data/eq-delete-{run}.parquet"
    ids = changes.select(["id"])
    field_id = table.schema().find_field("id").field_id
    keyed = ids.cast(pa.schema([pa.field("id", pa.int64(), False, metadata={"PARQUET:field_id": str(field_id)})]))
    pq.write_table(keyed, path.removeprefix("file://"))
    delete_file = DataFile.from_args(
        content=DataFileContent.EQUALITY_DELETES,
        file_path=path,
        file_format=FileFormat.PARQUET,
        partition=Record(),
        record_count=ids.num_rows,
        file_size_in_bytes=Path(path.removeprefix("file://")).stat().st_size,
        equality_ids=[field_id],
        spec_id=table.spec().spec_id,
    )
    from pyiceberg.table import Transaction

    tx = Transaction(table)
    producer = _EqualityDeleteAppend(operation=_operation(), transaction=tx, io=table.io)
    producer.delete_files = [delete_file]
    for data_file in _files(table, changes):
        producer.append_data_file(data_file)
    producer.commit()
    tx.commit_transaction()


def _operation():
    from pyiceberg.table.snapshots import Operation

    return Operation.OVERWRITE


def duckdb_read(duckdb_path: str, metadata: str, rows_n: int, give_up: float) -> float | str:
    """Seconds of a full scan by DuckDB's iceberg extension, in a subprocess (its duckdb is not the project's);
    `> give_up` when it took longer."""
    script = f"""
import duckdb, json, time, glob, os
import duckdb_extension_iceberg, duckdb_extension_avro
con = duckdb.connect()
for module in (duckdb_extension_avro, duckdb_extension_iceberg):
    con.execute(f"LOAD '{{glob.glob(os.path.dirname(module.__file__) + '/**/*.duckdb_extension', recursive=True)[0]}}'")
started = time.perf_counter()
n, ids = con.execute("SELECT count(*), count(DISTINCT id) FROM iceberg_scan('{metadata.removeprefix("file://")}')").fetchone()
print(json.dumps({{"seconds": time.perf_counter() - started, "rows": n, "ids": ids}}))
"""
    try:
        out = subprocess.run(
            [sys.executable, "-c", script],
            env={"PYTHONPATH": duckdb_path},
            capture_output=True,
            text=True,
            check=True,
            timeout=give_up,
        )
    except subprocess.TimeoutExpired:
        return f"> {give_up:.0f}"
    found = json.loads(out.stdout.strip().splitlines()[-1])
    assert (found["rows"], found["ids"]) == (rows_n, rows_n), found
    return found["seconds"]


@dataclass
class Result:
    table: str
    technique: str
    commit: float  # mean seconds per run's commit
    read: float | str  # a full scan after the runs (str: the reader gave up)
    fresh: float  # the same rows freshly written, scanned by the same reader
    files: int
    lookup: float | None = None  # the key-only pass (a position-delete commit's first step)
    maintain: float | None = None  # `iceberg maintain`'s rewrite
    maintained: float | None = None  # the scan after it
    files_maintained: int | None = None

    def cells(self) -> list[str]:
        return [_cell(getattr(self, f.name)) for f in fields(self)]


def _cell(value) -> str:
    return "" if value is None else f"{value:.2f}" if isinstance(value, float) else str(value)


def bench(rows_n: int, share: float, runs: int, duckdb_path: str | None, work: Path, give_up: float) -> list[Result]:
    catalog = SqlCatalog("bench", uri=f"sqlite:///{work}/catalog.db", warehouse=f"file://{work}")
    catalog.create_namespace_if_not_exists("bench")
    rng = np.random.default_rng(7)
    label = f"{rows_n / 1e6:g}M rows, {share:.0%} per run, {runs} runs"
    first = rows(np.arange(rows_n, dtype=np.int64), 0)
    cow = new_table(catalog, "cow", first)
    eq = new_table(catalog, "eq", first) if duckdb_path else None
    commits: list[float] = []
    eq_commits: list[float] = []
    lookups: list[float] = []
    for run in range(1, runs + 1):
        changes = rows(rng.choice(rows_n, int(rows_n * share), replace=False).astype(np.int64), run)
        lookups.append(timed(key_lookup, cow, changes)[0])
        commits.append(timed(cow_commit, cow, changes)[0])
        cow = catalog.load_table(cow.name())
        if eq is not None:
            eq_commits.append(timed(equality_commit, eq, changes, run)[0])
            eq = catalog.load_table(eq.name())
    read, scanned = timed(lambda: cow.scan().to_arrow())
    assert scanned.num_rows == rows_n == len(pc.unique(scanned["id"])), "copy-on-write lost or doubled a row"
    fresh = new_table(catalog, "fresh", scanned)
    files = len(list(cow.scan().plan_files()))
    maintain = timed(lambda: rewrite_small_files(cow, Upkeep("bench.cow")))[0]
    cow = catalog.load_table(cow.name())
    result = Result(
        label,
        "copy-on-write",
        _mean(commits),
        read,
        timed(lambda: fresh.scan().to_arrow())[0],
        files,
        _mean(lookups),
        maintain,
        timed(lambda: cow.scan().to_arrow())[0],
        len(list(cow.scan().plan_files())),
    )
    if eq is None or duckdb_path is None:
        return [result]
    eq_read = duckdb_read(duckdb_path, eq.metadata_location, rows_n, give_up)
    fresh_read = duckdb_read(duckdb_path, fresh.metadata_location, rows_n, give_up)
    assert isinstance(fresh_read, float)
    cow_read = duckdb_read(duckdb_path, cow.metadata_location, rows_n, give_up)  # the same rows by another reader
    return [
        result,
        Result(
            label,
            "copy-on-write, maintained (DuckDB)",
            result.commit,
            cow_read,
            fresh_read,
            result.files_maintained or 0,
        ),
        Result(label, "equality deletes (DuckDB)", _mean(eq_commits), eq_read, fresh_read, runs + files),
    ]


def _mean(values: list[float]) -> float:
    return sum(values) / len(values)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, nargs="+", default=[1_000_000])
    parser.add_argument("--shares", type=float, nargs="+", default=[0.01, 0.1])
    parser.add_argument("--runs", type=int, default=100)
    parser.add_argument("--duckdb-path", help="a `pip install --target` directory with duckdb and its extensions")
    parser.add_argument("--give-up", type=float, default=300, help="seconds a DuckDB scan may take")
    args = parser.parse_args(argv)
    header = [f.name for f in fields(Result)]
    print(" | ".join(header))
    print(" | ".join("---" for _ in header))
    for rows_n in args.rows:
        for share in args.shares:
            with tempfile.TemporaryDirectory() as work:
                for result in bench(rows_n, share, args.runs, args.duckdb_path, Path(work), args.give_up):
                    print(" | ".join(result.cells()), flush=True)


if __name__ == "__main__":
    main()
