"""A topic that changes under the connector, on Apache Kafka (the local stack's broker): records deleted from its
start between runs (retention, or DeleteRecords: either moves the log start offset past the committed offset), a
partition added between runs, and a compacted topic (offset gaps, tombstones)."""

from __future__ import annotations

import json
import logging
import time

import orjson
import pytest
from confluent_kafka import Consumer, Producer
from confluent_kafka import TopicPartition as KafkaTP
from confluent_kafka.admin import AdminClient, NewPartitions, NewTopic

from devtools.producer import produce
from sink_engine import cli, events
from sink_engine.driver.job import run_job
from sink_engine.target.iceberg_tables.snapshots import newest_of_connector, snapshot_offsets
from tests.conftest import BUCKET
from tests.faults.landed_once import write_config
from tests.functional.test_verify import verify
from tests.iceberg.tables import create_namespace, rows, table_of
from tests.runs import committed, committed_offsets
from tests.s3_reader import landed_records, list_keys, read_json_lines


def numbered(numbers: range) -> list[bytes]:
    return [orjson.dumps({"n": n}) for n in numbers]


def iceberg_table(tmp_path, unique: str) -> dict:
    """The keys of an IcebergFormat connector writing `lake_<unique>.events` (a SQL catalog in a SQLite file)."""
    return {
        "format.class": "IcebergFormat",
        "iceberg.tables": f"lake_{unique}.events",
        "iceberg.catalog.type": "sql",
        "iceberg.catalog.uri": f"sqlite:///{tmp_path / 'catalog.db'}",
        "iceberg.catalog.warehouse": f"s3://{BUCKET}/warehouse-{unique}",
        "iceberg.tables.auto-create-enabled": "true",
    }


def landed_numbers(s3, config, target: str) -> list[int]:
    """The `n` of every record that landed (objects, or the table's rows), sorted (duplicates show)."""
    if target == "iceberg_tables":
        return sorted(row["n"] for row in rows(config))
    return sorted(r["n"] for r in landed_records(s3, config["topics"][0]))


@pytest.mark.parametrize("target", ["s3_objects", "iceberg_tables"])
def test_records_deleted_below_the_committed_offset_are_counted_as_expired(
    target, stack, new_topic, spark, s3, dynamodb, connector, tmp_path, unique, capsys, caplog
):
    # given a partition whose first 10 records landed and were committed, and 20 more
    config = connector(**{"flush.size": 5, **(iceberg_table(tmp_path, unique) if target == "iceberg_tables" else {})})
    topic = new_topic(config, 1, values=numbered(range(10)))
    if target == "iceberg_tables":
        create_namespace(config)
    run_job(config, spark, dynamodb)
    produce(stack.bootstrap_servers, topic, numbered(range(10, 30)), 1)
    # when the partition's start moves to offset 20 (as retention deletes whole segments) before the next run
    admin = AdminClient({"bootstrap.servers": stack.bootstrap_servers})
    futures = admin.delete_records([KafkaTP(topic, 0, 20)])
    [future.result(30) for future in futures.values()]
    with caplog.at_level(logging.WARNING, logger="sink_engine"):
        run_job(config, spark, dynamodb)
    # then the run starts at the log start: records 20.. land, 10..19 are gone from Kafka, logged and counted as expired
    assert landed_numbers(s3, config, target) == [*range(10), *range(20, 30)]
    expired = [json.loads(r.getMessage()) for r in caplog.records if events.RECORDS_EXPIRED in r.getMessage()]
    assert [(e["topic"], e["partition"], e["expected"], e["log_start"], e["records"]) for e in expired] == [
        (topic, 0, 10, 20, 10)
    ]
    offsets = committed(dynamodb, config)[0]
    assert offsets.next_offset == 30 and offsets.skipped == {"expired": 10}
    # and status shows the count; S3 objects: sink-engine verify accounts for every committed offset; a table: its
    # snapshot records the count with the offsets (what a run moves DynamoDB forward to after a crash)
    capsys.readouterr()
    assert cli.main(["status", "--config", str(write_config(config, tmp_path / "connector.json"))]) == 0
    assert "skipped: expired=10" in capsys.readouterr().out
    if target == "s3_objects":
        assert verify(config, tmp_path, capsys)[0] == 0
    else:
        entries = snapshot_offsets(newest_of_connector(table_of(config), config.name))
        assert [(e["start"], e["next"], e["skipped"]) for e in entries] == [(10, 30, {"expired": 10})]


def test_a_partition_added_between_runs_is_read_from_its_start(stack, new_topic, spark, s3, dynamodb, connector):
    # given a topic of one partition, read and committed
    config = connector(**{"flush.size": 2})
    topic = new_topic(config, 1, values=numbered(range(4)))
    run_job(config, spark, dynamodb)
    # when a second partition is added and records go to both
    admin = AdminClient({"bootstrap.servers": stack.bootstrap_servers})
    [future.result(30) for future in admin.create_partitions([NewPartitions(topic, 2)]).values()]
    producer = Producer({"bootstrap.servers": stack.bootstrap_servers})
    for n in range(4, 8):
        producer.produce(topic, orjson.dumps({"n": n}), partition=n % 2)
    assert producer.flush(30) == 0
    run_job(config, spark, dynamodb)
    # then the next run reads the new partition from its first record (no offset committed: auto.offset.reset
    # earliest), every record once
    assert sorted(r["n"] for r in landed_records(s3, topic)) == list(range(8))
    assert committed_offsets(dynamodb, config) == {0: 6, 1: 2}


def compacted_topic(bootstrap: str, topic: str) -> None:
    """A compacted topic whose segments roll at once, so the cleaner compacts every segment but the active one."""
    settings = {
        "cleanup.policy": "compact",
        "segment.ms": "100",
        "min.cleanable.dirty.ratio": "0.01",
        "min.compaction.lag.ms": "0",
        "delete.retention.ms": "86400000",
    }
    admin = AdminClient({"bootstrap.servers": bootstrap})
    [future.result(30) for future in admin.create_topics([NewTopic(topic, 1, 1, config=settings)]).values()]


def offsets_held(bootstrap: str, topic: str) -> list[int]:
    """The offsets the partition holds records at, read to its end."""
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": "compaction-check",
            "enable.partition.eof": True,
            "enable.auto.commit": False,
        }
    )
    consumer.assign([KafkaTP(topic, 0, 0)])
    found = []
    try:
        while (message := consumer.poll(5)) is not None and message.error() is None:
            found.append(message.offset())
    finally:
        consumer.close()
    return found


def test_a_compacted_topic_lands_what_compaction_kept(stack, spark, s3, dynamodb, connector, tmp_path, capsys):
    # given a compacted topic: keys a..d written three times each, a tombstone for b, then e, compacted by the broker
    config = connector(**{"flush.size": 2, "behavior.on.null.values": "ignore"})
    topic = config["topics"][0]
    compacted_topic(stack.bootstrap_servers, topic)
    producer = Producer({"bootstrap.servers": stack.bootstrap_servers, "linger.ms": 0})
    for round_ in range(3):
        for key in "abcd":
            producer.produce(topic, orjson.dumps({"key": key, "round": round_}), key=key.encode())
            producer.flush(10)
            time.sleep(0.15)  # each record in a segment of its own once the next arrives
    producer.produce(topic, None, key=b"b")
    producer.flush(10)
    time.sleep(0.15)
    producer.produce(topic, orjson.dumps({"key": "e", "round": 0}), key=b"e")  # rolls the tombstone's segment
    producer.flush(10)
    deadline = time.monotonic() + 60
    while len(offsets_held(stack.bootstrap_servers, topic)) > 5 and time.monotonic() < deadline:
        time.sleep(0.5)
    held = offsets_held(stack.bootstrap_servers, topic)
    assert held == [8, 10, 11, 12, 13], held  # a, c, d of round 2, b's tombstone (b@9 before it is gone), e
    # when a run reads it
    run_job(config, spark, dynamodb)
    # then what compaction kept lands (the tombstone ignored), each object named by its first record's offset
    assert sorted((r["key"], r["round"]) for r in landed_records(s3, topic)) == [("a", 2), ("c", 2), ("d", 2), ("e", 0)]
    keys = list_keys(s3, BUCKET, f"topics/{topic}/")
    assert [key.rsplit("+", 1)[1] for key in keys] == ["0000000008.json", "0000000011.json"]
    assert [[r["key"] for r in read_json_lines(s3, BUCKET, key)] for key in keys] == [["a", "c"], ["d", "e"]]
    # and the commit counts the compacted offsets (0-7, 9) and the tombstone (12) as settled without an object
    offsets = committed(dynamodb, config)[0]
    assert (offsets.next_offset, offsets.skipped) == (14, {"ignored": 10})
    assert verify(config, tmp_path, capsys)[0] == 0
