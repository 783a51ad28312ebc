"""IcebergFormat exactly once: every record is a row of the table once, across crashes at each point of a run,
concurrent runs, a zombie whose lease was lost, and other writers committing to the table meanwhile."""
from __future__ import annotations

import threading
import time

import orjson
import pyarrow as pa
import pytest
from pyiceberg.table import Table

from devtools.producer import create_topic, produce_events
from sink_engine import cli
from sink_engine.iceberg import commit as table_commit
from sink_engine.iceberg.catalog import ensure_namespace, open_catalog
from sink_engine.iceberg.errors import TableCommitConflictError
from sink_engine.iceberg.settings import table_identifier
from sink_engine.job import now_ms, run_job
from tests.iceberg.tables import connector_snapshots, ids, newest_offsets, table_of
from tests.runs import committed, committed_offsets, crash_at

LEASE_MS = 2000


@pytest.fixture
def table_config(stack, iceberg_connector):
    """A connector whose table's namespace exists, on a 3-partition topic holding 300 events."""
    config = iceberg_connector(**{"sink.lease.duration.ms": LEASE_MS, "tasks.max": 3})
    topic = config["topics"][0]
    ensure_namespace(open_catalog(config), table_identifier(config, topic))
    create_topic(stack.bootstrap_servers, topic, 3)
    produce_events(stack.bootstrap_servers, topic, 300, 3)
    return config


def test_crash_after_data_files_before_the_snapshot(stack, spark, s3, dynamodb, table_config):
    config = table_config
    # given a run that dies with its data files written and nothing committed
    crash_at("after_upload_before_commit", config, spark, dynamodb)
    assert connector_snapshots(config) == [] and committed_offsets(dynamodb, config) == {}
    # when its lease lapses and the job runs again
    _wait_for_lease_expiry()
    run_job(config, spark, dynamodb)
    # then every record is a row once: the dead run's files are orphans no snapshot names
    assert ids(config) == list(range(300))
    assert len(connector_snapshots(config)) == 1
    assert committed_offsets(dynamodb, config) == {0: 100, 1: 100, 2: 100}
    table = table_of(config)
    bucket, prefix = table.location()[len("s3://"):].split("/", 1)
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
    _wait_for_lease_expiry()
    produce_events(stack.bootstrap_servers, topic, 60, 3, first_id=300)
    run_job(config, spark, dynamodb)
    # then DynamoDB took the snapshot's offsets (and the crashed run's epoch is not the one that committed them),
    # the snapshot's records were not appended again, and only the new ones were
    assert ids(config) == list(range(360))
    first, second = connector_snapshots(config)
    assert first.snapshot_id == snapshot.snapshot_id and second.summary["added-records"] == "60"
    assert committed_offsets(dynamodb, config) == newest_offsets(config) == {0: 120, 1: 120, 2: 120}


def test_a_rerun_after_the_snapshot_crash_with_no_new_records_appends_nothing(stack, spark, dynamodb, table_config):
    config = table_config
    crash_at("after_snapshot_before_commit", config, spark, dynamodb)
    _wait_for_lease_expiry()
    summary = run_job(config, spark, dynamodb)
    assert summary.files == [] and len(connector_snapshots(config)) == 1
    assert ids(config) == list(range(300))
    assert committed_offsets(dynamodb, config) == {0: 100, 1: 100, 2: 100}


def test_concurrent_runs_have_one_winner(stack, spark, dynamodb, table_config, tmp_path):
    config = table_config
    config_file = tmp_path / "connector.json"
    config_file.write_text(orjson.dumps({"name": config.name, "config": _raw(config)}).decode())
    codes, start = [], threading.Barrier(2)

    def run():
        start.wait()
        codes.append(cli.main(["run", "--config", str(config_file)]))

    threads = [threading.Thread(target=run) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(codes) == [0, 3]
    assert ids(config) == list(range(300)) and len(connector_snapshots(config)) == 1


@pytest.mark.parametrize("parked_at", ["load_table", "commit_table"])
def test_a_zombie_whose_lease_was_lost_cannot_commit(stack, spark, dynamodb, table_config, monkeypatch, parked_at):
    """Run A is parked in its snapshot commit (before it reads the table, or with its append built on the head it
    read) while run B, whose clock is a lease period ahead, takes the lease and commits the same records. A then
    finds B's snapshot (parked before reading) or the catalog refuses its stale base and its lease is gone."""
    config = table_config
    gate = CatalogGate(open_catalog(config), parked_at)
    _first_catalog_gated(monkeypatch, gate)
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
    gate = CatalogGate(open_catalog(config), "commit_table")
    _first_catalog_gated(monkeypatch, gate)
    parked = ParkedRun(config, spark, dynamodb, gate)
    other = table_of(config)
    other.append(pa.table({"event_id": pa.array([-1], pa.int64())}), snapshot_properties={"writer": "someone else"})
    summary = parked.finish()
    assert summary.records_written == 30
    assert ids(config) == [-1] + list(range(330))
    assert [s.summary["added-records"] for s in connector_snapshots(config)] == ["300", "30"]
    assert committed_offsets(dynamodb, config) == {0: 110, 1: 110, 2: 110}


class CatalogGate:
    """The real catalog, except that the driver's first `method` call of its snapshot commit waits until `open()`
    (the calls of `recover` pass: the gate arms itself on the first renewal check of the commit)."""

    def __init__(self, catalog, method: str):
        self._catalog, self._method = catalog, method
        self.armed, self.reached, self._opened = False, threading.Event(), threading.Event()

    def load_table(self, identifier):
        """The table, bound to this gate, so that its commits go through it."""
        if self._method == "load_table":
            self._wait()
        table = self._catalog.load_table(identifier)
        return Table(table.name(), table.metadata, table.metadata_location, table.io, self)

    def commit_table(self, *args, **kwargs):
        if self._method == "commit_table":
            self._wait()
        return self._catalog.commit_table(*args, **kwargs)

    def __getattr__(self, name):
        return getattr(self._catalog, name)

    def _wait(self) -> None:
        if self.armed and not self.reached.is_set():
            self.reached.set()
            assert self._opened.wait(120), "the gate was never opened"

    def open(self) -> None:
        self._opened.set()


class ParkedRun:
    """run_job on a thread, parked at its CatalogGate; `finish` opens the gate and returns the summary or error."""

    def __init__(self, config, spark, dynamodb, gate: CatalogGate):
        self.gate, self.outcome = gate, None
        self._thread = threading.Thread(target=self._run, args=(config, spark, dynamodb))
        self._thread.start()
        assert gate.reached.wait(180), f"the run did not reach its snapshot commit: {self.outcome!r}"

    def _run(self, config, spark, dynamodb) -> None:
        try:
            self.outcome = run_job(config, spark, dynamodb)
        except Exception as e:  # checked by the test
            self.outcome = e
            self.gate.reached.set()

    def finish(self):
        self.gate.open()
        self._thread.join(timeout=180)
        return self.outcome


def _first_catalog_gated(monkeypatch, gate: CatalogGate) -> None:
    """The first TableCommits (the parked run's) uses the gate, armed when its commit starts; later ones the real
    catalog."""
    used = []
    real_commit = table_commit.TableCommits.commit

    def catalog(self):
        if not used:
            used.append(self)
        return gate if self is used[0] else open_catalog(self._config)

    def commit(self, *args, **kwargs):
        if self is used[0]:
            gate.armed = True
        return real_commit(self, *args, **kwargs)

    monkeypatch.setattr(table_commit.TableCommits, "catalog", property(catalog))
    monkeypatch.setattr(table_commit.TableCommits, "commit", commit)


def _raw(config) -> dict:
    values = {k: config[k] for k in config.explicit if k != "name"}
    return {**{k: ",".join(v) if isinstance(v, tuple) else v for k, v in values.items()}, **config.passthrough}


def _wait_for_lease_expiry() -> None:
    time.sleep(LEASE_MS / 1000 + 0.5)
