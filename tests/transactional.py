"""A transactional producer for the tests (Apache Kafka honours transactions: aborted records reach no read_committed
reader, an open transaction holds the last stable offset)."""

from __future__ import annotations

import orjson
from confluent_kafka import Producer


class Transactional:
    """A transactional producer whose records' offsets are kept: `offsets[n]` is (partition, offset) of value n."""

    def __init__(self, bootstrap: str, transactional_id: str):
        self.producer = Producer({"bootstrap.servers": bootstrap, "transactional.id": transactional_id, "linger.ms": 5})
        self.producer.init_transactions(30)
        self.offsets: dict[int, tuple[int, int]] = {}

    def send(self, topic: str, numbers: range, partitions: int) -> None:
        """In an open transaction (begun here when none is): value {"n": n} to partition n % partitions."""
        for n in numbers:
            self.producer.produce(
                topic,
                orjson.dumps({"n": n}),
                key=str(n).encode(),
                partition=n % partitions,
                on_delivery=self._delivered,
            )
        self.producer.flush(30)

    def begin(self) -> Transactional:
        self.producer.begin_transaction()
        return self

    def commit(self) -> None:
        self.producer.commit_transaction(30)

    def abort(self) -> None:
        self.producer.abort_transaction(30)

    def _delivered(self, error, message) -> None:
        assert error is None, error
        self.offsets[orjson.loads(message.value())["n"]] = (message.partition(), message.offset())
