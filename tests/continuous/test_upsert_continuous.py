"""`sink-engine run --continuous` into an upsert table: a CDC stream produced steadily (upserts and deletes by the
cdc field, several changes of a key within an interval and across intervals, keys deleted and written again) leaves
the table equal to the model of the source table, read by pyiceberg, DuckDB's iceberg extension and our own reader;
also with the run SIGKILLed at seeded random moments and restarted."""

from __future__ import annotations

import random
import time

import orjson
import pytest

from devtools.producer import SteadyProducer, create_topic
from tests.continuous.runs import (
    kill_group,
    killed_and_restarted,
    start_continuous,
    stop,
    stop_once_caught_up,
    wait_for,
)
from tests.iceberg.conftest import catalog_file, iceberg_connector  # noqa: F401 (fixtures shared by import)
from tests.iceberg.runs import write_config
from tests.iceberg.tables import connector_snapshots, create_namespace
from tests.iceberg.test_upsert import UPSERT
from tests.iceberg.upserts import duckdb_table_rows, own_rows, pyiceberg_rows
from tests.runs import committed_offsets

PARTITIONS = 4
KEYS_PER_PARTITION = 12
LEASE_MS = 8000
INTERVAL_MS = 2000
COLUMNS = ("id", "name", "amount")


def change(n: int) -> dict:
    """Change n of the source table. SteadyProducer sends record n to partition n % PARTITIONS, so its key (id) is
    one of that partition's: a key's changes are all in one partition, in order. About one in five is a delete."""
    draw = random.Random(n)
    key = draw.randrange(KEYS_PER_PARTITION) * PARTITIONS + n % PARTITIONS
    op = "d" if draw.random() < 0.2 else "u"
    return {"id": key, "name": f"n{n}", "amount": n, "__op": op}


def model(produced: dict[int, list[int]]) -> list[dict]:
    """The source table after every change produced: per key, the row of its last change unless a delete."""
    rows: dict[int, dict] = {}
    for n in sorted(n for ns in produced.values() for n in ns):
        row = change(n)
        if row["__op"] == "d":
            rows.pop(row["id"], None)
        else:
            rows[row["id"]] = {k: row[k] for k in COLUMNS}
    return sorted(rows.values(), key=lambda r: r["id"])


def assert_is_the_model(s3, config, produced) -> None:
    readers = pyiceberg_rows(config, COLUMNS), duckdb_table_rows(config, COLUMNS), own_rows(s3, config, COLUMNS)
    expected = model(produced)
    assert readers == (expected, expected, expected), [len(r) for r in (*readers, expected)]


@pytest.fixture
def continuous_upsert(stack, iceberg_connector, tmp_path):  # noqa: F811 (the fixture imported above)
    config = iceberg_connector(
        **{
            **UPSERT,
            "behavior.on.null.values": "ignore",
            "tasks.max": 2,
            "iceberg.control.commit.interval-ms": INTERVAL_MS,
            "sink.lease.duration.ms": LEASE_MS,
        }
    )
    create_topic(stack.bootstrap_servers, config["topics"][0], PARTITIONS)
    create_namespace(config)
    return config, write_config(config, tmp_path / "connector.json")


def producing(stack, config, per_second: int) -> SteadyProducer:
    return SteadyProducer(
        stack.bootstrap_servers,
        config["topics"][0],
        list(range(PARTITIONS)),
        per_second,
        value_of=lambda n: orjson.dumps(change(n)),
    )


def test_a_cdc_stream_produced_steadily_leaves_the_source_table(stack, s3, dynamodb, continuous_upsert):
    config, path = continuous_upsert
    run = start_continuous(path)
    try:
        # given changes produced steadily, many of each key within an interval
        with producing(stack, config, 200) as producer:
            wait_for(lambda: len(connector_snapshots(config)) >= 2, 90, "the run's first snapshots")
            time.sleep(6)
        # when the run has committed them all and is stopped
        stop_once_caught_up(run, dynamodb, config, producer.produced, LEASE_MS, 60)
    finally:
        if run.poll() is None:
            kill_group(run)
    # then the table is the source table, each interval's changes in one snapshot
    assert_is_the_model(s3, config, producer.produced)
    assert len(connector_snapshots(config)) >= 3


def test_sigkilled_at_random_moments_and_restarted_the_table_is_the_source_table(
    stack, s3, dynamodb, seed, continuous_upsert
):
    rng = random.Random(seed)
    config, path = continuous_upsert
    with producing(stack, config, 150) as producer:
        run = killed_and_restarted(path, LEASE_MS, rng, (3, 9))
        time.sleep(3)
    stop_once_caught_up(run, dynamodb, config, producer.produced, LEASE_MS, 120)
    assert_is_the_model(s3, config, producer.produced)
    assert committed_offsets(dynamodb, config) == {p: len(ns) for p, ns in producer.produced.items()}


def test_sigterm_commits_what_was_closed(stack, s3, dynamodb, continuous_upsert):
    config, path = continuous_upsert
    run = start_continuous(path)
    try:
        with producing(stack, config, 200) as producer:
            wait_for(lambda: committed_offsets(dynamodb, config), 90, "the run's first commits")
        code, _, err = stop(run, LEASE_MS)
        assert code == 0, err[-3000:]
    finally:
        if run.poll() is None:
            kill_group(run)
    # what is committed is the source table as of the committed offsets
    committed = committed_offsets(dynamodb, config)
    assert_is_the_model(s3, config, {p: ns[: committed.get(p, 0)] for p, ns in producer.produced.items()})
