"""Pure decisions: object keys, planned ranges and task assignment."""

from __future__ import annotations

import pytest

from sink_engine.driver.planner import plan_ranges
from sink_engine.errors import SourceError
from sink_engine.model import CommittedOffset, PartitionRange, TopicPartition
from sink_engine.run.spark_runner import assign_tasks
from sink_engine.storage.naming import ObjectNaming


def test_key_matches_the_confluent_layout():
    naming = ObjectNaming("topics", "/", "+", 10)
    assert naming.key("clicks", "partition=2", 2, 1234, ".json") == "topics/clicks/partition=2/clicks+2+0000001234.json"


def test_key_with_custom_delimiters_and_padding():
    naming = ObjectNaming("lake", "#", "_", 4)
    assert naming.key("t", "partition=0", 0, 7, ".json.gz") == "lake#t#partition=0#t_0_0007.json.gz"


TP = TopicPartition("t", 0)


@pytest.mark.parametrize(
    "committed, marks, reset, cap, expected",
    [
        (None, (0, 500), "earliest", 1000, (0, 500, None)),
        (None, (100, 500), "latest", 1000, (500, 500, None)),
        (200, (0, 500), "earliest", 1000, (200, 500, 200)),
        (200, (0, 5000), "earliest", 1000, (200, 1200, 200)),
        (50, (120, 500), "earliest", 1000, (120, 500, 50)),  # retention deleted 50..119
    ],
)
def test_plan_ranges(committed, marks, reset, cap, expected):
    state = {} if committed is None else {TP: CommittedOffset(committed, 0, None)}
    (planned,) = plan_ranges([TP], state, {TP: marks}, reset, cap)
    assert (planned.start_offset, planned.end_offset, planned.expected_committed) == expected


def test_committed_offset_past_the_end_is_an_error():
    with pytest.raises(SourceError, match="recreated"):
        plan_ranges([TP], {TP: CommittedOffset(900, 0, None)}, {TP: (0, 500)}, "earliest", 10)


def test_assign_tasks_balances_and_caps():
    ranges = [PartitionRange("t", p, 0, size, None) for p, size in enumerate([100, 90, 50, 40, 10])]
    groups = assign_tasks(ranges, 2)
    assert len(groups) == 2
    assert sorted(sum(len(r) for r in g) for g in groups) == [140, 150]
    assert len(assign_tasks(ranges[:1], 8)) == 1


def test_the_progress_board_shows_the_partitions_with_most_left_first_and_sums_the_rest():
    from sink_engine.progress import SHOWN_PARTITIONS, render

    ranges = [PartitionRange("t", p, 100, 100 + 10 * (p + 1), 100) for p in range(SHOWN_PARTITIONS + 2)]
    reports = {
        TopicPartition("t", 0): {"position": 105, "records": 5, "files": 1},
        TopicPartition("t", 13): {"position": 240, "records": 140, "files": 3},
    }
    lines = render(ranges, reports, seconds=2.0)
    assert lines[1].split() == ["t-12", "0", "0", "130"]  # the most left first
    assert lines[-2].split() == ["2", "more", "145", "4", "5"]  # t-0 (5 left) and t-13 (none left)
    assert lines[-1] == (
        f"{SHOWN_PARTITIONS + 2} partitions: 145 records read, 4 files closed, "
        f"{sum(10 * (p + 1) for p in range(SHOWN_PARTITIONS + 2)) - 145:,} left; 72 records/s, 2 s"
    )
