"""The job on a Spark whose executors are separate processes, started as EMR starts it (spark-submit): its tasks
run on the executors, never in the driver (Spark's event log says where each task ran), and an executor killed
mid-run costs a retry elsewhere, never a record lost or written twice (JsonFormat, Parquet and IcebergFormat)."""

from __future__ import annotations

import io
import json
import signal
import time

import psutil
import pyarrow.parquet as pq
import pytest

from devtools.producer import SteadyProducer, create_topic
from sink_engine.failpoints import arm_task_failpoint, task_failpoint_fired
from tests.conftest import BUCKET
from tests.continuous.runs import caught_up, in_table_once, landed_once, wait_for
from tests.faults.landed_once import produce_numbered, write_config
from tests.iceberg import tables
from tests.runs import committed_offsets
from tests.s3_reader import list_keys, read_json_lines
from tests.spark_cluster import LOCAL_CLUSTER, spark_submit, task_ends

PARTITIONS = 4
PER_PARTITION = 6_000  # several chunks of records per range: the stall comes after the first
STALL = "task_stall"
FORMATS = {
    "json": {},
    "parquet": {"format.class": "io.confluent.connect.s3.format.parquet.ParquetFormat", "parquet.codec": "snappy"},
    "iceberg": "iceberg",
}


@pytest.fixture
def numbered(stack, connector, iceberg_connector, tmp_path):
    """A fresh topic of PARTITIONS x PER_PARTITION numbered records and a connector writing it in `kind`;
    returns (config, config file)."""

    def build(kind: str = "json"):
        keys = {"flush.size": 1000, "tasks.max": PARTITIONS}
        if FORMATS[kind] == "iceberg":
            config = iceberg_connector(**keys)
            tables.create_namespace(config)
        else:
            config = connector(**keys, **FORMATS[kind])
        create_topic(stack.bootstrap_servers, config["topics"][0], PARTITIONS)
        produce_numbered(stack.bootstrap_servers, config["topics"][0], 0, PARTITIONS * PER_PARTITION, PARTITIONS)
        return config, write_config(config, tmp_path / "connector.json")

    return build


def landed_ids(s3, config) -> list[int]:
    """The `id` of every record the connector's run put in S3 objects or its Iceberg table, sorted."""
    if config["format.class"] == "iceberg":
        return tables.ids(config, "id")
    ids = []
    for key in list_keys(s3, BUCKET, f"topics/{config['topics'][0]}/"):
        if key.endswith(".parquet"):
            body = s3.get_object(Bucket=BUCKET, Key=key)["Body"].read()
            ids += pq.read_table(io.BytesIO(body)).column("id").to_pylist()
        else:
            ids += [record["id"] for record in read_json_lines(s3, BUCKET, key)]
    return sorted(ids)


def run_finished(output: str) -> dict:
    """The RUN_FINISHED event the driver logged (`-v`): in spark-submit's standard output, where its PythonRunner
    sends the Python driver's standard error too."""
    (line,) = [line for line in output.splitlines() if '"event": "RUN_FINISHED"' in line]
    return json.loads(line[line.index("{") :])


def test_a_run_started_by_spark_submit_runs_its_tasks_on_the_executors(numbered, s3, dynamodb, tmp_path):
    # given a connector of 4 partitions and a Spark of two executor processes, the job started by spark-submit
    config, path = numbered()
    job = spark_submit(LOCAL_CLUSTER, ["-v", "run", "--config", path], event_log_dir=tmp_path / "events")
    out, err = job.communicate(timeout=300)
    # then it wrote every record once and committed
    assert job.returncode == 0, err[-4000:]
    assert landed_ids(s3, config) == list(range(PARTITIONS * PER_PARTITION))
    assert committed_offsets(dynamodb, config) == {p: PER_PARTITION for p in range(PARTITIONS)}
    # and every task ran on an executor, both executors working, none in the driver (Spark's own event log)
    ends = task_ends(tmp_path / "events")
    assert ends and all(end.succeeded for end in ends), ends
    assert {end.executor for end in ends} == {"0", "1"}, ends
    # which the run itself reports: its summary line and its RUN_FINISHED event (and so its metrics)
    assert "tasks ran on executors 0, 1" in out, out
    finished = run_finished(out)
    assert finished["executors"] == 2 and finished["tasks_in_driver"] is False, finished


def test_a_run_in_local_mode_says_its_tasks_ran_in_the_driver(numbered, tmp_path):
    # given the same job forced to a local master (what every deployed run did before: tasks in the driver)
    config, path = numbered()
    job = spark_submit("local[2]", ["-v", "run", "--config", path], event_log_dir=tmp_path / "events")
    out, err = job.communicate(timeout=300)
    assert job.returncode == 0, err[-4000:]
    # then the event log and the run's own report agree that no executor worked
    assert {end.executor for end in task_ends(tmp_path / "events")} == {"driver"}
    assert "tasks ran in the driver" in out, out
    finished = run_finished(out)
    assert finished["executors"] == 1 and finished["tasks_in_driver"] is True, finished


@pytest.mark.parametrize("kind", ["json", "parquet", "iceberg"])
def test_an_executor_killed_mid_run_is_replaced_and_every_record_lands_once(kind, numbered, s3, dynamodb, tmp_path):
    # given a run on two executor processes whose task for partition 0 stalls after writing its first chunk
    config, path = numbered(kind)
    scope = f"{config['topics'][0]}-0"
    arm_task_failpoint(STALL, scope)
    job = spark_submit(LOCAL_CLUSTER, ["run", "--config", path], event_log_dir=tmp_path / "events")
    try:
        worker = _wait_for(lambda: task_failpoint_fired(STALL, scope), job)
        # when that task's executor (its JVM, with its Python workers) is SIGKILLed while the task is mid-range
        executor = _executor_of(worker)
        for process in [executor, *executor.children(recursive=True)]:
            process.send_signal(signal.SIGKILL)
        out, err = job.communicate(timeout=300)
    finally:
        if job.poll() is None:
            job.kill()
    # then Spark ran the lost task again on another executor, the run ended 0, and every record landed once
    assert job.returncode == 0, err[-4000:]
    ends = task_ends(tmp_path / "events")
    lost = [end for end in ends if end.reason == "ExecutorLostFailure"]
    assert lost, ends
    assert all(end.executor != "driver" for end in ends) and sum(end.succeeded for end in ends) == PARTITIONS
    assert committed_offsets(dynamodb, config) == {p: PER_PARTITION for p in range(PARTITIONS)}
    assert landed_ids(s3, config) == list(range(PARTITIONS * PER_PARTITION))


def _wait_for(probe, job, timeout_s: float = 180):
    """`probe()`'s first answer that is not None, polled while `job` runs."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        found = probe()
        if found is not None:
            return found
        if job.poll() is not None:
            raise AssertionError(
                f"the job ended ({job.returncode}) before the failpoint fired: {job.stdout.read()[-4000:]}"
            )
        time.sleep(0.1)
    raise AssertionError("the failpoint did not fire")


def _executor_of(python_worker: int) -> psutil.Process:
    """The executor JVM that started the Python worker `python_worker` (its nearest `java` ancestor)."""
    for ancestor in psutil.Process(python_worker).parents():
        if ancestor.name() == "java":
            return ancestor
    raise AssertionError(f"Python worker {python_worker} has no JVM among its parents")


@pytest.mark.parametrize(
    "master, status, says",
    [
        (LOCAL_CLUSTER, "ok", "ran on executors 0, 1 (master local-cluster"),
        ("local[2]", "FAILED", "ran inside the driver (master local[2]): every run would do its work in its driver"),
    ],
)
def test_the_doctor_under_spark_submit_names_the_executors_that_ran_its_stage(master, status, says, numbered):
    # given a connector, and the doctor started as EMR starts it, on two executor processes or forced local
    config, path = numbered()
    job = spark_submit(master, ["doctor", "--config", path])
    out, _ = job.communicate(timeout=300)
    # then its Spark check ran a stage and says where: on executors (ok), or in the driver (failed, naming why)
    (row,) = [line for line in out.splitlines() if line.startswith("spark executors ")]
    assert row.split()[2] == status and says in row, row
    assert job.returncode == (0 if status == "ok" else 1), out[-3000:]


@pytest.mark.parametrize("kind", ["json", "iceberg"])
def test_a_continuous_run_loses_an_executor_mid_cycle_and_every_record_lands_once(
    kind, stack, connector, iceberg_connector, s3, dynamodb, tmp_path
):
    # given a continuous run on two executor processes, records produced throughout, and the task that holds
    # partition 0 stalled in a cycle (after feeding a chunk, with files open; IcebergFormat: rows not yet in a
    # closed data file)
    keys = {"tasks.max": 2, "sink.lease.duration.ms": 8000}
    if kind == "iceberg":
        config = iceberg_connector(
            **keys, **{"iceberg.control.commit.interval-ms": 2000, "iceberg.tables.kafka-metadata-enabled": "true"}
        )
        tables.create_namespace(config)
    else:
        config = connector(**keys, **{"flush.size": 500, "rotate.schedule.interval.ms": 2000})
    topic = config["topics"][0]
    create_topic(stack.bootstrap_servers, topic, PARTITIONS)
    path = write_config(config, tmp_path / "connector.json")
    scope = f"{topic}-0"
    arm_task_failpoint(STALL, scope)
    job = spark_submit(LOCAL_CLUSTER, ["run", "--continuous", "--config", path], event_log_dir=tmp_path / "events")
    try:
        with SteadyProducer(stack.bootstrap_servers, topic, list(range(PARTITIONS)), 400) as producer:
            worker = _wait_for(lambda: task_failpoint_fired(STALL, scope), job)
            # when that task's executor is SIGKILLed mid-cycle
            executor = _executor_of(worker)
            for process in [executor, *executor.children(recursive=True)]:
                process.send_signal(signal.SIGKILL)
            time.sleep(8)
        # then Spark runs the task again on a new executor, which goes on from the last commit and catches up
        wait_for(caught_up(dynamodb, config, producer.produced), 120, "catching up after the executor was lost")
        driver = next(p for p in psutil.Process(job.pid).children(recursive=True) if "python" in p.name())
        driver.send_signal(signal.SIGTERM)
        out, _ = job.communicate(timeout=60)
    finally:
        if job.poll() is None:
            job.kill()
    assert job.returncode == 0, out[-4000:]
    assert any(end.reason == "ExecutorLostFailure" for end in task_ends(tmp_path / "events"))
    # and the driver said the progress its tasks on the executors reported (their PROGRESS# items)
    assert "progress: " in out and "of 2 tasks reporting" in out, out[-4000:]
    if kind == "iceberg":
        in_table_once(dynamodb, config, producer.produced)
    else:
        landed_once(s3, dynamodb, config, producer.produced)
