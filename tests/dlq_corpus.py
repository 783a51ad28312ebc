"""A corpus of bad and good Kafka records for the dead-letter tests, and independent readers of the two
dead-letter destinations (a plain consumer for the topic, boto3 and the json module for S3)."""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass

from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, AlterConfigOpType, ConfigEntry, ConfigResource, ResourceType

from tests.s3_reader import list_keys, read_json_lines

BIG = 3 * 1024 * 1024
MAX_MESSAGE_BYTES = 16 * 1024 * 1024  # the corpus's topics take its records of several MB (Kafka's default is 1 MB)


@dataclass(frozen=True)
class Sample:
    key: bytes | None
    value: bytes | None
    headers: tuple = ()
    error_class: str | None = None  # None: a good record that must land in S3


def corpus(partition: int) -> list[Sample]:
    """Good records between bad ones of every kind the JSON pipeline can meet, in offset order."""

    def good(n: int, key: bytes | None = None, pad: int = 0) -> Sample:
        doc = {"n": n, "p": partition, **({"pad": "x" * pad} if pad else {})}
        return Sample(key if key is not None else f"k{n}".encode(), json.dumps(doc).encode())

    return [
        good(0),
        Sample(b"bad-json", b"{not json", error_class="ConversionError"),
        good(1),
        Sample(b"tomb", None, error_class="NullValueError"),
        good(2, key=b"\xff\xfe-not-utf8"),
        Sample(b"\xc3\x28-bad-key", b"[1, 2", (("trace", b"abc"), ("empty", None)), "ConversionError"),
        good(3, pad=2 * 1024 * 1024),
        Sample(b"huge-bad", b"{" + b"x" * BIG, error_class="ConversionError"),
        good(4),
        Sample(None, b"\xff\xfe\xfd", error_class="ConversionError"),
        good(5),
    ]


def allow_large_records(bootstrap: str, topic: str) -> None:
    """Set the topic's `max.message.bytes` to MAX_MESSAGE_BYTES, as a topic of records of several MB has it."""
    entry = ConfigEntry("max.message.bytes", str(MAX_MESSAGE_BYTES), incremental_operation=AlterConfigOpType.SET)
    resource = ConfigResource(ResourceType.TOPIC, topic, incremental_configs=[entry])
    admin = AdminClient({"bootstrap.servers": bootstrap})  # held until the answer: a dropped client ends its requests
    admin.incremental_alter_configs([resource])[resource].result(30)


def produce_samples(bootstrap: str, topic: str, samples_by_partition: dict[int, list[Sample]]) -> None:
    """Produce the samples to their partitions, in order, on a topic that takes large records; every one delivered."""
    allow_large_records(bootstrap, topic)
    failed: list[str] = []
    producer = Producer(
        {"bootstrap.servers": bootstrap, "message.max.bytes": MAX_MESSAGE_BYTES, "enable.idempotence": True}
    )
    for partition, samples in samples_by_partition.items():
        for s in samples:
            producer.produce(
                topic,
                value=s.value,
                key=s.key,
                partition=partition,
                headers=list(s.headers) or None,
                on_delivery=lambda error, _: failed.append(str(error)) if error else None,
            )
        producer.flush(60)
    assert producer.flush(60) == 0 and not failed, failed


def read_topic(bootstrap: str, topic: str) -> list[dict]:
    """Every record of a topic: key, value, headers, partition, offset."""
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": "dlq-test-reader",
            "enable.auto.commit": False,
            "enable.partition.eof": True,
            "fetch.max.bytes": 52428800,
            "max.partition.fetch.bytes": 20971520,
        }
    )
    try:
        partitions = consumer.list_topics(topic, timeout=10).topics[topic].partitions
        consumer.assign([TopicPartition(topic, p, 0) for p in partitions])
        records, eof = [], set()
        while len(eof) < len(partitions):
            message = consumer.poll(5)
            assert message is not None, "the dead-letter topic did not deliver to its end"
            if message.error():
                eof.add(message.partition())
                continue
            records.append(
                {
                    "key": message.key(),
                    "value": message.value(),
                    "headers": message.headers() or [],
                    "partition": message.partition(),
                    "offset": message.offset(),
                }
            )
        return records
    finally:
        consumer.close()


def read_dlq_s3(s3, bucket: str, prefix: str) -> list[dict]:
    """Every JSON line under the prefix, with key and value decoded from base64, in key order."""
    lines = [line for key in list_keys(s3, bucket, prefix) for line in read_json_lines(s3, bucket, key)]
    for line in lines:
        for field in ("key", "value"):
            line[field] = None if line[field] is None else base64.b64decode(line[field])
    return lines


def raw_config(config) -> dict:
    """A parsed config back as the flat connector map of the keys that were set, and the keys passed through as
    given (transforms.*, predicates.*): for config files."""
    values = {k: config[k] for k in config.explicit if k != "name"}
    return {**{k: ",".join(v) if isinstance(v, tuple) else v for k, v in values.items()}, **config.passthrough}
