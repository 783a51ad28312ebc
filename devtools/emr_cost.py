"""What one GB landed costs on EMR Serverless (ARM, us-east-1) on the workers the trigger would choose for the run
(lambdas/trigger/sizing.py), beside Amazon Data Firehose with an MSK source; and a continuous connector's job against
triggered runs at steady rates; environments of many connectors in four shapes. Prints three tables. Usage:
    python -m devtools.emr_cost [--gigabytes 1 10 100] [--record-bytes 224] [--tasks-max 64]
                                [--rates 0.1 1 10] [--partitions 12] [--schedule-s 5] [--format json]
                                [--connectors 1 20 500] [--env-rates 0.01 0.1 1 10] [--env-partitions 4]

Model: a run's records are `gigabytes` of `record-bytes` values spread over enough partitions, the connector's
`tasks.max` high enough not to limit it, the application's maximum capacity prod's (64 vCPU, 256 GB, 1,000 GB).
Its workers are the trigger's plan; each is up for start-up (sizing.STARTUP_S) plus the work (records over the
plan's executor vCPUs at sizing.RECORDS_PER_VCPU_S) and billed per second for its vCPUs and GB, one minute at
least; disks stay at the free 20 GB.

Prices: devtools/emr_prices.py. The third table, per environment of many connectors: devtools/environment_cost.py.

Continuous against triggered (`rate_costs`), a month of 730 hours at a steady `rate` MB/s of `record-bytes`
records over `partitions` partitions:
- continuous: the job's workers (sizing.continuous_run: S3 objects' 1-vCPU / 2 GB driver and one executor vCPU per
  task, the tasks the rate needs at CONTINUOUS_RECORDS_PER_VCPU_S, half of a vCPU's bounded rate: make
  bench-freshness measured a continuous run's CPU per record at most 1.2x a bounded run's, and the half leaves room
  to catch up after a restart) billed all month; every partition closes a file per `schedule-s`
  (`rotate.schedule.interval.ms`); its freshness about the schedule and a second (make bench-freshness: p99 5-6 s at
  a 5 s schedule).
- triggered (the shipped connectors: flush.size 10,000, a 600 s schedule; the 300 s tick; batches every 30 s at
  most): a run whenever a partition fills flush.size or the schedule passes, one at a time, each on the trigger's
  workers for its backlog (`run_cost`); its freshness that interval, the batching window and the run (a quiet
  partition: the tick, 300 s, more).
- requests: an S3 PUT per file, and emr_prices.WRITE_UNITS_PER_FILE DynamoDB write units (an assumption: the
  recorded cut and its deletion, the file's share of a commit transaction, 2 units per transactional item).
"""

from __future__ import annotations

import argparse
import math
from dataclasses import dataclass

from devtools.emr_prices import (
    FIREHOSE_GB,
    HOURS_PER_MONTH,
    MINIMUM_S,
    PROD_CAPACITY,
    hourly_usd,
    requests_usd,
)
from devtools.environment_cost import environment_table, goals
from lambdas.trigger.sizing import RECORDS_PER_VCPU_S, STARTUP_S, Capacity, Plan, RunShape, continuous_run, plan_run

LABELS = {"json": "JSON", "parquet": "Parquet"}
PARTITIONS = 64
CONTINUOUS_RECORDS_PER_VCPU_S = {fmt: rate / 2 for fmt, rate in RECORDS_PER_VCPU_S.items()}
SHIPPED_FLUSH_SIZE, SHIPPED_SCHEDULE_S, TICK_S, BATCH_WINDOW_S = 10_000, 600, 300, 30


@dataclass(frozen=True)
class RunCost:
    output: str
    gigabytes: float
    plan: Plan
    seconds: float
    usd: float

    @property
    def usd_per_gb(self) -> float:
        return self.usd / self.gigabytes

    @property
    def firehose_per_gb(self) -> float:
        return FIREHOSE_GB[self.output]


def run_cost(
    output: str,
    gigabytes: float,
    record_bytes: int = 224,
    tasks_max: int = PARTITIONS,
    capacity: Capacity = PROD_CAPACITY,
) -> RunCost:
    """The cost of one run landing `gigabytes` of `record_bytes` records as `output` (json | parquet), on the
    workers the trigger would choose."""
    records = int(gigabytes * 1e9 / record_bytes)
    shape = RunShape(tasks_max, output, records)
    behind = [records // PARTITIONS + (1 if p < records % PARTITIONS else 0) for p in range(PARTITIONS)]
    plan = plan_run(shape, behind, capacity)
    seconds = STARTUP_S + records / shape.records_per_vcpu_s / (plan.executor.vcpu * plan.executors)
    billed = max(MINIMUM_S, seconds)
    usd = billed / 3600 * hourly_usd(plan)
    return RunCost(output, gigabytes, plan, seconds, usd)


@dataclass(frozen=True)
class RateCost:
    """A month at a steady rate, in one mode: its workers, what they and the requests cost, the freshness."""

    mode: str  # continuous | triggered
    rate_mb_s: float
    workers: str
    compute_usd: float
    requests_usd: float
    freshness: str

    @property
    def gigabytes(self) -> float:
        return self.rate_mb_s * 3600 * HOURS_PER_MONTH / 1000

    @property
    def usd_per_gb(self) -> float:
        return (self.compute_usd + self.requests_usd) / self.gigabytes


def _workers(plan: Plan) -> str:
    d, e = plan.driver, plan.executor
    return f"{d.vcpu} vCPU / {d.memory_gb} GB + {plan.executors} x {e.vcpu} vCPU / {e.memory_gb} GB"


def continuous_cost(rate_mb_s: float, output: str, record_bytes: int, partitions: int, schedule_s: float) -> RateCost:
    """A continuous connector's job all month (see the module docstring)."""
    records_s = rate_mb_s * 1e6 / record_bytes
    tasks = max(1, math.ceil(records_s / CONTINUOUS_RECORDS_PER_VCPU_S[output]))
    plan = continuous_run(RunShape(tasks, output, 1_000_000))
    hourly = hourly_usd(plan)
    files = partitions * 3600 * HOURS_PER_MONTH / schedule_s
    return RateCost(
        "continuous",
        rate_mb_s,
        _workers(plan),
        hourly * HOURS_PER_MONTH,
        requests_usd(files),
        f"~{schedule_s:g}-{schedule_s + 1:g} s",
    )


def triggered_cost(rate_mb_s: float, output: str, record_bytes: int, partitions: int) -> RateCost:
    """Triggered runs all month with the shipped rotation (see the module docstring)."""
    records_s = rate_mb_s * 1e6 / record_bytes
    fill_s = SHIPPED_FLUSH_SIZE * partitions / records_s  # the fullest partition passes flush.size (even spread)
    interval = min(SHIPPED_SCHEDULE_S, fill_s)
    for _ in range(50):  # one run at a time: the next is due once this one ended, with what arrived meanwhile
        run = run_cost(output, rate_mb_s * interval / 1000, record_bytes, partitions)
        if run.seconds <= interval + 1e-6:
            break
        interval = run.seconds
    runs = 3600 * HOURS_PER_MONTH / interval
    files_per_run = max(partitions, rate_mb_s * 1e6 * interval / record_bytes / SHIPPED_FLUSH_SIZE)
    return RateCost(
        "triggered",
        rate_mb_s,
        _workers(run.plan),
        run.usd * runs,
        requests_usd(files_per_run * runs),
        f"~{interval + min(BATCH_WINDOW_S, interval) + run.seconds:.0f} s (quiet partition: +{TICK_S} s)",
    )


def rate_table(rates: list[float], output: str, record_bytes: int, partitions: int, schedule_s: float) -> list[str]:
    """The README's continuous-against-triggered table: per rate, each mode's month and USD per GB."""
    lines = [
        "| MB/s | GB per month | mode | workers | EMR USD per month | S3 + DynamoDB requests USD per month | "
        "USD per GB | freshness | Firehose USD per GB (its buffer interval: 0-900 s) |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for rate in rates:
        for cost in (
            continuous_cost(rate, output, record_bytes, partitions, schedule_s),
            triggered_cost(rate, output, record_bytes, partitions),
        ):
            lines.append(
                f"| {rate:g} | {cost.gigabytes:,.0f} | {cost.mode} | {cost.workers} | {cost.compute_usd:,.2f} | "
                f"{cost.requests_usd:,.2f} | {cost.usd_per_gb:.4f} | {cost.freshness} | {FIREHOSE_GB[output]:.3f} |"
            )
    return lines


def break_even_mb_s(output: str, record_bytes: int, partitions: int, schedule_s: float) -> float:
    """The rate above which a continuous job costs less per GB than Firehose."""
    floor = continuous_cost(0.001, output, record_bytes, partitions, schedule_s)
    monthly = floor.compute_usd + floor.requests_usd
    return monthly / FIREHOSE_GB[output] * 1000 / (3600 * HOURS_PER_MONTH)


def table(gigabytes: list[float], record_bytes: int, tasks_max: int) -> list[str]:
    """The cost table of docs/performance/index.md, one row per output and run size."""
    lines = [
        "| output | GB per run | driver | executors | run s | USD per run | USD per GB | "
        "Firehose (MSK source) USD per GB | Firehose / EMR |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for output in FIREHOSE_GB:
        for size in gigabytes:
            cost = run_cost(output, size, record_bytes, tasks_max)
            d, e = cost.plan.driver, cost.plan.executor
            lines.append(
                f"| {LABELS[output]} | {size:g} | {d.vcpu} vCPU / {d.memory_gb} GB | {cost.plan.executors} x "
                f"{e.vcpu} vCPU / {e.memory_gb} GB | {math.ceil(cost.seconds)} | {cost.usd:.5f} | "
                f"{cost.usd_per_gb:.5f} | {cost.firehose_per_gb:.3f} | "
                f"{cost.firehose_per_gb / cost.usd_per_gb:.0f}x |"
            )
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gigabytes", type=float, nargs="+", default=[1, 10, 100])
    parser.add_argument("--record-bytes", type=int, default=224)
    parser.add_argument("--tasks-max", type=int, default=PARTITIONS)
    parser.add_argument("--rates", type=float, nargs="+", default=[0.1, 1, 10], help="MB/s")
    parser.add_argument("--partitions", type=int, default=12, help="of the continuous/triggered table's topic")
    parser.add_argument("--schedule-s", type=float, default=5.0, help="the continuous connector's rotation schedule")
    parser.add_argument("--connectors", type=int, nargs="+", default=[1, 20, 500], help="per environment")
    parser.add_argument("--env-rates", type=float, nargs="+", default=[0.01, 0.1, 1, 10], help="MB/s per connector")
    parser.add_argument("--env-partitions", type=int, default=4, help="per connector, in the environment table")
    parser.add_argument("--format", choices=sorted(FIREHOSE_GB), default="json")
    args = parser.parse_args()
    print(
        f"{args.record_bytes}-byte records over {PARTITIONS} partitions, tasks.max {args.tasks_max}, start-up "
        f"{STARTUP_S:.0f} s, {MINIMUM_S} s billed at least per worker"
    )
    print("\n".join(table(args.gigabytes, args.record_bytes, args.tasks_max)))
    print()
    print(
        f"Continuous ({args.schedule_s:g} s schedule) against triggered (flush.size {SHIPPED_FLUSH_SIZE:,}, "
        f"{SHIPPED_SCHEDULE_S} s schedule), {LABELS[args.format]}, {args.record_bytes}-byte records over "
        f"{args.partitions} partitions, {HOURS_PER_MONTH} hours a month"
    )
    print("\n".join(rate_table(args.rates, args.format, args.record_bytes, args.partitions, args.schedule_s)))
    even = break_even_mb_s(args.format, args.record_bytes, args.partitions, args.schedule_s)
    print(f"A continuous job costs less per GB than Firehose above {even:.2f} MB/s ({even * 2628:,.0f} GB a month).")
    print()
    print(
        f"Environments (devtools/environment_cost.py), JSON, {args.record_bytes}-byte records, "
        f"{args.env_partitions} partitions per connector"
    )
    print("\n".join(environment_table(args.connectors, args.env_rates, args.env_partitions)))
    print("Issue 40's goals, 500 connectors at 0.1 MB/s each:")
    print("\n".join(f"- {'holds' if holds else 'does not hold'}: {text}" for text, holds in goals(args.env_partitions)))


if __name__ == "__main__":
    main()
