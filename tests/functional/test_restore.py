"""`sink-engine restore` end to end (real broker, moto's server, local Spark): a backup produced back into a new
topic, every record equal and in order per partition; reruns, ranges, sidecars, partition-count mismatch.
The topics here are CreateTime: LogAppendTime rows are unit-tested (tests/unit/test_restore_objects.py)."""

from __future__ import annotations

import base64
import os
import random
import signal
from types import SimpleNamespace

import pytest

from devtools.producer import create_topic
from sink_engine.driver.job import now_ms, run_job
from sink_engine.failpoints import SimulatedCrash
from sink_engine.offsets import Leases
from sink_engine.restore import engine
from sink_engine.restore.lease import RestoreLease
from sink_engine.restore.target import TARGET_CONFIG
from tests.builders import with_overrides
from tests.conftest import BUCKET, TABLE
from tests.functional.test_envelope_format import BASE_MS, ENCODINGS, produce_records, record
from tests.restore_runs import (
    at_once,
    counts,
    killed_mid_restore,
    restore,
    restore_argv,
    restore_process,
    restored,
    topic_records,
)
from tests.s3_reader import list_keys

PARTITIONS = 3
PER_PARTITION = 20


def mixed(i: int, noise: random.Random) -> tuple:
    """test_envelope_format's record mix (its header bytes repeat every 256 records), stamped BASE_MS + i."""
    key, value, headers, _ = record(i % 256, noise)
    return key, value, headers, BASE_MS + i


def backed_up(
    stack, spark, dynamodb, connector, encoding: str, seed: int = 5, per_partition: int = PER_PARTITION, **overrides
):
    """A topic of PARTITIONS partitions with the issue's record mix, backed up with EnvelopeFormat in `encoding`:
    (config, the topic's records by partition)."""
    config = connector(
        **{
            "flush.size": 5,
            "format.class": "EnvelopeFormat",
            "format.envelope.encoding": encoding,
            "sink.lease.duration.ms": 3000,
            **ENCODINGS[encoding][0],
            **overrides,
        }
    )
    topic = config["topics"][0]
    create_topic(stack.bootstrap_servers, topic, PARTITIONS)
    noise = random.Random(seed)
    produce_records(
        stack.bootstrap_servers, topic, [mixed(i, noise) for i in range(PARTITIONS * per_partition)], PARTITIONS
    )
    run_job(config, spark, dynamodb)
    return config, topic_records(stack.bootstrap_servers, topic)


def assert_restored_whole(stack, source: dict, target: str, topic: str) -> None:
    """Every record of `source` in `target`, same partition, same order, equal key, value, headers, timestamp, and
    its origin header naming its coordinates."""
    found = restored(stack.bootstrap_servers, target)
    assert sorted(found) == sorted(source)
    for partition, records in source.items():
        assert [(r["key"], r["value"], r["headers"], r["timestamp"]) for r in found[partition]] == [
            (r["key"], r["value"], r["headers"], r["timestamp"]) for r in records
        ]
        assert [r["origin"] for r in found[partition]] == [(topic, partition, r["offset"]) for r in records]


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_round_trip_then_a_rerun_produces_nothing(
    stack, spark, dynamodb, connector, unique, tmp_path, capsys, encoding
):
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


def test_an_offset_range_and_a_time_range(stack, spark, dynamodb, connector, unique, tmp_path, capsys):
    # given an envelope backup; record i is at offset i // 3 of partition i % 3, with timestamp BASE_MS + i
    config, source = backed_up(stack, spark, dynamodb, connector, "parquet")
    topic = config["topics"][0]
    # when offsets 4..12 of partitions 0 and 2 are restored (to a cluster named on the command line)
    code, out = restore(
        capsys,
        restore_argv(
            config,
            tmp_path,
            f"offsets-{unique}",
            "--create-target",
            "--partitions",
            "0,2",
            "--from-offset",
            "4",
            "--to-offset",
            "12",
            "--target-bootstrap-servers",
            stack.bootstrap_servers,
        ),
    )
    # then those records are there, in order, and nothing else
    assert code == 0, out
    assert counts(out) == {0: (9, 0, 9), 2: (9, 0, 9)}
    found = restored(stack.bootstrap_servers, f"offsets-{unique}")
    assert {p: [r["origin"][2] for r in rs] for p, rs in found.items()} == {
        0: list(range(4, 13)),
        1: [],
        2: list(range(4, 13)),
    }
    # when the records stamped from BASE_MS + 10 to BASE_MS + 30 (both included) are restored, as ISO and epoch ms
    base = source[0][0]["timestamp"][1]
    code, out = restore(
        capsys,
        restore_argv(
            config,
            tmp_path,
            f"times-{unique}",
            "--create-target",
            "--from-time",
            "2024-01-15T00:00:00.010Z",
            "--to-time",
            str(base + 30),
        ),
    )
    # then exactly the records of that time range are there, in order per partition
    assert code == 0, out
    found = restored(stack.bootstrap_servers, f"times-{unique}")
    assert {p: [r["timestamp"][1] - base for r in rs] for p, rs in found.items()} == {
        p: [i for i in range(10, 31) if i % PARTITIONS == p] for p in range(PARTITIONS)
    }
    assert all(
        r["origin"] == (topic, p, (r["timestamp"][1] - base) // PARTITIONS) for p, rs in found.items() for r in rs
    )


def test_a_target_with_another_partition_count_goes_through_the_partitioner(
    stack, new_topic, spark, dynamodb, connector, unique, tmp_path, capsys
):
    # given a backup of 3 partitions and an existing target of 2
    config, source = backed_up(stack, spark, dynamodb, connector, "avro")
    topic, target = config["topics"][0], f"fewer-{unique}"
    new_topic(target, 2, settings=TARGET_CONFIG)
    # when it is restored, then the output says the records go through the partitioner
    code, out = restore(capsys, restore_argv(config, tmp_path, target))
    assert code == 0, out
    assert f"through the partitioner: {topic} has 3 partitions, {target} 2" in out
    # and every record is there once, a key's records in their order
    found = [r for rs in restored(stack.bootstrap_servers, target).values() for r in rs]
    assert sorted(r["origin"] for r in found) == sorted((topic, p, r["offset"]) for p, rs in source.items() for r in rs)
    for partition in range(2):
        by_key: dict = {}
        for r in restored(stack.bootstrap_servers, target)[partition]:
            by_key.setdefault((r["origin"][1], r["key"]), []).append(r["origin"][2])
        assert all(offsets == sorted(offsets) for offsets in by_key.values())
    # and a rerun scans every target partition and produces nothing
    code, out = restore(capsys, restore_argv(config, tmp_path, target))
    assert code == 0 and sum(c[2] for c in counts(out).values()) == 0, out


def test_refusals_name_the_option(stack, new_topic, spark, dynamodb, connector, unique, tmp_path, capsys):
    config, _ = backed_up(stack, spark, dynamodb, connector, "json")
    # a missing target without --create-target
    code, out = restore(capsys, restore_argv(config, tmp_path, f"missing-{unique}"))
    assert code == 2 and f"option --target-topic: missing-{unique} does not exist" in out
    # a time that has no zone
    code, out = restore(
        capsys, restore_argv(config, tmp_path, f"missing-{unique}", "--from-time", "2024-01-15T00:00:00")
    )
    assert code == 2 and "option --from-time: '2024-01-15T00:00:00' has no zone" in out
    # a target whose restore lease another holder keeps for longer than a restore waits (twice the lease: 2 s with
    # the shortest lease)
    new_topic(f"held-{unique}", PARTITIONS)
    Leases(dynamodb, TABLE, now_ms).acquire(f"restore#held-{unique}", "someone-else", 60_000)
    shortest = with_overrides(config, {"sink.lease.duration.ms": 1000})
    code, out = restore(capsys, restore_argv(shortest, tmp_path, f"held-{unique}"))
    assert code == 3 and "waiting: restore someone-else holds the lease" in out and "leased by run someone-else" in out
    assert topic_records(stack.bootstrap_servers, f"held-{unique}") == {p: [] for p in range(PARTITIONS)}


def test_a_restore_waits_again_for_a_new_holder_of_the_lease(stack, dynamodb, unique, monkeypatch):
    """Waiting for a killed restore's lease, a restore may see another take the lease as it lapses (and be killed
    too): the wait starts again for the new holder instead of giving up two lease durations after it began."""
    from sink_engine.restore import lease as restore_lease

    clock = {"now": 0}
    lease = RestoreLease(dynamodb, TABLE, f"target-{unique}", 1000, clock=lambda: clock["now"])
    others = Leases(dynamodb, TABLE, lambda: clock["now"])
    others.acquire(lease.name, "killed-first", 1000)  # lapses at 1000

    def sleep(_seconds):  # a poll: half a second passes; as the first lapses, a second restore takes it (to 2800)
        clock["now"] += 500
        if clock["now"] == 1000:
            others.acquire(lease.name, "killed-second", 1800)

    monkeypatch.setattr(restore_lease, "time", SimpleNamespace(sleep=sleep))  # this module's sleep only
    told = []
    token = lease.acquire("waiting", lambda owner, until: told.append((owner, until, clock["now"])))
    assert told == [("killed-first", 1000, 0), ("killed-second", 2800, 1000)]
    assert (token.owner, clock["now"]) == ("waiting", 3000)


def sidecar_records(count: int, json_values: bool) -> list:
    """(key, value, headers, timestamp) with keys and headers on every record (the sidecars require them): empty
    keys and values, bytes that are not UTF-8 (but no newline, the objects' separator), repeated header names,
    binary and null header values."""
    noise = random.Random(11)
    rows = []
    for i in range(count):
        key = b"" if i % 7 == 0 else f"k{i % 4}".encode()
        if json_values:
            value = b'{"n":%d,"s":"v%d"}' % (i, i)
        else:
            value = b"" if i % 5 == 0 else bytes(noise.choice([b for b in range(256) if b != 10]) for _ in range(12))
        headers = [("trace", bytes([0xFF, i])), ("trace", f"t{i}".encode()), ("none", None)][: 1 + i % 3]
        rows.append((key, value, headers, 1_705_276_800_000 + i))
    return rows


SIDECAR_CASES = {
    "bytearray": {
        "format.class": "ByteArrayFormat",
        "value.converter": "ByteArrayConverter",
        "key.converter": "ByteArrayConverter",
        "keys.format.class": "JsonFormat",
    },
    "json": {
        "format.class": "JsonFormat",
        "value.converter": "JsonConverter",
        "value.converter.schemas.enable": "false",
        "key.converter": "StringConverter",
        "keys.format.class": "ParquetFormat",
        "headers.format.class": "JsonFormat",
    },
}
# the objects of a topic a RegexRouter writes under another folder: the restore lists that folder
SIDECAR_CASES["bytearray-routed"] = {
    **SIDECAR_CASES["bytearray"],
    "transforms": "route",
    "transforms.route.type": "org.apache.kafka.connect.transforms.RegexRouter",
    "transforms.route.regex": "(.*)",
    "transforms.route.replacement": "backup-$1",
}


@pytest.mark.parametrize("case", SIDECAR_CASES)
def test_values_with_key_and_header_sidecars(
    stack, new_topic, spark, dynamodb, s3, connector, unique, tmp_path, capsys, case
):
    # given values in ByteArray or JSON objects, their keys and headers in sidecars, 2 partitions
    config = connector(
        **{
            "flush.size": 4,
            "store.kafka.keys": "true",
            "store.kafka.headers": "true",
            "sink.lease.duration.ms": 3000,
            **SIDECAR_CASES[case],
        }
    )
    topic = new_topic(config, 2)
    produce_records(stack.bootstrap_servers, topic, sidecar_records(16, case == "json"), 2)
    run_job(config, spark, dynamodb)
    assert case != "bytearray-routed" or list_keys(s3, BUCKET, f"topics/backup-{topic}/")
    source = topic_records(stack.bootstrap_servers, topic)
    # when the backup is restored, the header `trace` named binary
    code, out = restore(
        capsys, restore_argv(config, tmp_path, f"sidecars-{unique}", "--create-target", "--binary-headers", "trace")
    )
    # then each record's key, value and headers are back, in order per partition (these objects keep no
    # timestamps: the restore's produce time stamps them)
    assert code == 0, out
    assert counts(out) == {0: (8, 0, 8), 1: (8, 0, 8)}
    assert f"warning: the backup of {topic} holds no timestamps" in out and "keys (" not in out  # said once
    assert out.count("warning:") == 1
    found = restored(stack.bootstrap_servers, f"sidecars-{unique}")
    for partition, records in source.items():
        assert [(r["key"], r["value"], r["headers"]) for r in found[partition]] == [
            (r["key"], r["value"], r["headers"]) for r in records
        ]
        assert [r["origin"] for r in found[partition]] == [(topic, partition, r["offset"]) for r in records]
    # and restored without naming it binary, its values that were not UTF-8 come back as the base64 text stored
    code, out = restore(capsys, restore_argv(config, tmp_path, f"text-{unique}", "--create-target"))
    assert code == 0, out
    first = restored(stack.bootstrap_servers, f"text-{unique}")[0][0]
    assert first["headers"] == [("trace", base64.b64encode(source[0][0]["headers"][0][1]))]
    # and a time range is refused: these objects hold no timestamps
    code, out = restore(capsys, restore_argv(config, tmp_path, f"sidecars-{unique}", "--to-time", "1"))
    assert code == 2 and "option --to-time: " in out and "EnvelopeFormat" in out


def assert_each_record_once_in_order(stack, source: dict, target: str, topic: str) -> None:
    found = restored(stack.bootstrap_servers, target)
    for partition, records in source.items():
        assert [r["origin"] for r in found[partition]] == [(topic, partition, r["offset"]) for r in records]
        assert [(r["key"], r["value"], r["headers"]) for r in found[partition]] == [
            (r["key"], r["value"], r["headers"]) for r in records
        ]


def test_a_killed_restore_rerun_and_two_restores_at_once_write_each_record_once(
    stack, new_topic, spark, dynamodb, connector, unique, tmp_path
):
    # given an envelope backup, and a restore SIGKILLed twice mid-restore (by a failpoint, at seeded random records)
    config, source = backed_up(stack, spark, dynamodb, connector, "parquet", per_partition=400)
    topic, target = config["topics"][0], f"killed-{unique}"
    new_topic(target, PARTITIONS, settings=TARGET_CONFIG)
    argv = restore_argv(config, tmp_path, target)
    killed_mid_restore(argv, stack, PARTITIONS * 400, seed=23, kills=2)
    assert sum(len(r) for r in topic_records(stack.bootstrap_servers, target).values()) < PARTITIONS * 400
    # when two restores then start at once
    results = at_once(argv, stack)
    # then both succeed, one after the other (the second waited for the lease), and each record is in the
    # target once, in order per partition
    assert [code for code, _ in results] == [0, 0], results
    assert any("waiting: restore" in out for _, out in results), results
    produced = [sum(c[2] for c in counts(out).values()) for _, out in results]
    assert 0 in produced, results
    assert_each_record_once_in_order(stack, source, target, topic)


def test_a_restore_paused_past_its_lease_while_another_takes_over_sends_nothing_more(
    stack, new_topic, spark, dynamodb, connector, unique, tmp_path
):
    # given an envelope backup of 1,200 records, and a restore that stops itself (SIGSTOP, its lease renewals too)
    # at its 300th record, once what it sent was acknowledged
    config, source = backed_up(stack, spark, dynamodb, connector, "parquet", per_partition=400)
    topic, target = config["topics"][0], f"paused-{unique}"
    new_topic(target, PARTITIONS, settings=TARGET_CONFIG)
    argv = restore_argv(config, tmp_path, target)
    paused = restore_process(argv, stack, failpoint="restore_sigstop@300")
    try:
        _, status = os.waitpid(paused.pid, os.WUNTRACED)
        assert os.WIFSTOPPED(status), status
        # when another restore waits out its lease (3 s), takes over and writes the rest, and the first then resumes
        other = restore_process(argv, stack)
        assert other.wait(timeout=180) == 0, other.stdout.read().decode()
        other.stdout.close()
    finally:
        paused.send_signal(signal.SIGCONT)
    out = paused.communicate(timeout=120)[0].decode()
    # then the first hands the producer nothing more: it finds its lease taken and stops, and every record is in the
    # target once, in order per partition
    assert paused.returncode != 0 and "was lost" in out, out
    assert_each_record_once_in_order(stack, source, target, topic)


def test_a_rerun_after_a_late_crash_scans_only_what_came_after_the_last_confirm(
    stack, new_topic, spark, dynamodb, connector, unique, tmp_path, capsys, monkeypatch
):
    # given an envelope backup of 1,200 records, and a restore that confirms every 100 records and dies 30
    # acknowledged records after its 5th confirm (the checkpoint of 500 records)
    config, source = backed_up(stack, spark, dynamodb, connector, "parquet", per_partition=400)
    topic, target = config["topics"][0], f"late-{unique}"
    new_topic(target, PARTITIONS, settings=TARGET_CONFIG)
    argv = restore_argv(config, tmp_path, target)
    with monkeypatch.context() as patched:
        patched.setattr(engine, "CONFIRM_EVERY", 100)
        crash_after(patched, checkpoints=5, records=30)
        code, out = restore(capsys, argv)
    assert code == 70, out
    assert sum(len(r) for r in topic_records(stack.bootstrap_servers, target).values()) == 530
    # when it is rerun
    code, out = restore(capsys, argv)
    # then the rerun takes the checkpoint's 500 as present without reading them, scans only the 30 after it, and
    # produces the rest: every record once, in order
    assert code == 0, out
    assert "530 already present (30 target records scanned), 670 produced" in out, out
    assert_each_record_once_in_order(stack, source, target, topic)
    # and a third restore finds everything present from the checkpoint: it scans nothing and reads no object
    code, out = restore(capsys, argv)
    assert "1200 records read from 0 objects" in out, out
    assert "1200 already present (0 target records scanned), 0 produced" in out, out


def crash_after(patched, checkpoints: int, records: int) -> None:
    """The restore dies (SimulatedCrash) once `records` more records are acknowledged after its `checkpoints`-th
    checkpoint past the first."""
    recorded, sent = [], []
    record, send = RestoreLease.record, engine._Sender.send

    def counted_record(self, token, source_topic, checkpoint, first=False):
        if not first:
            recorded.append(checkpoint)
        return record(self, token, source_topic, checkpoint, first)

    def counted_send(self, stored, partition):
        after = len(recorded) >= checkpoints
        send(self, stored, partition)
        if after:
            sent.append(stored.offset)
            if len(sent) == records:
                assert self._producer.flush(30) == 0
                raise SimulatedCrash(f"{records} records after checkpoint {checkpoints}")

    patched.setattr(RestoreLease, "record", counted_record)
    patched.setattr(engine._Sender, "send", counted_send)
