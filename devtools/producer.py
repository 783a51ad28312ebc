"""Sample data for the demo, the tests and the benchmark: click-stream events on a Kafka topic."""

from __future__ import annotations

import orjson
from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient, NewTopic

EVENT_TYPES = ("click", "view", "purchase")
REGIONS = ("us-east", "us-west", "eu-central")


def create_topic(bootstrap: str, topic: str, partitions: int) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    for future in admin.create_topics([NewTopic(topic, partitions, 1)]).values():
        future.result(timeout=30)


def sample_event(event_id: int, base_ms: int = 1_700_000_000_000, padding: int = 0) -> dict:
    event = {
        "event_id": event_id,
        "event_type": EVENT_TYPES[event_id % 3],
        "region": REGIONS[(event_id // 3) % 3],
        "timestamp": base_ms + event_id * 1000,
        "user_id": f"user-{event_id % 997:04d}",
    }
    if padding:
        event["page"] = "/products/" + "x" * padding
    return event


def produce(bootstrap: str, topic: str, values, partitions: int, keys=None, progress=None) -> int:
    """Produce values (bytes or None) round-robin over partitions; returns the count.

    Each partition's last record is sent alone after a flush, so that every broker reports an exact
    end offset through ListOffsets too."""
    producer = Producer(
        {
            "bootstrap.servers": bootstrap,
            "linger.ms": 20,
            "batch.size": 1_000_000,
            "queue.buffering.max.messages": 1_000_000,
            "compression.type": "none",
        }
    )
    values = list(values)
    last_of = {}
    for i in range(len(values)):
        last_of[i % partitions] = i
    held = set(last_of.values())
    for i, value in enumerate(values):
        if i in held:
            continue
        _send(producer, topic, value, i % partitions, None if keys is None else keys[i])
        if progress and i % 50_000 == 0:
            progress(i, len(values))
    producer.flush(60)
    for i in sorted(held):
        _send(producer, topic, values[i], i % partitions, None if keys is None else keys[i])
    if producer.flush(60):
        raise RuntimeError("the producer could not deliver every record within 60s")
    return len(values)


def produce_events(
    bootstrap: str, topic: str, count: int, partitions: int, first_id: int = 0, padding: int = 0, progress=None
) -> int:
    values = [orjson.dumps(sample_event(first_id + i, padding=padding)) for i in range(count)]
    keys = [str(first_id + i).encode() for i in range(count)]
    return produce(bootstrap, topic, values, partitions, keys=keys, progress=progress)


def _send(producer: Producer, topic: str, value, partition: int, key) -> None:
    while True:
        try:
            producer.produce(topic, value=value, key=key, partition=partition)
            return
        except BufferError:
            producer.poll(0.1)
