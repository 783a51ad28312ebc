"""`RecordChunk`: consecutive records of one topic-partition, in offset order, as parallel lists."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass
class RecordChunk:
    topic: str
    partition: int
    offsets: list
    timestamps: list
    keys: list
    values: list

    def __len__(self) -> int:
        return len(self.offsets)

    def slice(self, start: int, stop: int) -> "RecordChunk":
        return RecordChunk(
            self.topic, self.partition, self.offsets[start:stop], self.timestamps[start:stop],
            self.keys[start:stop], self.values[start:stop],
        )

    def select(self, positions: list[int]) -> "RecordChunk":
        """The records at these positions, in the given order."""
        return RecordChunk(
            self.topic, self.partition, [self.offsets[i] for i in positions],
            [self.timestamps[i] for i in positions], [self.keys[i] for i in positions],
            [self.values[i] for i in positions],
        )
