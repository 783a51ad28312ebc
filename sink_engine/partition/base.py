"""The partitioner seam."""
from __future__ import annotations

from typing import Protocol, Union

from sink_engine.records import RecordChunk, ValueColumn

EncodedPartitions = Union[str, list]


class Partitioner(Protocol):
    def encode(self, chunk: RecordChunk, values: ValueColumn) -> EncodedPartitions:
        """The encoded partition of each record: one str when all records share it, else a list of str.

        Raises RecordError naming the record whose partition cannot be computed.
        """
