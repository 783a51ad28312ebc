"""The wall-clock cuts of a continuous task's streams: on `ContinuousTarget.stream_cut_interval_ms` boundaries, each
recorded as a plan before it is made (run/plans.py), so that a retried task, or a bounded run, cuts at the same
offset."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import tzinfo

from sink_engine.errors import CommitConflictError
from sink_engine.model import PartitionRange, TopicPartition
from sink_engine.offsets import LeaseToken
from sink_engine.partition.time_buckets import next_rotation_ms
from sink_engine.run.plans import PlanStore
from sink_engine.task.stream import PartitionStream


@dataclass
class Schedule:
    """Wall-clock cut boundaries of one task's streams (`ContinuousTarget.stream_cut_interval_ms`; off when not
    positive)."""

    interval_ms: int
    zone: tzinfo
    next_ms: dict[TopicPartition, int] = field(default_factory=dict)

    def passed(self, now: int) -> bool:
        """Whether a boundary of some stream has passed (what was committed since may let it be cut)."""
        return self.interval_ms > 0 and any(now >= boundary for boundary in self.next_ms.values())

    def due(self, stream: PartitionStream, now: int) -> bool:
        """Whether `stream` must be cut now: a boundary passed since its last look and files are open."""
        if self.interval_ms <= 0:
            return False
        boundary = self.next_ms.setdefault(stream.tp, next_rotation_ms(now, self.interval_ms, self.zone))
        if now < boundary:
            return False
        self.next_ms[stream.tp] = next_rotation_ms(now, self.interval_ms, self.zone)
        return stream.has_open_files and stream.recorded_cut is None and stream.cuts_committed


def cut_due(plans: PlanStore, token: LeaseToken, due: list[PartitionStream], now: int) -> bool:
    """Record the wall-clock cuts of `due` at the offsets they reached, then make them; True when the lease was
    lost (nothing was cut)."""
    if not due:
        return False
    ranges = [PartitionRange(s.tp.topic, s.tp.partition, s.committed, s.processed, s.expected, True, now) for s in due]
    try:
        plans.record(token, ranges)
    except CommitConflictError:
        return True
    for stream in due:
        stream.cut(stream.processed)
    return False
