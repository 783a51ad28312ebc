"""sink.run.timeout.ms inside a task: chunks pass while the run's deadline is ahead; then the range stops with
RunTimeoutError naming the first offset not handled."""
from __future__ import annotations

import pytest

from sink_engine.errors import RunTimeoutError
from sink_engine.model import PartitionRange
from sink_engine.records import RecordChunk
from sink_engine.task.deadline import within_deadline


def _chunks(count: int, size: int) -> list[RecordChunk]:
    return [RecordChunk("t", 0, list(range(i * size, (i + 1) * size)), [b"{}"] * size, keys=[None] * size,
                        timestamps=[0] * size) for i in range(count)]


def test_chunks_pass_until_the_deadline_then_the_range_stops_naming_the_offset():
    # given a range whose deadline is at 10.0 s and a clock that passes it after two chunks
    planned = PartitionRange("t", 0, 0, 30, None, deadline_ms=10_000)
    ticks = iter([9.0, 9.5, 10.0])
    # when its chunks are read
    passed = []
    with pytest.raises(RunTimeoutError, match=r"t-0 stopped at offset 20: the run passed its sink.run.timeout.ms"):
        for chunk in within_deadline(_chunks(3, 10), planned, clock=lambda: next(ticks)):
            passed.append(chunk.offsets[0])
    # then the chunks before the deadline were handed on, the third was not
    assert passed == [0, 10]


def test_without_a_deadline_every_chunk_passes():
    planned = PartitionRange("t", 0, 0, 30, None)
    assert len(list(within_deadline(_chunks(3, 10), planned, clock=pytest.fail))) == 3
