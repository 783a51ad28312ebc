"""Plan the ranges a run reads: a pure function of committed offsets, watermarks and the config
(the wall-clock decisions are added by wall_clock.py)."""

from __future__ import annotations

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
        ranges.append(
            PartitionRange(
                tp.topic,
                tp.partition,
                start,
                min(high, start + cap),
                None if previous is None else previous.next_offset,
            )
        )
    return ranges
