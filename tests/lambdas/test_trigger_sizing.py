"""Run sizing, pure: the workers a run gets for the offsets pending, within the application's maximum capacity,
each on a size EMR Serverless allows, and the cost table built from those plans (devtools/emr_cost.py)."""

from __future__ import annotations

import shlex

import pytest

from devtools.emr_cost import (
    FIREHOSE_GB,
    break_even_mb_s,
    continuous_cost,
    rate_table,
    run_cost,
    table,
    triggered_cost,
)
from lambdas.trigger.errors import TriggerConfigError
from lambdas.trigger.sizing import (
    UPKEEP,
    Capacity,
    Plan,
    RunShape,
    Worker,
    continuous_run,
    largest_run,
    plan_run,
)

DEV, PROD = Capacity(16, 64, 200), Capacity(64, 256, 1000)
WIDE = RunShape(tasks_max=64, format="json", max_records_per_partition=10**12)
# "Supported worker configurations" (EMR Serverless User Guide): vCPU -> memory GB allowed
ALLOWED_GB = {1: range(2, 9), 2: range(4, 17), 4: range(8, 31), 8: range(16, 61, 4), 16: range(32, 121, 8)}


def _confs(plan: Plan) -> dict[str, str]:
    words = shlex.split(plan.spark_parameters())
    assert words[::2] == ["--conf"] * (len(words) // 2)
    return dict(w.split("=", 1) for w in words[1::2])


def _gb(value: str) -> int:
    assert value.endswith("g"), value
    return int(value[:-1])


def test_a_small_run_gets_the_smallest_driver_and_one_smallest_executor():
    plan = plan_run(WIDE, [1_000, 20, 3], DEV)
    assert plan == Plan(Worker(1, 2), Worker(1, 2), 1)
    assert _confs(plan) == {
        "spark.driver.cores": "1",
        "spark.driver.memory": "1g",
        "spark.driver.memoryOverhead": "1g",
        "spark.emr-serverless.driver.disk": "20G",
        "spark.executor.cores": "1",
        "spark.executor.memory": "1g",
        "spark.executor.memoryOverhead": "1g",
        "spark.emr-serverless.executor.disk": "20G",
        "spark.dynamicAllocation.enabled": "false",
        "spark.executor.instances": "1",
    }


@pytest.mark.parametrize("behind", [(), (0, 0)])
def test_a_run_with_nothing_known_pending_still_has_one_executor(behind):
    # Spark runs tasks only on executors: a first or forced run finds what the trigger never saw
    assert plan_run(WIDE, behind, DEV) == Plan(Worker(1, 2), Worker(1, 2), 1)


@pytest.mark.parametrize(
    "records, executor, count",
    [
        (4_464_285, Worker(1, 2), 1),  # 1 GB of 224-byte JSON records: 15 vCPU-s of work
        (20_000_000, Worker(2, 4), 1),  # 67 vCPU-s: two vCPUs
        (44_642_857, Worker(4, 8), 1),  # 10 GB
        (446_428_571, Worker(4, 8), 2),  # 100 GB: 1,488 vCPU-s, 8 vCPUs
        (4_464_285_714, Worker(4, 8), 6),  # 1 TB
    ],
)
def test_executors_grow_with_the_work_up_to_emrs_default_worker_size(records, executor, count):
    plan = plan_run(WIDE, [records // 64] * 64, PROD)
    assert (plan.driver, plan.executor, plan.executors) == (Worker(1, 2), executor, count)


def test_a_run_gets_no_more_executor_vcpus_than_it_has_tasks():
    huge = [10**9] * 64
    assert plan_run(RunShape(1, "json", 10**12), huge, PROD) == Plan(Worker(1, 2), Worker(1, 2), 1)
    assert plan_run(RunShape(64, "json", 10**12), [10**9] * 2, PROD).executor == Worker(2, 4)  # 2 partitions


@pytest.mark.parametrize(
    "max_executors, executor, count",
    [(None, Worker(4, 8), 6), (6, Worker(4, 8), 6), (2, Worker(4, 8), 2), (1, Worker(4, 8), 1)],
)
def test_max_executors_limits_the_executors_of_a_run(max_executors, executor, count):
    # 1 TB of JSON wants six 4-vCPU executors; emr.max_executors_per_run caps the count, at the largest size
    plan = plan_run(WIDE, [4_464_285_714 // 64] * 64, PROD, max_executors=max_executors)
    assert (plan.executor, plan.executors) == (executor, count)
    assert plan.spark_parameters().count("spark.executor.instances=") == 1


def test_a_small_run_is_not_grown_by_max_executors():
    assert plan_run(WIDE, [1_000], PROD, max_executors=4) == Plan(Worker(1, 2), Worker(1, 2), 1)


@pytest.mark.parametrize(
    "tasks, tables, max_executors, expected",
    [
        (1, False, 3, Plan(Worker(1, 2), Worker(1, 2), 1)),
        (2, False, 3, Plan(Worker(1, 2), Worker(2, 4), 1)),
        (4, True, 3, Plan(Worker(1, 4), Worker(4, 8), 1)),
        (5, False, 3, Plan(Worker(1, 2), Worker(4, 8), 2)),
        (16, False, 4, Plan(Worker(1, 2), Worker(4, 8), 4)),
        (64, False, 4, Plan(Worker(1, 2), Worker(4, 8), 4)),
        (64, False, None, Plan(Worker(1, 2), Worker(4, 8), 16)),
    ],
)
def test_the_largest_run_of_a_connector_bounds_every_plan_it_gets(tasks, tables, max_executors, expected):
    shape = RunShape(tasks, "avro", 10**12)
    largest = largest_run(shape, tables, max_executors)
    assert largest == expected
    for behind in ([1], [10**6] * tasks, [10**9] * 64, [10**12] * 64):
        plan = plan_run(shape, behind, Capacity(10**4, 10**5, 10**6), tables, max_executors)
        assert [
            sum(getattr(w, a) for w in plan.workers) <= sum(getattr(w, a) for w in largest.workers)
            for a in ("vcpu", "memory_gb", "disk_gb")
        ] == [True] * 3


def test_the_per_partition_cap_bounds_the_work_sized_for():
    # 64 partitions far behind, but a run reads at most 1,000 records of each
    assert plan_run(RunShape(64, "json", 1_000), [10**9] * 64, PROD) == Plan(Worker(1, 2), Worker(1, 2), 1)


def test_slower_formats_get_more_executors_for_the_same_records():
    behind = [3_000_000] * 64
    assert [plan_run(RunShape(64, fmt, 10**12), behind, PROD).executors for fmt in ("json", "avro")] == [2, 3]


@pytest.mark.parametrize(
    "capacity",
    [
        Capacity(2, 6, 40),
        Capacity(4, 8, 60),
        Capacity(6, 16, 200),
        DEV,
        Capacity(64, 20, 1000),
        Capacity(64, 256, 60),
        PROD,
    ],
)
@pytest.mark.parametrize("tables", [False, True])
def test_no_plan_exceeds_the_applications_maximum_capacity(capacity, tables):
    plan = plan_run(WIDE, [10**9] * 64, capacity, tables)
    assert sum(w.vcpu for w in plan.workers) <= capacity.vcpu
    assert sum(w.memory_gb for w in plan.workers) <= capacity.memory_gb
    assert sum(w.disk_gb for w in plan.workers) <= capacity.disk_gb
    assert plan.executors >= 1


def test_a_capacity_that_cannot_hold_a_driver_and_an_executor_is_refused_naming_the_setting():
    with pytest.raises(TriggerConfigError, match="emr.max_capacity"):
        plan_run(WIDE, [10], Capacity(1, 64, 200))
    with pytest.raises(TriggerConfigError, match="emr.max_capacity"):  # an Iceberg driver takes 4 GB
        plan_run(WIDE, [10], Capacity(2, 5, 200), tables=True)


@pytest.mark.parametrize("records", [0, 10**6, 10**8, 10**9, 10**11])
@pytest.mark.parametrize("tables", [False, True])
def test_each_worker_covers_heap_and_overhead_on_an_allowed_size(records, tables):
    plan = plan_run(WIDE, [records // 64] * 64, PROD, tables)
    confs = _confs(plan)
    for role, worker in (("driver", plan.driver), ("executor", plan.executor)):
        assert int(confs[f"spark.{role}.cores"]) == worker.vcpu
        heap, overhead = _gb(confs[f"spark.{role}.memory"]), _gb(confs[f"spark.{role}.memoryOverhead"])
        assert heap >= 1 and overhead >= 1  # Spark's default overhead is 384 MB at least; the Python work lives there
        assert heap + overhead == worker.memory_gb and worker.memory_gb in ALLOWED_GB[worker.vcpu]
    assert plan.driver.memory_gb == (4 if tables else 2)


@pytest.mark.parametrize("vcpu, memory_gb", [(1, 1), (1, 9), (2, 3), (4, 31), (8, 18), (16, 36), (3, 6)])
def test_a_worker_size_emr_does_not_allow_is_refused(vcpu, memory_gb):
    with pytest.raises((ValueError, KeyError)):
        Worker(vcpu, memory_gb)


def test_table_upkeep_runs_on_a_fixed_small_plan_that_fits_dev():
    assert UPKEEP.driver == Worker(1, 8) and (UPKEEP.executor, UPKEEP.executors) == (Worker(1, 2), 1)
    assert DEV.fits(UPKEEP.workers)


@pytest.mark.parametrize(
    "cpu, memory, disk, expected",
    [
        ("16 vCPU", "64 GB", "200 GB", Capacity(16, 64, 200)),
        ("64vCPU", "256GB", "1000GB", Capacity(64, 256, 1000)),
        ("8", "32", "100", Capacity(8, 32, 100)),
    ],
)
def test_the_maximum_capacity_reads_as_the_settings_write_it(cpu, memory, disk, expected):
    assert Capacity.parse(cpu, memory, disk) == expected


@pytest.mark.parametrize(
    "cpu, memory, disk, key",
    [
        ("lots", "64 GB", "200 GB", "MAX_CPU"),
        ("16 vCPU", "64 TB", "200 GB", "MAX_MEMORY"),
        ("16 vCPU", "64 GB", None, "MAX_DISK"),
    ],
)
def test_a_malformed_capacity_is_refused_naming_its_variable(cpu, memory, disk, key):
    with pytest.raises(TriggerConfigError, match=key):
        Capacity.parse(cpu, memory, disk)


def test_an_index_entry_without_sizing_gets_the_engines_defaults_and_a_bad_one_names_it():
    assert RunShape.from_entry("c", None) == RunShape(1, "json", 1_000_000)
    assert RunShape.from_entry(
        "c", {"tasks.max": 4, "format.class": "parquet", "sink.run.max.records.per.partition": 500}
    ) == RunShape(4, "parquet", 500)
    with pytest.raises(TriggerConfigError, match="'c', sizing"):
        RunShape.from_entry("c", {"tasks.max": "four", "format.class": "json", "sink.run.max.records.per.partition": 1})
    with pytest.raises(TriggerConfigError, match="'c', sizing"):
        RunShape.from_entry("c", {"tasks.max": 0, "format.class": "json", "sink.run.max.records.per.partition": 1})


# --- the cost table ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("output", list(FIREHOSE_GB))
def test_a_1_gb_run_costs_at_most_a_thirtieth_of_firehoses_price_per_gb(output):
    cost = run_cost(output, 1)
    assert cost.plan == Plan(Worker(1, 2), Worker(1, 2), 1)
    assert cost.seconds < 60  # the one-minute minimum of the two smallest workers is the whole bill
    assert cost.usd == pytest.approx(2 * (0.042094 + 2 * 0.004628) / 60)
    assert cost.usd_per_gb <= cost.firehose_per_gb / 30


def test_bigger_runs_cost_less_per_gb_and_the_table_has_a_row_per_output_and_size():
    costs = [run_cost("json", size).usd_per_gb for size in (1, 10, 100)]
    assert costs == sorted(costs, reverse=True)
    rows = table([1, 100], 224, 64)
    assert len(rows) == 2 + 2 * len(FIREHOSE_GB)
    assert rows[2].startswith("| JSON | 1 | 1 vCPU / 2 GB | 1 x 1 vCPU / 2 GB | 45 | 0.00171 |")


# --- continuous runs ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "tasks_max, max_executors, executor, count",
    [(1, None, 1, 1), (2, None, 2, 1), (4, 3, 4, 1), (6, 3, 4, 2), (16, 3, 4, 3)],
)
def test_a_continuous_run_has_a_core_per_task_within_the_executors_a_run_may_have(
    tasks_max, max_executors, executor, count
):
    plan = continuous_run(RunShape(tasks_max, "json", 1_000_000), max_executors)
    assert plan.driver == Worker(1, 2)
    assert (plan.executor.vcpu, plan.executors) == (executor, count)
    assert plan.executor.vcpu * plan.executors >= min(tasks_max, 4 * (max_executors or tasks_max))


def test_a_continuous_iceberg_driver_holds_what_a_bounded_iceberg_driver_holds():
    # its commits load table metadata and rewrite an upsert table's files in the driver, every commit interval
    shape = RunShape(4, "iceberg", 1_000_000)
    continuous, bounded = continuous_run(shape, 3, tables=True), largest_run(shape, tables=True, max_executors=3)
    assert continuous.driver == bounded.driver == Worker(1, 4)
    assert (continuous.driver.heap_gb, continuous.driver.overhead_gb) == (1, 3)  # 3 GB for the driver's Python
    assert continuous_run(shape, 3).driver == Worker(1, 2)  # S3 objects


def test_a_continuous_jobs_month_costs_its_floor_whatever_the_rate_and_beats_firehose_above_the_break_even():
    floor = 730 * 2 * (0.042094 + 2 * 0.004628)
    costs = [continuous_cost(rate, "json", 224, 12, 5.0) for rate in (0.1, 1, 10)]
    assert [c.compute_usd for c in costs] == [pytest.approx(floor)] * 3  # two smallest workers all month
    assert costs[0].usd_per_gb > FIREHOSE_GB["json"] > costs[2].usd_per_gb
    even = break_even_mb_s("json", 224, 12, 5.0)
    assert 0.1 < even < 10
    assert continuous_cost(even, "json", 224, 12, 5.0).usd_per_gb == pytest.approx(FIREHOSE_GB["json"])
    # a longer schedule closes fewer files: fewer requests, a lower break-even
    assert break_even_mb_s("json", 224, 12, 60.0) < even


def test_the_rate_table_has_a_continuous_and_a_triggered_row_per_rate():
    rows = rate_table([0.1, 1, 10], "json", 224, 12, 5.0)
    assert len(rows) == 2 + 2 * 3
    assert [r.split(" | ")[2] for r in rows[2:]] == ["continuous", "triggered"] * 3
    # triggered runs with the shipped rotation close a file per partition per run at most every 600 s
    slow = triggered_cost(0.1, "json", 224, 12)
    assert slow.usd_per_gb < continuous_cost(0.1, "json", 224, 12, 5.0).usd_per_gb
