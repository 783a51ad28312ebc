"""The driver's wall-clock decision: whether a range closes every open file at its end, and its Wallclock time.

The Confluent connector closes a topic-partition's files when the wall clock passes the next boundary of
`rotate.schedule.interval.ms` (boundaries counted from local midnight in `timezone`, the last one of a day
cut short at the next midnight) after its last rotation. A run here decides once, when it plans: a range
whose partition was last committed before the boundary that has now passed (or never) is cut at its end
offset, so that records that stopped arriving still land within about one interval of a run. With the
Wallclock extractor, `rotate.interval.ms` (the connector's wall-clock rotation) cuts a range whose partition
was last committed at least that long ago. The decision is recorded with the plan before any upload and a
rerun after a crash reuses it (plans.py), so a retry cuts at the same offset.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import tzinfo

from sink_engine.config import SinkConfig
from sink_engine.model import CommittedOffset, PartitionRange, TopicPartition
from sink_engine.offsets import LeaseToken, OffsetStore
from sink_engine.partition.registry import TIME_BASED
from sink_engine.partition.settings import PartitionSettings
from sink_engine.partition.time_buckets import next_rotation_ms, parse_zone
from sink_engine.run.plans import PlanStore


@dataclass(frozen=True)
class WallClockCuts:
    schedule_ms: int  # rotate.schedule.interval.ms, -1 off
    zone: tzinfo
    interval_ms: int  # rotate.interval.ms with the Wallclock extractor, -1 off

    @classmethod
    def from_config(cls, config: SinkConfig) -> WallClockCuts:
        wallclock = config["timestamp.extractor"] == "wallclock"
        return cls(
            config["rotate.schedule.interval.ms"],
            parse_zone(config["timezone"]),
            config["rotate.interval.ms"] if wallclock else -1,
        )

    @property
    def enabled(self) -> bool:
        return self.schedule_ms > 0 or self.interval_ms > 0

    def due(self, last_commit_ms: int | None, now_ms: int) -> bool:
        """Whether a range planned at `now_ms` closes its files at its end."""
        if not self.enabled:
            return False
        if last_commit_ms is None:
            return True
        if self.schedule_ms > 0 and now_ms >= next_rotation_ms(last_commit_ms, self.schedule_ms, self.zone):
            return True
        return self.interval_ms > 0 and now_ms - last_commit_ms >= self.interval_ms


def needs_recorded_plan(config: SinkConfig) -> bool:
    """Whether a run's plan holds wall-clock decisions that a rerun must repeat."""

    partitioning = PartitionSettings.from_config(config)
    wallclock_paths = partitioning.partitioner in TIME_BASED and partitioning.extractor == "wallclock"
    return wallclock_paths or WallClockCuts.from_config(config).enabled


def with_wall_clock(
    ranges: list[PartitionRange],
    committed: dict[TopicPartition, CommittedOffset],
    recorded: dict[TopicPartition, PartitionRange],
    now_ms: int,
    cut_due: Callable[[int | None, int], bool],
) -> list[PartitionRange]:
    """Add the wall-clock decisions to planned ranges: a recorded plan whose run committed nothing (same
    start, end not past the new end) is repeated as it was; other ranges get `now_ms` as their wall-clock
    time and `cut_due(last_commit_ms, now_ms)` as their cut at the end."""
    decided = []
    for planned in ranges:
        previous = recorded.get(planned.tp)
        if (
            previous is not None
            and previous.start_offset == planned.start_offset
            and previous.expected_committed == planned.expected_committed
            and previous.end_offset <= planned.end_offset
        ):
            decided.append(previous)
            continue
        last = committed.get(planned.tp)
        cut = cut_due(None if last is None else last.committed_at_ms, now_ms)
        decided.append(replace(planned, cut_at_end=cut, wallclock_ms=now_ms))
    return decided


def decide_wall_clock(
    config: SinkConfig, store: OffsetStore, plans: PlanStore, token: LeaseToken, ranges: list[PartitionRange], now: int
) -> list[PartitionRange]:
    """Repeat the recorded plan of a run that died before committing, else decide the wall-clock cut and
    time now; record the decisions before any task runs (docs/exactly-once.md, point 2)."""
    decided = with_wall_clock(
        ranges, store.committed(config.name), plans.recorded(config.name), now, WallClockCuts.from_config(config).due
    )
    plans.record(token, [r for r in decided if len(r)])
    return decided
