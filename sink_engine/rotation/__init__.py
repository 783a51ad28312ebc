"""Rotation: when the open files of a topic-partition are closed."""
from __future__ import annotations

from dataclasses import dataclass

from sink_engine.config import SinkConfig


@dataclass(frozen=True)
class RotationPolicy:
    """`flush.size` counts the records of a topic-partition across all of its open files; reaching it
    closes every open file of that topic-partition, as in the Confluent connector."""

    flush_size: int

    @classmethod
    def from_config(cls, config: SinkConfig) -> "RotationPolicy":
        return cls(config["flush.size"])

    def room(self, open_records: int) -> int:
        """How many more records the open files take before they must be closed."""
        return self.flush_size - open_records
