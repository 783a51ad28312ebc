"""IcebergFormat exactly once: every record is a row of the table once, across crashes at each point of a run,
concurrent runs, a zombie whose lease was lost, and other writers committing to the table meanwhile."""

from __future__ import annotations

import pyarrow as pa
import pytest

from devtools.producer import produce_events
from sink_engine.driver.job import now_ms, run_job
from sink_engine.target.iceberg_tables.errors import TableCommitConflictError
from tests.iceberg.runs import CatalogGate, ParkedRun, gate_first_catalog, write_config
from tests.iceberg.tables import catalog_of, connector_snapshots, create_namespace, ids, newest_offsets, table_of
from tests.runs import committed, committed_offsets, crash_at, past_the_lease, two_runs_at_once

LEASE_MS = 2000


@pytest.fixture
def table_config(new_topic, iceberg_connector):
    """A connector whose table's namespace exists, on a 3-partition topic holding 300 events."""
    config = iceberg_connector(**{"sink.lease.duration.ms": LEASE_MS, "tasks.max": 3})
    topic = config["topics"][0]
    create_namespace(config, topic)
    new_topic(topic, 3, events=300)
    return config


def test_crash_after_data_files_before_the_snapshot(stack, spark, s3, dynamodb, table_config):
    config = table_config
    # given a run that dies with its data files written and nothing committed
    crash_at("after_upload_before_commit", config, spark, dynamodb)
    assert connector_snapshots(config) == [] and committed_offsets(dynamodb, config) == {}
    # when the job runs again past its lease
    run_job(config, spark, dynamodb, clock=past_the_lease(config))
    # then every record is a row once: the dead run's files are orphans no snapshot names
    assert ids(config) == list(range(300))
    assert len(connector_snapshots(config)) == 1
    assert committed_offsets(dynamodb, config) == {0: 100, 1: 100, 2: 100}
    table = table_of(config)
    bucket, prefix = table.location()[len("s3://") :].split("/", 1)
    written = s3.list_objects_v2(Bucket=bucket, Prefix=prefix + "/data/")["KeyCount"]
    assert written == 2 * len(list(table.scan().plan_files()))


def test_crash_after_the_snapshot_before_the_offsets(stack, spark, dynamodb, table_config):
    config = table_config
    topic = config["topics"][0]
    # given a run that dies with its snapshot committed and DynamoDB not yet told
    crash_at("after_snapshot_before_commit", config, spark, dynamodb)
    [snapshot] = connector_snapshots(config)
    assert committed_offsets(dynamodb, config) == {}
    assert newest_offsets(config) == {0: 100, 1: 100, 2: 100}
    # when the job runs again, with 60 more records on the topic
    produce_events(stack.bootstrap_servers, topic, 60, 3, first_id=300)
    run_job(config, spark, dynamodb, clock=past_the_lease(config))
    # then DynamoDB took the snapshot's offsets (and the crashed run's epoch is not the one that committed them),
    # the snapshot's records were not appended again, and only the new ones were
    assert ids(config) == list(range(360))
    first, second = connector_snapshots(config)
    assert first.snapshot_id == snapshot.snapshot_id and second.summary["added-records"] == "60"
    assert committed_offsets(dynamodb, config) == newest_offsets(config) == {0: 120, 1: 120, 2: 120}


def test_a_rerun_after_the_snapshot_crash_with_no_new_records_appends_nothing(stack, spark, dynamodb, table_config):
    config = table_config
    crash_at("after_snapshot_before_commit", config, spark, dynamodb)
    summary = run_job(config, spark, dynamodb, clock=past_the_lease(config))
    assert summary.files == [] and len(connector_snapshots(config)) == 1
    assert ids(config) == list(range(300))
    assert committed_offsets(dynamodb, config) == {0: 100, 1: 100, 2: 100}


def test_concurrent_runs_have_one_winner(stack, spark, dynamodb, table_config, tmp_path):
    config = table_config
    config_file = write_config(config, tmp_path / "connector.json")
    assert two_runs_at_once(config_file) == [0, 3]
    assert ids(config) == list(range(300)) and len(connector_snapshots(config)) == 1


@pytest.mark.parametrize("parked_at", ["load_table", "commit_table"])
def test_a_zombie_whose_lease_was_lost_cannot_commit(stack, spark, dynamodb, table_config, monkeypatch, parked_at):
    """Run A is parked in its snapshot commit (before it reads the table, or with its append built on the head it
    read) while run B, whose clock is a lease period ahead, takes the lease and commits the same records. A then
    finds B's snapshot (parked before reading) or the catalog refuses its stale base and its lease is gone."""
    config = table_config
    gate = CatalogGate(catalog_of(config), parked_at)
    gate_first_catalog(monkeypatch, gate)
    zombie = ParkedRun(config, spark, dynamodb, gate)
    winner = run_job(config, spark, dynamodb, clock=lambda: now_ms() + 2 * LEASE_MS)
    assert winner.records_written == 300
    outcome = zombie.finish()
    assert isinstance(outcome, TableCommitConflictError) and outcome.exit_code == 4
    assert ids(config) == list(range(300)) and len(connector_snapshots(config)) == 1
    assert {c.next_offset for c in committed(dynamodb, config).values()} == {100}


def test_another_writers_commit_meanwhile_is_no_conflict(stack, spark, dynamodb, table_config, monkeypatch):
    """A commit that is not the connector's (table maintenance, another connector) lands between the run's plan and
    its append: the catalog refuses the append's base, the run looks again, finds no snapshot of its connector
    since it planned, and appends on the new head."""
    config = table_config
    run_job(config, spark, dynamodb)  # the table exists from here on
    produce_events(stack.bootstrap_servers, config["topics"][0], 30, 3, first_id=300)
    gate = CatalogGate(catalog_of(config), "commit_table")
    gate_first_catalog(monkeypatch, gate)
    parked = ParkedRun(config, spark, dynamodb, gate)
    other = table_of(config)
    other.append(pa.table({"event_id": pa.array([-1], pa.int64())}), snapshot_properties={"writer": "someone else"})
    summary = parked.finish()
    assert summary.records_written == 30
    assert ids(config) == [-1] + list(range(330))
    assert [s.summary["added-records"] for s in connector_snapshots(config)] == ["300", "30"]
    assert committed_offsets(dynamodb, config) == {0: 110, 1: 110, 2: 110}
