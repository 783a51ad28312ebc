"""EMR Serverless' job timeout against the engine's run timeout: EMR cancels a run past `executionTimeoutMinutes`,
start-up included, so a job timeout not above a connector's `sink.run.timeout.ms` (plus start-up and commits)
cancels the run before it commits, and the next run is as big."""

from __future__ import annotations

import copy
import dataclasses
import json
import math

import pytest

from infra.constructs.nag import logical_id
from infra.errors import ConnectorSpecError
from infra.job_timeout import MARGIN_MINUTES, check_job_timeout
from infra.settings import ENVIRONMENTS_DIR, parse_settings

DEV = json.loads((ENVIRONMENTS_DIR / "dev.json").read_text())


def _settings(job_timeout_minutes: int):
    doc = copy.deepcopy(DEV)
    doc["emr"]["job_timeout_minutes"] = job_timeout_minutes
    return parse_settings("dev", doc, "dev.json")


def _with_run_timeout(spec, ms: int):
    return dataclasses.replace(
        spec, document={**spec.document, "config": {**spec.document["config"], "sink.run.timeout.ms": str(ms)}}
    )


def _run_timeout_ms(spec) -> int:
    return spec.config["sink.run.timeout.ms"]


def test_every_shipped_connector_commits_before_its_environments_job_timeout(each_env):
    # the StartJobRun's executionTimeoutMinutes (the trigger's JOB_TIMEOUT_MINUTES) leaves each run its own
    # timeout plus the margin for start-up and commits
    deployment = each_env.deployment
    function = logical_id(deployment.service.trigger.function.node.default_child)
    variables = each_env.templates["service"]["Resources"][function]["Properties"]["Environment"]["Variables"]
    job_minutes = int(variables["JOB_TIMEOUT_MINUTES"])
    for spec in deployment.connectors:
        assert math.ceil(_run_timeout_ms(spec) / 60_000) + MARGIN_MINUTES <= job_minutes, spec.name


def test_a_job_timeout_not_above_a_run_timeout_and_its_margin_refuses_synthesis(dev):
    # given dev's connector with the engine's default run timeout (60 minutes) and a job timeout of 60 (as dev
    # shipped): EMR would cancel the run first
    (spec,) = dev.deployment.connectors
    assert _run_timeout_ms(spec) == 3_600_000
    with pytest.raises(ConnectorSpecError) as failed:
        check_job_timeout(_settings(60), (spec,))
    assert (failed.value.source, failed.value.key) == ("dev/orders.json", "sink.run.timeout.ms")
    assert "emr.job_timeout_minutes=60" in str(failed.value) and f"at least {60 + MARGIN_MINUTES}" in str(failed.value)
    # a shorter run timeout, or a longer job timeout, fits
    check_job_timeout(_settings(60), (_with_run_timeout(spec, 50 * 60_000),))
    check_job_timeout(_settings(60 + MARGIN_MINUTES), (spec,))


def test_a_connector_without_a_run_timeout_refuses_synthesis(dev):
    (spec,) = dev.deployment.connectors
    with pytest.raises(ConnectorSpecError, match="0 .no bound.") as failed:
        check_job_timeout(_settings(1440), (_with_run_timeout(spec, 0),))
    assert failed.value.key == "sink.run.timeout.ms"
