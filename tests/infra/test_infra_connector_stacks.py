"""`connector_stacks`: the connectors' own resources in nested stacks grant, map and publish what they do in the
service stack: a job role's policy (its nested stack's parameters resolved) is the one it has without nested
stacks, the trigger may pass every named job role, reads each topic through one mapping there, and the admin
publishes the same configs and index (packed). Large environments: tests/infra/test_infra_scale.py."""

from __future__ import annotations

import dataclasses
import fnmatch
import json

import pytest

from infra.connectors import _load
from infra.settings import load_settings
from infra.stacks.connectors import connector_stack_index
from tests.infra.test_infra_service import _rendered

COPIES, STACKS = 5, 3


@pytest.fixture(scope="module")
def grouped(tmp_path_factory):
    """dev's stacks with `connector_stacks` STACKS, for dev's connector and COPIES renamed copies of it:
    (deployment, {template file name: template}, output folder)."""
    from infra.application import build, new_app
    from tests.infra.conftest import ensure_artifacts

    ensure_artifacts()
    dev = load_settings("dev")  # its capacity holds a few runs: the others queue (emr.concurrent_runs)
    settings = dataclasses.replace(dev, connector_stacks=STACKS, emr=dataclasses.replace(dev.emr, concurrent_runs=1))
    (shipped,) = sorted(settings.connectors_dir.glob("*.json"))
    folder = tmp_path_factory.mktemp("grouped")
    specs = [_load(shipped, settings)]
    for i in range(COPIES):
        document = json.loads(shipped.read_text())
        document["name"] = name = f"{document['name']}-{i}"
        document["config"]["errors.deadletterqueue.s3.prefix"] = f"{settings.retention.dlq_prefix}{name}"
        path = folder / f"{name}.json"
        path.write_text(json.dumps(document))
        specs.append(_load(path, settings))
    outdir = tmp_path_factory.mktemp("cdk-grouped")
    app = new_app(str(outdir))
    deployment = build(app, "dev", tuple(specs), settings=settings)
    app.synth()
    return deployment, {p.name: json.loads(p.read_text()) for p in outdir.glob("*.template.json")}, outdir


def _service(templates: dict) -> dict:
    return templates["Sink-dev-Service.template.json"]


def _nested(templates: dict) -> dict[str, dict]:
    """Logical id of each nested stack in the service stack -> (its parameters there, its template)."""
    service = _service(templates)
    found = {}
    for logical, resource in service["Resources"].items():
        if resource["Type"] == "AWS::CloudFormation::Stack":
            stack_id = logical.split("NestedStack")[0]  # Connectors<i>, its template SinkdevService<id><hash>
            (name,) = [n for n in templates if n.startswith(f"SinkdevService{stack_id}")]
            found[logical] = (resource["Properties"].get("Parameters", {}), templates[name])
    return found


def _resolved(value, parameters: dict):
    """`value` with each Ref to one of `parameters` replaced by what the service stack passes."""
    if isinstance(value, dict):
        if set(value) == {"Ref"} and value["Ref"] in parameters:
            return parameters[value["Ref"]]
        return {k: _resolved(v, parameters) for k, v in value.items()}
    if isinstance(value, list):
        return [_resolved(v, parameters) for v in value]
    return value


def _job_role(template: dict, connector: str) -> tuple[str, dict]:
    (found,) = [
        (k, r)
        for k, r in template["Resources"].items()
        if r["Type"] == "AWS::IAM::Role" and {"Key": "connector", "Value": connector} in r["Properties"].get("Tags", [])
    ]
    return found


def _statements(template: dict, role_id: str, parameters: dict | None = None) -> list:
    return sorted(
        json.dumps(_resolved(s, parameters or {}), sort_keys=True)
        for r in template["Resources"].values()
        if r["Type"] == "AWS::IAM::Policy" and {"Ref": role_id} in r["Properties"]["Roles"]
        for s in r["Properties"]["PolicyDocument"]["Statement"]
    )


def test_each_connector_lies_in_the_nested_stack_its_name_hashes_to(grouped):
    deployment, templates, _ = grouped
    nested = _nested(templates)
    assert 1 < len(nested) <= STACKS
    for spec in deployment.connectors:  # its role there, whose id is Connectors<index>NestedStack...
        (holder,) = [
            logical
            for logical, (_, t) in nested.items()
            if any(
                {"Key": "connector", "Value": spec.name} in r["Properties"].get("Tags", [])
                for r in t["Resources"].values()
                if r["Type"] == "AWS::IAM::Role"
            )
        ]
        assert holder.startswith(f"Connectors{connector_stack_index(spec.name, STACKS):03d}")
    assert not [
        r
        for r in _service(templates)["Resources"].values()
        if r["Type"] in ("AWS::Lambda::EventSourceMapping", "AWS::CloudWatch::Alarm") and "Lag" in json.dumps(r)
    ]


def test_a_nested_job_role_grants_what_the_service_stack_one_does(grouped, dev):
    deployment, templates, _ = grouped
    name = dev.deployment.connectors[0].name
    flat_id, _ = _job_role(dev.templates["service"], name)
    expected = [s.replace(flat_id, "<role>") for s in _statements(dev.templates["service"], flat_id)]
    for parameters, template in _nested(templates).values():
        try:
            role_id, role = _job_role(template, name)
        except ValueError:
            continue
        assert role["Properties"]["RoleName"] == f"sink-dev-{name}"
        assert role["Properties"]["Path"] == "/sink-jobs/dev/"
        assert [s.replace(role_id, "<role>") for s in _statements(template, role_id, parameters)] == expected
        return
    pytest.fail(f"no nested stack holds the job role of {name}")


def test_the_trigger_may_pass_each_named_role_and_the_index_names_them(grouped):
    deployment, templates, _ = grouped
    service = _service(templates)
    (state,) = [
        r["Properties"]["State"] for r in service["Resources"].values() if r["Type"] == "Custom::SinkConnectors"
    ]
    from lambdas.admin.desired import DesiredState

    desired = DesiredState.from_json(_rendered(state))
    assert [c.name for c in desired.connectors] == [s.name for s in deployment.connectors]
    assert [c.document for c in desired.connectors] == [s.document for s in deployment.connectors]
    arns = {}
    for _, template in _nested(templates).values():
        for r in template["Resources"].values():
            if r["Type"] == "AWS::IAM::Role" and "RoleName" in r["Properties"]:
                p = r["Properties"]
                arns[p["Tags"][0]["Value"] if p["Tags"][0]["Key"] == "connector" else None] = (
                    f"arn:aws:iam::{deployment.settings.account}:role{p['Path']}{p['RoleName']}"
                )
    assert {e["name"]: e["role_arn"] for e in desired.index} == arns
    passes = [
        s
        for r in service["Resources"].values()
        if r["Type"] == "AWS::IAM::Policy"
        for s in r["Properties"]["PolicyDocument"]["Statement"]
        if s["Action"] == "iam:PassRole"
    ]
    (pass_role,) = passes
    assert all(fnmatch.fnmatchcase(arn, pass_role["Resource"]) for arn in arns.values())
    assert not fnmatch.fnmatchcase(
        f"arn:aws:iam::{deployment.settings.account}:role/sink-dev-other", pass_role["Resource"]
    )


def test_each_topic_is_read_by_one_mapping_of_the_trigger_in_a_nested_stack(grouped):
    deployment, templates, _ = grouped
    service = _service(templates)
    (trigger,) = [
        k
        for k, r in service["Resources"].items()
        if r["Type"] == "AWS::Lambda::Function" and r["Properties"]["Handler"].startswith("lambdas.trigger.")
    ]
    topics = []
    for parameters, template in _nested(templates).values():
        for mapping in [r for r in template["Resources"].values() if r["Type"] == "AWS::Lambda::EventSourceMapping"]:
            assert _resolved(mapping["Properties"]["FunctionName"], parameters) == {"Ref": trigger}
            topics += mapping["Properties"]["Topics"]
            # a batch the trigger keeps failing on goes, after Lambda's 10 retries, to the service stack's queue
            settings = deployment.settings
            assert mapping["Properties"]["DestinationConfig"] == {
                "OnFailure": {
                    "Destination": (
                        f"arn:aws:sqs:{settings.region}:{settings.account}:sink-{settings.env}-trigger-discarded-batches"
                    )
                }
            }
    assert sorted(topics) == sorted({t for s in deployment.connectors for t in s.topics})


def test_a_nested_template_too_large_for_cloudformation_fails_naming_its_stack(grouped, tmp_path):
    from infra.application import check_template_sizes
    from infra.errors import TemplateSizeError

    deployment, templates, outdir = grouped
    check_template_sizes(outdir)
    nested = next(outdir.glob("*.nested.template.json"))
    (tmp_path / nested.name).write_bytes(nested.read_bytes())  # an assembly whose only template is a nested one
    with pytest.raises(
        TemplateSizeError,
        match=rf"stack {nested.name.removesuffix('.template.json')}: .* set or "
        r"raise the setting connector_stacks",
    ):
        check_template_sizes(tmp_path, limit=nested.stat().st_size - 1)
