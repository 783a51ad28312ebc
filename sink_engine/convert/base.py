"""The converter seam: turn the raw values of a chunk into a `ValueColumn`."""
from __future__ import annotations

from typing import Protocol

import orjson

from sink_engine.records import RecordChunk

# Kinds of converted values (`ValueColumn.items`):
#   "json":   JSON text of each value as bytes (validated, on one line)
#   "string": str
#   "bytes":  bytes
KINDS = ("json", "string", "bytes")


class ValueColumn:
    """Converted values of consecutive records. `items` are what formats encode; `documents()` gives
    the values as Python objects (dicts for JSON objects) for steps that read fields, parsed once."""

    def __init__(self, kind: str, items: list, documents: list | None = None):
        self.kind, self.items, self._documents = kind, items, documents

    def __len__(self) -> int:
        return len(self.items)

    def documents(self) -> list:
        if self._documents is None:
            self._documents = [orjson.loads(i) for i in self.items] if self.kind == "json" else self.items
        return self._documents

    def slice(self, start: int, stop: int) -> "ValueColumn":
        docs = None if self._documents is None else self._documents[start:stop]
        return ValueColumn(self.kind, self.items[start:stop], docs)

    def select(self, positions: list[int]) -> "ValueColumn":
        docs = None if self._documents is None else [self._documents[i] for i in positions]
        return ValueColumn(self.kind, [self.items[i] for i in positions], docs)

    @classmethod
    def concat(cls, columns: list["ValueColumn"]) -> "ValueColumn":
        """One column of all items, in order (documents are not carried: files keep only items)."""
        items: list = []
        for column in columns:
            items.extend(column.items)
        return cls(columns[0].kind, items)


class Converter(Protocol):
    def convert(self, chunk: RecordChunk) -> ValueColumn:
        """Convert every value of the chunk (none is None). Raises RecordError naming the first bad record."""
