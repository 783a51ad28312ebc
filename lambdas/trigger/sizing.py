"""How big a run's EMR Serverless workers are: driver and executors sized to the records pending, pure.

Facts it stands on:
- Worker sizes (EMR Serverless User Guide, "Supported worker configurations",
  https://docs.aws.amazon.com/emr/latest/EMR-Serverless-UserGuide/app-behavior.html#worker-configs): 1, 2, 4, 8 or
  16 vCPU; memory 2-8 GB for 1 vCPU, 4-16 GB for 2, 8-30 GB for 4 (1 GB steps); disk 20-200 GB, the first 20 GB
  free. A Spark worker's container is its memory plus its memory overhead (`spark.*.memoryOverhead`, by default
  10% with 384 MB at least); EMR rounds the sum up to an allowed size (its default 14G heap is a 16 GB worker).
  Here heap + overhead is set to exactly an allowed size, so nothing is rounded.
- Spark properties (User Guide, "Spark job properties",
  https://docs.aws.amazon.com/emr/latest/EMR-Serverless-UserGuide/jobs-spark.html#spark-defaults): defaults
  4 vCPU / 14G for the driver and executors, dynamic allocation on from 3 executors, 20G disks. The run's
  `--conf`s come after the infrastructure's and take precedence over its defaults; dynamic allocation is turned
  off so `spark.executor.instances` is what the run gets.
- Billing (https://aws.amazon.com/emr/pricing/): per second of each worker's vCPU and GB, one minute at least.
- The engine (docs/performance/index.md): about 300,000 records/s per vCPU for JSON, 250,000 for Parquet, one Spark
  task per vCPU, one task per group of topic-partitions, at most `tasks.max` tasks. A task needs about 140 MB
  of Python with the engine imported plus its open files (150 MB at most in the memory bench): the smallest
  memory EMR allows per vCPU (2 GB) covers it with the JVM.

Spark tasks run only on executors (EMR Serverless has no local mode): a run has one executor at least.

The plan: a driver of 1 vCPU (2 GB; 4 GB for Iceberg tables, bounded or continuous: `driver_of`)
and `v` executor vCPUs. Every worker is billed for start-up (STARTUP_S) plus the work (W vCPU-seconds spread
over v): cost ~ (v + d) * (S + W / v), least at v = sqrt(d * W / S); so a run of up to ~30 vCPU-seconds gets one
1-vCPU executor, and v grows with the square root of the work, capped by the tasks the run can have, by the
executors a run may have (`emr.max_executors_per_run`, the trigger's MAX_EXECUTORS_PER_RUN) and by the
application's maximum capacity. Executors are 1, 2 or 4 vCPU (4, EMR's default, for anything above 4). With dynamic
allocation off, `spark.executor.instances` is the run's executor count and `spark.dynamicAllocation.maxExecutors`
has no effect, so the limit is applied here, to the count. `largest_run` is the biggest plan a connector's runs
can get, whatever their backlog (infra/capacity.py sums them at synthesis).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from lambdas.trigger.errors import TriggerConfigError

STARTUP_S = 30.0  # seconds from StartJobRun to the first task (image, archive, Spark): docs/performance/index.md
DISK_GB = 20  # every worker's disk: the free size (the engine buffers parts in memory, it spills nothing)
# memory range (GB) and step per worker vCPU count, from "Supported worker configurations"
WORKER_MEMORY = {1: (2, 8, 1), 2: (4, 16, 1), 4: (8, 30, 1), 8: (16, 60, 4), 16: (32, 120, 8)}
EXECUTOR_VCPUS = (1, 2, 4)
# records per vCPU-second by `format.class`: JSON and Parquet from docs/performance/index.md; the others
# from the single-process rows there relative to those (ByteArray and Block-GZIP run as JSON does, Avro at about
# 0.36 of Parquet, Iceberg at Parquet's CPU per record times 2.95 / 4.08)
RECORDS_PER_VCPU_S = {
    "json": 300_000,
    "bytearray": 300_000,
    "blockgzip": 250_000,
    "parquet": 250_000,
    "iceberg": 180_000,
    "avro": 90_000,
}
SLOWEST = min(RECORDS_PER_VCPU_S.values())


@dataclass(frozen=True)
class Worker:
    """One worker's size: vCPUs, memory GB (heap + overhead, an allowed size for its vCPUs), disk GB."""

    vcpu: int
    memory_gb: int
    disk_gb: int = DISK_GB

    def __post_init__(self) -> None:
        low, high, step = WORKER_MEMORY[self.vcpu]
        if not (low <= self.memory_gb <= high and (self.memory_gb - low) % step == 0):
            raise ValueError(f"{self.vcpu} vCPU workers have {low}-{high} GB in {step} GB steps, not {self.memory_gb}")

    @property
    def heap_gb(self) -> int:
        """The JVM's share (a quarter, 1 GB at least); the rest is overhead, where the Python processes live."""
        return max(1, self.memory_gb // 4)

    @property
    def overhead_gb(self) -> int:
        return self.memory_gb - self.heap_gb


def smallest(vcpu: int) -> Worker:
    """The least memory EMR Serverless allows for `vcpu` vCPUs."""
    return Worker(vcpu, WORKER_MEMORY[vcpu][0])


@dataclass(frozen=True)
class Capacity:
    """The application's maximum capacity (settings emr.max_capacity: "16 vCPU", "64 GB", "200 GB")."""

    vcpu: int
    memory_gb: int
    disk_gb: int

    @classmethod
    def parse(cls, cpu: str | None, memory: str | None, disk: str | None) -> Capacity:
        values = []
        for key, text, unit in (("MAX_CPU", cpu, "vCPU"), ("MAX_MEMORY", memory, "GB"), ("MAX_DISK", disk, "GB")):
            found = re.fullmatch(rf"\s*(\d+)\s*(?:{unit})?\s*", text or "", re.IGNORECASE)
            if not found:
                raise TriggerConfigError("(all)", key, f"{text!r} is not a number of {unit}")
            values.append(int(found.group(1)))
        return cls(*values)

    def fits(self, workers: Iterable[Worker]) -> bool:
        workers = list(workers)
        return (
            sum(w.vcpu for w in workers) <= self.vcpu
            and sum(w.memory_gb for w in workers) <= self.memory_gb
            and sum(w.disk_gb for w in workers) <= self.disk_gb
        )


@dataclass(frozen=True)
class Plan:
    """A run's workers: its driver and `executors` executors of one size; `spark_parameters` says so to Spark."""

    driver: Worker
    executor: Worker
    executors: int

    @property
    def workers(self) -> list[Worker]:
        return [self.driver] + [self.executor] * self.executors

    def spark_parameters(self) -> str:
        d, e = self.driver, self.executor
        conf = {
            "spark.driver.cores": d.vcpu,
            "spark.driver.memory": f"{d.heap_gb}g",
            "spark.driver.memoryOverhead": f"{d.overhead_gb}g",
            "spark.emr-serverless.driver.disk": f"{d.disk_gb}G",
            "spark.executor.cores": e.vcpu,
            "spark.executor.memory": f"{e.heap_gb}g",
            "spark.executor.memoryOverhead": f"{e.overhead_gb}g",
            "spark.emr-serverless.executor.disk": f"{e.disk_gb}G",
            "spark.dynamicAllocation.enabled": "false",
            "spark.executor.instances": self.executors,
        }
        return " ".join(f"--conf {key}={value}" for key, value in conf.items())


@dataclass(frozen=True)
class RunShape:
    """What of a connector's config decides its runs' size: `tasks.max`, `format.class` (canonical name) and
    `sink.run.max.records.per.partition`; an index entry without them gets the engine's defaults (one task)."""

    tasks_max: int = 1
    format: str = "json"
    max_records_per_partition: int = 1_000_000

    @classmethod
    def from_entry(cls, connector: str, entry: Mapping | None) -> RunShape:
        if entry is None:
            return cls()
        try:
            shape = cls(
                int(entry["tasks.max"]), str(entry["format.class"]), int(entry["sink.run.max.records.per.partition"])
            )
        except (KeyError, TypeError, ValueError) as e:
            raise TriggerConfigError(
                connector,
                "sizing",
                f"needs integer tasks.max and sink.run.max.records.per.partition, and format.class: {e!r}",
            ) from None
        if shape.tasks_max < 1 or shape.max_records_per_partition < 1:
            raise TriggerConfigError(
                connector, "sizing", "tasks.max and sink.run.max.records.per.partition must be positive"
            )
        return shape

    @property
    def records_per_vcpu_s(self) -> int:
        return RECORDS_PER_VCPU_S.get(self.format, SLOWEST)


def run_shape(shapes: Iterable[RunShape]) -> RunShape:
    """The shape of a run serving several connectors (lambdas/trigger/batches.py): the largest `tasks.max` of them,
    the slowest format, the largest per-partition cap. Its plan is then never larger than its largest member's
    `largest_run`, so infra/capacity.py's worst case (one run per connector) still bounds what runs at once."""
    shapes = list(shapes)
    return RunShape(
        max(s.tasks_max for s in shapes),
        min(shapes, key=lambda s: s.records_per_vcpu_s).format,
        max(s.max_records_per_partition for s in shapes),
    )


def work(shape: RunShape, behind: Iterable[int]) -> tuple[int, int]:
    """(records a run reads, tasks it can have) for `behind`, the offsets pending in each topic-partition."""
    pending = [min(b, shape.max_records_per_partition) for b in behind if b > 0]
    return sum(pending), max(1, min(shape.tasks_max, len(pending)))


def wanted_vcpus(records: int, tasks: int, shape: RunShape, driver_vcpu: int = 1) -> int:
    """The executor vCPUs that make the run cheapest (module docstring), at most one per task."""
    seconds = records / shape.records_per_vcpu_s
    return max(1, min(tasks, math.ceil(math.sqrt(driver_vcpu * seconds / STARTUP_S))))


def plan_run(
    shape: RunShape, behind: Iterable[int], capacity: Capacity, tables: bool = False, max_executors: int | None = None
) -> Plan:
    """The workers of a run that reads the offsets pending in `behind` (per topic-partition), with at most
    `max_executors` executors (None: no limit), within `capacity`; TriggerConfigError when not even a driver and one
    1-vCPU executor fit."""
    driver = driver_of(tables)
    records, tasks = work(shape, behind)
    executor, count = _executors(wanted_vcpus(records, tasks, shape, driver.vcpu), max_executors)
    return fit(driver, executor, count, capacity)


def largest_run(shape: RunShape, tables: bool = False, max_executors: int | None = None) -> Plan:
    """The biggest plan `plan_run` gives a run of `shape` with any backlog, before fitting it in the capacity: one
    executor vCPU per task of `tasks.max` (wanted_vcpus never asks more), within `max_executors`."""
    return Plan(driver_of(tables), *_executors(shape.tasks_max, max_executors))


def driver_of(tables: bool) -> Worker:
    """A run's driver: 1 vCPU; 2 GB for S3 objects (it plans, renews the lease, commits offsets), 4 GB for Iceberg
    tables, bounded or continuous alike: the driver loads each table's metadata to commit, and an upsert table's
    commit rewrites, in the driver's Python, the data files that hold a changed key
    (sink_engine/target/iceberg_tables/upsert.py:
    each such file read whole, the rows it keeps gathered until they pass the table's target file size, 512 MB of
    Arrow by default, which also bounds the files the engine writes). Of a worker's memory the JVM gets a quarter
    (Worker.heap_gb): 1 GB of a 2 GB driver is left to Python, 3 GB of a 4 GB one.

    Measured (`python -m devtools.bench_rewrite_memory`, 1% of the keys changed): the rewrite of one file of about
    450 MB of Arrow (207 MiB of Parquet) raised the process's RSS by 790-900 MiB, of two such files by 780-1,280 MiB,
    to a peak of 1.1-1.7 GB; `make bench-freshness --upsert` (one process: driver, producer, listing) peaked at 1,208
    MB against 1,077 MB for the same run writing JSON objects. 1 GB for Python cannot hold one such rewrite, 3 GB
    can (a 1-vCPU worker may have 2 to 8 GB)."""
    return Worker(1, 4 if tables else 2)


def continuous_run(shape: RunShape, max_executors: int | None = None, tables: bool = False) -> Plan:
    """The workers of a continuous run (`sink-engine run --continuous`): its driver (`driver_of`: it renews the
    lease, and with Iceberg `tables` commits a snapshot per table every commit interval) and one executor vCPU per
    task of `tasks.max`, within `max_executors`. Each of
    its tasks is long-lived and holds its executor core for the whole run, and a task that gets no core never starts
    (its partitions would wait): the engine runs at most as many tasks as Spark has cores, so `tasks.max` cores make
    all of them run. The size does not follow a backlog: the run lasts weeks (its first minutes drain what is pending,
    on these same workers)."""
    return Plan(driver_of(tables), *_executors(shape.tasks_max, max_executors))


def _executors(vcpus: int, max_executors: int | None) -> tuple[Worker, int]:
    """The executor size and count that give `vcpus` (at most `max_executors` of the largest size)."""
    count = math.ceil(vcpus / EXECUTOR_VCPUS[-1])
    if max_executors is not None and count > max_executors:
        count, vcpus = max_executors, max_executors * EXECUTOR_VCPUS[-1]
    return smallest(next(v for v in EXECUTOR_VCPUS if v * count >= vcpus)), count


def fit(driver: Worker, executor: Worker, count: int, capacity: Capacity) -> Plan:
    """`count` executors of `executor`'s size beside `driver`, fewer (then smaller ones) until they fit."""
    while True:
        while count >= 1:
            plan = Plan(driver, executor, count)
            if capacity.fits(plan.workers):
                return plan
            count -= 1
        smaller = [v for v in EXECUTOR_VCPUS if v < executor.vcpu]
        if not smaller:
            raise TriggerConfigError(
                "(all)",
                "emr.max_capacity",
                f"{capacity} cannot hold a driver of "
                f"{driver.vcpu} vCPU / {driver.memory_gb} GB and one executor of 1 vCPU / 2 GB",
            )
        executor, count = smallest(smaller[-1]), 1


# `sink-engine iceberg maintain` works in the driver alone (pyiceberg: it reads a partition's small files into
# Arrow and writes target-size ones, 512 MB by default): the largest 1-vCPU driver. It starts no SparkContext, so
# no executor should start; the one named is the smallest, in case EMR starts it all the same.
UPKEEP = Plan(Worker(1, 8), smallest(1), 1)
