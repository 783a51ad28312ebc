"""DefaultPartitioner: `partition=<kafka partition>`."""
from __future__ import annotations

from sink_engine.records import RecordChunk, ValueColumn


class DefaultPartitioner:
    def encode(self, chunk: RecordChunk, values: ValueColumn) -> str:
        return f"partition={chunk.partition}"
