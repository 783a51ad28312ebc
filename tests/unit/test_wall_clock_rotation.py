"""Wall-clock rotation decisions: schedule boundaries and the plan that a rerun repeats."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from sink_engine.model import CommittedOffset, PartitionRange, TopicPartition
from sink_engine.partition.time_buckets import next_rotation_ms, parse_zone
from sink_engine.run.wall_clock import WallClockCuts, with_wall_clock

HOUR = 3_600_000


def ms(text: str) -> int:
    return int(datetime.fromisoformat(text).replace(tzinfo=UTC).timestamp() * 1000)


@pytest.mark.parametrize(
    "now, interval, zone, expected",
    [
        ("2024-01-15T10:00:00", HOUR, "UTC", "2024-01-15T11:00:00"),
        ("2024-01-15T10:59:59.999", HOUR, "UTC", "2024-01-15T11:00:00"),
        ("2024-01-15T22:30:00", 7 * HOUR, "UTC", "2024-01-16T00:00:00"),  # the last period of a day ends at midnight
        ("2024-01-15T10:00:00", 7 * HOUR, "UTC", "2024-01-15T14:00:00"),
        ("2024-01-15T10:00:00", HOUR, "+05:30", "2024-01-15T10:30:00"),  # aligned to local midnight
        ("2024-03-10T06:30:00", 4 * HOUR, "America/New_York", "2024-03-10T09:00:00"),  # midnight EST + 4h
    ],
)
def test_next_rotation_is_aligned_to_local_midnight(now, interval, zone, expected):
    assert next_rotation_ms(ms(now), interval, parse_zone(zone)) == ms(expected)


@pytest.mark.parametrize(
    "last, now, due",
    [
        (None, "2024-01-15T10:00:00", True),  # never committed: the records waiting land now
        ("2024-01-15T10:10:00", "2024-01-15T10:59:00", False),
        ("2024-01-15T10:10:00", "2024-01-15T11:00:00", True),
        ("2024-01-15T10:59:59", "2024-01-15T11:00:00", True),
    ],
)
def test_scheduled_cut_is_due_past_the_boundary_after_the_last_commit(last, now, due):
    cuts = WallClockCuts(HOUR, parse_zone("UTC"), -1)
    assert cuts.due(None if last is None else ms(last), ms(now)) is due


def test_wallclock_rotate_interval_cuts_a_partition_committed_that_long_ago():
    cuts = WallClockCuts(-1, parse_zone("UTC"), 10 * 60_000)
    assert not cuts.due(ms("2024-01-15T10:00:00"), ms("2024-01-15T10:09:59"))
    assert cuts.due(ms("2024-01-15T10:00:00"), ms("2024-01-15T10:10:00"))
    assert not WallClockCuts(-1, parse_zone("UTC"), -1).due(None, 0)


def test_a_recorded_plan_is_repeated_until_its_run_commits():
    tp0, tp1, tp2 = (TopicPartition("t", p) for p in range(3))
    ranges = [
        PartitionRange("t", 0, 10, 90, 10),
        PartitionRange("t", 1, 20, 40, 20),
        PartitionRange("t", 2, 0, 5, None),
    ]
    committed = {tp0: CommittedOffset(10, 1000, None), tp1: CommittedOffset(20, 5000, None)}
    recorded = {
        tp0: PartitionRange("t", 0, 10, 60, 10, True, 777),  # its run died before committing: repeated
        tp1: PartitionRange("t", 1, 5, 20, 5, True, 555),  # its run committed (start moved on): stale
    }
    decided = with_wall_clock(ranges, committed, recorded, 9000, lambda last, now: last is None or now - last > 4500)
    assert decided == [
        PartitionRange("t", 0, 10, 60, 10, True, 777),
        PartitionRange("t", 1, 20, 40, 20, False, 9000),
        PartitionRange("t", 2, 0, 5, None, True, 9000),
    ]
