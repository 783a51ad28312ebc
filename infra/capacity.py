"""How many job runs the EMR application runs at once (its scheduler's MaxConcurrentRuns) and whether its maximum
capacity holds them, both from the environment, checked at synth.

The runs that may be under way at once: each connector's data run (one at a time: its lease), each IcebergFormat
connector's table upkeep (its schedule, by default the same tick for all), one restore per connector with restores
deployed (`restore.connectors`; a second one into the same target waits for the first's lease), and DOCTOR_RUNS
doctor runs. From release 7.3.0 an application queues the runs past `SchedulerConfiguration.MaxConcurrentRuns`, 15
unless set, for up to `QueueTimeoutMinutes`, 360 unless set ("EMR Serverless 7.3.0" release notes,
https://docs.aws.amazon.com/emr/latest/EMR-Serverless-UserGuide/release-version-730.html; "Job concurrency and
queuing for an EMR Serverless application",
https://docs.aws.amazon.com/emr/latest/EMR-Serverless-UserGuide/applications-concurrency-queuing.html;
AWS::EMRServerless::Application SchedulerConfiguration, https://docs.aws.amazon.com/AWSCloudFormation/latest/UserGuide/aws-properties-emrserverless-application-schedulerconfiguration.html:
MaxConcurrentRuns 1 to 1000, QueueTimeoutMinutes 15 to 720). The trigger counts a QUEUED run as active and starts
nothing else for its connector, so past 15 connectors runs would wait hours. The stack sets MaxConcurrentRuns to
every run that may be under way, or to `emr.concurrent_runs` when that is set (fewer: the others queue, and the
trigger reports each queued run it sees: the `QueuedJobRuns` alarm). QueueTimeoutMinutes keeps EMR's 360: a run
queued that long fails, and the trigger retries it after its backoff.

What the runs need: a data run at most its connector's largest plan (lambdas/trigger/sizing.py `largest_run`: one
executor vCPU per task of `tasks.max`, at most `emr.max_executors_per_run` executors, the Iceberg driver's 4 GB),
the others the trigger's fixed small plan (`UPKEEP`). The maximum capacity must hold the MaxConcurrentRuns largest
of them: beyond it, runs the scheduler admitted would wait for capacity inside the application, unseen, while their
claims age. A capacity that cannot refuses synthesis (SettingsError naming `emr.max_capacity.<resource>`).

A continuous connector's job (`continuous.connectors.<name>`) runs all the time, on the plan a continuous run gets
(lambdas/trigger/sizing.py `continuous_run`: one executor vCPU per task of `tasks.max`, as its largest data run, and
the Iceberg driver's 4 GB with tables): its footprint is always part of what the capacity must hold, and with
`emr.concurrent_runs` at least one slot beside the continuous jobs must stay free for the other runs (fewer would
queue them until their queue timeout fails them).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from infra.connectors import SIZING_KEYS, ConnectorSpec
from infra.errors import SettingsError
from infra.settings import Settings
from lambdas.trigger.sizing import UPKEEP, Plan, RunShape, continuous_run, largest_run

DOCTOR_RUNS = 1  # doctor runs at once beside the others (more queue behind the runs under way)
MAX_CONCURRENT_RUNS = 1000  # SchedulerConfiguration.MaxConcurrentRuns' valid range is 1 to 1000


@dataclass(frozen=True)
class Footprint:
    cpu: int  # vCPU
    memory: int  # GB
    disk: int  # GB

    @classmethod
    def of(cls, plan: Plan) -> Footprint:
        workers = plan.workers
        return cls(sum(w.vcpu for w in workers), sum(w.memory_gb for w in workers), sum(w.disk_gb for w in workers))

    def __add__(self, other: Footprint) -> Footprint:
        return Footprint(self.cpu + other.cpu, self.memory + other.memory, self.disk + other.disk)


@dataclass(frozen=True)
class Concurrency:
    """`runs`: the application's MaxConcurrentRuns; `footprint`: what the `runs` largest runs need at once, which
    the maximum capacity holds."""

    runs: int
    footprint: Footprint


def environment_runs(settings: Settings, connectors: tuple[ConnectorSpec, ...]) -> list[tuple[str, Plan]]:
    """Every run that may be under way at once (see the module docstring), named, with its largest plan; the
    continuous jobs first."""
    max_executors = settings.emr.max_executors_per_run

    def shape(c: ConnectorSpec) -> RunShape:
        return RunShape.from_entry(c.name, c.config.values_of(SIZING_KEYS))

    runs = [
        (f"continuous job of {c.name}", continuous_run(shape(c), max_executors, c.iceberg is not None))
        for c in connectors
        if c.continuous
    ]
    runs += [
        (f"data run of {c.name}", largest_run(shape(c), c.iceberg is not None, max_executors))
        for c in connectors
        if not c.continuous
    ]
    runs += [(f"table upkeep of {c.name}", UPKEEP) for c in connectors if c.iceberg is not None]
    runs += [(f"restore of {c.name}", UPKEEP) for c in connectors if c.restore_targets]
    return runs + [("doctor", UPKEEP)] * DOCTOR_RUNS


def check_concurrency(settings: Settings, connectors: tuple[ConnectorSpec, ...]) -> Concurrency:
    """The application's scheduler settings and what they admit; SettingsError naming `emr.concurrent_runs` when
    the runs pass MAX_CONCURRENT_RUNS, or `emr.max_capacity.<cpu|memory|disk>` when the capacity cannot hold them."""
    runs = environment_runs(settings, connectors)
    emr = settings.emr
    if emr.concurrent_runs is None and len(runs) > MAX_CONCURRENT_RUNS:
        raise SettingsError(
            settings.source,
            "emr.concurrent_runs",
            (
                f"the environment may have {len(runs)} runs at once (one per connector, plus table upkeep, restores "
                f"and the doctor), past EMR Serverless' MaxConcurrentRuns limit of {MAX_CONCURRENT_RUNS}: set it to "
                "how many may run at once (the others queue)"
            ),
        )
    streaming = sum(1 for c in connectors if c.continuous)
    if emr.concurrent_runs is not None and emr.concurrent_runs <= streaming:
        raise SettingsError(
            settings.source,
            "emr.concurrent_runs",
            f"{emr.concurrent_runs} leaves no run beside the {streaming} continuous job(s), which run all the time "
            "(continuous.connectors): set it to at least one more",
        )
    admitted = emr.concurrent_runs or len(runs)
    always = [Footprint.of(plan) for _, plan in runs[:streaming]]  # the continuous jobs (listed first)
    largest = sorted(
        (Footprint.of(plan) for _, plan in runs[streaming:]), key=lambda f: (f.cpu, f.memory, f.disk), reverse=True
    )
    need = sum(always + largest[: admitted - streaming], Footprint(0, 0, 0))
    why = (
        "emr.concurrent_runs"
        if emr.concurrent_runs
        else f"{len(connectors)} connector(s) ({streaming} continuous), their upkeep and restores, and {DOCTOR_RUNS} doctor"
    )
    for resource, have, wanted, unit in (
        ("cpu", emr.max_cpu, need.cpu, "vCPU"),
        ("memory", emr.max_memory, need.memory, "GB"),
        ("disk", emr.max_disk, need.disk, "GB"),
    ):
        number = re.match(r"\d+", have)
        assert number is not None  # settings.py's _CAPACITY patterns start with digits
        if int(number[0]) < wanted:
            raise SettingsError(
                settings.source,
                f"emr.max_capacity.{resource}",
                (
                    f"{have} cannot hold the {min(admitted, len(runs))} run(s) that may be under way at once ({why}; "
                    f"{wanted} {unit} at their largest: a data run has a driver and up to emr.max_executors_per_run="
                    f"{emr.max_executors_per_run} executors, one vCPU per task of tasks.max): raise it, lower "
                    "emr.max_executors_per_run or tasks.max, or set emr.concurrent_runs to how many runs may run at "
                    "once (the others queue)"
                ),
            )
    return Concurrency(admitted, need)
