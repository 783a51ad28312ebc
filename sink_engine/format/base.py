"""The format seam: encode the values of one file into the object's bytes (and any companion objects)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

from sink_engine.convert.base import ValueColumn


@dataclass(frozen=True)
class FileContext:
    """Which records a file holds: its topic-partition and the Kafka offset of each value, in order."""

    topic: str
    partition: int
    offsets: list

    @property
    def start_offset(self) -> int:
        return self.offsets[0]


@dataclass(frozen=True)
class EncodedFile:
    """An object's bytes, plus companion objects keyed by the suffix that replaces the data extension
    (e.g. `{".index.json": b"..."}` lands beside `<stem><extension>` as `<stem>.index.json`)."""

    body: bytes
    companions: dict[str, bytes] = field(default_factory=dict)


class Format(Protocol):
    extension: str  # with the leading dot, e.g. ".json.gz"

    def encode(self, values: ValueColumn, context: FileContext) -> EncodedFile:
        """The whole object for these values, in order. Same values and context, same bytes (reruns overwrite
        identically). Raises RecordError naming a record this format cannot hold."""
