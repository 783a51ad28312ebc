"""A committed offset below the partition's log start (retention, DeleteRecords): the planner starts at the log start,
and the offsets in between are the range's `expired`, counted by the commit as `skipped.expired`."""

from __future__ import annotations

from sink_engine.driver.planner import plan_ranges
from sink_engine.model import CommittedOffset, PartitionRange, TaskResult, TopicPartition
from sink_engine.target.s3_objects.output import skipped_offsets

TP = TopicPartition("orders", 0)


def planned(committed: int | None, low: int, high: int) -> PartitionRange:
    commits = {} if committed is None else {TP: CommittedOffset(committed, 0, None)}
    return plan_ranges([TP], commits, {TP: (low, high)}, "earliest", 1_000)[0]


def test_a_commit_below_the_log_start_starts_there_and_counts_what_expired():
    rng = planned(committed=10, low=25, high=40)
    assert (rng.start_offset, rng.expected_committed, rng.expired) == (25, 10, 15)
    assert skipped_offsets(TaskResult(rng, next_offset=25)) == {"expired": 15}


def test_nothing_expires_at_or_above_the_log_start_nor_without_a_commit():
    assert planned(committed=25, low=25, high=40).expired == 0
    assert planned(committed=30, low=25, high=40).expired == 0
    assert planned(committed=None, low=25, high=40).expired == 0
