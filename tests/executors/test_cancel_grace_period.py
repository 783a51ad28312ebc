"""CancelJobRun with a grace period as EMR Serverless delivers it to a job's JVM shutdown hooks ("EMR Serverless job
run cancellation with grace period", EMR Serverless User Guide): the job started by spark-submit through the EMR entry
point (infra/job/entrypoint.py), and SIGTERM sent to the driver's JVM (SparkSubmit) only, never to the Python driver
or the process group. The engine's hook in that JVM (sink_engine/run/stopping.py) stops the run: the whole
process tree ends within `sink.lease.duration.ms`, the lease is released (a bounded run right after takes it),
what was closed is committed and every record is in S3 once. A bounded run's task that does not stop (stuck outside
Kafka) has the run's Spark job cancelled half a lease after the stop: nothing is committed."""

from __future__ import annotations

import contextlib
import signal
import threading
import time
import uuid

import psutil
import pytest

from devtools.producer import SteadyProducer, create_topic
from sink_engine.driver.job import now_ms, run_job
from sink_engine.failpoints import arm_task_failpoint, release_task_failpoint, task_failpoint_fired
from sink_engine.offsets import Leases
from sink_engine.run.stopping import JvmShutdownStop
from tests.conftest import TABLE
from tests.continuous.runs import caught_up, landed_once, wait_for
from tests.faults.landed_once import produce_numbered, write_config
from tests.runs import committed_offsets
from tests.spark_cluster import spark_submit, spark_submit_jvm

MASTER = "local[2]"  # the hook is the driver's: tasks in its process keep the test fast
PARTITIONS = 2
LEASE_MS = 16_000  # a stuck task: half of it, then the cancel and the Python worker killed (about 2.5 s)
SCHEDULE_MS = 2000
PER_PARTITION = 20_000  # a bounded run's ranges: several chunks each (of at most 10,000 records), held after the first
STUCK_PER_PARTITION = 6_000


@pytest.fixture
def topic_connector(stack, connector, tmp_path):
    """A fresh topic of PARTITIONS partitions and its connector (`keys` added); returns (config, config file)."""

    def build(**keys):
        config = connector(**{"flush.size": 500, "tasks.max": PARTITIONS, "sink.lease.duration.ms": LEASE_MS, **keys})
        create_topic(stack.bootstrap_servers, config["topics"][0], PARTITIONS)
        return config, write_config(config, tmp_path / f"connector-{uuid.uuid4().hex[:6]}.json")

    return build


def test_sigterm_to_the_jvm_of_a_continuous_run_commits_releases_the_lease_and_ends_the_tree(
    stack, topic_connector, spark, s3, dynamodb
):
    # given `run --continuous` under spark-submit through the EMR entry point, which has committed what was produced
    config, path = topic_connector(**{"rotate.schedule.interval.ms": SCHEDULE_MS})
    job = spark_submit(MASTER, ["-v", "run", "--continuous", "--config", path])
    try:
        with SteadyProducer(stack.bootstrap_servers, config["topics"][0], list(range(PARTITIONS)), 400) as producer:
            time.sleep(4)
        _wait_while_running(job, caught_up(dynamodb, config, producer.produced), "catching up")
        # when its driver JVM alone gets SIGTERM
        ended_s, out = _sigterm_the_jvm(job)
    finally:
        _kill_tree(job)
    # then every process of the job ended within the lease, by the engine's hook, the lease released
    assert ended_s < LEASE_MS / 1000, f"the job's processes took {ended_s:.1f}s to end"
    assert '"by": "jvm-shutdown"' in out and "continuous run stopped" in out, out[-4000:]
    _assert_lease_released(dynamodb, config)
    # and a bounded run right after takes the lease at once; every record is in S3 once, committed
    _bounded_run_takes_the_lease(config, spark, dynamodb)
    landed_once(s3, dynamodb, config, producer.produced)


def test_sigterm_to_the_jvm_of_a_bounded_run_midway_commits_what_closed_and_releases_the_lease(
    stack, topic_connector, spark, s3, dynamodb
):
    # given a bounded run under spark-submit through the EMR entry point, each task held after its first chunk
    config, path = topic_connector(**{"flush.size": 1000})
    topic = config["topics"][0]
    produce_numbered(stack.bootstrap_servers, topic, 0, PARTITIONS * PER_PARTITION, PARTITIONS)
    scopes = [f"{topic}-{p}" for p in range(PARTITIONS)]
    for scope in scopes:
        arm_task_failpoint("task_pause", scope)
    job = spark_submit(MASTER, ["-v", "run", "--config", path])
    try:
        _wait_while_running(job, lambda: all(task_failpoint_fired("task_pause", s) for s in scopes), "the pauses")
        paused = time.monotonic()
        # when its driver JVM alone gets SIGTERM, and the tasks go on once the run has asked them to stop and their
        # first look at the lease item is due (a quarter of the lease into the task)
        jvm = spark_submit_jvm(job)
        tree = [jvm, *jvm.children(recursive=True)]
        jvm.send_signal(signal.SIGTERM)
        signalled = time.monotonic()
        wait_for(lambda: Leases(dynamodb, TABLE, now_ms).describe(config.name)["stop_requested"], 10, "the stop")
        time.sleep(max(0.0, paused + LEASE_MS / 4000 - time.monotonic()))
        for scope in scopes:
            release_task_failpoint("task_pause", scope)
        ended_s, out = _ended(job, tree, signalled)
    finally:
        _kill_tree(job)
    # then every process of the job ended within the lease; each range committed what its closed files hold
    assert ended_s < LEASE_MS / 1000, f"the job's processes took {ended_s:.1f}s to end"
    assert '"by": "jvm-shutdown"' in out and "the run was asked to stop" in out, out[-4000:]
    stopped_at = committed_offsets(dynamodb, config)
    assert sorted(stopped_at) == list(range(PARTITIONS)), stopped_at
    assert all(0 < n < PER_PARTITION and n % 1000 == 0 for n in stopped_at.values()), stopped_at
    _assert_lease_released(dynamodb, config)
    # and the next bounded run takes the lease at once and goes on from there: every record in S3 once
    _bounded_run_takes_the_lease(config, spark, dynamodb)
    landed_once(s3, dynamodb, config, _numbered(PER_PARTITION))


def test_sigterm_to_the_jvm_of_a_bounded_run_with_a_stuck_task_cancels_it_and_releases_the_lease(
    stack, topic_connector, spark, s3, dynamodb
):
    # given a bounded run under spark-submit through the EMR entry point whose task for partition 0 is stuck
    config, path = topic_connector(**{"flush.size": 1000})
    topic = config["topics"][0]
    produce_numbered(stack.bootstrap_servers, topic, 0, PARTITIONS * STUCK_PER_PARTITION, PARTITIONS)
    scope = f"{topic}-0"
    arm_task_failpoint("task_stall", scope)
    job = spark_submit(MASTER, ["-v", "run", "--config", path])
    try:
        _wait_while_running(job, lambda: task_failpoint_fired("task_stall", scope), "the stall")
        # when its driver JVM alone gets SIGTERM
        ended_s, out = _sigterm_the_jvm(job)
    finally:
        _kill_tree(job)
    # then the task that does not stop has the Spark job cancelled half a lease later: nothing committed, every
    # process ended within the lease, the lease released
    assert ended_s < LEASE_MS / 1000, f"the job's processes took {ended_s:.1f}s to end"
    assert '"by": "jvm-shutdown"' in out and "its Spark job was cancelled, nothing was committed" in out, out[-4000:]
    assert committed_offsets(dynamodb, config) == {}
    _assert_lease_released(dynamodb, config)
    # and the next bounded run takes the lease at once and writes every record once (the same keys again)
    _bounded_run_takes_the_lease(config, spark, dynamodb)
    landed_once(s3, dynamodb, config, _numbered(STUCK_PER_PARTITION))


def _numbered(per_partition: int) -> dict[int, list[int]]:
    """The ids produce_numbered gave each partition."""
    return {p: list(range(p, PARTITIONS * per_partition, PARTITIONS)) for p in range(PARTITIONS)}


def _wait_while_running(job, condition, what: str) -> None:
    wait_for(lambda: job.poll() is not None or condition(), 120, what)
    assert job.poll() is None, job.communicate()[0][-4000:]


def _sigterm_the_jvm(job) -> tuple[float, str]:
    """SIGTERM to the SparkSubmit JVM only; seconds until it and every process under it ended, and its output."""
    jvm = spark_submit_jvm(job)
    tree = [jvm, *jvm.children(recursive=True)]
    jvm.send_signal(signal.SIGTERM)
    return _ended(job, tree, time.monotonic())


def _ended(job, tree: list[psutil.Process], signalled: float) -> tuple[float, str]:
    """Seconds from `signalled` until every process of `tree` (the JVM and the processes under it, the Python driver
    running the EMR entry point among them) ended, and the job's output (the Python driver's too: PythonRunner
    relays it)."""
    assert any("entrypoint.py" in " ".join(_cmdline(p)) for p in tree), [_cmdline(p) for p in tree]
    _, alive = psutil.wait_procs(tree, timeout=LEASE_MS / 1000 + 30)
    ended_s = time.monotonic() - signalled
    assert not alive, [_cmdline(p) for p in alive]
    out, _ = job.communicate(timeout=30)
    return ended_s, out


def _cmdline(process: psutil.Process) -> list[str]:
    try:
        return process.cmdline()
    except psutil.Error:
        return []


def _kill_tree(job) -> None:
    """SIGKILL whatever of the job still runs (after a failure)."""
    try:
        processes = [psutil.Process(job.pid), *psutil.Process(job.pid).children(recursive=True)]
    except psutil.NoSuchProcess:
        processes = []
    for process in processes:
        with contextlib.suppress(psutil.NoSuchProcess):
            process.kill()
    if job.poll() is None:
        job.kill()
        job.communicate()


def _assert_lease_released(dynamodb, config) -> None:
    lease = Leases(dynamodb, TABLE, now_ms).describe(config.name)
    assert lease is not None and lease["expires_at_ms"] <= now_ms(), lease


def _bounded_run_takes_the_lease(config, spark, dynamodb) -> None:
    """A bounded run in this process (the tests' Spark session: no JVM to start); LeaseHeldError, what the CLI
    exits 3 on, while the lease is still held."""
    run_job(config, spark, dynamodb)


def test_the_hook_is_in_hadoops_shutdown_manager_only_while_the_run_lasts(spark):
    # given a run's stop event and the driver JVM's Hadoop ShutdownHookManager
    stop = threading.Event()
    manager = spark.sparkContext._jvm.org.apache.hadoop.util.ShutdownHookManager.get()
    # when a run is inside JvmShutdownStop, its hook is registered; once it ended, it is gone and `stop` untouched
    with JvmShutdownStop(spark, "conn", stop, 5) as stopping:
        assert manager.hasShutdownHook(stopping.hook)
    assert not manager.hasShutdownHook(stopping.hook)
    assert not stop.is_set()
