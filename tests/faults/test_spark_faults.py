"""Spark faults: Python workers killed mid-range (Spark's task retry re-runs the range), a task killed on every
attempt (the job fails clearly, nothing is committed), and a task hung on a stalled broker (the lease is held
only until `sink.kafka.timeout.ms` ends the task)."""

from __future__ import annotations

import random
import threading
import time

import pytest

from devtools.producer import create_topic
from sink_engine import cli
from sink_engine.driver.job import now_ms
from sink_engine.failpoints import arm_task_failpoint
from sink_engine.offsets import Leases
from sink_engine.run.spark_runner import LOCAL_TASK_ATTEMPTS
from tests.conftest import TABLE
from tests.faults.kafka_behind_proxy import ProxiedBroker
from tests.faults.landed_once import check_exactly_once, check_status, produce_numbered, write_config

PARTITIONS = 3
PER_PARTITION = 12_000  # one or more chunks of records per range: the kill comes after the first
KILL = "task_mid_range"


@pytest.fixture
def scenario(stack, connector, tmp_path):
    """A fresh topic with PER_PARTITION numbered records per partition; returns (config, config file)."""

    def build(bootstrap: str = stack.bootstrap_servers, **overrides):
        config = connector(**{"bootstrap.servers": bootstrap, "flush.size": 2000, "tasks.max": PARTITIONS, **overrides})
        create_topic(bootstrap, config["topics"][0], PARTITIONS)
        produce_numbered(bootstrap, config["topics"][0], 0, PARTITIONS * PER_PARTITION, PARTITIONS)
        return config, write_config(config, tmp_path / "connector.json")

    return build


def run_cli(path: str, capsys) -> tuple[int, str]:
    capsys.readouterr()
    code = cli.main(["run", "--config", path])
    return code, capsys.readouterr().err


def arm(config, partitions, times: int = 1) -> list:
    return [arm_task_failpoint(KILL, f"{config['topics'][0]}-{p}", times) for p in partitions]


def test_worker_killed_mid_range_is_retried_and_lands_once(scenario, spark, s3, dynamodb, seed, figures, capsys):
    rng = random.Random(seed)
    # given Spark's task retry (local[*,4]) and the Python worker of one or more ranges killed after its first
    # chunk of records was written, on the first attempt only
    assert spark.sparkContext.master == f"local[*,{LOCAL_TASK_ATTEMPTS}]"
    config, path = scenario()
    killed = sorted(rng.sample(range(PARTITIONS), rng.randint(1, PARTITIONS)))
    armed = arm(config, killed)
    # when the job runs
    code, err = run_cli(path, capsys)
    # then each killed attempt happened, Spark ran its range again, and every record landed once
    assert not any(a.exists() for a in armed), "a worker was not killed"
    assert code == 0, err
    records = PARTITIONS * PER_PARTITION
    landed = check_exactly_once(s3, dynamodb, config, PARTITIONS, records)
    check_status(dynamodb, config, PARTITIONS, records)
    figures.update(faults={"python worker killed": len(killed)}, runs=1, exit_codes=[code], **landed.figures())


@pytest.mark.fault_matrix
def test_worker_killed_several_times_still_lands_once(scenario, spark, s3, dynamodb, seed, figures, capsys):
    rng = random.Random(seed)
    # given every range's worker killed on 1 to 3 of its attempts (Spark allows 4)
    config, path = scenario()
    kills = {p: rng.randint(1, LOCAL_TASK_ATTEMPTS - 1) for p in range(PARTITIONS)}
    armed = [a for p, times in kills.items() for a in arm(config, [p], times)]
    code, err = run_cli(path, capsys)
    assert not any(a.exists() for a in armed), "a worker was killed fewer times than armed"
    assert code == 0, err
    landed = check_exactly_once(s3, dynamodb, config, PARTITIONS, PARTITIONS * PER_PARTITION)
    figures.update(faults={"python worker killed": sum(kills.values())}, runs=1, exit_codes=[code], **landed.figures())


@pytest.mark.fault_matrix
def test_task_killed_on_every_attempt_fails_clearly_then_a_rerun_lands_once(
    scenario, spark, s3, dynamodb, seed, figures, capsys
):
    rng = random.Random(seed)
    # given one range whose worker dies on every attempt Spark makes
    config, path = scenario()
    doomed = rng.randrange(PARTITIONS)
    arm(config, [doomed], LOCAL_TASK_ATTEMPTS)
    # when the job runs, then it fails naming the Spark job, with no traceback, and commits nothing
    code, err = run_cli(path, capsys)
    assert code == 1, err
    assert f"the Spark job of connector '{config.name}' failed: Job aborted" in err, err
    assert f"failed {LOCAL_TASK_ATTEMPTS} times" in err and "Traceback" not in err, err
    failed = check_exactly_once(s3, dynamodb, config, PARTITIONS, PARTITIONS * PER_PARTITION, complete=False)
    assert failed.committed == {}
    assert Leases(dynamodb, TABLE, now_ms).describe(config.name)["expires_at_ms"] == 0
    # when it runs again, then every record lands once
    rerun, err = run_cli(path, capsys)
    assert rerun == 0, err
    landed = check_exactly_once(s3, dynamodb, config, PARTITIONS, PARTITIONS * PER_PARTITION)
    figures.update(
        faults={"python worker killed": LOCAL_TASK_ATTEMPTS}, runs=2, exit_codes=[code, rerun], **landed.figures()
    )


@pytest.mark.fault_matrix
def test_task_hung_on_a_stalled_broker_holds_the_lease_only_until_the_kafka_timeout(
    stack, scenario, spark, s3, dynamodb, figures, capsys
):
    # given a lease of 1.5 s renewed by the run, and a broker that stalls for good while the tasks read
    kafka_timeout_ms, lease_ms = 6000, 1500
    with ProxiedBroker() as broker:
        config, path = scenario(
            broker.bootstrap_servers, **{"sink.kafka.timeout.ms": kafka_timeout_ms, "sink.lease.duration.ms": lease_ms}
        )
        broker.proxy.inject("stall", after_bytes=PER_PARTITION * 20)
        outcome = {}
        first = threading.Thread(target=lambda: outcome.update(zip(("code", "err"), run_cli(path, capsys))))
        first.start()
        leases = Leases(dynamodb, TABLE, now_ms)
        while not broker.proxy.history and first.is_alive():
            time.sleep(0.1)
        stalled_at = broker.proxy.history[0][0]
        # when a second run tries while the task hangs, two lease periods into the stall
        time.sleep(2 * lease_ms / 1000)
        held = leases.describe(config.name)
        assert held["expires_at_ms"] > now_ms(), "the hung run's lease was not renewed"
        second = cli.main(["run", "--config", path])
        first.join(timeout=60)
        ended = time.monotonic()
        broker.proxy.clear()
        # then the second run is refused (exit 3), the hung run fails on the Kafka timeout and frees the lease
        assert second == 3
        assert outcome["code"] == 1 and "Kafka delivered nothing from" in outcome["err"], outcome
        assert ended - stalled_at < kafka_timeout_ms / 1000 + 12, ended - stalled_at
        assert leases.describe(config.name)["expires_at_ms"] == 0
        # and a third run completes at once, without waiting for a lease to lapse
        third, err = run_cli(path, capsys)
        assert third == 0, err
        landed = check_exactly_once(s3, dynamodb, config, PARTITIONS, PARTITIONS * PER_PARTITION)
    figures.update(
        faults={"kafka stall": 1},
        runs=3,
        exit_codes=[outcome["code"], second, third],
        lease_held_s=round(ended - stalled_at, 1),
        **landed.figures(),
    )
