"""The copy-on-write steps of upsert tables on a local table (a SQL catalog on the local disk): each key's last
change within a range, and a run's files when ranges change the same key (their changes were not in one
partition)."""

from __future__ import annotations

import os

import pyarrow as pa
import pytest
from pyiceberg.catalog.sql import SqlCatalog
from pyiceberg.conversions import from_bytes
from pyiceberg.io.pyarrow import _dataframe_to_data_files
from pyiceberg.types import LongType

from sink_engine.target.iceberg_tables.task import TableFiles
from sink_engine.target.iceberg_tables.upsert import last_changes, run_files

SCHEMA = pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("name", pa.string())])


@pytest.fixture
def table(tmp_path):
    catalog = SqlCatalog("local", uri=f"sqlite:///{tmp_path}/catalog.db", warehouse=f"file://{tmp_path}")
    catalog.create_namespace("db")
    table = catalog.create_table("db.t", schema=SCHEMA)
    table.append(pa.table({"id": [1, 2, 3], "name": ["a", "b", "c"]}, schema=SCHEMA))
    return catalog.load_table("db.t")


def changes(rows: list[tuple[int, str | None]]) -> tuple[pa.Table, pa.Array]:
    """(rows, deletes) of (id, name) changes, a None name a delete."""
    return (
        pa.table({"id": [i for i, _ in rows], "name": [n for _, n in rows]}, schema=SCHEMA),
        pa.array([n is None for _, n in rows]),
    )


def range_files(table, rows: list[tuple[int, str | None]]) -> TableFiles:
    kept, keys = last_changes(*changes(rows), ("id",))
    return TableFiles(tuple(_dataframe_to_data_files(table.metadata, kept, table.io)), keys)


def committed(table, parts: list[TableFiles]) -> list[tuple]:
    removed, added = run_files(table, parts)
    with table.transaction() as tx, tx.update_snapshot().overwrite() as overwrite:
        for data_file in removed:
            overwrite.delete_data_file(data_file)
        for data_file in added:
            overwrite.append_data_file(data_file)
    return sorted((r["id"], r["name"]) for r in table.catalog.load_table("db.t").scan().to_arrow().to_pylist())


def test_the_last_change_of_each_key_wins_in_kafka_order():
    kept, keys = last_changes(*changes([(1, "a"), (2, "b"), (1, None), (3, "c"), (2, "b2"), (4, None)]), ("id",))
    assert kept.to_pylist() == [{"id": 3, "name": "c"}, {"id": 2, "name": "b2"}]
    assert sorted(keys["id"].to_pylist()) == [1, 2, 3, 4]


def test_a_run_replaces_updated_rows_and_removes_deleted_ones(table):
    assert committed(table, [range_files(table, [(1, "a2"), (2, None), (9, "new")])]) == [
        (1, "a2"),
        (3, "c"),
        (9, "new"),
    ]


def test_a_key_changed_in_two_ranges_keeps_the_last_ranges_change(table):
    # given two ranges (two partitions) of one run that both change keys 1 and 5
    first = range_files(table, [(1, "from-p0"), (5, "five-p0"), (6, "six")])
    second = range_files(table, [(1, "from-p1"), (5, None)])
    # then the later range's change of each wins: 1 is its row, 5 is deleted, 6 of the first range stays
    assert committed(table, [first, second]) == [(1, "from-p1"), (2, "b"), (3, "c"), (6, "six")]


def test_a_file_whose_bounds_hold_no_changed_key_is_not_read(table):
    # given a second data file, of ids 100-102, that cannot be read (gone from the disk)
    table.append(pa.table({"id": [100, 101, 102], "name": ["x", "y", "z"]}, schema=SCHEMA))
    table = table.catalog.load_table("db.t")
    [second] = [t.file for t in table.scan().plan_files() if from_bytes(LongType(), t.file.lower_bounds[1]) == 100]
    os.remove(second.file_path.removeprefix("file://"))
    # when a run changes ids 2 and 50 (neither within the second file's bounds)
    removed, _ = run_files(table, [range_files(table, [(2, "b2"), (50, "new")])])
    # then only the first file is rewritten, and the second was never opened
    assert len(removed) == 1 and removed[0].file_path != second.file_path
