"""Sample data for the demo, the tests and the benchmark: click-stream events on a Kafka topic."""

from __future__ import annotations

import threading
import time
from collections import defaultdict
from collections.abc import Callable

import orjson
from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient, NewTopic

from sink_engine.source.metadata import await_leaders

EVENT_TYPES = ("click", "view", "purchase")
REGIONS = ("us-east", "us-west", "eu-central")
KEEP_RECORDS = {"retention.ms": "-1"}


def create_topic(bootstrap: str, topic: str, partitions: int, settings: dict | None = None, replicas: int = 1) -> None:
    """`replicas` per partition (one by default); `settings`: the topic's configs (`retention.ms`, ...).

    The topic keeps its records unless `settings` state a retention: the tests stamp records with fixed times of
    2023-2024, which Kafka's default time retention (7 days, MSK's too) would delete at the broker's next retention
    check (every 5 minutes), in the middle of whichever test was running then."""
    admin = AdminClient({"bootstrap.servers": bootstrap})
    config = {**KEEP_RECORDS, **(settings or {})}
    for future in admin.create_topics([NewTopic(topic, partitions, replicas, config=config)]).values():
        future.result(timeout=30)
    await_leaders(admin, topic, 30)


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


def produce(bootstrap: str, topic: str, values, partitions: int, keys=None, progress=None, settings=None) -> int:
    """Produce values (bytes or None) round-robin over partitions; returns the count. `settings`: the producer's,
    over these (a smaller `batch.size`: more, smaller record batches, each a unit of a fetch).

    Each partition's last record is sent alone after a flush, so that every broker reports an exact
    end offset through ListOffsets too."""
    producer = Producer(
        {
            "bootstrap.servers": bootstrap,
            "linger.ms": 20,
            "batch.size": 1_000_000,
            "queue.buffering.max.messages": 1_000_000,
            "compression.type": "none",
            # a partition's records in the order sent even when a batch is retried (without it, a 1,000-partition
            # topic once held a partition's later records before its earlier ones: a retried batch landed last)
            "enable.idempotence": True,
            **(settings or {}),
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


class SteadyProducer:
    """Context manager: produces `value_of(n)` (default `{"id": n}`), n counting up from 0, to `partitions` in turn at
    `per_second` (0: as fast as it can) from a thread of its own until `stop()` (or the end of the `with`), or
    until `limit` records. Each partition's records stay in order (an idempotent producer), so `produced[p][o]` is
    the n at offset o of partition p of a fresh topic; `produce_ms[n]` is when record n was handed to the client.
    Without `track` neither is kept (a soak: the lists would grow by about 80 bytes a record)."""

    def __init__(
        self,
        bootstrap: str,
        topic: str,
        partitions: list[int],
        per_second: int,
        value_of: Callable[[int], bytes] = lambda n: orjson.dumps({"id": n}),
        limit: int | None = None,
        track: bool = True,
    ):
        self._producer = Producer(
            {
                "bootstrap.servers": bootstrap,
                "enable.idempotence": True,
                "linger.ms": 5,
                "queue.buffering.max.messages": 1_000_000,
            }
        )
        self.topic, self.partitions, self.per_second = topic, partitions, per_second
        self._value_of, self._limit, self._track = value_of, limit, track
        self.produced: dict[int, list[int]] = defaultdict(list)
        self.produce_ms: list[int] = []
        self.done = threading.Event()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._next = 0

    def __enter__(self) -> SteadyProducer:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    @property
    def count(self) -> int:
        return self._next

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()
        if self._producer.flush(60):
            raise RuntimeError("the producer could not deliver every record within 60s")

    def _run(self) -> None:
        started = time.monotonic()
        while not self._stop.is_set() and (self._limit is None or self._next < self._limit):
            due = int((time.monotonic() - started) * self.per_second) if self.per_second else self._next + 5_000
            due = min(due, self._limit) if self._limit is not None else due
            now_ms = int(time.time() * 1000)
            while self._next < due:
                partition = self.partitions[self._next % len(self.partitions)]
                _send(self._producer, self.topic, self._value_of(self._next), partition, None)
                if self._track:
                    self.produced[partition].append(self._next)
                    self.produce_ms.append(now_ms)
                self._next += 1
            self._producer.poll(0)
            if self.per_second:
                time.sleep(0.01)
        self.done.set()
