"""What one GB landed costs on EMR Serverless (ARM, us-east-1) on the workers the trigger would choose for the run
(lambdas/trigger/sizing.py), beside Amazon Data Firehose with an MSK source. Prints a table. Usage:
    python -m devtools.emr_cost [--gigabytes 1 10 100] [--record-bytes 224] [--tasks-max 64]

Model: a run's records are `gigabytes` of `record-bytes` values spread over enough partitions, the connector's
`tasks.max` high enough not to limit it, the application's maximum capacity prod's (64 vCPU, 256 GB, 1,000 GB).
Its workers are the trigger's plan; each is up for start-up (sizing.STARTUP_S) plus the work (records over the
plan's executor vCPUs at sizing.RECORDS_PER_VCPU_S) and billed per second for its vCPUs and GB, one minute at
least; disks stay at the free 20 GB.

Prices (USD, us-east-1), as AWS's pricing pages listed them when this tool was first written (2026-11-23; the
pages render their tables client-side and were not re-read since):
- EMR Serverless, ARM: 0.042094 per vCPU-hour, 0.004628 per GB-hour, one minute at least per worker
  (https://aws.amazon.com/emr/pricing/, "Amazon EMR Serverless").
- Amazon Data Firehose, MSK as the source: 0.055 per GB ingested; conversion to Parquet 0.018 per GB more
  (https://aws.amazon.com/firehose/pricing/).
"""

from __future__ import annotations

import argparse
import math
from dataclasses import dataclass

from lambdas.trigger.sizing import STARTUP_S, Capacity, Plan, RunShape, plan_run

VCPU_HOUR, GB_HOUR = 0.042094, 0.004628
FIREHOSE_GB = {"json": 0.055, "parquet": 0.055 + 0.018}
LABELS = {"json": "JSON", "parquet": "Parquet"}
MINIMUM_S = 60  # billed seconds per worker at least
PROD_CAPACITY = Capacity(64, 256, 1000)
PARTITIONS = 64


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
    usd = sum(billed / 3600 * (w.vcpu * VCPU_HOUR + w.memory_gb * GB_HOUR) for w in plan.workers)
    return RunCost(output, gigabytes, plan, seconds, usd)


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
    args = parser.parse_args()
    print(
        f"{args.record_bytes}-byte records over {PARTITIONS} partitions, tasks.max {args.tasks_max}, start-up "
        f"{STARTUP_S:.0f} s, {MINIMUM_S} s billed at least per worker"
    )
    print("\n".join(table(args.gigabytes, args.record_bytes, args.tasks_max)))


if __name__ == "__main__":
    main()
