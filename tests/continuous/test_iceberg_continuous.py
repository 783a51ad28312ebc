"""`sink-engine run --continuous` with IcebergFormat: records produced steadily land in the table exactly once (read
with pyiceberg and DuckDB), in snapshots no more frequent than `iceberg.control.commit.interval-ms`; SIGKILLs at
seeded random moments, each followed by a restart, lose and duplicate nothing; SIGTERM commits what was closed,
releases the lease and exits 0."""

from __future__ import annotations

import random
import time
from datetime import UTC

import pytest

from devtools.producer import SteadyProducer, create_topic
from sink_engine.driver.job import now_ms
from sink_engine.offsets import Leases
from sink_engine.partition.time_buckets import next_rotation_ms
from sink_engine.target.iceberg_tables.staging import StageStore
from sink_engine.target.iceberg_tables.stream_commit import commit_delay_ms
from tests.conftest import TABLE
from tests.continuous.runs import (
    caught_up,
    in_table_once,
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
from tests.runs import committed_offsets

PARTITIONS = 4
LEASE_MS = 8000
INTERVAL_MS = 2000
SLOW_INTERVAL_MS = 4000  # a commit of the local stack under load takes well under half of it (the commit delay)


@pytest.fixture
def continuous_table(stack, iceberg_connector, tmp_path):  # noqa: F811 (the fixture imported above)
    """A fresh topic of PARTITIONS partitions and an IcebergFormat connector committing every `interval` ms
    (INTERVAL_MS by default), its rows carrying their Kafka partition and offset; returns (config, config file)."""

    def build(interval: int = INTERVAL_MS):
        config = iceberg_connector(
            **{
                "iceberg.control.commit.interval-ms": interval,
                "iceberg.tables.kafka-metadata-enabled": "true",
                "tasks.max": 2,
                "sink.lease.duration.ms": LEASE_MS,
            }
        )
        create_topic(stack.bootstrap_servers, config["topics"][0], PARTITIONS)
        create_namespace(config)
        return config, write_config(config, tmp_path / "connector.json")

    return build


def test_records_produced_steadily_land_once_in_snapshots_at_most_one_per_interval(stack, continuous_table, dynamodb):
    # given a continuous run of an IcebergFormat connector, and records produced steadily to every partition
    config, path = continuous_table(SLOW_INTERVAL_MS)
    run = start_continuous(path)
    try:
        with SteadyProducer(stack.bootstrap_servers, config["topics"][0], list(range(PARTITIONS)), 400) as producer:
            wait_for(lambda: connector_snapshots(config), 90, "the run's first snapshot (its tasks started)")
            time.sleep(12)
        # then the table catches up with every record within a few intervals of the last
        wait_for(caught_up(dynamodb, config, producer.produced), 60, "the table's commits")
        # and SIGTERM ends the run: exit 0 within the lease duration, the lease released
        started = time.monotonic()
        code, out, err = stop(run, LEASE_MS)
        assert code == 0, err[-3000:]
        assert time.monotonic() - started < LEASE_MS / 1000, "the run took longer than its lease to stop"
    finally:
        if run.poll() is None:
            kill_group(run)
    assert Leases(dynamodb, TABLE, now_ms).describe(config.name)["expires_at_ms"] == 0
    in_table_once(dynamodb, config, producer.produced)
    # and the connector's snapshots are at most one per window of the interval (each commit starts its window's
    # commit delay after the window's boundary, so its snapshot lies in the window of its time less that delay)
    times = [s.timestamp_ms for s in connector_snapshots(config)]
    windows = [next_rotation_ms(t - commit_delay_ms(SLOW_INTERVAL_MS), SLOW_INTERVAL_MS, UTC) for t in times]
    assert len(times) >= 2 and len(set(windows)) == len(windows), times


def test_sigkilled_at_random_moments_and_restarted_each_record_lands_once(stack, continuous_table, dynamodb, seed):
    rng = random.Random(seed)
    config, path = continuous_table()
    # given records produced throughout, and the run SIGKILLed (driver, JVM and workers) at seeded random moments
    with SteadyProducer(stack.bootstrap_servers, config["topics"][0], list(range(PARTITIONS)), 300) as producer:
        run = killed_and_restarted(path, LEASE_MS, rng, (3, 9))
        time.sleep(3)
    # when a last run catches up with everything produced and is stopped
    stop_once_caught_up(run, dynamodb, config, producer.produced, LEASE_MS, 120)
    # then every record is in the table once, and committed
    in_table_once(dynamodb, config, producer.produced)


def test_sigterm_commits_what_was_closed_and_a_second_run_exits_3(stack, continuous_table, dynamodb):
    config, path = continuous_table()
    first = start_continuous(path)
    try:
        with SteadyProducer(stack.bootstrap_servers, config["topics"][0], list(range(PARTITIONS)), 200) as producer:
            wait_for(lambda: committed_offsets(dynamodb, config), 90, "the first run's first commits")
            # a second run of the same connector finds the lease held: exit 3, nothing done
            second = start_continuous(path)
            _, err = second.communicate(timeout=60)
            assert second.returncode == 3, err[-3000:]
        # SIGTERM right after the last records: the run ends 0, its last commit at or past what it had committed
        before = committed_offsets(dynamodb, config)
        code, _, err = stop(first, LEASE_MS)
        assert code == 0, err[-3000:]
    finally:
        if first.poll() is None:
            kill_group(first)
    after = committed_offsets(dynamodb, config)
    assert all(after[p] >= before.get(p, 0) for p in after), (before, after)
    # every stage the tasks handed on is committed: none starts at its partition's committed offset
    staged = StageStore(dynamodb, TABLE).staged(config.name)
    assert not [s for tp, s in staged.items() if s.commit.expected == after.get(tp.partition)], staged
    lease = Leases(dynamodb, TABLE, now_ms).describe(config.name)
    assert lease["expires_at_ms"] == 0 and lease["stop_requested"], lease
    # and what is committed is in the table once; a restarted run then brings the rest
    run = start_continuous(path)
    try:
        held = lambda: Leases(dynamodb, TABLE, now_ms).describe(config.name)["expires_at_ms"] > now_ms()  # noqa: E731
        wait_for(held, 90, "the restarted run taking the lease")  # (its SIGTERM handler is in place by then)
        wait_for(caught_up(dynamodb, config, producer.produced), 60, "the restarted run catching up")
        code, _, err = stop(run, LEASE_MS)
        assert code == 0, err[-3000:]
    finally:
        if run.poll() is None:
            kill_group(run)
    in_table_once(dynamodb, config, producer.produced)
