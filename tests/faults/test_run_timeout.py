"""sink.run.timeout.ms: a run past its deadline stops its ranges at a chunk boundary and commits only what its
closed files hold; a task that does not stop (stuck outside Kafka) has its Spark job cancelled by the driver;
either way the lease is released at once and a rerun lands every record once."""

from __future__ import annotations

import time

import pytest

from sink_engine import cli
from sink_engine.driver.job import now_ms
from sink_engine.failpoints import arm_task_failpoint
from sink_engine.model import PartitionRange
from sink_engine.offsets import Leases
from sink_engine.target.s3_objects.output import run_range
from sink_engine.task import deadline, run
from sink_engine.task.settings import TaskSettings
from tests.conftest import BUCKET, TABLE
from tests.faults.landed_once import check_exactly_once, produce_numbered, write_config

PARTITIONS, PER_PARTITION = 2, 12_000  # two chunks or more per range (the reader's chunks hold up to 10,000)


@pytest.fixture
def topic_config(stack, new_topic, connector, tmp_path):
    config = connector(**{"flush.size": 1000, "tasks.max": PARTITIONS})
    new_topic(config, PARTITIONS)
    produce_numbered(stack.bootstrap_servers, config["topics"][0], 0, PARTITIONS * PER_PARTITION, PARTITIONS)
    return config, write_config(config, tmp_path / "connector.json")


def test_a_range_past_the_deadline_keeps_only_its_closed_files(topic_config, s3, monkeypatch):
    config, _ = topic_config
    # given a clock that passes the run's deadline after the range's first chunk
    ticks = iter([0.0] + [100.0] * 10)
    monkeypatch.setattr(
        run,
        "within_deadline",
        lambda chunks, planned, stop=None: deadline.within_deadline(chunks, planned, lambda: next(ticks), stop),
    )
    planned = PartitionRange(config["topics"][0], 0, 0, PER_PARTITION, None, deadline_ms=50_000)
    # when the range runs
    result = run_range(TaskSettings.from_config(config), planned, client=s3)
    # then it stopped at the second chunk, naming the timeout, with its commit point at the end of its last
    # closed file: its files follow each other from 0, and no object lies past the commit point
    assert "sink.run.timeout.ms" in result.error and result.error_class == "RunTimeoutError"
    assert 0 < result.next_offset < PER_PARTITION and result.next_offset % 1000 == 0, result.next_offset
    starts = [f.start_offset for f in result.files]
    assert starts == list(range(0, result.next_offset, 1000))
    listed = s3.list_objects_v2(Bucket=BUCKET, Prefix=f"topics/{planned.topic}/")["Contents"]
    assert sorted(o["Key"] for o in listed) == sorted(f.key for f in result.files)


def test_a_run_past_its_timeout_commits_nothing_past_its_uploads_and_frees_the_lease(
    topic_config, spark, s3, dynamodb, capsys
):
    config, path = topic_config
    # given a run whose timeout has passed before its tasks handle a chunk
    timed = path.replace(".json", "-timed.json")
    write_config(config, _path(timed))
    _set(timed, "sink.run.timeout.ms", 1)
    # when it runs, then it exits 1 naming the timeout, having committed nothing past its uploads
    code = cli.main(["run", "--config", timed])
    err = capsys.readouterr().err
    assert code == 1 and "sink.run.timeout.ms" in err, err
    check_exactly_once(s3, dynamodb, config, PARTITIONS, PARTITIONS * PER_PARTITION, complete=False)
    # and its lease is released: a rerun starts at once and lands every record once
    assert Leases(dynamodb, TABLE, now_ms).describe(config.name)["expires_at_ms"] == 0
    assert cli.main(["run", "--config", path]) == 0, capsys.readouterr().err
    check_exactly_once(s3, dynamodb, config, PARTITIONS, PARTITIONS * PER_PARTITION)


def test_a_task_stuck_past_the_timeout_has_its_spark_job_cancelled(topic_config, spark, s3, dynamodb, capsys):
    config, path = topic_config
    # given a task that hangs after its first chunk (outside Kafka: it never reaches the deadline check) and a
    # run timeout of 4 s (grace 1 s)
    armed = arm_task_failpoint("task_stall", f"{config['topics'][0]}-0")
    timed = path.replace(".json", "-timed.json")
    write_config(config, _path(timed))
    _set(timed, "sink.run.timeout.ms", 4000)
    # when the run goes
    started = time.monotonic()
    code = cli.main(["run", "--config", timed])
    took = time.monotonic() - started
    err = capsys.readouterr().err
    # then the driver cancelled the Spark job soon after the deadline, committed nothing and freed the lease
    assert not armed.exists()
    assert code == 1 and "its Spark job was cancelled, nothing was committed" in err, err
    assert took < 30, took
    failed = check_exactly_once(s3, dynamodb, config, PARTITIONS, PARTITIONS * PER_PARTITION, complete=False)
    assert failed.committed == {}
    assert Leases(dynamodb, TABLE, now_ms).describe(config.name)["expires_at_ms"] == 0
    # and a rerun lands every record once
    assert cli.main(["run", "--config", path]) == 0, capsys.readouterr().err
    check_exactly_once(s3, dynamodb, config, PARTITIONS, PARTITIONS * PER_PARTITION)


def _path(name: str):
    from pathlib import Path

    return Path(name)


def _set(path: str, key: str, value) -> None:
    from pathlib import Path

    import orjson

    document = orjson.loads(Path(path).read_bytes())
    document["config"][key] = value
    Path(path).write_bytes(orjson.dumps(document))
