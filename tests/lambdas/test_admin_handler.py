"""The admin: a custom resource (Create, Update, Delete) and direct invokes (plan, apply) publishing the connector
configs and the connector index; idempotent. It owns nothing else: job roles and lifecycle rules are
CloudFormation's."""

from __future__ import annotations

import json

import boto3
import pytest

from infra.connectors import INDEX_KEY, connector_index, load_connectors
from infra.constructs.admin import desired_state
from infra.settings import load_settings
from lambdas.admin import handler as admin
from tests.cloudformation import custom_resource_event, response_endpoint

SETTINGS = load_settings("prod")
CONNECTORS = load_connectors(SETTINGS)
ROLE_ARNS = {c.name: f"arn:aws:iam::123456789012:role/job-{c.name}" for c in CONNECTORS}
BASE_RULE = {
    "ID": "archive-topics",
    "Status": "Enabled",
    "Filter": {"Prefix": "topics/"},
    "Transitions": [{"Days": 90, "StorageClass": "GLACIER"}],
}


@pytest.fixture
def cloudformation():
    with response_endpoint() as endpoint:
        yield endpoint


@pytest.fixture
def lake(aws, monkeypatch):
    s3 = boto3.client("s3")
    s3.create_bucket(Bucket=SETTINGS.bucket_name, CreateBucketConfiguration={"LocationConstraint": "eu-west-1"})
    s3.put_bucket_lifecycle_configuration(Bucket=SETTINGS.bucket_name, LifecycleConfiguration={"Rules": [BASE_RULE]})
    monkeypatch.setenv("BUCKET", SETTINGS.bucket_name)
    monkeypatch.setenv("CONFIG_PREFIX", "_connectors/")
    monkeypatch.setenv("POWERTOOLS_SERVICE_NAME", "sink-admin")
    return SETTINGS.bucket_name


def _state(connectors=CONNECTORS) -> str:
    return json.dumps(desired_state(SETTINGS, tuple(connectors), ROLE_ARNS))


def _event(kind: str, url: str, state: str, physical_id: str | None = None) -> dict:
    return custom_resource_event(
        kind, url, {"ServiceToken": "arn", "State": state}, "Custom::SinkConnectors", physical_id=physical_id
    )


def _rules(bucket: str) -> dict[str, dict]:
    try:
        rules = boto3.client("s3").get_bucket_lifecycle_configuration(Bucket=bucket)["Rules"]
    except boto3.client("s3").exceptions.ClientError:
        return {}
    return {r["ID"]: r for r in rules}


def _configs(bucket: str) -> list[str]:
    listed = boto3.client("s3").list_objects_v2(Bucket=bucket, Prefix="_connectors/").get("Contents", [])
    return sorted(o["Key"] for o in listed)


def test_create_publishes_the_configs_and_leaves_lifecycle_rules_alone(lake, cloudformation, context):
    url, responses = cloudformation
    answer = admin.handler(_event("Create", url, _state()), context)
    assert answer["status"] == "SUCCESS"
    assert responses[-1]["Status"] == "SUCCESS" and responses[-1]["RequestId"] == "r-1"
    assert set(_rules(lake)) == {"archive-topics"}  # CloudFormation's rules, untouched
    assert _configs(lake) == [
        "_connectors/_desired.json",
        "_connectors/_index.json",
        "_connectors/audit-s3-sink.json",
        "_connectors/orders-s3-sink.json",
    ]
    published = json.loads(
        boto3.client("s3").get_object(Bucket=lake, Key="_connectors/orders-s3-sink.json")["Body"].read()
    )
    assert published["name"] == "orders-s3-sink"
    index = json.loads(boto3.client("s3").get_object(Bucket=lake, Key=INDEX_KEY)["Body"].read())
    assert index == connector_index(CONNECTORS, lake, ROLE_ARNS)  # the trigger's entries, job roles included


def test_direct_invokes_plan_and_apply_are_idempotent(lake, cloudformation, context):
    admin.handler(_event("Create", cloudformation[0], _state()), context)
    assert admin.handler({"action": "plan"}, context) == {"action": "plan", "changes": []}
    assert admin.handler({"action": "apply"}, context) == {"action": "apply", "changes": []}


def test_drift_is_planned_then_repaired(lake, cloudformation, context):
    admin.handler(_event("Create", cloudformation[0], _state()), context)
    boto3.client("s3").put_object(Bucket=lake, Key="_connectors/orders-s3-sink.json", Body=b"{}")
    boto3.client("s3").put_object(Bucket=lake, Key="_connectors/stray.json", Body=b"{}")
    boto3.client("s3").delete_object(Bucket=lake, Key=INDEX_KEY)
    changes = ["put _connectors/_index.json", "put _connectors/orders-s3-sink.json", "delete _connectors/stray.json"]
    assert admin.handler({"action": "plan"}, context)["changes"] == changes
    assert admin.handler({"action": "apply"}, context)["changes"] == changes
    assert admin.handler({"action": "plan"}, context)["changes"] == []


def test_update_removing_a_connector_prunes_its_config(lake, cloudformation, context):
    url, responses = cloudformation
    admin.handler(_event("Create", url, _state()), context)
    orders_only = [c for c in CONNECTORS if c.name == "orders-s3-sink"]
    admin.handler(_event("Update", url, _state(orders_only), "sink-connectors-x"), context)
    assert responses[-1]["Status"] == "SUCCESS" and responses[-1]["PhysicalResourceId"] == "sink-connectors-x"
    assert _configs(lake) == ["_connectors/_desired.json", "_connectors/_index.json", "_connectors/orders-s3-sink.json"]
    index = json.loads(boto3.client("s3").get_object(Bucket=lake, Key=INDEX_KEY)["Body"].read())
    assert [entry["name"] for entry in index] == ["orders-s3-sink"]


def test_a_rollback_to_a_state_without_an_index_removes_it(lake, cloudformation, context):
    url, responses = cloudformation
    admin.handler(_event("Create", url, _state()), context)
    before_the_index = {k: v for k, v in json.loads(_state()).items() if k not in ("index_key", "index")}
    admin.handler(_event("Update", url, json.dumps(before_the_index), "sink-connectors-x"), context)
    assert responses[-1]["Status"] == "SUCCESS"
    assert INDEX_KEY not in _configs(lake) and "_connectors/orders-s3-sink.json" in _configs(lake)


def test_delete_removes_only_what_the_admin_owns(lake, cloudformation, context):
    url, responses = cloudformation
    admin.handler(_event("Create", url, _state()), context)
    admin.handler(_event("Delete", url, _state(), "sink-connectors-x"), context)
    assert responses[-1]["Status"] == "SUCCESS"
    assert set(_rules(lake)) == {"archive-topics"}
    assert _configs(lake) == []


def test_a_failure_is_reported_to_cloudformation(lake, cloudformation, context):
    url, responses = cloudformation
    answer = admin.handler(_event("Create", url, "{not json"), context)
    assert answer["status"] == "FAILED"
    assert responses[-1]["Status"] == "FAILED" and "JSONDecodeError" in responses[-1]["Reason"]


def test_direct_invoke_before_any_deployment_changes_nothing(lake, context):
    answer = admin.handler({"action": "apply"}, context)
    assert answer["changes"] == [] and "deploy the stack first" in answer["note"]
