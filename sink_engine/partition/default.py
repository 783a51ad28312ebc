"""DefaultPartitioner: `partition=<kafka partition>`."""

from __future__ import annotations

from sink_engine.records import Partitions, RecordChunk, ValueColumn


class DefaultPartitioner:
    def encode(self, chunk: RecordChunk, values: ValueColumn) -> Partitions:
        return Partitions.one(f"partition={chunk.partition}")
