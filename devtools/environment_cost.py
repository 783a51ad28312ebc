"""What an environment of many connectors costs per GB landed, in four shapes, and whether issue 40's goals hold by
the model: the third table of `python -m devtools.emr_cost`.

An environment: `connectors` connectors, each `rate` MB/s of `record_bytes`-byte JSON records spread evenly over
`partitions` partitions, a month of 730 hours. The shapes:
- continuous shared: one STREAMING job serves every connector, sized by their total rate: executor vCPUs at
  emr_cost.CONTINUOUS_RECORDS_PER_VCPU_S (150,000 JSON records/s per vCPU: half of the 300,000 the trigger sizes
  bounded runs by, sizing.RECORDS_PER_VCPU_S, which docs/performance/index.md "Executors as separate processes"
  measured at 365,000 per CPU-second on executors; a continuous run's CPU per record is 0.96x a bounded run's,
  docs/continuous.md "Freshness, measured"), on sizing.continuous_run's plan for that many tasks. It assumes the
  job multiplexes the connectors' partitions onto its cores; a continuous task holds its core for the job's life,
  so a job that gave each connector a task of its own would need a core per connector (500 for 500). Freshness
  bound F: each partition closes a file every F - CONTINUOUS_UPLOAD_S seconds (`rotate.schedule.interval.ms`):
  make bench-freshness measured p99 5.37-6.00 s at a 5 s schedule, the schedule plus about a second.
- triggered batched: every `interval` (a tick of the trigger, at least TICK_S) each connector's run is due; they
  start together in runs of batches.CONNECTORS_PER_RUN (the deployed default), at most quotas.START_JOB_RUN_BURST
  StartJobRuns a tick. A run's workers are the trigger's plan (sizing.run_shape, sizing.plan_run, as
  runs.JobSpec.sizes); it lasts RUN_STARTUP_S for its first connector and MEMBER_S for each other (make
  bench-configs: one small connector alone 43.9 s, ten in one application 61.2 s) plus its records at the plan's
  executor vCPUs, each worker billed one minute at least. Freshness: the interval plus the run (a record just after
  a run's cut waits for the next). All of a tick's runs are under way at once (their connectors fall due together).
- one job per connector (today's deployed continuous shape): a STREAMING job each, sizing.continuous_run with one
  executor vCPU per task of `tasks.max` (here the connector's partitions), as infra/capacity.py counts it.
- Firehose (MSK source): emr_prices.FIREHOSE_GB; its freshness its buffer interval.
Requests: an S3 PUT and emr_prices.WRITE_UNITS_PER_FILE DynamoDB write units per file; a partition closes a file per
window when it had records, and one per `flush.size` (triggered: the shipped 10,000).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from devtools.emr_prices import (
    FIREHOSE_GB,
    MINIMUM_S,
    PROD_CAPACITY,
    SECONDS_PER_MONTH,
    hourly_usd,
    requests_usd,
    vcpus,
)
from infra.quotas import ACCOUNT_VCPU_QUOTA, START_JOB_RUN_BURST
from lambdas.trigger.batches import CONNECTORS_PER_RUN
from lambdas.trigger.sizing import RECORDS_PER_VCPU_S, Plan, RunShape, continuous_run, plan_run, run_shape

CONTINUOUS_RECORDS_PER_VCPU_S = RECORDS_PER_VCPU_S["json"] / 2  # as emr_cost's continuous connector
CONTINUOUS_UPLOAD_S = 1.0  # p99 past the schedule (make bench-freshness: 6.00 s at 5 s)
RUN_STARTUP_S = 43.9  # make bench-configs: one small connector alone
MEMBER_S = (61.2 - 43.9) / 9  # make bench-configs: each further connector of ten in one application
TICK_S = 60  # the trigger's shortest schedule (EventBridge: a rate of 1 minute at least)
FLUSH_SIZE = 10_000  # the shipped connectors' flush.size


@dataclass(frozen=True)
class Environment:
    connectors: int
    rate_mb_s: float  # each
    partitions: int = 4  # each
    record_bytes: int = 224

    @property
    def records_s(self) -> float:
        """Each connector's."""
        return self.rate_mb_s * 1e6 / self.record_bytes

    @property
    def gigabytes(self) -> float:
        """The environment's in a month."""
        return self.connectors * self.rate_mb_s * SECONDS_PER_MONTH / 1000

    def files(self, window_s: float) -> float:
        """The files one connector closes per window of `window_s` seconds."""
        records = self.records_s * window_s
        return max(min(self.partitions, records), records / FLUSH_SIZE)


@dataclass(frozen=True)
class Shape:
    """An environment in one shape for a month: EMR's bill, the files, the vCPUs at once, the StartJobRuns a tick
    (at worst), and the p99 freshness."""

    name: str
    compute_usd: float
    files: float
    vcpus: int
    starts_per_tick: int
    freshness_s: float

    def usd_per_gb(self, env: Environment) -> float:
        return (self.compute_usd + requests_usd(self.files)) / env.gigabytes


def continuous_shared(env: Environment, bound_s: float) -> Shape:
    """One job for every connector, sized by their total rate, closing files to meet a p99 of `bound_s`."""
    window = bound_s - CONTINUOUS_UPLOAD_S
    plan = continuous_run(RunShape(math.ceil(env.connectors * env.records_s / CONTINUOUS_RECORDS_PER_VCPU_S)))
    files = env.connectors * env.files(window) * SECONDS_PER_MONTH / window
    return Shape(
        f"continuous shared, {bound_s:g} s", hourly_usd(plan) * SECONDS_PER_MONTH / 3600, files, vcpus(plan), 1, bound_s
    )


def batched_run(env: Environment, members: int, interval_s: float) -> tuple[Plan, float]:
    """The plan of a run of `members` connectors, each `interval_s` of records behind, and its seconds."""
    shape = run_shape([RunShape(env.partitions)] * members)
    behind = [math.ceil(env.records_s * interval_s / env.partitions)] * (members * env.partitions)
    plan = plan_run(shape, behind, PROD_CAPACITY)
    work = sum(behind) / shape.records_per_vcpu_s / (plan.executor.vcpu * plan.executors)
    return plan, RUN_STARTUP_S + MEMBER_S * (members - 1) + work


def triggered_batched(env: Environment, interval_s: float, per_run: int = CONNECTORS_PER_RUN) -> Shape:
    """Every connector's run due each `interval_s` (rounded up to ticks, and to the run's length: one run a
    connector at a time), started together in runs of `per_run`."""
    runs = math.ceil(env.connectors / per_run)
    members = min(env.connectors, per_run)
    plan, seconds = batched_run(env, members, interval_s)
    interval = TICK_S * math.ceil(max(interval_s, seconds) / TICK_S)
    per_month = SECONDS_PER_MONTH / interval
    usd = runs * per_month * max(MINIMUM_S, seconds) / 3600 * hourly_usd(plan)
    files = env.connectors * env.files(interval) * per_month
    name = f"triggered batched, due every {interval_s:g} s"
    return Shape(name, usd, files, runs * vcpus(plan), min(runs, START_JOB_RUN_BURST), interval + seconds)


def one_job_per_connector(env: Environment, bound_s: float) -> Shape:
    """A STREAMING job per connector (today's deployed shape), `tasks.max` its partitions."""
    plan = continuous_run(RunShape(env.partitions))
    window = bound_s - CONTINUOUS_UPLOAD_S
    files = env.connectors * env.files(window) * SECONDS_PER_MONTH / window
    usd = env.connectors * hourly_usd(plan) * SECONDS_PER_MONTH / 3600
    return Shape(
        f"one job per connector, {bound_s:g} s", usd, files, env.connectors * vcpus(plan), env.connectors, bound_s
    )


def shapes(env: Environment) -> list[Shape]:
    """The table's shapes of `env`, in its column order."""
    return [
        continuous_shared(env, 10),
        continuous_shared(env, 60),
        triggered_batched(env, TICK_S),
        triggered_batched(env, 600),
        one_job_per_connector(env, 10),
    ]


def environment_table(connectors: list[int], rates: list[float], partitions: int) -> list[str]:
    """Per environment and rate: each shape's USD per GB, p99 freshness, vCPUs at once, StartJobRuns a tick."""
    names = [s.name for s in shapes(Environment(1, 1.0, partitions))]
    lines = [
        "| connectors | MB/s each | GB per month | "
        + " | ".join(f"{n}: USD/GB, p99 s, vCPUs, starts/tick" for n in names)
        + " | Firehose USD/GB (buffer 0-900 s) |",
        "|---|---|---|" + "---|" * len(names) + "---|",
    ]
    for count in connectors:
        for rate in rates:
            env = Environment(count, rate, partitions)
            cells = [
                f"{s.usd_per_gb(env):.4f}, {s.freshness_s:.0f}, {s.vcpus}, {s.starts_per_tick}" for s in shapes(env)
            ]
            lines.append(
                f"| {count} | {rate:g} | {env.gigabytes:,.0f} | " + " | ".join(cells) + f" | {FIREHOSE_GB['json']} |"
            )
    return lines


def goals(partitions: int) -> list[tuple[str, bool]]:
    """Issue 40's goals for 500 connectors at 0.1 MB/s each, by the model: (goal and figures, holds)."""
    env, firehose = Environment(500, 0.1, partitions), FIREHOSE_GB["json"]
    fast, slow = continuous_shared(env, 10), continuous_shared(env, 60)
    checks = []
    for shape, share, text in ((fast, 2, "half"), (slow, 8, "one eighth")):
        usd = shape.usd_per_gb(env)
        checks.append(
            (
                f"{shape.name}: {usd:.4f} USD/GB, at most {text} of Firehose's ({firehose / share:.4f})",
                usd <= firehose / share,
            )
        )
    for shape in shapes(env):
        checks.append(
            (
                f"{shape.name}: {shape.vcpus} vCPUs at once, within {ACCOUNT_VCPU_QUOTA}",
                shape.vcpus <= ACCOUNT_VCPU_QUOTA,
            )
        )
        checks.append(
            (
                f"{shape.name}: {shape.starts_per_tick} StartJobRuns a tick, within the burst of "
                f"{START_JOB_RUN_BURST} (1 per second after it)",
                shape.starts_per_tick <= START_JOB_RUN_BURST,
            )
        )
    return checks
