"""sink.run.timeout.ms inside a task: chunks pass while the run's deadline is ahead; then the range stops with
RunTimeoutError naming the first offset not handled. A stop requested of a bounded run (its lease item, read by
LeaseStopProbe) stops it the same way, with RunStoppedError."""

from __future__ import annotations

import pytest

from sink_engine.errors import RunStoppedError, RunTimeoutError
from sink_engine.model import PartitionRange
from sink_engine.records import RecordChunk
from sink_engine.task.deadline import LeaseStopProbe, within_deadline


def _chunks(count: int, size: int) -> list[RecordChunk]:
    return [
        RecordChunk(
            "t", 0, list(range(i * size, (i + 1) * size)), [b"{}"] * size, keys=[None] * size, timestamps=[0] * size
        )
        for i in range(count)
    ]


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


def test_a_stop_requested_ends_the_range_at_the_next_chunk_naming_the_offset():
    # given a range without a deadline, and a stop that is requested after the first chunk
    planned = PartitionRange("t", 0, 0, 30, None)
    answers = iter([False, True])
    passed = []
    # when its chunks are read
    with pytest.raises(RunStoppedError, match=r"t-0 stopped at offset 10: the run was asked to stop"):
        for chunk in within_deadline(_chunks(3, 10), planned, stop=lambda: next(answers)):
            passed.append(chunk.offsets[0])
    # then only the chunk before the stop was handed on
    assert passed == [0]


class _Leases:
    def __init__(self, items):
        self.items, self.reads = items, 0

    def describe(self, connector):
        self.reads += 1
        return self.items.get(connector)


def test_the_lease_stop_probe_reads_the_lease_item_no_more_often_than_its_interval():
    # given a probe looking every 2 s at a lease item without a stop request, on a clock that starts at 100 s
    now = [100.0]
    leases = _Leases({"c": {"stop_requested": False}})
    made = []
    probe = LeaseStopProbe(lambda: made.append(1) or leases, "c", 2.0, clock=lambda: now[0])
    # when it is asked before its interval passed: no client made, nothing read
    now[0] = 101.9
    assert probe() is False and (made, leases.reads) == ([], 0)
    # when the interval passed: one read; again within the interval: none
    now[0] = 102.0
    assert probe() is False and leases.reads == 1
    now[0] = 103.0
    assert probe() is False and leases.reads == 1
    # then a stop request is seen at the next due look, and kept without reading again
    leases.items["c"]["stop_requested"] = True
    now[0] = 104.0
    assert probe() is True and leases.reads == 2
    now[0] = 110.0
    assert probe() is True and leases.reads == 2 and made == [1]
