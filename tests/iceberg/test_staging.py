"""Staged commits of a continuous IcebergFormat run (`STAGE#` items, target/iceberg_tables/staging.py): one stage
per partition and
committed offset, the first one staged wins; a stage under a lease that moved on is refused; the data files a
stage's manifest describes come back as the task wrote them."""

from __future__ import annotations

import uuid

import pyarrow as pa
import pytest
from pyiceberg.io.pyarrow import _dataframe_to_data_files

from sink_engine.driver.job import now_ms
from sink_engine.errors import CommitConflictError
from sink_engine.model import TopicPartition
from sink_engine.offsets import Leases
from sink_engine.offsets.store import OffsetCommit
from sink_engine.target.iceberg_tables.staging import Stage, StagePart, StageStore, read_part, write_part
from tests.conftest import TABLE
from tests.iceberg.tables import catalog_of, create_namespace, table_name

TP = TopicPartition("orders", 3)


def stage(start: int | None, next_offset: int, manifest: str = "s3://lake/m.avro") -> Stage:
    commit = OffsetCommit(TP, start, next_offset, None, {"TableSchemaError": 1}, 7, {"ignored": 2}, 0)
    parts = (
        StagePart((manifest, 0)),
        StagePart(None, "s3://lake/k.parquet"),
        StagePart(("s3://lake/n.avro", 1), "s3://lake/l.parquet"),
    )
    return Stage(commit, parts, 1, next_offset - (start or 0) - 3)


def test_the_first_stage_of_a_start_wins_and_a_retry_of_it_is_taken(stack, dynamodb, unique):
    connector = f"stage-{unique}"
    token = Leases(dynamodb, TABLE, now_ms).acquire(connector, "me", 60_000)
    stages = StageStore(dynamodb, TABLE)
    # given a first stage of the partition (nothing committed yet), read back as it was put
    stages.put(token, stage(None, 100))
    assert stages.staged(connector) == {TP: stage(None, 100)}
    # when the same stage is put again (a retry whose answer was lost) it stands
    stages.put(token, stage(None, 100))
    # and another stage of the same start (a zombie attempt's) is refused, the first kept
    with pytest.raises(CommitConflictError):
        stages.put(token, stage(None, 120, "s3://lake/other.avro"))
    assert stages.staged(connector)[TP].commit.next_offset == 100
    # then the next stage (from the committed 100) replaces the spent one
    stages.put(token, stage(100, 180))
    assert stages.staged(connector)[TP] == stage(100, 180)


def test_a_stage_under_a_lease_that_moved_on_is_refused(stack, dynamodb, unique):
    connector = f"stage-{unique}"
    leases = Leases(dynamodb, TABLE, now_ms)
    token = leases.acquire(connector, "me", 60_000)
    leases.release(token)
    leases.acquire(connector, "next run", 60_000)
    with pytest.raises(CommitConflictError):
        StageStore(dynamodb, TABLE).put(token, stage(None, 100))
    assert StageStore(dynamodb, TABLE).staged(connector) == {}


def test_a_staged_part_gives_back_the_data_files_it_describes_and_the_keys_they_replace(stack, iceberg_connector):
    config = iceberg_connector()
    create_namespace(config)
    rows = pa.table({"id": pa.array([1, 2, 3], pa.int64()), "name": ["a", "b", None]})
    table = catalog_of(config).create_table(table_name(config), schema=rows.schema)
    written = list(_dataframe_to_data_files(table.metadata, rows, table.io, uuid.uuid4()))
    keys = rows.select(["id"]).slice(1)
    back, keys_back = read_part(table.io, write_part(table, written, keys))
    assert [(f.file_path, f.record_count, f.file_size_in_bytes, f.null_value_counts) for f in back] == [
        (f.file_path, f.record_count, f.file_size_in_bytes, f.null_value_counts) for f in written
    ]
    assert keys_back.equals(keys)
    # an append's part has no keys, a part of deletes only no manifest
    assert read_part(table.io, write_part(table, written, None))[1] is None
    assert read_part(table.io, write_part(table, [], keys)) == ([], keys_back)
