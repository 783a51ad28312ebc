"""EMR Serverless' account-level quotas an environment must fit, checked at synth.

"Endpoints and quotas for EMR Serverless", EMR Serverless User Guide
(https://docs.aws.amazon.com/emr/latest/EMR-Serverless-UserGuide/endpoints-quotas.html):
- "Max concurrent vCPUs per account" (Service Quotas code L-D05C8A75): 16 by default, adjustable, and new accounts
  start lower; every application of the account in the Region shares it. `emr.account_vcpu_quota` says what the
  account has (default ACCOUNT_VCPU_QUOTA); the environment's worst case must fit in it: the vCPUs of every run that
  may be under way at once, at their largest, as infra/capacity.py `check_concurrency` sums them for the maximum
  capacity (the continuous jobs at their size plus the MaxConcurrentRuns largest others, with the trigger's own
  sizing: lambdas/trigger/sizing.py). Past the quota EMR would not start the workers, and runs would fail or wait.
- StartJobRun: 1 transaction per second, a burst of 25 (an API limit, not in Service Quotas). The trigger starts the
  connectors due at one tick together, in job runs of up to `trigger.connectors_per_run` connectors of one job role
  (lambdas/trigger/batches.py), and starts at most 25 such runs an invocation: the runs past them wait for the
  next tick, `trigger.idle_flush_minutes` later, and so on, 25 runs a tick. A job run has one execution role, and
  each deployed connector runs as its own (infra/constructs/job_role.py): deployed connectors do not share job runs
  yet, and each counts as one run. Falling due on one tick, at worst: every bounded connector
  with a scheduled rotation (`rotate.schedule.interval.ms`: its boundaries are multiples of the interval past local
  midnight, so connectors with one interval share every boundary, and 600,000 ms, the shipped one, meets the other
  divisors of the hour), every continuous connector (a tick starts each continuous job that is not running, as after
  a redeploy that cancelled them) and the IcebergFormat connectors whose table upkeep shares a schedule (each a
  schedule of its own that invokes the trigger at the same second). Runs due by `flush.size` or an interval follow
  the data, not the clock, and are not counted.
"""

from __future__ import annotations

from collections import Counter

from infra.capacity import Concurrency
from infra.connectors import ROTATION_KEYS, ConnectorSpec
from infra.constructs.maintenance import maintenance_schedule
from infra.errors import SettingsError
from infra.settings import Settings

ACCOUNT_VCPU_QUOTA = 16  # "Max concurrent vCPUs per account", its default
START_JOB_RUN_BURST = 25  # StartJobRun's burst (1 per second after it)


def check_vcpu_quota(settings: Settings, concurrency: Concurrency) -> None:
    """SettingsError naming `emr.account_vcpu_quota` when the environment's worst case (`concurrency.footprint`,
    infra/capacity.py) needs more vCPUs at once than the account's quota."""
    quota, need = settings.emr.account_vcpu_quota, concurrency.footprint.cpu
    if need > quota:
        raise SettingsError(
            settings.source,
            "emr.account_vcpu_quota",
            (
                f"the environment may need {need} vCPUs at once (the runs that may be under way at once, at their "
                f"largest: infra/capacity.py), past the account's {quota} (EMR Serverless' 'Max concurrent vCPUs "
                f"per account', {ACCOUNT_VCPU_QUOTA} by default): raise the quota (Service Quotas, L-D05C8A75) and "
                "set this to it, or lower emr.concurrent_runs, emr.max_executors_per_run or tasks.max"
            ),
        )


def starts_per_tick(settings: Settings, connectors: tuple[ConnectorSpec, ...]) -> dict[str, int]:
    """The StartJobRun calls that may fall on one trigger tick (module docstring), by the setting that makes them."""
    scheduled = sum(
        1
        for c in connectors
        if not c.continuous and int(str(c.config.values_of(ROTATION_KEYS)["rotate.schedule.interval.ms"])) > 0
    )
    upkeep = Counter(maintenance_schedule(settings, c) for c in connectors if c.iceberg is not None)
    return {
        "rotate.schedule.interval.ms": scheduled,
        "continuous.connectors": sum(1 for c in connectors if c.continuous),
        "iceberg.maintenance_schedule": max(upkeep.values(), default=0),
    }


def check_start_rate(settings: Settings, connectors: tuple[ConnectorSpec, ...]) -> None:
    """SettingsError naming the setting behind most of one tick's StartJobRun calls when they pass EMR's burst."""
    starts = starts_per_tick(settings, connectors)
    total = sum(starts.values())
    if total <= START_JOB_RUN_BURST:
        return
    cause = max(starts, key=lambda key: starts[key])
    counts = ", ".join(f"{n} by {key}" for key, n in starts.items() if n)
    source = str(settings.connectors_dir) if cause == "rotate.schedule.interval.ms" else settings.source
    raise SettingsError(
        source,
        cause,
        (
            f"one trigger tick may start {total} EMR job runs ({counts}), one StartJobRun each, back to back, past "
            f"EMR Serverless' burst of {START_JOB_RUN_BURST} (then 1 per second): the calls past it are throttled "
            "and the tick fails; turn off the scheduled rotation (-1) of some connectors, give their upkeep other "
            "schedules, or deploy fewer connectors to this environment"
        ),
    )
