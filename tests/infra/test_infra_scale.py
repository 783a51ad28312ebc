"""500 connectors of 10 topics each in one environment, in nested stacks (`connector_stacks`): every template within
CloudFormation's quotas, every role's policies within IAM's, and one MSK event source mapping per topic within what
Lambda's API takes. The synthesis takes one to two minutes on a 2-core machine: marked `scale` (make test-scale).

Quotas: CloudFormation ("Understand CloudFormation quotas", docs.aws.amazon.com/AWSCloudFormation/latest/UserGuide/
cloudformation-limits.html): 500 resources, 200 outputs, 200 parameters, 200 mappings per template, a template body
of 1 MB read from S3 (cdk deploy uploads templates over 50 KB). IAM ("IAM and AWS STS quotas"): a role's inline
policies 10,240 characters in all, a managed policy 6,144, 10 managed policies per role (default). Lambda: the
CreateEventSourceMapping request model (botocore's, AWS's own API model) bounds Topics, BatchSize, the batching window
and the consumer group id. CloudWatch ("CloudWatch service quotas"): 500 metrics per dashboard widget."""

from __future__ import annotations

import dataclasses
import json
import re
import time
from pathlib import Path

import pytest

from infra.connectors import _load
from infra.settings import ENVIRONMENTS_DIR, parse_settings
from tests.infra.test_infra_service import _rendered

pytestmark = pytest.mark.scale

CONNECTORS, TOPICS, STACKS = 500, 10, 80
TEMPLATE_BYTES = 1024 * 1024
RESOURCES, OUTPUTS, PARAMETERS, MAPPINGS = 500, 200, 200, 200
ROLE_INLINE_CHARS, MANAGED_POLICY_CHARS, MANAGED_POLICIES_PER_ROLE = 10_240, 6_144, 10
WIDGET_METRICS = 500  # CloudWatch service quotas: up to 500 metrics per dashboard widget
PARQUET = "io.confluent.connect.s3.format.parquet.ParquetFormat"
STRINGS = "org.apache.kafka.connect.storage.StringConverter"


def _names() -> list[str]:
    return [f"team-{i:03d}-sink" for i in range(CONNECTORS)]


def _topics(name: str) -> list[str]:
    return [f"{name.removesuffix('-sink')}.events-{j}" for j in range(TOPICS)]


@pytest.fixture(scope="module")
def large(tmp_path_factory):
    """dev's settings and connector file, as CONNECTORS connectors of TOPICS topics each (Parquet of string values:
    a Glue table per topic), in STACKS nested stacks; (deployment, output folder, synthesis seconds)."""
    from infra.application import build, new_app
    from tests.infra.conftest import ensure_artifacts

    ensure_artifacts()
    document = json.loads((ENVIRONMENTS_DIR / "dev.json").read_text())
    document["msk"]["topics"] = [t for name in _names() for t in _topics(name)]
    document["catalog"]["tables"] = {}
    document["connector_stacks"] = STACKS
    settings = parse_settings("dev", document, "dev.json")
    # dev's capacity holds a few runs, not hundreds: they queue (emr.concurrent_runs, see infra/capacity.py)
    settings = dataclasses.replace(settings, emr=dataclasses.replace(settings.emr, concurrent_runs=1))
    (shipped,) = sorted(settings.connectors_dir.glob("*.json"))
    folder = tmp_path_factory.mktemp("large")
    specs = []
    for name in _names():
        connector = json.loads(shipped.read_text())
        connector["name"] = name
        connector["config"].update(
            {
                "topics": ",".join(_topics(name)),
                "format.class": PARQUET,
                "value.converter": STRINGS,
                "errors.deadletterqueue.s3.prefix": f"{settings.retention.dlq_prefix}{name}",
                # 500 scheduled rotations on one boundary would start 500 runs on one tick, past StartJobRun's
                # burst of 25 (infra/quotas.py): these files close on flush.size
                "rotate.schedule.interval.ms": "-1",
            }
        )
        path = folder / f"{name}.json"
        path.write_text(json.dumps(connector))
        specs.append(_load(path, settings))
    outdir = tmp_path_factory.mktemp("cdk-large")
    started = time.monotonic()
    app = new_app(str(outdir))
    deployment = build(app, "dev", tuple(specs), settings=settings)
    app.synth()
    seconds = time.monotonic() - started
    print(f"\nsynthesis of {CONNECTORS} connectors x {TOPICS} topics in {STACKS} nested stacks: {seconds:.0f} s")
    return deployment, outdir, seconds


def _templates(outdir: Path) -> dict[Path, dict]:
    return {path: json.loads(path.read_text()) for path in sorted(outdir.glob("*.template.json"))}


def _service_templates(outdir: Path) -> list[dict]:
    return [t for path, t in _templates(outdir).items() if "Service" in path.name]


def _resources(outdir: Path, kind: str) -> dict[str, dict]:
    return {
        logical: r for t in _service_templates(outdir) for logical, r in t["Resources"].items() if r["Type"] == kind
    }


def test_every_template_is_within_cloudformation_quotas(large):
    deployment, outdir, _ = large
    templates = _templates(outdir)
    nested = [p for p in templates if p.name.endswith(".nested.template.json")]
    assert 1 < len(nested) <= STACKS
    for path in (max(nested, key=lambda p: p.stat().st_size), *(p for p in templates if p not in nested)):
        print(f"\n{path.name}: {path.stat().st_size:,} bytes, {len(templates[path]['Resources'])} resources")
    for path, template in templates.items():
        assert path.stat().st_size < TEMPLATE_BYTES, path.name  # as uploaded for CloudFormation to read from S3
        assert len(template["Resources"]) <= RESOURCES, path.name
        assert len(template.get("Outputs", {})) <= OUTPUTS, path.name
        assert len(template.get("Parameters", {})) <= PARAMETERS, path.name
        assert len(template.get("Mappings", {})) <= MAPPINGS, path.name


def test_each_connector_has_its_role_tables_and_alarms_in_one_nested_stack(large):
    deployment, outdir, _ = large
    for path, template in _templates(outdir).items():
        if not path.name.endswith(".nested.template.json"):
            continue
        kinds = {r["Type"] for r in template["Resources"].values()}
        assert {
            "AWS::IAM::Role",
            "AWS::Glue::Table",
            "AWS::Lambda::EventSourceMapping",
            "AWS::CloudWatch::Alarm",
        } <= kinds
    roles = _resources(outdir, "AWS::IAM::Role")
    job_roles = [r for r in roles.values() if r["Properties"].get("Path") == "/sink-jobs/dev/"]
    assert sorted(r["Properties"]["RoleName"] for r in job_roles) == sorted(f"sink-dev-{n}" for n in _names())
    assert len(_resources(outdir, "AWS::Glue::Table")) == CONNECTORS * TOPICS
    assert len(_resources(outdir, "AWS::CloudWatch::Alarm")) >= 2 * CONNECTORS


def _chars(document) -> int:
    """A policy's size as IAM counts it (no whitespace), references rendered at most 100 characters long."""
    text = json.dumps(document, separators=(",", ":"))
    return len(re.sub(r'\{"(Fn::GetAtt|Ref|Fn::ImportValue)":[^{}]*\}', "x" * 100, text))


def test_every_role_policy_is_within_iam_quotas(large):
    deployment, outdir, _ = large
    inline: dict[str, int] = {}
    for policy in _resources(outdir, "AWS::IAM::Policy").values():
        for role in policy["Properties"]["Roles"]:
            key = json.dumps(role)
            inline[key] = inline.get(key, 0) + _chars(policy["Properties"]["PolicyDocument"])
    assert len(inline) >= CONNECTORS  # each job role's, and the Lambdas'
    assert max(inline.values()) < ROLE_INLINE_CHARS, max(inline, key=inline.get)
    managed: dict[str, int] = {}
    for policy in _resources(outdir, "AWS::IAM::ManagedPolicy").values():
        assert _chars(policy["Properties"]["PolicyDocument"]) < MANAGED_POLICY_CHARS
        for role in policy["Properties"].get("Roles", []):
            managed[json.dumps(role)] = managed.get(json.dumps(role), 0) + 1
    for role in _resources(outdir, "AWS::IAM::Role").values():
        assert len(role["Properties"].get("ManagedPolicyArns", [])) <= MANAGED_POLICIES_PER_ROLE
    assert all(count <= MANAGED_POLICIES_PER_ROLE for count in managed.values())


def test_one_msk_event_source_mapping_per_topic_within_lambdas_api(large):
    import botocore.session

    deployment, outdir, _ = large
    model = botocore.session.get_session().get_service_model("lambda")
    request = model.operation_model("CreateEventSourceMapping").input_shape.members
    topics_max = request["Topics"].metadata["max"]
    batch_max = request["BatchSize"].metadata["max"]
    window_max = request["MaximumBatchingWindowInSeconds"].metadata["max"]
    group = request["AmazonManagedKafkaEventSourceConfig"].members["ConsumerGroupId"].metadata
    mappings = _resources(outdir, "AWS::Lambda::EventSourceMapping").values()
    assert topics_max == 1  # a Lambda MSK mapping reads one topic: one mapping per topic
    assert sorted(t for m in mappings for t in m["Properties"]["Topics"]) == sorted(
        t for n in _names() for t in _topics(n)
    )
    groups = [m["Properties"]["AmazonManagedKafkaEventSourceConfig"]["ConsumerGroupId"] for m in mappings]
    assert len(set(groups)) == len(groups) == CONNECTORS * TOPICS
    assert all(len(g) <= group["max"] and re.fullmatch(group["pattern"], g) for g in groups)
    for mapping in mappings:
        properties = mapping["Properties"]
        assert len(properties["Topics"]) == topics_max
        assert properties["BatchSize"] <= batch_max
        assert properties["MaximumBatchingWindowInSeconds"] <= window_max
        assert properties["StartingPosition"] == "LATEST"
        assert _rendered(properties["FunctionName"]).startswith("<referenceto")  # the trigger, passed in


def test_each_dashboard_widget_is_within_cloudwatchs_quota(large):
    deployment, outdir, _ = large
    (dashboard,) = _resources(outdir, "AWS::CloudWatch::Dashboard").values()
    body = json.loads(_rendered(dashboard["Properties"]["DashboardBody"]))
    assert all(len(w["properties"].get("metrics", [])) <= WIDGET_METRICS for w in body["widgets"])


def test_the_admin_state_carries_every_connector_packed(large):
    from lambdas.admin.desired import DesiredState

    deployment, outdir, _ = large
    (resource,) = _resources(outdir, "Custom::SinkConnectors").values()
    state = DesiredState.from_json(_rendered(resource["Properties"]["State"]))
    assert [c.name for c in state.connectors] == _names()
    assert {e["role_arn"] for e in state.index} == {
        f"arn:aws:iam::{deployment.settings.account}:role/sink-jobs/dev/sink-dev-{n}" for n in _names()
    }
