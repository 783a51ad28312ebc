"""Transforms inside a task: between conversion and partitioning, over a real writer and uploader on in-process moto
S3. Dropped records, null values after the chain, routers' object keys, transform errors as dead letters."""

from __future__ import annotations

import json

import pytest

from sink_engine.config import parse_config
from sink_engine.dlq.letter import STAGE_TRANSFORMATION
from sink_engine.dlq.router import DeadLetterRouter
from sink_engine.dlq.settings import DeadLetterSettings
from sink_engine.errors import NullValueError, TransformationError
from sink_engine.partition import partitioner_for
from sink_engine.records import RecordChunk
from sink_engine.storage.uploader import Uploader
from sink_engine.task.run import record_steps
from sink_engine.task.settings import TaskSettings
from sink_engine.task.steps import write_chunk
from tests.builders import connector_keys, range_output
from tests.kafka_message import Message

KAFKA = "org.apache.kafka.connect.transforms"
BASE = connector_keys(
    {
        "topics": "a,b",
        "s3.region": "us-east-1",
        "flush.size": 100,
        "value.converter.schemas.enable": "false",
        "behavior.on.null.values": "ignore",
    }
)
ROUTE_TO_X = {
    "transforms": "route",
    "transforms.route.type": f"{KAFKA}.RegexRouter",
    "transforms.route.regex": "a|b",
    "transforms.route.replacement": "x",
}


def chunk_of(topic: str, messages: list[Message], first: int = 0) -> RecordChunk:
    return RecordChunk(
        topic, 0, list(range(first, first + len(messages))), [m.value() for m in messages], messages=messages
    )


def write(moto_s3, keys: dict, *chunks: RecordChunk, close: bool = True):
    """Each chunk through its own task's steps and writer; (writers, routers, dropped offsets of each)."""
    config = parse_config({"name": "c", **BASE, **keys})
    settings = TaskSettings.from_config(config)
    uploader = Uploader(moto_s3, "lake")
    outcome = []
    for chunk in chunks:
        output = range_output(config, uploader, chunk.topic, 0, chunk.offsets[0])
        writer, sidecars = output.writer, output.sidecars
        router = DeadLetterRouter(DeadLetterSettings.from_config(config), None)
        steps = record_steps(settings, chunk.topic, partitioner_for(settings.partitioning), sidecars)
        dropped = write_chunk(writer, steps, chunk, router)
        if close:
            writer.close_all(chunk.offsets[-1] + 1)
        outcome.append((writer, router, dropped))
    uploader.drain()
    uploader.close()
    return outcome


def objects(moto_s3) -> dict[str, list]:
    listed = moto_s3.list_objects_v2(Bucket="lake").get("Contents", [])
    return {
        o["Key"]: [
            json.loads(line) for line in moto_s3.get_object(Bucket="lake", Key=o["Key"])["Body"].read().splitlines()
        ]
        for o in listed
    }


def test_an_empty_chain_keeps_the_plain_steps():
    settings = TaskSettings.from_config(parse_config({"name": "c", **BASE}))
    assert record_steps(settings, "a", None).transforms is None


def test_filter_with_a_negated_header_predicate_drops_the_other_records(moto_s3):
    # given Filter applied unless a record has header "keep"
    keys = {
        "transforms": "drop",
        "transforms.drop.type": f"{KAFKA}.Filter",
        "transforms.drop.predicate": "kept",
        "transforms.drop.negate": "true",
        "predicates": "kept",
        "predicates.kept.type": f"{KAFKA}.predicates.HasHeaderKey",
        "predicates.kept.name": "keep",
    }
    messages = [
        Message(b"k", json.dumps({"n": i}).encode(), [("keep", b"1")] if i % 3 == 0 else None) for i in range(10)
    ]
    # when the chunk is written
    [(writer, _, dropped)] = write(moto_s3, keys, chunk_of("a", messages))
    # then only the kept records are written, and the others' offsets are reported dropped
    assert objects(moto_s3) == {"topics/a/partition=0/a+0+0000000000.json": [{"n": 0}, {"n": 3}, {"n": 6}, {"n": 9}]}
    assert dropped == [1, 2, 4, 5, 7, 8] and writer.next_offset == 10


def test_tombstones_reach_the_chain_and_nulls_after_it_follow_the_null_behavior(moto_s3):
    # given tombstones dropped by Filter if RecordIsTombstone, and behavior.on.null.values=fail
    keys = {
        "behavior.on.null.values": "fail",
        "transforms": "drop",
        "transforms.drop.type": f"{KAFKA}.Filter",
        "transforms.drop.predicate": "tomb",
        "predicates": "tomb",
        "predicates.tomb.type": f"{KAFKA}.predicates.RecordIsTombstone",
    }
    messages = [Message(b"k", None if i % 2 else b'{"n": %d}' % i) for i in range(4)]
    [(_, _, dropped)] = write(moto_s3, keys, chunk_of("a", messages))
    # then the tombstones never fail the run: the chain dropped them
    assert dropped == [1, 3]
    assert list(objects(moto_s3).values()) == [[{"n": 0}, {"n": 2}]]


def test_a_null_value_after_the_chain_fails_under_fail(moto_s3):
    keys = {"behavior.on.null.values": "fail", **ROUTE_TO_X}
    with pytest.raises(NullValueError, match="after transforms"):
        write(moto_s3, keys, chunk_of("a", [Message(b"k", b"{}"), Message(b"k", None)]))


def test_tombstones_after_the_chain_are_written_under_the_routed_topic(moto_s3):
    keys = {"behavior.on.null.values": "write", **ROUTE_TO_X}
    write(moto_s3, keys, chunk_of("a", [Message(b"k", b'{"n": 0}'), Message(b"k", None), Message(b"k", b'{"n": 2}')]))
    assert objects(moto_s3) == {
        "topics/x/partition=0/a+0+0000000000.json": [{"n": 0}, {"n": 2}],
        "topics/x/tombstone/a+0+0000000001.json": [None],
    }


def test_two_topics_routed_to_one_name_never_share_a_key(moto_s3):
    # given topics a and b, both routed to x, with the same partitions and offsets
    messages = [Message(b"k", b'{"n": %d}' % i) for i in range(3)]
    b_messages = [Message(b"k", b'{"n": %d}' % (10 + i)) for i in range(3)]
    # when both are written
    write(moto_s3, ROUTE_TO_X, chunk_of("a", messages), chunk_of("b", b_messages))
    # then the files are under x, named by their source topic, and every record lands once
    assert objects(moto_s3) == {
        "topics/x/partition=0/a+0+0000000000.json": [{"n": 0}, {"n": 1}, {"n": 2}],
        "topics/x/partition=0/b+0+0000000000.json": [{"n": 10}, {"n": 11}, {"n": 12}],
    }


def test_a_time_router_splits_one_range_into_routed_topics_and_flush_size_counts_them_together(moto_s3):
    # given TimestampRouter by day and flush.size 3
    keys = {
        "flush.size": 3,
        "transforms": "day",
        "transforms.day.type": f"{KAFKA}.TimestampRouter",
        "transforms.day.timestamp.format": "yyyyMMdd",
    }
    day = 86_400_000
    messages = [Message(b"k", b'{"n": %d}' % i, timestamp=(1, day * (i % 2))) for i in range(5)]
    write(moto_s3, keys, chunk_of("a", messages))
    # then records go to a-19700101 and a-19700102, and the first three close together
    assert objects(moto_s3) == {
        "topics/a-19700101/partition=0/a+0+0000000000.json": [{"n": 0}, {"n": 2}],
        "topics/a-19700102/partition=0/a+0+0000000001.json": [{"n": 1}],
        "topics/a-19700101/partition=0/a+0+0000000004.json": [{"n": 4}],
        "topics/a-19700102/partition=0/a+0+0000000003.json": [{"n": 3}],
    }


def test_a_transform_error_is_a_dead_letter_naming_alias_and_offset(moto_s3):
    # given a TimestampRouter and a record without timestamp, errors.tolerance=all
    keys = {"errors.tolerance": "all", "transforms": "day", "transforms.day.type": f"{KAFKA}.TimestampRouter"}
    messages = [Message(b"k", b'{"n": %d}' % i, timestamp=(0, -1) if i == 1 else (1, 0)) for i in range(3)]
    [(_, router, _)] = write(moto_s3, keys, chunk_of("a", messages))
    # then the bad record is a dead letter of stage TRANSFORMATION naming the alias, and the others are written
    [letter] = router._letters
    assert (letter.offset, letter.stage, letter.error_class) == (1, STAGE_TRANSFORMATION, "TransformationError")
    assert "'day'" in letter.message and letter.executing_class == "sink_engine.transform.routers.TimestampRouter"
    assert sorted(sum(objects(moto_s3).values(), []), key=lambda v: v["n"]) == [{"n": 0}, {"n": 2}]


def test_without_tolerance_a_transform_error_stops_the_task(moto_s3):
    keys = {"transforms": "day", "transforms.day.type": f"{KAFKA}.TimestampRouter"}
    with pytest.raises(TransformationError, match=r"a-0@0: transform 'day' failed"):
        write(moto_s3, keys, chunk_of("a", [Message(b"k", b"{}", timestamp=(0, -1))]))


def test_sidecars_hold_the_records_that_survive_the_chain(moto_s3):
    # given JSON keys and headers sidecars, and a Filter of records with header "drop"
    keys = {
        "store.kafka.keys": "true",
        "store.kafka.headers": "true",
        "keys.format.class": "JsonFormat",
        "headers.format.class": "JsonFormat",
        "transforms": "drop,route",
        "transforms.drop.type": f"{KAFKA}.Filter",
        "transforms.drop.predicate": "marked",
        "predicates": "marked",
        "predicates.marked.type": f"{KAFKA}.predicates.HasHeaderKey",
        "predicates.marked.name": "drop",
        **{k: v for k, v in ROUTE_TO_X.items() if k != "transforms"},
    }
    messages = [Message(b"k%d" % i, b'{"n": %d}' % i, [("drop" if i == 1 else "h", b"v%d" % i)]) for i in range(3)]
    write(moto_s3, keys, chunk_of("a", messages))
    # then record i of each sidecar belongs to record i of the data object
    stem = "topics/x/partition=0/a+0+0000000000"
    assert objects(moto_s3) == {
        f"{stem}.json": [{"n": 0}, {"n": 2}],
        f"{stem}.keys.json": ["k0", "k2"],
        f"{stem}.headers.json": [
            {"headers": [{"key": "h", "value": "v0"}]},
            {"headers": [{"key": "h", "value": "v2"}]},
        ],
    }


def test_a_null_key_after_the_chain_is_a_bad_record_of_the_keys_sidecar(moto_s3):
    # given a keys sidecar, errors.tolerance=all, and a record without key among others
    keys = {"store.kafka.keys": "true", "keys.format.class": "JsonFormat", "errors.tolerance": "all", **ROUTE_TO_X}
    messages = [Message(None if i == 1 else b"k", b'{"n": %d}' % i) for i in range(3)]
    [(_, router, _)] = write(moto_s3, keys, chunk_of("a", messages))
    # then it is dead-lettered as without transforms, and the others are written with their keys
    assert [(letter.offset, letter.error_class) for letter in router._letters] == [(1, "ConversionError")]
    assert objects(moto_s3) == {
        "topics/x/partition=0/a+0+0000000000.json": [{"n": 0}, {"n": 2}],
        "topics/x/partition=0/a+0+0000000000.keys.json": ["k", "k"],
    }
