"""Records Kafka deletes (retention, or DeleteRecords) before a continuous run read them: while the run was stopped
(the run reads on from the log start, counts what was deleted as `skipped.expired` in its commit, logs
RECORDS_EXPIRED, and every record Kafka still held lands once), and while it is behind (a task's consumer whose
position falls below the partition's log start mid-run: continuous/expired.py settles the gap and reads on from the
log start)."""

from __future__ import annotations

import json
import logging
import time

import orjson
import pytest
from confluent_kafka import Producer
from confluent_kafka import TopicPartition as KafkaTP
from confluent_kafka.admin import AdminClient

from devtools.producer import create_topic
from sink_engine.continuous import expired
from sink_engine.model import TopicPartition
from sink_engine.source.consumer import make_consumer
from sink_engine.source.settings import SourceSettings
from tests.continuous.runs import kill_group, start_continuous, stop, wait_for
from tests.faults.landed_once import write_config
from tests.iceberg.conftest import catalog_file, iceberg_connector  # noqa: F401 (fixtures shared by import)
from tests.iceberg.tables import create_namespace, rows
from tests.runs import committed, committed_offsets
from tests.s3_reader import landed_records

LEASE_MS = 8000


@pytest.fixture(params=["s3_objects", "iceberg_tables"])
def expiring(request, stack, connector, iceberg_connector, tmp_path):  # noqa: F811 (the fixture imported above)
    """A topic of one partition and a continuous connector of each target: S3 objects closing every 5 records or
    each second, or a table committed each second; returns (config, config file, target)."""
    common = {"sink.lease.duration.ms": LEASE_MS}
    if request.param == "s3_objects":
        config = connector(**{"flush.size": 5, "rotate.schedule.interval.ms": 1000, **common})
    else:
        config = iceberg_connector(**{"iceberg.control.commit.interval-ms": 1000, **common})
    create_topic(stack.bootstrap_servers, config["topics"][0], 1)
    if request.param == "iceberg_tables":
        create_namespace(config)
    return config, write_config(config, tmp_path / "connector.json"), request.param


def landed_numbers(s3, config, target: str) -> list[int]:
    """The `n` of every record that landed (objects, or the table's rows), sorted (duplicates show)."""
    if target == "iceberg_tables":
        return sorted(row["n"] for row in rows(config))
    return sorted(r["n"] for r in landed_records(s3, config["topics"][0]))


def produce_numbered(bootstrap: str, topic: str, numbers: range) -> None:
    """`{"n": n}` for each number, each in a record batch of its own."""
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 0})
    for n in numbers:
        producer.produce(topic, orjson.dumps({"n": n}), partition=0)
        assert producer.flush(10) == 0


def delete_records_before(bootstrap: str, topic: str, offset: int) -> None:
    """Move partition 0's log start to `offset` (Kafka's DeleteRecords, as retention deletes whole segments)."""
    admin = AdminClient({"bootstrap.servers": bootstrap})
    [future.result(30) for future in admin.delete_records([KafkaTP(topic, 0, offset)]).values()]


def expired_events(stderr: str) -> list[dict]:
    """The RECORDS_EXPIRED events a run logged (its driver's and its tasks')."""
    return [json.loads(line[line.index("{") :]) for line in stderr.splitlines() if '"RECORDS_EXPIRED"' in line]


def stopped_at(run, dynamodb, config, offset: int) -> str:
    """Wait until the run committed up to `offset`, SIGTERM it, assert it exits 0; returns its standard error."""
    try:
        wait_for(lambda: committed_offsets(dynamodb, config) == {0: offset}, 90, f"a commit up to {offset}")
        code, _, err = stop(run, LEASE_MS)
        assert code == 0, err[-3000:]
        return err
    finally:
        if run.poll() is None:
            kill_group(run)


def test_records_deleted_while_the_run_was_stopped_are_counted_as_expired(stack, expiring, s3, dynamodb):
    # given a continuous run that landed records 0..9 and was stopped, and records 10..29 produced after it
    config, path, target = expiring
    topic = config["topics"][0]
    produce_numbered(stack.bootstrap_servers, topic, range(10))
    stopped_at(start_continuous(path), dynamodb, config, 10)
    produce_numbered(stack.bootstrap_servers, topic, range(10, 30))
    # when the partition's start moves to offset 20 before the next continuous run
    delete_records_before(stack.bootstrap_servers, topic, 20)
    err = stopped_at(start_continuous(path), dynamodb, config, 30)
    # then it starts at the log start: 20..29 land, 10..19 are logged and counted as expired
    assert landed_numbers(s3, config, target) == [*range(10), *range(20, 30)]
    assert [(e["expected"], e["log_start"], e["records"]) for e in expired_events(err)] == [(10, 20, 10)]
    assert committed(dynamodb, config)[0].skipped == {"expired": 10}


class HeldBack:
    """A stream that read up to `processed` (PartitionStream's `processed` and `expire`)."""

    def __init__(self, processed: int):
        self.processed, self.expired = processed, []

    def expire(self, log_start: int) -> int:
        self.expired.append((self.processed, log_start))
        gap, self.processed = log_start - self.processed, log_start
        return gap


def test_a_task_consumer_below_the_log_start_reads_on_from_it(stack, connector, caplog):
    # given records 0..29 of which Kafka deleted 0..19, and a continuous task's consumer positioned at 5 (where its
    # stream, behind, expects its next record)
    config = connector()
    topic = config["topics"][0]
    create_topic(stack.bootstrap_servers, topic, 1)
    produce_numbered(stack.bootstrap_servers, topic, range(30))
    delete_records_before(stack.bootstrap_servers, topic, 20)
    source = SourceSettings.from_config(config)
    consumer = make_consumer(source, **expired.CONSUMER_SETTINGS)
    consumer.assign([KafkaTP(topic, 0, 5)])
    streams, read = {TopicPartition(topic, 0): HeldBack(5)}, []
    try:
        # when it consumes: its fetch is out of range, which the task hands to skip_expired
        with caplog.at_level(logging.WARNING, logger="sink_engine"):
            deadline = time.monotonic() + 30
            while len(read) < 10 and time.monotonic() < deadline:
                messages = consumer.consume(100, 0.5)
                read += [orjson.loads(m.value())["n"] for m in messages if m.error() is None]
                expired.skip_expired(consumer, streams, messages, config.name, 10)
    finally:
        consumer.close()
    # then the offsets 5..19 are settled as expired (logged with the offset expected and the log start), and the
    # consumer reads on from the log start: no silent jump to the partition's end (librdkafka's default reset)
    assert streams[TopicPartition(topic, 0)].expired == [(5, 20)]
    assert read == list(range(20, 30))
    logged = [json.loads(r.getMessage()) for r in caplog.records if "RECORDS_EXPIRED" in r.getMessage()]
    assert [(e["topic"], e["partition"], e["expected"], e["log_start"], e["records"]) for e in logged] == [
        (topic, 0, 5, 20, 15)
    ]
