"""The partitioner seam."""

from __future__ import annotations

from typing import Protocol

from sink_engine.records import Partitions, RecordChunk, ValueColumn


class Partitioner(Protocol):
    def encode(self, chunk: RecordChunk, values: ValueColumn) -> Partitions:
        """The encoded partition of each record: `Partitions.one` when all records share it (as far as the
        partitioner cheaply knows), else `Partitions.per_record`.

        Raises RecordError naming the record whose partition cannot be computed.
        """
