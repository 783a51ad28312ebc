"""The converter seam: turn the raw values of a chunk into a `ValueColumn` (records.py)."""

from __future__ import annotations

from typing import Protocol

from sink_engine.records import RecordChunk, ValueColumn


class Converter(Protocol):
    def convert(self, chunk: RecordChunk) -> ValueColumn:
        """Convert every value of the chunk (none is None). Raises RecordError naming the first bad record."""
