"""How a continuous run's connectors are spread over its long-lived Spark tasks (a pure decision).

The job runs at most as many tasks as Spark has task slots (`task_slots`: a task that never starts would hold its
partitions back) and no more than the partitions it serves: a core is held per slot of the job, not per connector
or per `tasks.max`. Each connector's partitions are dealt round-robin into at most `tasks.max` shares (as today's
single-connector run, and as Kafka Connect deals a connector's partitions to its tasks), and each share goes to the
task that serves the fewest partitions so far among those that hold none of the connector's (ties: the lower task),
connectors with more partitions placed first. So the tasks carry about as many partitions each, whatever the
connectors' sizes; the spread is by partition count, not by measured rate.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Generic, TypeVar

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

Item = TypeVar("Item")


@dataclass(frozen=True)
class Shares(Generic[Item]):
    """A connector's partitions (any items) and its `tasks.max`."""

    connector: str
    items: tuple[Item, ...]
    tasks_max: int


def spread(connectors: list[Shares[Item]], slots: int) -> list[list[tuple[str, tuple[Item, ...]]]]:
    """The tasks, each a list of (connector, its items in that task); no task is empty, none holds two shares of a
    connector (see the module docstring)."""
    total = sum(len(c.items) for c in connectors)
    tasks: list[list[tuple[str, tuple[Item, ...]]]] = [[] for _ in range(max(1, min(slots, total)))]
    load = [0] * len(tasks)
    for connector in sorted(connectors, key=lambda c: -len(c.items)):
        count = min(connector.tasks_max, len(tasks), len(connector.items))
        for share in (connector.items[i::count] for i in range(count)):
            taken = {i for i, task in enumerate(tasks) if any(name == connector.connector for name, _ in task)}
            task = min((i for i in range(len(tasks)) if i not in taken), key=lambda i: (load[i], i))
            tasks[task].append((connector.connector, share))
            load[task] += len(share)
    return [task for task in tasks if task]


def task_slots(spark: SparkSession) -> int:
    """How many tasks the job can run at once: `spark.executor.instances` x `spark.executor.cores` when the job's
    settings name them (EMR's executors may register after the driver starts, and Spark's default parallelism counts
    only those registered), else Spark's default parallelism."""
    conf = spark.sparkContext.getConf()
    instances, cores = conf.get("spark.executor.instances"), conf.get("spark.executor.cores")
    if instances and cores and conf.get("spark.dynamicAllocation.enabled", "false") == "false":
        return int(instances) * int(cores)
    return spark.sparkContext.defaultParallelism
