"""`sink-engine iceberg maintain`: small files rewritten into one without changing the rows, while a run commits;
snapshots expired except the connector's newest, which a run recovers its offsets from."""

from __future__ import annotations

import json

import pytest

from devtools.producer import produce_events
from sink_engine import cli
from sink_engine.driver.job import run_job
from tests.iceberg.runs import CatalogGate, ParkedRun, gate_first_catalog, write_config
from tests.iceberg.tables import catalog_of, connector_snapshots, create_namespace, ids, table_of
from tests.runs import committed_offsets, crash_at, past_the_lease


@pytest.fixture
def twenty_files(new_topic, spark, dynamodb, iceberg_connector):
    """A connector whose first run wrote 200 events of 20 Kafka partitions as 20 small data files."""
    config = iceberg_connector(**{"sink.lease.duration.ms": 2000, "tasks.max": 4})
    topic = config["topics"][0]
    create_namespace(config, topic)
    new_topic(topic, 20, events=200)
    run_job(config, spark, dynamodb)
    assert len(_data_files(config)) == 20
    return config


def maintain(config, tmp_path, capsys, *options: str) -> dict:
    config_file = write_config(config, tmp_path / "connector.json")
    capsys.readouterr()
    assert cli.main(["iceberg", "maintain", "--config", str(config_file), *options]) == 0
    [line] = capsys.readouterr().out.splitlines()
    return json.loads(line)


def test_small_files_become_one_while_a_run_commits(
    stack, spark, dynamodb, twenty_files, monkeypatch, tmp_path, capsys
):
    config = twenty_files
    before = table_of(config).scan().to_arrow().sort_by("event_id")
    produce_events(stack.bootstrap_servers, config["topics"][0], 40, 20, first_id=200)
    # given a run parked in its snapshot commit, its append built on the table as it was
    gate = CatalogGate(catalog_of(config), "commit_table")
    gate_first_catalog(monkeypatch, gate)
    parked = ParkedRun(config, spark, dynamodb, gate)
    # when maintenance rewrites the 20 small files meanwhile
    done = maintain(config, tmp_path, capsys, "--skip-expire")
    assert (done["files_rewritten"], done["files_written"], done["rows_rewritten"]) == (20, 1, 200)
    rewritten = table_of(config)
    assert rewritten.scan().to_arrow().sort_by("event_id") == before  # the same rows, one file
    assert len(_data_files(config)) == 1
    # then the run, whose append the catalog refuses, looks again, finds no snapshot of its connector since it
    # planned, and appends on the rewrite: every record once
    summary = parked.finish()
    assert summary.records_written == 40
    assert ids(config) == list(range(240))
    assert len(_data_files(config)) == 1 + len(summary.files)
    assert committed_offsets(dynamodb, config) == {p: 12 for p in range(20)}
    assert [s.summary["added-records"] for s in connector_snapshots(config)] == ["200", "40"]


def test_expiry_keeps_the_snapshot_a_run_recovers_from(stack, spark, dynamodb, twenty_files, tmp_path, capsys):
    config = twenty_files
    [first] = connector_snapshots(config)
    # given a run that died after its snapshot and before its offsets, and a rewrite after it
    produce_events(stack.bootstrap_servers, config["topics"][0], 40, 20, first_id=200)
    crash_at("after_snapshot_before_commit", config, spark, dynamodb)
    _, crashed = connector_snapshots(config)
    # when maintenance rewrites and expires every snapshot it may
    done = maintain(config, tmp_path, capsys, "--older-than-hours", "0", "--retain-last", "0")
    # then the first snapshot is gone, the crashed run's (the connector's newest) and the current one are kept
    assert done["snapshots_expired"] == [first.snapshot_id]
    kept = {s.snapshot_id for s in table_of(config).metadata.snapshots}
    assert kept == {crashed.snapshot_id, table_of(config).current_snapshot().snapshot_id}
    # and the next run takes its offsets from it and appends nothing twice
    run_job(config, spark, dynamodb, clock=past_the_lease(config))
    assert ids(config) == list(range(240))
    assert committed_offsets(dynamodb, config) == {p: 12 for p in range(20)}


def _data_files(config) -> list:
    return list(table_of(config).scan().plan_files())


def test_expiry_takes_its_age_and_retention_from_the_table_properties(
    stack, spark, dynamodb, twenty_files, tmp_path, capsys
):
    config = twenty_files
    # given a table whose history.expire.* properties expire every snapshot older than now (a streaming table's
    # short age), and a second run's snapshot after the first
    with table_of(config).transaction() as transaction:
        transaction.set_properties(
            {"history.expire.max-snapshot-age-ms": "0", "history.expire.min-snapshots-to-keep": "0"}
        )
    produce_events(stack.bootstrap_servers, config["topics"][0], 40, 20, first_id=200)
    run_job(config, spark, dynamodb, clock=past_the_lease(config))
    first, second = connector_snapshots(config)
    # when maintenance expires without an age or a retention of its own
    done = maintain(config, tmp_path, capsys, "--skip-rewrite")
    # then the table's properties decide: all but the connector's newest (and current) snapshot are gone
    assert done["snapshots_expired"] == [first.snapshot_id]
    assert [s.snapshot_id for s in table_of(config).metadata.snapshots] == [second.snapshot_id]
    assert ids(config) == list(range(240))
