"""Kafka faults: the broker behind a TCP proxy that resets connections, stalls and goes away mid-run.

A run finishes, or fails within `sink.kafka.timeout.ms` of the fault with a SourceError (exit 1) naming the
partition and the setting; it commits only what is in S3, releases its lease, and a rerun completes."""

from __future__ import annotations

import random
import time

import pytest

from devtools.producer import create_topic
from sink_engine import cli
from sink_engine.driver.job import now_ms
from sink_engine.offsets import Leases
from tests.conftest import TABLE
from tests.faults.kafka_behind_proxy import ProxiedBroker
from tests.faults.landed_once import check_exactly_once, check_status, produce_numbered, write_config

PARTITIONS = 3
TIMEOUT_MS = 4000
SLACK_S = 12  # Spark's own overhead around the task that times out, on a loaded 2-core machine
PAD = 100


@pytest.fixture(scope="module")
def broker(stack):
    with ProxiedBroker() as running:
        yield running


@pytest.fixture
def scenario(broker, connector, tmp_path):
    """A fresh topic behind the proxy with `records` numbered records; returns (config, config file).
    Faults still armed when the test ends are dropped."""

    def build(records: int, **overrides):
        config = connector(
            **{
                "bootstrap.servers": broker.bootstrap_servers,
                "flush.size": 500,
                "sink.kafka.timeout.ms": TIMEOUT_MS,
                "sink.lease.duration.ms": 3000,
                "tasks.max": PARTITIONS,
                **overrides,
            }
        )
        create_topic(broker.bootstrap_servers, config["topics"][0], PARTITIONS)
        produce_numbered(broker.bootstrap_servers, config["topics"][0], 0, records, PARTITIONS, pad=PAD)
        return config, write_config(config, tmp_path / "connector.json")

    yield build
    broker.proxy.clear()


def run_cli(path: str, capsys) -> tuple[int, str, float]:
    """`sink-engine run`: exit code, stderr and seconds."""
    capsys.readouterr()
    started = time.monotonic()
    code = cli.main(["run", "--config", path])
    return code, capsys.readouterr().err, time.monotonic() - started


def mid_run(rng, records: int) -> int:
    """A byte count from broker to clients that falls while the tasks read (10% to 80% of the records; a record
    `{"id": n, "pad": ...}` of about PAD + 20 bytes costs about PAD + 30 in a fetch response)."""
    return int(records * (PAD + 20) * rng.uniform(0.1, 0.8))


def test_connection_resets_mid_run_the_run_completes(broker, scenario, s3, dynamodb, spark, seed, figures, capsys):
    rng = random.Random(seed)
    # given 24,000 records and one to three connection resets at random points while the tasks read
    records = 24_000
    config, path = scenario(records)
    resets = rng.randint(1, 3)
    for _ in range(resets):
        broker.proxy.inject("reset", after_bytes=mid_run(rng, records))
    before = dict(broker.proxy.injected)
    # when the job runs
    code, err, _ = run_cli(path, capsys)
    # then librdkafka reconnects and the run completes: every record once, status right
    assert broker.proxy.injected["reset"] - before.get("reset", 0) == resets, "a reset did not happen mid-run"
    assert code == 0, err
    landed = check_exactly_once(s3, dynamodb, config, PARTITIONS, records)
    check_status(dynamodb, config, PARTITIONS, records)
    figures.update(faults={"kafka reset": resets}, runs=1, exit_codes=[code], **landed.figures())


@pytest.mark.fault_matrix
def test_broker_down_at_start_fails_at_once_naming_the_address(broker, scenario, s3, dynamodb, spark, figures, capsys):
    # given a broker that is unreachable when the run starts (port closed)
    records = 600
    config, path = scenario(records, **{"flush.size": 50})
    broker.proxy.inject("outage")
    try:
        # when the job runs
        code, err, seconds = run_cli(path, capsys)
    finally:
        broker.proxy.resume()
    # then it fails at once (the port refuses: no need to wait for sink.kafka.timeout.ms), saying so, before Spark
    # starts, commits nothing and leaves the lease free
    assert code == 1, err
    assert "Kafka cannot be reached at any address of bootstrap.servers" in err and "refused the connection" in err
    assert seconds < 3, seconds
    assert check_exactly_once(s3, dynamodb, config, PARTITIONS, records, complete=False).records == 0
    assert Leases(dynamodb, TABLE, now_ms).describe(config.name) is None  # not even taken
    # and a rerun once the broker is back completes
    rerun, err, _ = run_cli(path, capsys)
    assert rerun == 0, err
    landed = check_exactly_once(s3, dynamodb, config, PARTITIONS, records)
    figures.update(
        faults={"kafka outage": 1},
        runs=2,
        exit_codes=[code, rerun],
        failed_after_s=round(seconds, 1),
        **landed.figures(),
    )


@pytest.mark.fault_matrix
@pytest.mark.parametrize("kind", ["stall", "outage"])
def test_fault_shorter_than_the_timeout_the_run_completes(
    broker, scenario, s3, dynamodb, spark, seed, figures, capsys, kind
):
    rng = random.Random(seed)
    # given a stall (bytes held) or an outage (connections reset, port closed) of 20% to 60% of the timeout
    records = 24_000
    config, path = scenario(records)
    lasting = TIMEOUT_MS / 1000 * rng.uniform(0.2, 0.6)
    faults_before = len(broker.proxy.history)
    broker.proxy.inject(kind, seconds=lasting, after_bytes=mid_run(rng, records))
    # when the job runs, then it waits the fault out and completes
    code, err, _ = run_cli(path, capsys)
    assert len(broker.proxy.history) == faults_before + 1, "the fault did not happen during the run"
    assert code == 0, err
    landed = check_exactly_once(s3, dynamodb, config, PARTITIONS, records)
    check_status(dynamodb, config, PARTITIONS, records)
    figures.update(
        faults={f"kafka {kind}": 1}, fault_seconds=round(lasting, 1), runs=1, exit_codes=[code], **landed.figures()
    )


@pytest.mark.fault_matrix
@pytest.mark.parametrize("kind", ["stall", "outage"])
def test_fault_longer_than_the_timeout_fails_in_time_then_a_rerun_completes(
    broker, scenario, s3, dynamodb, spark, seed, figures, capsys, kind
):
    rng = random.Random(seed)
    # given a stall or an outage that starts mid-run and lasts until the run is over
    records = 24_000
    config, path = scenario(records)
    faults_before = len(broker.proxy.history)
    broker.proxy.inject(kind, after_bytes=mid_run(rng, records))
    try:
        code, err, _ = run_cli(path, capsys)
        ended = time.monotonic()
    finally:
        broker.proxy.resume()
    # then the run fails within sink.kafka.timeout.ms of the fault, naming a partition and the setting
    assert len(broker.proxy.history) == faults_before + 1, "the fault did not happen during the run"
    fault_at = broker.proxy.history[-1][0]
    assert code == 1, err
    assert "Kafka delivered nothing from" in err and "(sink.kafka.timeout.ms)" in err, err
    assert ended - fault_at < TIMEOUT_MS / 1000 + SLACK_S, ended - fault_at
    # and it committed only files that are in S3, and released its lease
    failed = check_exactly_once(s3, dynamodb, config, PARTITIONS, records, complete=False)
    assert Leases(dynamodb, TABLE, now_ms).describe(config.name)["expires_at_ms"] == 0
    # when the job runs again with the broker back, then it completes: every record once
    rerun, err, _ = run_cli(path, capsys)
    assert rerun == 0, err
    landed = check_exactly_once(s3, dynamodb, config, PARTITIONS, records)
    check_status(dynamodb, config, PARTITIONS, records)
    figures.update(
        faults={f"kafka {kind}": 1},
        failed_after_fault_s=round(ended - fault_at, 1),
        committed_by_failed_run=sum(failed.committed.values()),
        runs=2,
        exit_codes=[code, rerun],
        **landed.figures(),
    )


@pytest.mark.fault_matrix
def test_seeded_mix_of_faults_exactly_once(broker, scenario, s3, dynamodb, spark, seed, figures, capsys):
    rng = random.Random(seed)
    # given three to six faults of random kinds, lengths and places in the run
    records = 30_000
    config, path = scenario(records)
    faults_before = dict(broker.proxy.injected)
    armed = rng.randint(3, 6)
    for _ in range(armed):
        kind = rng.choice(["reset", "stall", "outage"])
        broker.proxy.inject(kind, seconds=TIMEOUT_MS / 1000 * rng.uniform(0.1, 0.5), after_bytes=mid_run(rng, records))
    # when the job runs until it completes
    codes = []
    for _ in range(3):
        code, err, _ = run_cli(path, capsys)
        codes.append(code)
        # then a run either completes or fails on the Kafka timeout, and what it committed is in S3
        assert code in (0, 1), err
        if code == 0:
            break
        assert "Kafka delivered nothing from" in err, err
        check_exactly_once(s3, dynamodb, config, PARTITIONS, records, complete=False)
    assert codes[-1] == 0, codes
    injected = {k: v - faults_before.get(k, 0) for k, v in broker.proxy.injected.items()}
    assert sum(injected.values()) == armed, f"{armed} faults armed, {injected} injected"
    landed = check_exactly_once(s3, dynamodb, config, PARTITIONS, records)
    check_status(dynamodb, config, PARTITIONS, records)
    figures.update(
        faults={f"kafka {k}": v for k, v in injected.items() if v},
        runs=len(codes),
        exit_codes=codes,
        **landed.figures(),
    )
