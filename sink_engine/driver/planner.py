"""Plan the ranges a run reads: a pure function of committed offsets, watermarks and the config."""
from __future__ import annotations

from dataclasses import replace

from sink_engine.errors import SourceError
from sink_engine.model import CommittedOffset, PartitionRange, TopicPartition


def plan_ranges(
    partitions: list[TopicPartition],
    committed: dict[TopicPartition, CommittedOffset],
    watermarks: dict[TopicPartition, tuple[int, int]],
    reset: str,
    cap: int,
) -> list[PartitionRange]:
    """For each partition: start at the committed next offset (or at the low/high watermark by `reset`
    when none), end at min(high watermark, start + cap). A committed offset below the low watermark
    (records deleted by retention) starts at the low watermark; one above the high watermark is an error."""
    ranges = []
    for tp in partitions:
        low, high = watermarks[tp]
        previous = committed.get(tp)
        if previous is None:
            start = low if reset == "earliest" else high
        elif previous.next_offset > high:
            raise SourceError(
                f"committed offset {previous.next_offset} of {tp} is past its end offset {high}: "
                "was the topic recreated? Remove its offset item to start again"
            )
        else:
            start = max(previous.next_offset, low)
        ranges.append(PartitionRange(tp.topic, tp.partition, start, min(high, start + cap),
                                     None if previous is None else previous.next_offset))
    return ranges


def with_wall_clock(
    ranges: list[PartitionRange],
    committed: dict[TopicPartition, CommittedOffset],
    recorded: dict[TopicPartition, PartitionRange],
    now_ms: int,
    cut_due,
) -> list[PartitionRange]:
    """Add the wall-clock decisions to planned ranges: a recorded plan whose run committed nothing (same
    start, end not past the new end) is repeated as it was; other ranges get `now_ms` as their wall-clock
    time and `cut_due(last_commit_ms, now_ms)` as their cut at the end."""
    decided = []
    for planned in ranges:
        previous = recorded.get(planned.tp)
        if previous is not None and previous.start_offset == planned.start_offset \
                and previous.expected_committed == planned.expected_committed \
                and previous.end_offset <= planned.end_offset:
            decided.append(previous)
            continue
        last = committed.get(planned.tp)
        cut = cut_due(None if last is None else last.committed_at_ms, now_ms)
        decided.append(replace(planned, cut_at_end=cut, wallclock_ms=now_ms))
    return decided
