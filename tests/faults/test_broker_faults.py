"""Broker faults on a three-broker KRaft cluster (devtools/kafka_cluster.py: three controllers in one quorum, three
brokers; topics of three replicas with min.insync.replicas 2, as MSK recommends).

Each fault strikes mid-run at a fixed point: the task reading the seeded partition holds after its first chunk
(failpoint `task_pause`) while the fault is applied, then reads on. Records come in small batches and the consumer
fetches in small steps (as from a partition far larger than its prefetch), so what it reads after the fault comes
from wherever the partition's leader is then. A run ends 0, or 1 naming what failed and a rerun completes; every
record lands once, the committed offsets at the last `flush.size` boundary and `status` right. A broker killed just
before a run plans, and one killed under a continuous run while records are produced, are survived too."""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import pytest

from devtools.kafka_cluster import BROKERS, KafkaCluster
from devtools.producer import SteadyProducer
from sink_engine import cli
from sink_engine.failpoints import arm_task_failpoint, release_task_failpoint, task_failpoint_fired
from tests.continuous.runs import kill_group, landed_once, start_continuous, stop_once_caught_up, wait_for
from tests.faults.landed_once import check_exactly_once, check_status, produce_numbered, write_config
from tests.runs import committed_offsets

pytestmark = pytest.mark.fault_matrix

PARTITIONS = 3
RECORDS = 6_000
PAD = 100
# record batches of at most 1 KiB (about 8 records; Kafka hands out whole batches, however large), a fetch of one of
# them per partition: about 250 fetches per partition, of which a task's first chunk (what arrives within one
# consume call's 0.1 s) takes a fraction
SMALL_BATCHES = {"batch.size": 1024}
SMALL_FETCHES = {
    "consumer.override.max.partition.fetch.bytes": 1024,
    "consumer.override.queued.max.messages.kbytes": 16,
}
RUN_TIMEOUT_S = 180


@pytest.fixture(scope="module")
def cluster(stack):
    with KafkaCluster() as running:
        yield running


@pytest.fixture
def healed(cluster):
    """The cluster, whose nodes the test stopped are started again after it."""
    yield cluster
    cluster.heal()


@pytest.fixture
def scenario(healed, connector, tmp_path):
    """A fresh replicated topic with RECORDS numbered records; returns (config, config file)."""
    cluster = healed

    def build(**overrides):
        config = connector(
            **{
                "bootstrap.servers": cluster.bootstrap_servers,
                "flush.size": 250,
                "tasks.max": PARTITIONS,
                **SMALL_FETCHES,
                **overrides,
            }
        )
        cluster.create_topic(config["topics"][0], PARTITIONS)
        produce_numbered(cluster.bootstrap_servers, config["topics"][0], 0, RECORDS, PARTITIONS, PAD, SMALL_BATCHES)
        return config, write_config(config, tmp_path / "connector.json")

    return build


def run_with_fault(path: str, scope: str, fault: Callable[[], object], after: Callable[[], object] = lambda: None):
    """`sink-engine run` in a thread; once the task reading `scope` (`<topic>-<p>`) holds at its first chunk,
    `fault()` runs here, the task goes on, and `after()` runs here while the run goes on. Returns the exit code."""
    arm_task_failpoint("task_pause", scope)
    pool = ThreadPoolExecutor(1)
    running = pool.submit(cli.main, ["run", "--config", path])
    try:
        try:
            deadline = time.monotonic() + RUN_TIMEOUT_S
            while task_failpoint_fired("task_pause", scope) is None:
                assert not running.done() and time.monotonic() < deadline, "the run never read the partition"
                time.sleep(0.05)
            fault()
        finally:
            release_task_failpoint("task_pause", scope)
        after()
        return running.result(timeout=RUN_TIMEOUT_S)
    finally:
        pool.shutdown(wait=False)  # a run that outlived its timeout fails the test instead of hanging it


def until_done(path: str, first: int, capsys) -> list[int]:
    """The exit codes: `first`, then reruns while a run fails cleanly (exit 1, saying what Kafka did)."""
    codes = [first]
    while codes[-1] != 0 and len(codes) < 3:
        err = capsys.readouterr().err
        assert codes[-1] == 1 and "Kafka" in err, err[-3000:]
        codes.append(cli.main(["run", "--config", path]))
    assert codes[-1] == 0, (codes, capsys.readouterr().err[-3000:])
    return codes


def test_a_broker_killed_mid_run_its_leaders_move_and_every_record_lands_once(
    cluster, scenario, s3, dynamodb, spark, seed, figures, capsys
):
    rng = random.Random(seed)
    # given a replicated topic and a run reading it, held mid-range on a seeded partition
    config, path = scenario()
    topic, partition = config["topics"][0], rng.randrange(PARTITIONS)
    victim = cluster.broker(cluster.leaders(topic)[partition])
    # when the partition's leader is SIGKILLed there (no controlled shutdown: its leaders move once it is fenced)
    started = time.monotonic()
    code = run_with_fault(path, f"{topic}-{partition}", victim.kill)
    seconds = time.monotonic() - started
    # then the run, or a rerun, completes: every record once, the commits at the last boundary, status right
    codes = until_done(path, code, capsys)
    assert not victim.running and cluster.leaders(topic)[partition] not in (victim.node_id, -1), "the leader moved"
    landed = check_exactly_once(s3, dynamodb, config, PARTITIONS, RECORDS)
    check_status(dynamodb, config, PARTITIONS, RECORDS)
    figures.update(
        faults={"broker SIGKILL": 1}, runs=len(codes), exit_codes=codes, run_s=round(seconds, 1), **landed.figures()
    )


def test_a_broker_restarted_mid_run_every_record_lands_once(
    cluster, scenario, s3, dynamodb, spark, seed, figures, capsys
):
    rng = random.Random(seed)
    # given a run held mid-range on a seeded partition
    config, path = scenario()
    topic, partition = config["topics"][0], rng.randrange(PARTITIONS)
    victim = cluster.broker(cluster.leaders(topic)[partition])
    down_s = rng.uniform(0.5, 3)

    def restart():
        time.sleep(down_s)
        victim.launch()
        victim.wait_ready()

    # when the partition's leader stops (SIGTERM: a controlled shutdown, as MSK's rolling patches do), the task
    # reads on, and the broker starts again a seeded 0.5 to 3 s later
    code = run_with_fault(path, f"{topic}-{partition}", victim.shutdown, after=restart)
    # then the run, or a rerun, completes: every record once, status right; the broker is back in the cluster
    codes = until_done(path, code, capsys)
    assert victim.running
    landed = check_exactly_once(s3, dynamodb, config, PARTITIONS, RECORDS)
    check_status(dynamodb, config, PARTITIONS, RECORDS)
    figures.update(
        faults={"broker restart": 1}, runs=len(codes), exit_codes=codes, down_s=round(down_s, 1), **landed.figures()
    )


def test_the_active_controller_restarted_mid_run_every_record_lands_once(
    cluster, scenario, s3, dynamodb, spark, seed, figures, capsys
):
    rng = random.Random(seed)
    # given a run held mid-range on a seeded partition
    config, path = scenario()
    topic, partition = config["topics"][0], rng.randrange(PARTITIONS)
    controller = cluster.active_controller()
    how = rng.choice(["kill", "shutdown"])
    successor = []

    def restart():
        successor.append(cluster.active_controller().node_id)  # elected by the other two voters
        controller.launch()
        controller.wait_ready()

    # when the quorum's active controller is SIGKILLed or stopped (seeded), another is elected, and it starts again
    code = run_with_fault(path, f"{topic}-{partition}", getattr(controller, how), after=restart)
    # then the run, or a rerun, completes: every record once, status right
    codes = until_done(path, code, capsys)
    assert successor[0] != controller.node_id and controller.running
    landed = check_exactly_once(s3, dynamodb, config, PARTITIONS, RECORDS)
    check_status(dynamodb, config, PARTITIONS, RECORDS)
    figures.update(faults={f"controller {how}": 1}, runs=len(codes), exit_codes=codes, **landed.figures())


def test_a_broker_killed_as_a_run_starts_its_offsets_are_asked_of_the_new_leader(
    cluster, scenario, s3, dynamodb, spark, seed, figures, capsys
):
    rng = random.Random(seed)
    # given a seeded broker SIGKILLed just before a run: the metadata names it as a leader until it is fenced
    config, path = scenario()
    victim = cluster.broker(rng.choice(BROKERS))
    victim.kill()
    # when the run plans (ListOffsets of each partition, from its leader) and reads, then it completes: every
    # record once (before, the query waited for the dead leader until sink.kafka.timeout.ms and failed the run)
    code = cli.main(["run", "--config", path])
    assert code == 0, capsys.readouterr().err[-3000:]
    landed = check_exactly_once(s3, dynamodb, config, PARTITIONS, RECORDS)
    check_status(dynamodb, config, PARTITIONS, RECORDS)
    figures.update(faults={"broker SIGKILL": 1}, runs=1, exit_codes=[code], **landed.figures())


def test_a_broker_killed_under_a_continuous_run_every_record_lands_once(
    healed, connector, tmp_path, s3, dynamodb, seed, figures
):
    rng = random.Random(seed)
    lease_ms = 8000
    # given a continuous run over a replicated topic and records produced steadily to it
    config = connector(
        **{
            "bootstrap.servers": healed.bootstrap_servers,
            "flush.size": 500,
            "tasks.max": 2,
            "rotate.schedule.interval.ms": 2000,
            "sink.lease.duration.ms": lease_ms,
        }
    )
    topic = config["topics"][0]
    healed.create_topic(topic, PARTITIONS)
    run = start_continuous(write_config(config, tmp_path / "connector.json"))
    try:
        with SteadyProducer(healed.bootstrap_servers, topic, list(range(PARTITIONS)), per_second=300) as producer:
            wait_for(lambda: sum(committed_offsets(dynamodb, config).values()), 120, "a first commit")
            # when a seeded broker is SIGKILLed, and records are produced on through its leaders' move
            victim = healed.broker(rng.choice(BROKERS))
            victim.kill()
            time.sleep(rng.uniform(10, 14))
        # then the run catches up with everything produced and stops with exit 0
        stop_once_caught_up(run, dynamodb, config, producer.produced, lease_ms, 90)
    finally:
        if run.poll() is None:
            kill_group(run)
    # and every record is in S3 once, in order, and committed
    files = landed_once(s3, dynamodb, config, producer.produced)
    figures.update(
        faults={"broker SIGKILL": 1},
        runs=1,
        exit_codes=[0],
        records=producer.count,
        duplicates=0,
        missing=0,
        files=files,
    )
