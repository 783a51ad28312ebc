"""The synthesized job roles of a deployment where one connector's S3 client assumes a role: that connector's job
role may assume exactly that role, and the other connectors' roles may assume none."""

from __future__ import annotations

import json

import pytest

from tests.infra.iceberg_connector import DEV, resources, synthesize_with

NAME = "orders-assume"
WRITER_ROLE = f"arn:aws:iam::{DEV.account}:role/orders-lake-writer"


def assume_role_document() -> dict:
    """The shipped dev connector under its own name and prefixes, its S3 client assuming WRITER_ROLE."""
    document = json.loads((DEV.connectors_dir / "orders.json").read_text())
    return {
        "name": NAME,
        "config": {
            **document["config"],
            "topics.dir": NAME,
            "errors.deadletterqueue.s3.prefix": f"{DEV.retention.dlq_prefix}{NAME}",
            "s3.credentials.provider.class": "io.confluent.connect.s3.auth.AwsAssumeRoleCredentialsProvider",
            "s3.credentials.provider.sts.role.arn": WRITER_ROLE,
            "s3.credentials.provider.sts.role.session.name": "orders-assume-sink",
            "s3.credentials.provider.sts.role.external.id": "ext-orders-assume",
        },
    }


@pytest.fixture(scope="module")
def service(tmp_path_factory) -> dict:
    _, templates = synthesize_with(tmp_path_factory.mktemp("assume-role"), [assume_role_document()])
    return templates["service"]


def _assumable(service: dict) -> dict[str, list]:
    """Connector tag of each job role -> the resources its inline policies allow sts:AssumeRole on."""
    roles = {
        k: next(t["Value"] for t in r["Properties"].get("Tags", []) if t["Key"] == "connector")
        for k, r in resources(service, "AWS::IAM::Role").items()
        if any(t["Key"] == "connector" for t in r["Properties"].get("Tags", []))
    }
    found = {connector: [] for connector in roles.values()}
    for policy in resources(service, "AWS::IAM::Policy").values():
        for role in policy["Properties"]["Roles"]:
            if role.get("Ref") in roles:
                found[roles[role["Ref"]]] += [
                    s["Resource"]
                    for s in policy["Properties"]["PolicyDocument"]["Statement"]
                    if "sts:AssumeRole" in json.dumps(s["Action"])
                ]
    return found


def test_only_the_connector_naming_a_role_may_assume_it_and_only_it(service):
    assert _assumable(service) == {"orders-s3-sink": [], NAME: [WRITER_ROLE]}


def test_its_job_role_writes_no_object_itself(service):
    # the assumed role's own policy grants the writes; the job role reads only its published config
    (role,) = [
        k
        for k, r in resources(service, "AWS::IAM::Role").items()
        if {"Key": "connector", "Value": NAME} in r["Properties"].get("Tags", [])
    ]
    statements = [
        s
        for p in resources(service, "AWS::IAM::Policy").values()
        if {"Ref": role} in p["Properties"]["Roles"]
        for s in p["Properties"]["PolicyDocument"]["Statement"]
    ]
    s3_actions = {
        a
        for s in statements
        for a in (s["Action"] if isinstance(s["Action"], list) else [s["Action"]])
        if a.startswith("s3:")
    }
    assert s3_actions == {"s3:GetObject"}
    assert not any("s3:PutObject" in json.dumps(s) for s in statements)
