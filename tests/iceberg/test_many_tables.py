"""Fan-out to many tables, their snapshots committed `iceberg.control.commit.threads` at a time: every record lands
once in its table over runs; a table whose commit the catalog refuses fails the run naming it, no offset moves, and
the rerun lands every record once (the tables that committed skip what they hold)."""

from __future__ import annotations

import logging
import random
import sqlite3
import threading

import orjson
import pytest

from devtools.producer import create_topic, produce
from sink_engine.driver.job import run_job
from sink_engine.target.iceberg_tables import commit as table_commit
from sink_engine.target.iceberg_tables.errors import TableError
from tests.iceberg.tables import catalog_of, connector_snapshots, table_view
from tests.iceberg.upserts import pyiceberg_rows
from tests.runs import committed_offsets, past_the_lease

TABLES = 20
THREADS = 4
LEASE_MS = 3000


@pytest.fixture
def many(stack, iceberg_connector, unique):
    """A connector routing by `__table` to 20 tables of a fresh namespace, 4 commit threads, over a topic of two
    partitions; returns (config, identifiers, model), the model the rows each table must hold, by id."""
    config = iceberg_connector(
        **{
            "iceberg.tables.dynamic-enabled": "true",
            "iceberg.tables.route-field": "__table",
            "iceberg.control.commit.threads": THREADS,
            "sink.lease.duration.ms": LEASE_MS,
        }
    )
    namespace = f"lake_{unique}"
    catalog_of(config).create_namespace(namespace)
    create_topic(stack.bootstrap_servers, config["topics"][0], 2)
    identifiers = [f"{namespace}.t{n:02d}" for n in range(TABLES)]
    return config, identifiers, {t: [] for t in identifiers}


def produced(stack, config, model: dict, first: int, count: int, rng: random.Random) -> None:
    """Records first..first+count, each of a table picked at random, into the model and the topic."""
    values = []
    for n in range(first, first + count):
        table = rng.choice(sorted(model))
        model[table].append({"id": n, "name": f"n{n}", "amount": n * 10})
        values.append(orjson.dumps({**model[table][-1], "__table": table}))
    produce(stack.bootstrap_servers, config["topics"][0], values, 2)


def assert_tables_equal_the_model(config, model: dict) -> None:
    for table, rows in model.items():
        assert pyiceberg_rows(table_view(config, table)) == rows, table


@pytest.fixture
def in_flight(monkeypatch) -> list[int]:
    """The most table commits running at once, per run (`TableCommits._commit_table` counted)."""
    real, lock, running, most = table_commit.TableCommits._commit_table, threading.Lock(), [0], [0]

    def counted(self, *args, **kwargs):
        with lock:
            running[0] += 1
            most[0] = max(most[0], running[0])
        try:
            return real(self, *args, **kwargs)
        finally:
            with lock:
                running[0] -= 1

    monkeypatch.setattr(table_commit.TableCommits, "_commit_table", counted)
    return most


def test_a_fan_out_to_twenty_tables_commits_them_in_parallel_each_record_once(stack, spark, dynamodb, many, in_flight):
    config, tables, model = many
    rng = random.Random(41)
    for run in range(2):
        # given records of twenty tables interleaved over two partitions
        produced(stack, config, model, run * 400, 400, rng)
        # when a run writes them
        run_job(config, spark, dynamodb)
        # then each table holds its records once, in one snapshot per run, committed four at a time
        assert_tables_equal_the_model(config, model)
        assert [len(connector_snapshots(table_view(config, t))) for t in tables] == [run + 1] * TABLES
        assert 1 < in_flight[0] <= THREADS
    assert committed_offsets(dynamodb, config) == {0: 400, 1: 400}


def refuse_commits_of(config, identifier: str) -> sqlite3.Connection:
    """The SQL catalog refuses to move the table's metadata pointer (every commit of it fails, as a catalog denying
    one table would); the trigger is dropped by `allow_commits`."""
    namespace, name = identifier.rsplit(".", 1)
    connection = sqlite3.connect(config["iceberg.catalog.uri"].removeprefix("sqlite:///"))
    connection.execute(
        "CREATE TRIGGER refuse_one_table BEFORE UPDATE ON iceberg_tables "
        f"WHEN NEW.table_namespace = '{namespace}' AND NEW.table_name = '{name}' "
        "BEGIN SELECT RAISE(ABORT, 'commits of this table are refused'); END"
    )
    connection.commit()
    return connection


def allow_commits(connection: sqlite3.Connection) -> None:
    connection.execute("DROP TRIGGER refuse_one_table")
    connection.commit()
    connection.close()


def test_a_table_whose_commit_fails_fails_the_run_naming_it_and_the_rerun_lands_each_record_once(
    stack, spark, dynamodb, many, caplog
):
    config, tables, model = many
    rng = random.Random(7)
    produced(stack, config, model, 0, 400, rng)
    run_job(config, spark, dynamodb)
    # given the catalog refusing every commit of one table, among the first four to commit
    refused = refuse_commits_of(config, tables[2])
    produced(stack, config, model, 400, 400, rng)
    # when a run commits, then it fails naming the table, and no offset moves past the last run's
    caplog.set_level(logging.INFO, logger="sink_engine")
    with pytest.raises(TableError, match=rf"snapshot commit to table {tables[2]} failed: IntegrityError"):
        run_job(config, spark, dynamodb)
    assert committed_offsets(dynamodb, config) == {0: 200, 1: 200}
    failures = [r.getMessage() for r in caplog.records if "SNAPSHOT_COMMIT_FAILED" in r.getMessage()]
    assert len(failures) == 1 and tables[2] in failures[0]
    committed = [t for t in tables if len(connector_snapshots(table_view(config, t))) == 2]
    assert tables[2] not in committed and committed  # the others committing when it failed finished
    # when the catalog takes its commits again and the job reruns
    allow_commits(refused)
    run_job(config, spark, dynamodb, clock=past_the_lease(config))
    # then every table holds each of its records once: those that committed got nothing twice, the others all
    assert_tables_equal_the_model(config, model)
    assert committed_offsets(dynamodb, config) == {0: 400, 1: 400}
