"""Single message transforms end to end (real broker, moto's server, local Spark), read back by independent readers:
a chain with a predicate, routers in every output format and in an Iceberg table, two topics routed to one name,
reruns after a crash, the commit point past dropped records, and a transform's failure as a dead letter."""

from __future__ import annotations

import io

import fastavro
import orjson
import pyarrow.parquet as pq
import pytest
from confluent_kafka import Producer

from devtools.producer import sample_event
from sink_engine.driver.job import run_job
from tests.conftest import BUCKET
from tests.dlq_corpus import read_dlq_s3
from tests.runs import committed, committed_offsets, rewritten_after_crash
from tests.s3_reader import list_keys, read_json_lines

KAFKA = "org.apache.kafka.connect.transforms"


def produce_one_partition(bootstrap: str, topic: str, records: list[tuple]) -> None:
    """(value, headers, timestamp or None) records into partition 0; the last goes alone after a flush so that
    the end offset is exact."""
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5})
    for i, (value, headers, timestamp) in enumerate(records):
        if i == len(records) - 1:
            producer.flush(30)
        producer.produce(
            topic,
            value=value,
            key=b"k",
            partition=0,
            headers=headers,
            **({} if timestamp is None else {"timestamp": timestamp}),
        )
    assert producer.flush(30) == 0


def router(regex: str, replacement: str, alias: str = "route") -> dict:
    return {
        f"transforms.{alias}.type": f"{KAFKA}.RegexRouter",
        f"transforms.{alias}.regex": regex,
        f"transforms.{alias}.replacement": replacement,
    }


def test_a_chain_with_a_predicate_writes_the_routed_topic_and_commits_past_dropped_records(
    stack, new_topic, spark, s3, dynamodb, connector
):
    # given records 0-8, where those with i % 3 == 2 lack the header "keep"; Filter unless HasHeaderKey keep,
    # then a RegexRouter to routed-<topic>; flush.size 3
    config = connector(
        **{
            "flush.size": 3,
            "transforms": "drop,route",
            "predicates": "kept",
            "transforms.drop.type": f"{KAFKA}.Filter",
            "transforms.drop.predicate": "kept",
            "transforms.drop.negate": "true",
            "predicates.kept.type": f"{KAFKA}.predicates.HasHeaderKey",
            "predicates.kept.name": "keep",
            **router("(.*)", "routed-$1"),
        }
    )
    topic = new_topic(config, 1)
    produce_one_partition(
        stack.bootstrap_servers,
        topic,
        [(orjson.dumps({"n": i}), None if i % 3 == 2 else [("keep", b"1")], None) for i in range(9)],
    )
    # when the sink runs
    summary = run_job(config, spark, dynamodb)
    # then the kept records are under the routed topic, in files named by the source topic, and nothing else
    prefix = f"topics/routed-{topic}/partition=0/{topic}+0+"
    assert list_keys(s3, BUCKET, f"topics/routed-{topic}/") + list_keys(s3, BUCKET, f"topics/{topic}/") == [
        f"{prefix}0000000000.json",
        f"{prefix}0000000004.json",
    ]
    assert read_json_lines(s3, BUCKET, f"{prefix}0000000000.json") == [{"n": 0}, {"n": 1}, {"n": 3}]
    assert read_json_lines(s3, BUCKET, f"{prefix}0000000004.json") == [{"n": 4}, {"n": 6}, {"n": 7}]
    # and the commit is past the last record, which was dropped; the summary counts the drops
    assert committed_offsets(dynamodb, config) == {0: 9}
    assert summary.records_dropped == 3


FORMATS = {
    "json": ({"format.class": "JsonFormat"}, ".json"),
    "parquet": ({"format.class": "ParquetFormat"}, ".snappy.parquet"),
    "avro": ({"format.class": "AvroFormat"}, ".avro"),
}


def read_back(body: bytes, extension: str) -> list:
    if extension.endswith(".parquet"):
        return pq.read_table(io.BytesIO(body), use_threads=False).to_pylist()
    if extension == ".avro":
        return list(fastavro.reader(io.BytesIO(body)))
    return [orjson.loads(line) for line in body.splitlines()]


@pytest.mark.parametrize("name", FORMATS)
def test_a_regex_router_writes_the_routed_prefix_and_a_rerun_after_a_crash_writes_the_same_bytes(
    new_topic, spark, s3, dynamodb, connector, name
):
    overrides, extension = FORMATS[name]
    config = connector(
        **{
            "flush.size": 10,
            "sink.lease.duration.ms": 1500,
            "transforms": "route",
            **router("events-(.*)", "copy_$1"),
            **overrides,
        }
    )
    topic = config["topics"][0]
    routed = "copy_" + topic.removeprefix("events-")
    new_topic(topic, 2, events=40)
    # given a run that dies after its uploads, before any commit
    # (when its objects are gone and the job runs again once the dead run's lease has lapsed)
    crashed, after = rewritten_after_crash(config, spark, dynamodb, s3, f"topics/{routed}/")
    assert crashed and not list_keys(s3, BUCKET, f"topics/{topic}/")
    # then every object was written again byte for byte, under the routed topic, named by the source topic
    assert after == crashed
    assert sorted(after) == sorted(
        f"topics/{routed}/partition={p}/{topic}+{p}+{s:010d}{extension}" for p in (0, 1) for s in (0, 10)
    )
    # and each file holds its records in offset order, read back by an independent reader
    for key, body in after.items():
        partition, start = int(key.split("+")[1]), int(key.split("+")[2][:10])
        assert read_back(body, extension) == [
            sample_event(2 * offset + partition) for offset in range(start, start + 10)
        ], key
    assert committed_offsets(dynamodb, config) == {0: 20, 1: 20}


def test_two_topics_routed_to_one_name_are_kept_apart(stack, new_topic, spark, s3, dynamodb, connector, unique):
    # given topics a-<u> and b-<u> with the same partition and offsets, both routed to merged-<u>
    topics = [f"a-{unique}", f"b-{unique}"]
    config = connector(
        **{
            "topics": ",".join(topics),
            "flush.size": 2,
            "transforms": "route",
            **router(f"[ab]-{unique}", f"merged-{unique}"),
        }
    )
    for _first, topic in enumerate(topics):
        new_topic(topic, 1)
        produce_one_partition(
            stack.bootstrap_servers, topic, [(orjson.dumps({"topic": topic, "n": i}), None, None) for i in range(4)]
        )
    # when the sink runs
    run_job(config, spark, dynamodb)
    # then each source topic's files have keys of their own under the routed topic, and every record lands once
    keys = list_keys(s3, BUCKET, f"topics/merged-{unique}/")
    assert keys == sorted(
        f"topics/merged-{unique}/partition=0/{topic}+0+{start:010d}.json" for topic in topics for start in (0, 2)
    )
    landed = [record for key in keys for record in read_json_lines(s3, BUCKET, key)]
    assert sorted(landed, key=lambda r: (r["topic"], r["n"])) == [
        {"topic": topic, "n": i} for topic in topics for i in range(4)
    ]


def test_a_record_a_transform_fails_is_a_dead_letter_naming_alias_and_offset(
    stack, new_topic, spark, s3, dynamodb, connector
):
    # given a TimestampRouter and, at offset 2, a record without a timestamp (Kafka's -1), errors.tolerance=all
    config = connector(
        **{
            "flush.size": 2,
            "errors.tolerance": "all",
            "errors.deadletterqueue.s3.prefix": "smt-dlq",
            "transforms": "daily",
            "transforms.daily.type": f"{KAFKA}.TimestampRouter",
            "transforms.daily.topic.format": "${topic}_${timestamp}",
        }
    )
    topic = new_topic(config, 1)
    day = 1_700_006_400_000  # 2023-11-15T00:00:00Z
    produce_one_partition(
        stack.bootstrap_servers, topic, [(orjson.dumps({"n": i}), None, -1 if i == 2 else day + i) for i in range(5)]
    )
    # when the sink runs
    run_job(config, spark, dynamodb)
    # then the other records are in the day's routed topic, and the run went past the bad one
    prefix = f"topics/{topic}_20231115/partition=0/{topic}+0+"
    assert list_keys(s3, BUCKET, f"topics/{topic}_20231115/") == [
        f"{prefix}0000000000.json",
        f"{prefix}0000000003.json",
    ]
    assert read_json_lines(s3, BUCKET, f"{prefix}0000000003.json") == [{"n": 3}, {"n": 4}]
    assert committed_offsets(dynamodb, config) == {0: 5}
    # and the bad record is a dead letter of stage TRANSFORMATION naming the alias, its offset and the class
    [letter] = read_dlq_s3(s3, BUCKET, f"smt-dlq/{topic}/")
    assert (letter["offset"], letter["value"], letter["error"]["class"], letter["error"]["stage"]) == (
        2,
        b'{"n":2}',
        "TransformationError",
        "TRANSFORMATION",
    )
    assert letter["error"]["message"].startswith("transform 'daily' failed: the record has no timestamp")
    assert letter["error"]["executing_class"] == "sink_engine.transform.routers.TimestampRouter"
    assert committed(dynamodb, config)[0].dead_letters == {"TransformationError": 1}
