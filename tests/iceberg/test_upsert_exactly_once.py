"""Upsert tables exactly once: crashes at each point of a run and reruns, two runs at once, and `sink-engine run`
processes SIGKILLed at seeded random moments with a second run started meanwhile. After the reruns the table is the
model of the source table, and no key has two rows at any time."""

from __future__ import annotations

import os
import random
import time

import pytest

from sink_engine.driver.job import run_job
from tests.iceberg.runs import crash_after_table_commits, write_config
from tests.iceberg.tables import connector_snapshots
from tests.iceberg.test_upsert import upsert_table
from tests.iceberg.upserts import SourceTable, duckdb_table_rows, own_rows, produce_changes, pyiceberg_rows
from tests.runs import committed_offsets, crash_at, past_the_lease, two_runs_at_once

LEASE_MS = 3000
COLUMNS = ("id", "name", "amount")


def expected(source: SourceTable) -> list[dict]:
    return [{k: r[k] for k in COLUMNS} for r in source.expected()]


def changed(stack, config, source: SourceTable, count: int) -> None:
    produce_changes(stack.bootstrap_servers, config["topics"][0], source.cdc_records(source.changes(count)))


@pytest.fixture
def table_config(stack, iceberg_connector):
    return upsert_table(stack, iceberg_connector, 3, **{"sink.lease.duration.ms": LEASE_MS, "tasks.max": 3})


@pytest.mark.parametrize("failpoint", ["after_upload_before_commit", "after_snapshot_before_commit"])
def test_a_crash_and_rerun_apply_each_change_once(stack, spark, s3, dynamodb, table_config, failpoint):
    config, source = table_config, SourceTable(seed=17, partitions=3)
    changed(stack, config, source, 90)
    run_job(config, spark, dynamodb)
    # given a run that dies at the failpoint with changes of keys the table holds
    changed(stack, config, source, 90)
    crash_at(failpoint, config, spark, dynamodb)
    # when the job runs again past its lease, then once more with new changes
    run_job(config, spark, dynamodb, clock=past_the_lease(config))
    # then the table is the source table: no change was applied twice, none lost
    assert pyiceberg_rows(config) == duckdb_table_rows(config) == own_rows(s3, config) == expected(source)
    assert len(connector_snapshots(config)) == 2
    changed(stack, config, source, 60)
    run_job(config, spark, dynamodb, clock=past_the_lease(config))
    assert pyiceberg_rows(config) == duckdb_table_rows(config) == own_rows(s3, config) == expected(source)
    assert sum(committed_offsets(dynamodb, config).values()) == 240


def test_two_runs_at_once_apply_each_change_once(stack, spark, s3, dynamodb, table_config, tmp_path):
    config, source = table_config, SourceTable(seed=3, partitions=3)
    changed(stack, config, source, 90)
    run_job(config, spark, dynamodb)
    changed(stack, config, source, 90)
    codes = two_runs_at_once(write_config(config, tmp_path / "connector.json"))
    assert codes[0] == 0 and set(codes) <= {0, 3, 4}
    assert pyiceberg_rows(config) == duckdb_table_rows(config) == own_rows(s3, config) == expected(source)
    assert len(connector_snapshots(config)) == 2


def test_sigkill_at_random_moments_with_overlapping_runs(stack, spark, s3, dynamodb, table_config, tmp_path, capsys):
    from tests.faults.run_processes import KILLED, RunProcess, finish, kill_when

    config, source = table_config, SourceTable(seed=29, partitions=3)
    seed = int(os.environ.get("SEED") or 31)
    rng, path = random.Random(seed), str(write_config(config, tmp_path / "connector.json"))
    killed = 0
    for phase in rng.sample(["start-up", "write", "commit"], 3):
        # given new changes, a run and a second one started meanwhile, one of them SIGKILLed at a random moment
        changed(stack, config, source, 120)
        first = RunProcess(path)
        time.sleep(rng.uniform(0, 2))
        second = RunProcess(path)
        killed += kill_when([first, second], phase, rng) is not None
        for run in (first, second):
            code = run.wait()
            assert code in (0, 3, 4, KILLED), f"seed {seed}: exit {code}: {run.errors}"
        # then no key has two rows, whatever was committed
        ids = [row["id"] for row in pyiceberg_rows(config)]
        assert len(ids) == len(set(ids)), f"seed {seed}"
    assert killed, f"seed {seed}: no run was killed"
    # when clean runs finish the work
    finish(path, config, LEASE_MS, capsys)
    # then the table is the source table
    readers = pyiceberg_rows(config), duckdb_table_rows(config), own_rows(s3, config)
    assert readers == (expected(source),) * 3, f"seed {seed}"
    assert sum(committed_offsets(dynamodb, config).values()) == 360


def test_one_table_per_topic_with_a_crash_between_tables(stack, spark, s3, dynamodb, iceberg_connector, unique):
    """The Debezium layout, a topic per source table, each its own upsert table (`${topic}`): a run that dies
    after committing the first table's snapshot leaves the others to the rerun, which applies them once."""
    from devtools.producer import create_topic
    from sink_engine.failpoints import SimulatedCrash
    from tests.iceberg.tables import create_namespace
    from tests.iceberg.test_upsert import UPSERT

    topics = [f"{name}-{unique}" for name in ("customers", "orders", "items")]
    config = iceberg_connector(
        **{
            **UPSERT,
            "topics": ",".join(topics),
            "iceberg.tables": f"lake_{unique}.${{topic}}",
            "sink.lease.duration.ms": LEASE_MS,
        }
    )
    create_namespace(config, topics[0])
    sources = {topic: SourceTable(seed=i) for i, topic in enumerate(topics)}
    for topic in topics:
        create_topic(stack.bootstrap_servers, topic, 2)
        produce_changes(stack.bootstrap_servers, topic, sources[topic].cdc_records(sources[topic].changes(50)))
    # given a run that dies once the first table's snapshot is committed
    with crash_after_table_commits(1), pytest.raises(SimulatedCrash):
        run_job(config, spark, dynamodb)
    # when the job runs again, and once more after new changes
    run_job(config, spark, dynamodb, clock=past_the_lease(config))
    for topic in topics:
        produce_changes(stack.bootstrap_servers, topic, sources[topic].cdc_records(sources[topic].changes(30)))
    run_job(config, spark, dynamodb, clock=past_the_lease(config))
    # then each table is its source table, each run's changes in one snapshot of it
    for topic in topics:
        assert pyiceberg_rows(config, topic=topic) == own_rows(s3, config, topic=topic) == expected(sources[topic])
        assert len(connector_snapshots(config, topic)) == 2, topic
