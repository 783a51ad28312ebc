"""`sink.run.timeout.ms` inside a task: a range stops reading once its run's deadline has passed.

The check sits between chunks: the chunk read last is not written, and the range ends with RunTimeoutError, so
that it commits what its closed files hold (the commit point of any range that stops early) and nothing after."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator

from sink_engine.errors import RunTimeoutError
from sink_engine.model import PartitionRange
from sink_engine.records import RecordChunk


def within_deadline(
    chunks: Iterable[RecordChunk], planned: PartitionRange, clock: Callable[[], float] = time.time
) -> Iterator[RecordChunk]:
    """The chunks, while `clock()` (epoch seconds) is before `planned.deadline_ms`; then RunTimeoutError naming
    the first offset not handled. No deadline: the chunks as they are."""
    if planned.deadline_ms is None:
        yield from chunks
        return
    for chunk in chunks:
        if clock() * 1000 >= planned.deadline_ms:
            raise RunTimeoutError(
                f"{planned.topic}-{planned.partition} stopped at offset {chunk.offsets[0]}: the "
                f"run passed its sink.run.timeout.ms; the next run goes on from its commit point"
            )
        yield chunk
