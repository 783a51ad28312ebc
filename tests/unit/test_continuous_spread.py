"""How a continuous run spreads its connectors' partitions over its tasks (continuous/spread.py): no more tasks than
slots or partitions, a connector in at most `tasks.max` tasks and never twice in one, the tasks' loads even."""

from __future__ import annotations

import pytest

from sink_engine.continuous.spread import Shares, spread


def _connectors(count: int, partitions: int, tasks_max: int) -> list[Shares[int]]:
    return [Shares(f"c{n}", tuple(range(partitions)), tasks_max) for n in range(count)]


def test_one_connector_is_dealt_round_robin_over_at_most_tasks_max_tasks():
    # given one connector of 4 partitions and tasks.max 2, on 8 slots; then 2 tasks, partitions dealt round-robin
    assert spread(_connectors(1, 4, 2), 8) == [[("c0", (0, 2))], [("c0", (1, 3))]]


@pytest.mark.parametrize(("count", "partitions", "tasks_max", "slots"), [(50, 4, 1, 2), (12, 4, 2, 4), (3, 1, 5, 8)])
def test_many_connectors_share_the_slots_evenly_each_in_at_most_tasks_max_tasks(count, partitions, tasks_max, slots):
    # when many connectors are spread over the job's slots
    tasks = spread(_connectors(count, partitions, tasks_max), slots)
    # then the tasks are no more than the slots (nor the partitions), none empty
    assert 0 < len(tasks) <= min(slots, count * partitions) and all(tasks)
    # and every partition of every connector is in exactly one task, a connector at most once per task
    held = [(name, item) for task in tasks for name, items in task for item in items]
    assert sorted(held) == sorted((f"c{n}", p) for n in range(count) for p in range(partitions))
    for task in tasks:
        names = [name for name, _ in task]
        assert len(names) == len(set(names))
    # and a connector is in at most tasks.max tasks; the tasks' loads differ by at most one connector's share
    for n in range(count):
        assert sum(1 for task in tasks if any(name == f"c{n}" for name, _ in task)) <= tasks_max
    loads = [sum(len(items) for _, items in task) for task in tasks]
    assert max(loads) - min(loads) <= partitions
