"""The admin: a custom resource (Create, Update, Delete) and direct invokes (plan, apply) reconciling lifecycle
rules, the job role's inline policy and the published connector configs; idempotent."""
from __future__ import annotations

import dataclasses
import json
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer

import boto3
import pytest

from infra.connectors import load_connectors
from infra.constructs.admin import desired_state
from infra.settings import load_settings
from lambdas.admin import handler as admin

SETTINGS = load_settings("prod")
CONNECTORS = load_connectors(SETTINGS)
ROLE = "sink-job-role"
BASE_RULE = {"ID": "archive-topics", "Status": "Enabled", "Filter": {"Prefix": "topics/"},
             "Transitions": [{"Days": 90, "StorageClass": "GLACIER"}]}


class _Responses(BaseHTTPRequestHandler):
    received: list[dict] = []

    def do_PUT(self):  # noqa: N802 (http.server's naming)
        body = self.rfile.read(int(self.headers["Content-Length"]))
        type(self).received.append(json.loads(body))
        self.send_response(200)
        self.end_headers()

    def log_message(self, *args):
        pass


@pytest.fixture
def cloudformation():
    """A local endpoint standing where CloudFormation's pre-signed response URL points."""
    _Responses.received = []
    server = HTTPServer(("127.0.0.1", 0), _Responses)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}/response", _Responses.received
    server.shutdown()


@pytest.fixture
def lake(aws, monkeypatch):
    s3 = boto3.client("s3")
    s3.create_bucket(Bucket=SETTINGS.bucket_name, CreateBucketConfiguration={"LocationConstraint": "eu-west-1"})
    s3.put_bucket_lifecycle_configuration(Bucket=SETTINGS.bucket_name, LifecycleConfiguration={"Rules": [BASE_RULE]})
    boto3.client("iam").create_role(RoleName=ROLE, AssumeRolePolicyDocument=json.dumps({
        "Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "sts:AssumeRole",
                                                "Principal": {"Service": "emr-serverless.amazonaws.com"}}]}))
    monkeypatch.setenv("BUCKET", SETTINGS.bucket_name)
    monkeypatch.setenv("CONFIG_PREFIX", "_connectors/")
    monkeypatch.setenv("POWERTOOLS_SERVICE_NAME", "sink-admin")
    return SETTINGS.bucket_name


def _state(connectors=CONNECTORS) -> str:
    return json.dumps(desired_state(SETTINGS, tuple(connectors), ROLE, "arn:aws:dynamodb:us-east-1:222222222222:table/t"))


def _event(kind: str, url: str, state: str, physical_id: str | None = None) -> dict:
    event = {"RequestType": kind, "ResponseURL": url, "StackId": "arn:aws:cloudformation:eu-west-1:1:stack/s/1",
             "RequestId": "r-1", "LogicalResourceId": "AdminConnectors", "ResourceType": "Custom::SinkConnectors",
             "ResourceProperties": {"ServiceToken": "arn", "State": state}}
    if physical_id:
        event["PhysicalResourceId"] = physical_id
    return event


def _rules(bucket: str) -> dict[str, dict]:
    try:
        rules = boto3.client("s3").get_bucket_lifecycle_configuration(Bucket=bucket)["Rules"]
    except boto3.client("s3").exceptions.ClientError:
        return {}
    return {r["ID"]: r for r in rules}


def _configs(bucket: str) -> list[str]:
    listed = boto3.client("s3").list_objects_v2(Bucket=bucket, Prefix="_connectors/").get("Contents", [])
    return sorted(o["Key"] for o in listed)


def _policy() -> dict:
    return boto3.client("iam").get_role_policy(RoleName=ROLE, PolicyName="sink-connectors")["PolicyDocument"]


def test_create_reconciles_rules_policy_and_configs(lake, cloudformation, context):
    url, responses = cloudformation
    answer = admin.handler(_event("Create", url, _state()), context)
    assert answer["status"] == "SUCCESS"
    assert responses[-1]["Status"] == "SUCCESS" and responses[-1]["RequestId"] == "r-1"
    rules = _rules(lake)
    assert set(rules) == {"archive-topics", "sink-connector:audit/"}  # the stack's own rule is kept
    assert [t["StorageClass"] for t in rules["sink-connector:audit/"]["Transitions"]] == ["GLACIER", "DEEP_ARCHIVE"]
    assert _configs(lake) == ["_connectors/_desired.json", "_connectors/audit-s3-sink.json", "_connectors/orders-s3-sink.json"]
    published = json.loads(boto3.client("s3").get_object(Bucket=lake, Key="_connectors/orders-s3-sink.json")["Body"].read())
    assert published["name"] == "orders-s3-sink"


def test_job_policy_is_scoped_to_the_connectors(lake, cloudformation, context):
    admin.handler(_event("Create", cloudformation[0], _state()), context)
    statements = {s["Sid"]: s for s in _policy()["Statement"]}
    writes = statements["WriteConnectorPrefixes"]["Resource"]
    assert f"arn:aws:s3:::{lake}/topics/orders/*" in writes and f"arn:aws:s3:::{lake}/audit/audit.login/*" in writes
    assert f"arn:aws:s3:::{lake}/dlq/orders-s3-sink/*" in writes
    leading = statements["OwnOffsetsAndLease"]["Condition"]["ForAllValues:StringEquals"]["dynamodb:LeadingKeys"]
    assert leading == ["audit-s3-sink", "orders-s3-sink"]
    assert SETTINGS.msk.resource_arn("topic", "audit.admin") in statements["ReadTopics"]["Resource"]
    assert SETTINGS.msk.resource_arn("group", "connect-orders-s3-sink") in statements["UseConsumerGroups"]["Resource"]


def test_job_policy_lets_topic_dead_letters_be_written_in_transactions(lake, cloudformation, context):
    audit, orders = CONNECTORS
    with_topic = (audit, dataclasses.replace(orders, dlq_topic="orders-dlq"))
    admin.handler(_event("Create", cloudformation[0], _state(with_topic)), context)
    statements = {s["Sid"]: s for s in _policy()["Statement"]}
    msk = SETTINGS.msk
    assert statements["WriteDeadLetterTopics"]["Resource"] == [msk.resource_arn("topic", "orders-dlq")]
    assert sorted(statements["WriteDeadLetterTopics"]["Action"]) == [
        "kafka-cluster:CreateTopic", "kafka-cluster:DescribeTopic", "kafka-cluster:ReadData", "kafka-cluster:WriteData"]
    assert statements["WriteIdempotently"]["Resource"] == [msk.cluster_arn]
    assert statements["DeadLetterTransactions"]["Resource"] == [
        msk.resource_arn("transactional-id", "sink-engine-dlq.orders-s3-sink.*")]
    assert sorted(statements["DeadLetterTransactions"]["Action"]) == [
        "kafka-cluster:AlterTransactionalId", "kafka-cluster:DescribeTransactionalId"]


def test_job_policy_has_no_dead_letter_topic_grants_without_such_a_connector(lake, cloudformation, context):
    admin.handler(_event("Create", cloudformation[0], _state()), context)
    sids = {s["Sid"] for s in _policy()["Statement"]}
    assert sids.isdisjoint({"WriteDeadLetterTopics", "WriteIdempotently", "DeadLetterTransactions"})


def test_direct_invokes_plan_and_apply_are_idempotent(lake, cloudformation, context):
    admin.handler(_event("Create", cloudformation[0], _state()), context)
    assert admin.handler({"action": "plan"}, context) == {"action": "plan", "changes": []}
    assert admin.handler({"action": "apply"}, context) == {"action": "apply", "changes": []}


def test_drift_is_planned_then_repaired(lake, cloudformation, context):
    admin.handler(_event("Create", cloudformation[0], _state()), context)
    boto3.client("iam").delete_role_policy(RoleName=ROLE, PolicyName="sink-connectors")
    boto3.client("s3").put_bucket_lifecycle_configuration(Bucket=lake, LifecycleConfiguration={"Rules": [BASE_RULE]})
    assert admin.handler({"action": "plan"}, context)["changes"] == ["lifecycle rules", "job role policy"]
    assert admin.handler({"action": "apply"}, context)["changes"] == ["lifecycle rules", "job role policy"]
    assert admin.handler({"action": "plan"}, context)["changes"] == []
    assert "sink-connector:audit/" in _rules(lake)


def test_update_removing_a_connector_prunes_what_it_had(lake, cloudformation, context):
    url, responses = cloudformation
    admin.handler(_event("Create", url, _state()), context)
    orders_only = [c for c in CONNECTORS if c.name == "orders-s3-sink"]
    admin.handler(_event("Update", url, _state(orders_only), "sink-connectors-x"), context)
    assert responses[-1]["Status"] == "SUCCESS" and responses[-1]["PhysicalResourceId"] == "sink-connectors-x"
    assert set(_rules(lake)) == {"archive-topics"}
    assert _configs(lake) == ["_connectors/_desired.json", "_connectors/orders-s3-sink.json"]
    assert _policy()["Statement"][3]["Condition"]["ForAllValues:StringEquals"]["dynamodb:LeadingKeys"] == ["orders-s3-sink"]


def test_delete_removes_only_what_the_admin_owns(lake, cloudformation, context):
    url, responses = cloudformation
    admin.handler(_event("Create", url, _state()), context)
    admin.handler(_event("Delete", url, _state(), "sink-connectors-x"), context)
    assert responses[-1]["Status"] == "SUCCESS"
    assert set(_rules(lake)) == {"archive-topics"}
    assert _configs(lake) == []
    assert boto3.client("iam").list_role_policies(RoleName=ROLE)["PolicyNames"] == []


def test_a_failure_is_reported_to_cloudformation(lake, cloudformation, context):
    url, responses = cloudformation
    answer = admin.handler(_event("Create", url, "{not json"), context)
    assert answer["status"] == "FAILED"
    assert responses[-1]["Status"] == "FAILED" and "JSONDecodeError" in responses[-1]["Reason"]


def test_direct_invoke_before_any_deployment_changes_nothing(lake, context):
    answer = admin.handler({"action": "apply"}, context)
    assert answer["changes"] == [] and "deploy the stack first" in answer["note"]
