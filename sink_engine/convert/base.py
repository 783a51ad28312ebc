"""The converter seam: turn the raw values of a chunk into a `ValueColumn`."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from sink_engine.records import RecordChunk

# Kinds of converted values:
#   "json":   compact JSON text of each value, as bytes (validated; one line, no newline inside)
#   "string": str
#   "bytes":  bytes
KINDS = ("json", "string", "bytes")


@dataclass
class ValueColumn:
    kind: str
    items: list

    def __len__(self) -> int:
        return len(self.items)

    def slice(self, start: int, stop: int) -> "ValueColumn":
        return ValueColumn(self.kind, self.items[start:stop])

    def select(self, positions: list[int]) -> "ValueColumn":
        return ValueColumn(self.kind, [self.items[i] for i in positions])

    @classmethod
    def concat(cls, columns: list["ValueColumn"]) -> "ValueColumn":
        items: list = []
        for column in columns:
            items.extend(column.items)
        return cls(columns[0].kind, items)


class Converter(Protocol):
    def convert(self, chunk: RecordChunk) -> ValueColumn:
        """Convert every value of the chunk (none is None). Raises RecordError naming the first bad record."""
