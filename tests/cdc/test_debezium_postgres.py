"""PostgreSQL to Debezium to Kafka to upsert tables, end to end with the real parts: PostgreSQL (Debian's package)
with logical decoding, Debezium's Postgres connector (pgoutput) in a Kafka Connect worker, Apache Kafka, and the
engine's upsert tables fanned out a table per topic, with ExtractNewRecordState as its defaults leave it (deletes
and Debezium's tombstones as null values, which delete rows). After each drain every table equals its source table
(SELECT compared row by row, read by pyiceberg and by DuckDB): inserts, updates, deletes, primary keys changed,
ALTER TABLE ADD COLUMN mid-stream, and runs SIGKILLed mid-way (while tasks write; between two tables' snapshots),
each rerun."""

from __future__ import annotations

import json
import random
import time

import pytest
from confluent_kafka import Consumer, TopicPartition

from devtools.kafka_connect import ConnectWorker
from sink_engine.driver.job import run_job
from tests.cdc.source import SourceTables
from tests.faults.run_processes import KILLED, RunProcess
from tests.iceberg.tables import create_namespace
from tests.iceberg.upserts import duckdb_table_rows, pyiceberg_rows

pytestmark = pytest.mark.cdc

TABLES = ("customers", "orders", "products")
PREFIX = "cdc"  # Debezium's topic.prefix: a table's topic is cdc.public.<table>
# The SIGKILLs of the sink's run: the event it waits for, then the delay (s)
KILLS = (("RUN_PLANNED", 1.0), ("SNAPSHOT_COMMITTED", 0.0))
LEASE_MS = 4000  # short, so that the run after a SIGKILL takes the killed run's lease soon


def debezium(pg, slot: str) -> dict[str, str]:
    """Debezium's Postgres connector with its defaults, but for where the database is and how topics are made."""
    return {
        "name": "postgres-source",
        "connector.class": "io.debezium.connector.postgresql.PostgresConnector",
        "plugin.name": "pgoutput",
        "database.hostname": "127.0.0.1",
        "database.port": str(pg.port),
        "database.user": "postgres",
        "database.password": "trusted",
        "database.dbname": "postgres",
        "topic.prefix": PREFIX,
        "table.include.list": ",".join(f"public.{t}" for t in TABLES),
        "slot.name": slot,
        "topic.creation.default.replication.factor": "1",
        "topic.creation.default.partitions": "2",
    }


def sink(iceberg_connector, unique: str):
    """Upsert tables, one per Debezium topic (`${topic}`), from the change events as ExtractNewRecordState unwraps
    them by default; only the upsert keys set, tombstones delete (behavior.on.null.values's upsert default)."""
    config = iceberg_connector(
        **{
            "topics.regex": rf"{PREFIX}\.public\..*",
            "topics": None,
            "iceberg.tables": f"lake_{unique}.${{topic}}",
            "iceberg.tables.upsert-mode-enabled": "true",
            "iceberg.tables.default-id-columns": "id",
            "iceberg.tables.evolve-schema-enabled": "true",
            "transforms": "unwrap",
            "transforms.unwrap.type": "io.debezium.transforms.ExtractNewRecordState",
            "key.converter": "org.apache.kafka.connect.json.JsonConverter",
            "value.converter.schemas.enable": "true",
            "tasks.max": 2,
            "sink.lease.duration.ms": LEASE_MS,
            "iceberg.control.commit.threads": 1,  # one table after another: a kill after the first lands between
        }
    )
    create_namespace(config, topic(TABLES[0]))
    return config


def connector_file(config, path) -> str:
    """The connector's keys as set (transforms' options included) as a connector JSON file for the CLI."""
    values = {k: config[k] for k in config.explicit if k != "name" and config[k] is not None}
    flat = {k: ",".join(v) if isinstance(v, tuple) else v for k, v in values.items()}
    path.write_text(json.dumps({"name": config.name, "config": {**flat, **config.passthrough}}))
    return str(path)


def topic(table: str) -> str:
    return f"{PREFIX}.public.{table}"


def wait_for_events(bootstrap: str, expected: dict[str, int], timeout_s: float = 120) -> None:
    """Until each table's topic holds the events Debezium emits for its changes (no transactions: offsets count
    records)."""
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "cdc-watermarks"})
    deadline, found = time.monotonic() + timeout_s, {}
    try:
        while time.monotonic() < deadline:
            found = {table: _records(consumer, topic(table)) for table in expected}
            if all(found[t] >= expected[t] for t in expected):
                return
            time.sleep(0.5)
    finally:
        consumer.close()
    raise AssertionError(f"Debezium's events by table: {found}, expected {expected}")


def _records(consumer: Consumer, name: str) -> int:
    metadata = consumer.list_topics(name, timeout=5).topics[name]
    if metadata.error is not None:
        return 0
    return sum(consumer.get_watermark_offsets(TopicPartition(name, p), timeout=5)[1] for p in metadata.partitions)


def assert_tables_equal_the_source(config, source: SourceTables, when: str) -> None:
    for table in TABLES:
        columns = tuple(source.columns[table])
        expected = source.rows(table)
        assert pyiceberg_rows(config, columns, topic(table)) == expected, f"{table}, pyiceberg, {when}"
        assert duckdb_table_rows(config, columns, topic(table)) == expected, f"{table}, DuckDB, {when}"


def test_postgres_through_debezium_into_upsert_tables(
    stack, spark, s3, dynamodb, postgres, iceberg_connector, unique, tmp_path
):
    # given three PostgreSQL tables with rows, and Debezium's Postgres connector reading them into Kafka
    source = SourceTables(postgres, TABLES, random.Random(37))
    source.create(rows=20)
    with ConnectWorker(stack.bootstrap_servers, debezium(postgres, f"slot_{unique}")) as worker:
        config = sink(iceberg_connector, unique)
        # when the snapshot is drained, then every table equals its source table
        drain(stack, spark, dynamodb, config, source, worker, "the snapshot")
        # when inserts, updates, deletes and primary key changes are drained
        source.change(120)
        drain(stack, spark, dynamodb, config, source, worker, "changes")
        # when a column is added mid-stream (ALTER TABLE ADD COLUMN) and the changes go on
        source.change(20)
        source.add_column("customers", "tier")
        source.change(60)
        drain(stack, spark, dynamodb, config, source, worker, "a column added")
        # when a run is SIGKILLed mid-way, through its tasks' writes or after its first table's snapshot (the
        # others not yet committed), then rerun
        for event, delay_s in KILLS:
            source.change(60)
            wait_for_events(stack.bootstrap_servers, source.events)
            killed = RunProcess(connector_file(config, tmp_path / "connector.json"))
            _kill_after(killed, event, delay_s)
            assert killed.wait() == KILLED
            if event == "SNAPSHOT_COMMITTED":  # killed between two tables' commits: the rerun has the others left
                assert killed.events.count(event) < len(TABLES), killed.events
            time.sleep(LEASE_MS / 1000)
            drain(stack, spark, dynamodb, config, source, worker, f"a rerun after a SIGKILL after {event}")
    # and every kind of change was made, Debezium's tombstones deleting rows by the upsert default
    assert set(source.made) == {"insert", "update", "delete", "key change"}, source.made
    assert config["behavior.on.null.values"] == "write" and "behavior.on.null.values" not in config.explicit


def drain(stack, spark, dynamodb, config, source: SourceTables, worker: ConnectWorker, when: str) -> None:
    """Debezium's events of the changes so far reach Kafka; a run commits them; the tables equal their sources."""
    wait_for_events(stack.bootstrap_servers, source.events)
    assert worker.state()[0] == "RUNNING", worker.log_tail()
    run_job(config, spark, dynamodb)
    assert_tables_equal_the_source(config, source, when)


def _kill_after(run: RunProcess, event: str, delay_s: float, timeout_s: float = 120) -> None:
    deadline = time.monotonic() + timeout_s
    while event not in run.events:
        assert run.alive and time.monotonic() < deadline, f"the run ended before {event}: {run.errors}"
        time.sleep(0.02)
    time.sleep(delay_s)
    assert run.kill(), f"the run ended before its SIGKILL: {run.events}"
