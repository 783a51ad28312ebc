"""Tombstones (null values) with `behavior.on.null.values=write`: they keep their place in offset order
and go to files under `tombstone.encoded.partition` (writer.write_tombstones), as in the Confluent
connector; the value file there holds one JSON `null` per tombstone."""

from __future__ import annotations

from itertools import groupby

from sink_engine.records import RecordChunk


def null_runs(chunk: RecordChunk) -> list[tuple[RecordChunk, bool]]:
    """The chunk cut into runs of consecutive records, each with True when its values are all None."""
    runs, position = [], 0
    for is_null, group in groupby(chunk.values, key=lambda value: value is None):
        size = sum(1 for _ in group)
        runs.append((chunk.slice(position, position + size), is_null))
        position += size
    return runs
