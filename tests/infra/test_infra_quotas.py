"""EMR Serverless' account quotas at synthesis (infra/quotas.py): the environment's worst case in vCPUs against
`emr.account_vcpu_quota`, one trigger tick's StartJobRun calls against EMR's burst of 25 ("Endpoints and quotas for
EMR Serverless", EMR Serverless User Guide)."""

from __future__ import annotations

import copy
import dataclasses
import json

import pytest
from aws_cdk import Environment, Stack
from aws_cdk import aws_kms as kms

from infra.application import new_app
from infra.capacity import check_concurrency
from infra.connectors import ContinuousSpec, _load, load_connectors
from infra.constructs.emr_job import SinkJob
from infra.errors import SettingsError
from infra.quotas import START_JOB_RUN_BURST, check_start_rate, check_vcpu_quota, starts_per_tick
from infra.settings import ENVIRONMENTS_DIR, parse_settings
from infra.stacks.connectors import ConnectorStacks
from tests.infra.conftest import ensure_artifacts


def _settings(env: str, change=lambda emr: None):
    doc = json.loads((ENVIRONMENTS_DIR / f"{env}.json").read_text())
    change(doc["emr"])
    return parse_settings(env, copy.deepcopy(doc), f"{env}.json")


def _scheduled(connectors, n: int):
    """`n` connectors like the first of `connectors` (dev's: bounded, a rotation of 600,000 ms), named c0.."""
    return tuple(dataclasses.replace(connectors[0], name=f"c{i}") for i in range(n))


def test_the_shipped_environments_fit_the_quota_they_state(each_env):
    # dev needs 9 vCPUs at once (a new account's 16 holds them); prod 22, so prod states a quota raised to 32
    settings, job = each_env.deployment.settings, each_env.deployment.service.job
    need, quota = job.concurrency.footprint.cpu, settings.emr.account_vcpu_quota
    assert (need, quota) == {"dev": (9, 16), "prod": (22, 32)}[each_env.env]
    assert sum(starts_per_tick(settings, each_env.deployment.connectors).values()) <= START_JOB_RUN_BURST


def test_the_quota_defaults_to_a_new_accounts_16():
    settings = _settings("dev", lambda emr: emr.pop("account_vcpu_quota"))
    assert settings.emr.account_vcpu_quota == 16


def test_synthesis_refuses_an_environment_over_the_account_vcpu_quota(tmp_path):
    # given prod (22 vCPUs at once) on an account of the default quota
    settings = _settings("prod", lambda emr: emr.pop("account_vcpu_quota"))
    ensure_artifacts()
    stack = Stack(new_app(str(tmp_path)), "Job", env=Environment(account=settings.account, region=settings.region))
    # when its job is built, then synthesis stops, naming the setting, the need and the quota
    with pytest.raises(SettingsError, match=r"need 22 vCPUs at once .* past the account's 16") as failed:
        SinkJob(
            stack,
            "Job",
            settings=settings,
            data_key=kms.Key(stack, "Key"),
            connectors=load_connectors(settings),
            table_arn="arn:aws:dynamodb:eu-west-1:111111111111:table/offsets",
            placement=ConnectorStacks(stack, 0),
        )
    assert failed.value.setting == "emr.account_vcpu_quota"


def test_an_environment_within_its_quota_passes_and_queueing_brings_it_within(dev):
    prod = _settings("prod", lambda emr: emr.update(account_vcpu_quota=22))
    check_vcpu_quota(prod, check_concurrency(prod, load_connectors(prod)))  # exactly its worst case
    # one run at a time: prod's largest run (17 vCPUs) is the worst case, within a quota of 17
    queueing = _settings("prod", lambda emr: emr.update(account_vcpu_quota=17, concurrent_runs=1))
    check_vcpu_quota(queueing, check_concurrency(queueing, load_connectors(queueing)))
    with pytest.raises(SettingsError, match="need 17 vCPUs"):
        low = dataclasses.replace(queueing, emr=dataclasses.replace(queueing.emr, account_vcpu_quota=16))
        check_vcpu_quota(low, check_concurrency(low, load_connectors(low)))


def test_more_scheduled_rotations_than_startjobruns_burst_refuse_synthesis_naming_the_rotation(dev):
    settings, connectors = dev.deployment.settings, dev.deployment.connectors
    # given 25 connectors whose 10-minute rotations share every boundary: one tick starts 25 runs, the burst
    check_start_rate(settings, _scheduled(connectors, START_JOB_RUN_BURST))
    # when a 26th joins, then synthesis stops, naming the connectors' key and the count
    with pytest.raises(SettingsError, match=r"may start 26 EMR job runs \(26 by rotate.schedule.interval.ms\)") as e:
        check_start_rate(settings, _scheduled(connectors, START_JOB_RUN_BURST + 1))
    assert e.value.setting == "rotate.schedule.interval.ms"
    assert e.value.source == str(settings.connectors_dir)


def test_connectors_without_a_scheduled_rotation_are_not_counted_on_one_tick(dev, tmp_path):
    # given dev's connector file with its scheduled rotation off (its runs follow flush.size: the data, not the clock)
    settings = dev.deployment.settings
    (shipped,) = sorted(settings.connectors_dir.glob("*.json"))
    document = json.loads(shipped.read_text())
    document["config"]["rotate.schedule.interval.ms"] = "-1"
    path = tmp_path / shipped.name
    path.write_text(json.dumps(document))
    unscheduled = _load(path, settings)
    # then 100 such connectors start nothing together at a boundary
    assert starts_per_tick(settings, _scheduled((unscheduled,), 100))["rotate.schedule.interval.ms"] == 0
    check_start_rate(settings, _scheduled((unscheduled,), 100))


def test_continuous_connectors_count_on_one_tick_and_are_named_when_most(dev):
    # a tick starts every continuous job that is not running, as after a redeploy that cancelled them all
    settings, connectors = dev.deployment.settings, dev.deployment.connectors
    continuous = tuple(
        dataclasses.replace(c, continuous=ContinuousSpec(900, 3, 150)) for c in _scheduled(connectors, 20)
    )
    scheduled = tuple(dataclasses.replace(c, name=f"s{c.name}") for c in _scheduled(connectors, 6))
    assert starts_per_tick(settings, continuous + scheduled) == {
        "rotate.schedule.interval.ms": 6,  # a continuous connector's rotation starts no run
        "continuous.connectors": 20,
        "iceberg.maintenance_schedule": 0,
    }
    with pytest.raises(SettingsError, match=r"may start 26 EMR job runs") as failed:
        check_start_rate(settings, continuous + scheduled)
    assert (failed.value.setting, failed.value.source) == ("continuous.connectors", "dev.json")
