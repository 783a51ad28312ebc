"""Thirty connectors in one environment: they synthesize (the trigger's environment is the size it is for one
connector, far under Lambda's 4 KB), and the trigger serves every one of them from the index the admin publishes
from the synthesized State (in-process moto)."""

from __future__ import annotations

import dataclasses
import json
import re

import boto3
import pytest
from moto import mock_aws

from infra.connectors import CONFIG_PREFIX, INDEX_KEY, _load
from infra.settings import load_settings
from tests.infra.test_infra_service import _env_vars, _rendered

COUNT = 30
ENVIRONMENT_LIMIT = 4 * 1024  # Lambda's limit on a function's variables (names and values)
ACCOUNT = "123456789012"


@pytest.fixture(scope="module")
def thirty(tmp_path_factory):
    """dev's stacks synthesized for COUNT copies of its connector file, each under its own name and DLQ folder."""
    from aws_cdk.assertions import Template

    from infra.application import build, new_app
    from tests.infra.conftest import ensure_artifacts

    ensure_artifacts()
    settings = load_settings("dev")
    (shipped,) = sorted(settings.connectors_dir.glob("*.json"))
    folder = tmp_path_factory.mktemp("thirty")
    specs = []
    for i in range(COUNT):
        document = json.loads(shipped.read_text())
        name = f"{document['name']}-{i:02d}"
        document["name"] = name
        document["config"]["errors.deadletterqueue.s3.prefix"] = f"{settings.retention.dlq_prefix}{name}"
        # thirty scheduled rotations on one boundary would start thirty runs on one tick, past StartJobRun's burst
        # of 25 (infra/quotas.py): these files close on flush.size
        document["config"]["rotate.schedule.interval.ms"] = "-1"
        path = folder / f"{name}.json"
        path.write_text(json.dumps(document))
        specs.append(_load(path, settings))
    outdir = tmp_path_factory.mktemp("cdk-thirty")
    app = new_app(str(outdir))
    # dev's capacity holds a few runs, not thirty: they queue (emr.concurrent_runs, see infra/capacity.py)
    queueing = dataclasses.replace(settings, emr=dataclasses.replace(settings.emr, concurrent_runs=1))
    deployment = build(app, "dev", tuple(specs), settings=queueing)
    app.synth()
    template = json.loads((outdir / f"{deployment.service.stack_name}.template.json").read_text())
    return deployment, Template.from_json(template)


def _environment_bytes(variables: dict) -> int:
    """Names and values as Lambda counts them, references rendered as `<Logical.Attribute>` (under 100 characters,
    as the ARNs and names CloudFormation puts there)."""
    return sum(len(name) + len(_rendered(value)) for name, value in variables.items())


def test_thirty_connectors_synthesize_with_the_trigger_environment_of_one(thirty, dev):
    deployment, template = thirty
    many, one = _env_vars(template, "sink-trigger"), _env_vars(dev.template("service"), "sink-trigger")
    assert set(many) == set(one) and "CONNECTORS" not in many
    assert _environment_bytes(many) == _environment_bytes(one) < ENVIRONMENT_LIMIT // 2
    (resource,) = template.find_resources("Custom::SinkConnectors").values()
    index = json.loads(_rendered(resource["Properties"]["State"]))["index"]
    assert [entry["name"] for entry in index] == [s.name for s in deployment.connectors]
    assert len({entry["role_arn"] for entry in index}) == COUNT


def test_the_trigger_serves_thirty_connectors_from_the_published_index(thirty, monkeypatch):
    from lambdas.admin.desired import DesiredState
    from lambdas.admin.live import LiveState
    from lambdas.admin.service import AdminService
    from lambdas.trigger.batches import START_BURST
    from lambdas.trigger.handler import build_service
    from sink_engine.offsets import ensure_table

    deployment, template = thirty
    settings = deployment.settings
    (resource,) = template.find_resources("Custom::SinkConnectors").values()
    # the State as CloudFormation renders it: each job role's ARN named after its logical id
    state = re.sub(r"<(\w+)\.Arn>", rf"arn:aws:iam::{ACCOUNT}:role/\1", _rendered(resource["Properties"]["State"]))
    for name, value in {
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_DEFAULT_REGION": settings.region,
    }.items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("AWS_ENDPOINT_URL", raising=False)
    with mock_aws():
        s3 = boto3.client("s3")
        s3.create_bucket(Bucket=settings.bucket_name, CreateBucketConfiguration={"LocationConstraint": settings.region})
        changes = AdminService(LiveState(s3)).apply(DesiredState.from_json(state)).changes
        assert f"put {INDEX_KEY}" in changes and len(changes) == COUNT + 2  # configs, index, desired state
        ensure_table(boto3.client("dynamodb"), settings.table_name)
        application = boto3.client("emr-serverless").create_application(
            name="sink-dev", releaseLabel=settings.emr.release_label, type="SPARK"
        )["applicationId"]
        variables = _env_vars(template, "sink-trigger")
        environment = {
            **{k: _rendered(v) for k, v in variables.items()},
            "TABLE_NAME": settings.table_name,
            "APPLICATION_ID": application,
        }
        assert environment["CONNECTORS_URI"] == f"s3://{settings.bucket_name}/{CONFIG_PREFIX}_index.json"
        # (two ticks a minute apart: one invocation makes at most START_BURST StartJobRuns, EMR's burst)
        ticks = [
            build_service(environment, lambda at=at: at).on_tick() for at in (1_772_445_780_000, 1_772_445_840_000)
        ]
        emr = boto3.client("emr-serverless")
        runs = emr.list_job_runs(applicationId=application)["jobRuns"]
        roles = {emr.get_job_run(applicationId=application, jobRunId=r["id"])["jobRun"]["executionRole"] for r in runs}
    first, second = ({d.connector: (d.outcome.action, d.outcome.reason) for d in tick} for tick in ticks)
    assert sorted(first) == [s.name for s in deployment.connectors]
    # the first tick starts START_BURST runs, one per connector (each its own job role), the others wait for the next
    assert (
        sorted(first.values())
        == [("skipped", "start-budget")] * (COUNT - START_BURST) + [("started", "first-run")] * START_BURST
    )
    waiting = {name for name, outcome in first.items() if outcome[0] == "skipped"}
    # and the next tick starts those with the claims they kept (resumed), each once
    assert {name for name, outcome in second.items() if outcome[0] in ("started", "resumed")} == waiting
    assert {second[name][0] for name in waiting} == {"resumed"}
    assert len(runs) == COUNT and len(roles) == COUNT  # each connector's run under its own job role
