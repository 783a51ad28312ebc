"""MSK events as Lambda's event source delivers them, made from records actually read from the broker."""

from __future__ import annotations

import base64

from confluent_kafka import Consumer, TopicPartition


def read_records(bootstrap: str, topic: str, partitions: int, timeout_s: float = 20.0) -> list:
    """Every record of `topic` (partitions 0..partitions-1), from its start to its high watermark."""
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": "e2e-msk-event-source",
            "enable.auto.commit": False,
            "fetch.queue.backoff.ms": 10,
        }
    )
    try:
        ends = {
            p: consumer.get_watermark_offsets(TopicPartition(topic, p), timeout=timeout_s)[1] for p in range(partitions)
        }
        consumer.assign([TopicPartition(topic, p, 0) for p in range(partitions) if ends[p] > 0])
        records, remaining = [], {p for p, end in ends.items() if end > 0}
        while remaining:
            message = consumer.poll(timeout_s)
            if message is None:
                raise TimeoutError(f"{topic}: no record within {timeout_s}s, still reading {sorted(remaining)}")
            if message.error():
                continue
            records.append(message)
            if message.offset() + 1 >= ends[message.partition()]:
                remaining.discard(message.partition())
        return records
    finally:
        consumer.close()


def msk_event(records: list, cluster_arn: str, bootstrap: str) -> dict:
    """The event of Lambda's MSK event source for `records` (confluent-kafka messages): grouped under
    "<topic>-<partition>", keys and values base64, headers as lists of byte values."""
    grouped: dict[str, list] = {}
    for message in records:
        entry = {
            "topic": message.topic(),
            "partition": message.partition(),
            "offset": message.offset(),
            "timestamp": message.timestamp()[1],
            "timestampType": "CREATE_TIME",
            "value": base64.b64encode(message.value() or b"").decode(),
            "headers": [{name: list(value or b"")} for name, value in (message.headers() or [])],
        }
        if message.key() is not None:
            entry["key"] = base64.b64encode(message.key()).decode()
        grouped.setdefault(f"{message.topic()}-{message.partition()}", []).append(entry)
    return {
        "eventSource": "aws:kafka",
        "eventSourceArn": cluster_arn,
        "bootstrapServers": bootstrap,
        "records": grouped,
    }
