"""`sink-engine restore` end to end (real broker, moto's server, local Spark): a backup produced back into a new
topic, every record equal and in order per partition; reruns, ranges, sidecars, partition-count mismatch.
Tansu stamps CreateTime only (docs/aws-fidelity.md): LogAppendTime rows are unit-tested
(tests/unit/test_restore_objects.py)."""
from __future__ import annotations

import random

import pytest

from devtools.producer import create_topic
from sink_engine.driver.job import run_job
from tests.functional.test_envelope_format import ENCODINGS, produce_records, record
from tests.restore_runs import counts, restore, restore_argv, restored, topic_records

PARTITIONS = 3
PER_PARTITION = 20


def backed_up(stack, spark, dynamodb, connector, encoding: str, seed: int = 5, **overrides):
    """A topic of PARTITIONS partitions with the issue's record mix, backed up with EnvelopeFormat in `encoding`:
    (config, the topic's records by partition)."""
    config = connector(**{"flush.size": 5, "format.class": "EnvelopeFormat", "format.envelope.encoding": encoding,
                          "sink.lease.duration.ms": 3000, **ENCODINGS[encoding][0], **overrides})
    topic = config["topics"][0]
    create_topic(stack.bootstrap_servers, topic, PARTITIONS)
    noise = random.Random(seed)
    produce_records(stack.bootstrap_servers, topic, [record(i, noise) for i in range(PARTITIONS * PER_PARTITION)],
                    PARTITIONS)
    run_job(config, spark, dynamodb)
    return config, topic_records(stack.bootstrap_servers, topic)


def assert_restored_whole(stack, source: dict, target: str, topic: str) -> None:
    """Every record of `source` in `target`, same partition, same order, equal key, value, headers, timestamp, and
    its origin header naming its coordinates."""
    found = restored(stack.bootstrap_servers, target)
    assert sorted(found) == sorted(source)
    for partition, records in source.items():
        assert [(r["key"], r["value"], r["headers"], r["timestamp"]) for r in found[partition]] == \
            [(r["key"], r["value"], r["headers"], r["timestamp"]) for r in records]
        assert [r["origin"] for r in found[partition]] == [(topic, partition, r["offset"]) for r in records]


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_round_trip_then_a_rerun_produces_nothing(stack, spark, dynamodb, connector, unique, tmp_path, capsys,
                                                  encoding):
    # given an envelope backup of 3 partitions: null and empty keys and values, tombstones, repeated binary headers
    config, source = backed_up(stack, spark, dynamodb, connector, encoding)
    topic, target = config["topics"][0], f"restored-{unique}"
    # when it is restored into a new topic
    argv = restore_argv(config, tmp_path, target, "--create-target")
    code, out = restore(capsys, argv)
    # then every record is there, equal and in order per partition, and the counts say so
    assert code == 0, out
    assert f"created {target} with {PARTITIONS} partitions" in out and "partition for partition" in out
    assert counts(out) == {p: (PER_PARTITION, 0, PER_PARTITION) for p in range(PARTITIONS)}
    assert_restored_whole(stack, source, target, topic)
    # when the same restore runs again, then it finds every record present and produces none
    code, out = restore(capsys, argv)
    assert code == 0, out
    assert counts(out) == {p: (PER_PARTITION, PER_PARTITION, 0) for p in range(PARTITIONS)}
    assert_restored_whole(stack, source, target, topic)
