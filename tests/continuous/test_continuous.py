"""`sink-engine run --continuous`: records produced steadily land exactly once while the run stays up; files close on
the wall-clock schedule with no new records; SIGKILLs at seeded random moments, each followed by a restart, lose and
duplicate nothing; a second run waits or exits 3; SIGTERM commits what is closed, releases the lease and exits 0."""

from __future__ import annotations

import random
import threading
import time

import pytest

from devtools.producer import SteadyProducer, create_topic
from sink_engine.driver.job import now_ms
from sink_engine.offsets import Leases
from tests.conftest import TABLE
from tests.continuous.runs import (
    caught_up,
    kill_group,
    killed_and_restarted,
    landed_once,
    start_continuous,
    stop,
    stop_once_caught_up,
    wait_for,
)
from tests.faults.landed_once import write_config
from tests.runs import committed_offsets

PARTITIONS = 4
LEASE_MS = 8000
SCHEDULE_MS = 2000


@pytest.fixture
def continuous(stack, connector, tmp_path):
    """A fresh topic of PARTITIONS partitions and a connector with count rotation and a wall-clock schedule;
    returns (config, config file)."""
    config = connector(
        **{
            "flush.size": 500,
            "rotate.schedule.interval.ms": SCHEDULE_MS,
            "tasks.max": 2,
            "sink.lease.duration.ms": LEASE_MS,
        }
    )
    create_topic(stack.bootstrap_servers, config["topics"][0], PARTITIONS)
    return config, write_config(config, tmp_path / "connector.json")


def test_records_produced_steadily_land_once_and_idle_partitions_close_on_the_schedule(stack, continuous, s3, dynamodb):
    # given a continuous run, and records produced steadily to partitions 0-2 while partition 3 gets a few at first
    config, path = continuous
    run = start_continuous(path)
    try:
        with SteadyProducer(stack.bootstrap_servers, config["topics"][0], [3], per_second=200) as early:
            time.sleep(0.2)
        with SteadyProducer(stack.bootstrap_servers, config["topics"][0], [0, 1, 2], per_second=600) as steady:
            time.sleep(12)
        produced = {**steady.produced, 3: early.produced[3]}  # (each producer counts its ids from 0)
        # then, with no new record anywhere, the schedule closes every open file: each partition catches up
        wait_for(caught_up(dynamodb, config, produced), 60, "the schedule's cuts")
        # and SIGTERM ends the run: exit 0 within the lease duration, the lease released
        started = time.monotonic()
        code, out, err = stop(run, LEASE_MS)
        assert code == 0, err[-3000:]
        assert time.monotonic() - started < LEASE_MS / 1000, "the run took longer than its lease to stop"
    finally:
        if run.poll() is None:
            kill_group(run)
    lease = Leases(dynamodb, TABLE, now_ms).describe(config.name)
    assert lease["expires_at_ms"] == 0, lease
    assert "continuous run stopped" in out, out
    landed_once(s3, dynamodb, config, produced)


def test_sigkilled_at_random_moments_and_restarted_each_record_lands_once(stack, continuous, s3, dynamodb, seed):
    rng = random.Random(seed)
    config, path = continuous
    # given records produced throughout, and the run SIGKILLed (driver, JVM and workers) at seeded random moments
    with SteadyProducer(stack.bootstrap_servers, config["topics"][0], list(range(PARTITIONS)), 400) as producer:
        run = killed_and_restarted(path, LEASE_MS, rng, (3, 8))
        time.sleep(3)
    # when a last run catches up with everything produced and is stopped
    stop_once_caught_up(run, dynamodb, config, producer.produced, LEASE_MS, 90)
    # then every record is in S3 once, in order, and committed
    landed_once(s3, dynamodb, config, producer.produced)


def test_a_second_continuous_run_exits_3_and_sigterm_releases_the_lease(stack, continuous, dynamodb):
    config, path = continuous
    first = start_continuous(path)
    try:
        wait_for(lambda: committed_offsets(dynamodb, config), 60, "the first run's first commits")
        # a second run of the same connector finds the lease held: exit 3, nothing done
        second = start_continuous(path)
        _, err = second.communicate(timeout=60)
        assert second.returncode == 3, err[-3000:]
        assert "leased by run" in err
        # SIGTERM: the first ends 0 and lets the lease go, so that a bounded run can start at once
        code, _, err = stop(first, LEASE_MS)
        assert code == 0, err[-3000:]
    finally:
        if first.poll() is None:
            kill_group(first)
    lease = Leases(dynamodb, TABLE, now_ms).describe(config.name)
    assert lease["expires_at_ms"] == 0 and lease["stop_requested"], lease


def test_each_task_reports_freshness_records_and_lag_to_cloudwatch(stack, connector, tmp_path, dynamodb):
    # given a continuous run that publishes its progress (SINK_METRICS=cloudwatch) every second
    config = connector(
        **{
            "flush.size": 200,
            "rotate.schedule.interval.ms": SCHEDULE_MS,
            "tasks.max": 2,
            "sink.lease.duration.ms": LEASE_MS,
            "sink.continuous.metrics.interval.ms": 1000,
        }
    )
    create_topic(stack.bootstrap_servers, config["topics"][0], PARTITIONS)
    path = write_config(config, tmp_path / "connector.json")
    run = start_continuous(path, "-v", env={"SINK_METRICS": "cloudwatch"})
    try:
        with SteadyProducer(stack.bootstrap_servers, config["topics"][0], list(range(PARTITIONS)), 400) as producer:
            time.sleep(6)
        wait_for(caught_up(dynamodb, config, producer.produced), 60, "catching up")
        time.sleep(2)
        code, _, err = stop(run, LEASE_MS)
        assert code == 0, err[-3000:]
    finally:
        if run.poll() is None:
            kill_group(run)
    # then the tasks logged STREAM_PROGRESS and published the three stream metrics for the connector
    assert '"event": "STREAM_PROGRESS"' in err
    published = _stream_metrics(config.name)
    assert sum(published["StreamRecordsWritten"]) == producer.count
    assert published["StreamFreshnessSeconds"] and max(published["StreamFreshnessSeconds"]) < 30
    assert "StreamLag" in published


def _stream_metrics(connector: str) -> dict[str, list[float]]:
    """Metric name -> every published value (the Sum of each minute's data points) for the connector."""
    import datetime

    import boto3

    from sink_engine.continuous.progress import STREAM_METRICS
    from sink_engine.run.metrics import DIMENSION, NAMESPACE

    now = datetime.datetime.now(datetime.UTC)
    client = boto3.client("cloudwatch")
    found = {}
    for name in STREAM_METRICS:
        points = client.get_metric_statistics(
            Namespace=NAMESPACE,
            MetricName=name,
            Dimensions=[{"Name": DIMENSION, "Value": connector}],
            StartTime=now - datetime.timedelta(hours=1),
            EndTime=now + datetime.timedelta(hours=1),
            Period=60,
            Statistics=["Sum", "Maximum"],
        )["Datapoints"]
        found[name] = [p["Sum"] if name != "StreamFreshnessSeconds" else p["Maximum"] for p in points]
    return found


def test_a_continuous_run_says_what_it_does_from_its_start_and_once_per_interval(stack, connector, tmp_path, dynamodb):
    # given a continuous run with a progress interval of 2 s, its standard output a pipe, records produced meanwhile
    config = connector(
        **{
            "flush.size": 100,
            "rotate.schedule.interval.ms": SCHEDULE_MS,
            "tasks.max": 2,
            "sink.lease.duration.ms": LEASE_MS,
            "sink.continuous.metrics.interval.ms": 2000,
        }
    )
    create_topic(stack.bootstrap_servers, config["topics"][0], PARTITIONS)
    run = start_continuous(write_config(config, tmp_path / "connector.json"))
    lines: list[tuple[float, str]] = []
    reader = threading.Thread(target=lambda: lines.extend((time.monotonic(), line) for line in run.stdout))
    reader.start()
    try:
        with SteadyProducer(stack.bootstrap_servers, config["topics"][0], list(range(PARTITIONS)), 400) as producer:
            wait_for(lambda: [t for t, line in lines if line.startswith("progress: ")], 90, "the first progress line")
            time.sleep(9)
        wait_for(caught_up(dynamodb, config, producer.produced), 60, "catching up")
        time.sleep(4)
        code, _, err = stop(run, LEASE_MS)
        assert code == 0, err[-3000:]
    finally:
        if run.poll() is None:
            kill_group(run)
        reader.join(30)
    # then it said, in order: its checks before Spark, the lease taken, its tasks started
    said = [line for _, line in lines]
    order = [
        next(i for i, line in enumerate(said) if line.startswith(start))
        for start in (
            "offsets table, bucket, Kafka and lease checked; starting Spark",
            "lease taken: epoch",
            "tasks starting: 2 for 4 partitions",
            "progress: ",
        )
    ]
    assert order == sorted(order), said
    # and a first progress line within seconds of the tasks' start (Spark's Python workers start meanwhile), then
    # about one per interval (2 s)
    started = next(t for t, line in lines if line.startswith("tasks starting"))
    progress = [(t, line) for t, line in lines if line.startswith("progress: ")]
    assert progress[0][0] - started < 20, said
    gaps = [later - earlier for (earlier, _), (later, _) in zip(progress, progress[1:])]
    assert len(progress) >= 5 and all(gap < 5 for gap in gaps), (gaps, said)
    # the last one counting every record produced, in files, with no lag left
    assert f"progress: {producer.count:,} records in " in progress[-1][1] and "lag 0 records" in progress[-1][1], said
