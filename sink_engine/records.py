"""`RecordChunk`: consecutive records of one topic-partition, in offset order.

Offsets and values are lists; keys and timestamps are read from the Kafka messages only when a step
asks for them (most layouts never do, and touching them costs a per-record call each).
"""
from __future__ import annotations

from functools import cached_property


class RecordChunk:
    def __init__(self, topic: str, partition: int, offsets: list, values: list, messages: list | None = None,
                 keys: list | None = None, timestamps: list | None = None):
        """Either `messages` (confluent_kafka Messages, parallel to offsets) or `keys` and `timestamps`."""
        self.topic, self.partition, self.offsets, self.values = topic, partition, offsets, values
        self._messages = messages
        if keys is not None:
            self.keys = keys
        if timestamps is not None:
            self.timestamps = timestamps

    def __len__(self) -> int:
        return len(self.offsets)

    @cached_property
    def keys(self) -> list:
        return [m.key() for m in self._messages]

    @cached_property
    def headers(self) -> list:
        """Each record's headers as a list of (name, bytes or None); empty without Kafka messages."""
        if self._messages is None:
            return [[] for _ in self.offsets]
        return [m.headers() or [] for m in self._messages]

    @cached_property
    def timestamps(self) -> list:
        """Record timestamps in epoch milliseconds."""
        return [m.timestamp()[1] for m in self._messages]

    def slice(self, start: int, stop: int) -> "RecordChunk":
        return self._derive(lambda items: items[start:stop])

    def select(self, positions: list[int]) -> "RecordChunk":
        """The records at these positions, in the given order."""
        return self._derive(lambda items: [items[i] for i in positions])

    def _derive(self, pick) -> "RecordChunk":
        if self._messages is not None:
            return RecordChunk(self.topic, self.partition, pick(self.offsets), pick(self.values),
                               messages=pick(self._messages))
        return RecordChunk(self.topic, self.partition, pick(self.offsets), pick(self.values),
                           keys=pick(self.keys), timestamps=pick(self.timestamps))
