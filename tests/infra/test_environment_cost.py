"""The environment cost model (devtools/environment_cost.py) sizes runs as the deployment does: a batched run's
workers are the trigger's (lambdas/trigger/runs.py JobSpec.sizes), its runs per tick the trigger's batches
(lambdas/trigger/batches.py compose, trigger.connectors_per_run's default), a connector's own continuous job the
plan synthesis counts against the capacity and the quota (infra/capacity.py environment_runs); and what it says of
issue 40's goals."""

from __future__ import annotations

import dataclasses
import json
from types import SimpleNamespace

from devtools.emr_prices import PROD_CAPACITY, vcpus
from devtools.environment_cost import (
    Environment,
    batched_run,
    goals,
    one_job_per_connector,
    triggered_batched,
)
from infra.capacity import Footprint, environment_runs
from infra.connectors import ContinuousSpec, load_connectors
from infra.quotas import ACCOUNT_VCPU_QUOTA
from infra.settings import ENVIRONMENTS_DIR, parse_settings
from lambdas.trigger.batches import compose
from lambdas.trigger.connectors import Connector
from lambdas.trigger.pending import Pending
from lambdas.trigger.runs import JobSpec, Ready
from lambdas.trigger.sizing import RunShape


def _dev(change=lambda doc: None):
    doc = json.loads((ENVIRONMENTS_DIR / "dev.json").read_text())
    change(doc)
    return parse_settings("dev", doc, "dev.json")


def _ready(env: Environment, count: int) -> list[Ready]:
    """`count` connectors of one job role due at once, each `env.rate_mb_s` for a minute behind."""
    behind = tuple([int(env.records_s * 60 / env.partitions)] * env.partitions)
    return [
        Ready(
            Connector(f"c{i}", ("t",), f"s3://b/c{i}.json", None, "arn:role", False, RunShape(env.partitions)),  # type: ignore[arg-type]
            SimpleNamespace(batch=None),  # type: ignore[arg-type]
            "started",
            "schedule",
            Pending(sum(behind), None, behind),
        )
        for i in range(count)
    ]


def test_a_batched_runs_workers_are_the_ones_the_trigger_asks_for():
    env = Environment(25, 1.0, partitions=4)
    job = JobSpec("app", "s3://b/job.py", "", 60, PROD_CAPACITY)
    members = _ready(env, 25)
    plan, _ = batched_run(env, 25, 60)
    assert job.sizes([(r.connector, r.pending) for r in members]) == plan.spark_parameters()


def test_the_runs_a_tick_are_the_triggers_batches_at_the_deployed_default():
    # given 500 connectors of one role due at one tick, as the trigger composes them at the default per run
    per_run = _dev(lambda doc: doc.get("trigger", {}).pop("connectors_per_run", None)).trigger.connectors_per_run
    env = Environment(500, 0.1)
    runs = compose(_ready(env, 500), per_run)
    # then the model starts as many runs, each of that many connectors
    assert triggered_batched(env, 60).starts_per_tick == len(runs) == 20
    assert {len(r) for r in runs} == {25}


def test_a_connectors_own_continuous_job_is_the_plan_synthesis_counts():
    settings = _dev()
    (spec,) = load_connectors(settings)  # dev's connector: tasks.max 4
    continuous = ContinuousSpec(900, 3, 60)
    copies = tuple(dataclasses.replace(spec, name=f"c{i}", continuous=continuous) for i in range(3))
    jobs = [plan for name, plan in environment_runs(settings, copies) if name.startswith("continuous job")]
    modelled = one_job_per_connector(Environment(3, 0.1, partitions=4), 10)
    assert modelled.vcpus == sum((Footprint.of(p) for p in jobs), Footprint(0, 0, 0)).cpu == 3 * vcpus(jobs[0])


def test_the_goals_by_the_model():
    checks = dict(goals(partitions=4))
    # 500 connectors at 0.1 MB/s: one shared continuous job is 3 vCPUs and meets the 60 s bound's price, not the 10 s
    # bound's (a file per partition every 9 s: the requests alone pass half Firehose's price)
    assert checks["continuous shared, 60 s: 0.0059 USD/GB, at most one eighth of Firehose's (0.0069)"]
    assert not checks["continuous shared, 10 s: 0.0342 USD/GB, at most half of Firehose's (0.0275)"]
    assert checks[f"continuous shared, 10 s: 3 vCPUs at once, within {ACCOUNT_VCPU_QUOTA}"]
    # twenty batched runs at once pass the default quota; one job per connector passes both limits
    assert not checks[f"triggered batched, due every 600 s: 40 vCPUs at once, within {ACCOUNT_VCPU_QUOTA}"]
    assert not checks[f"one job per connector, 10 s: 2500 vCPUs at once, within {ACCOUNT_VCPU_QUOTA}"]
