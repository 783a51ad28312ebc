"""What moto cannot evaluate, checked against the calls actually made: every AWS call recorded while the engine,
the admin, the trigger and the replay ran under their roles (conftest.py) is granted by that role's documents as
deployed, with resource ARNs of every service and conditions (dynamodb:LeadingKeys, s3:prefix,
iam:PassedToService, cloudwatch:namespace) evaluated; and each permission those calls use is needed (removing it
leaves a call denied).
"""

from __future__ import annotations

import dataclasses

import pytest

from tests.iam.actions import needs
from tests.iam.evaluate import allows
from tests.iam.policies import PolicyDocument, without_action


@pytest.fixture(scope="module")
def recorded(published, engine_run, triggered, replayed, call_log, principals, deployed):
    """(principal name -> its documents as deployed, the needs of every call made as one of them)."""
    documents = {p.name: list(p.documents) for p in principals.values()}
    facts, found, unmapped = deployed.facts(), [], set()
    for call in call_log.calls():
        if call.principal in documents:  # not the roles a test made to remove a permission
            try:
                found += needs(call, facts)
            except KeyError:
                unmapped.add(f"{call.service}.{call.operation}")
    assert not unmapped, f"calls with no IAM mapping in tests/iam/actions.py: {sorted(unmapped)}"
    return documents, found


def test_every_role_made_calls_and_the_engine_calls_were_recorded_in_its_workers(recorded, principals):
    documents, found = recorded
    assert {n.call.principal for n in found} == set(documents)
    job = principals["job"].name
    operations = {(n.call.service, n.call.operation) for n in found if n.call.principal == job}
    # the driver's (config, table check, plans, the run's metrics) and the Spark tasks' (uploads) calls
    assert {
        ("s3", "GetObject"),
        ("dynamodb", "DescribeTable"),
        ("dynamodb", "TransactWriteItems"),
        ("dynamodb", "BatchWriteItem"),
        ("s3", "PutObject"),
        ("cloudwatch", "PutMetricData"),
    } <= operations


def test_every_recorded_call_is_granted_by_its_roles_documents_as_deployed(recorded):
    documents, found = recorded
    denied = sorted({str(n) for n in found if not allows(documents[n.call.principal], n)})
    assert denied == []


# permissions moto does not check (resources of other services than S3, transactions' item actions, tags on a
# PutObject, KMS, PassRole): removed from the stack, the check above fails
MOTO_BLIND = [
    ("job", "s3:PutObjectTagging"),
    ("job", "dynamodb:ConditionCheckItem"),
    ("job", "dynamodb:PutItem"),
    ("job", "kms:GenerateDataKey"),
    ("trigger", "iam:PassRole"),
    ("trigger", "emr-serverless:StartJobRun"),
    ("trigger", "kms:Decrypt"),
    ("replay", "kms:Decrypt"),
]


@pytest.mark.parametrize("role, action", MOTO_BLIND)
def test_a_permission_moto_does_not_check_removed_from_the_role_fails_the_check(role, action, recorded, principals):
    documents, found = recorded
    name = principals[role].name
    mine = [n for n in found if n.call.principal == name]
    reduced = without_action(documents[name], action)
    newly_denied = {n.action for n in mine if not allows(reduced, n)} - {
        n.action for n in mine if not allows(documents[name], n)
    }
    assert newly_denied == {action}


def test_a_leading_keys_condition_naming_another_connector_fails_the_check(recorded, principals):
    documents, found = recorded
    name = principals["job"].name
    other = [PolicyDocument(d.source, _with_leading_keys(d.document, ["another-connector"])) for d in documents[name]]
    denied = {n.action for n in found if n.call.principal == name and not allows(other, n)}
    assert {
        "dynamodb:GetItem",
        "dynamodb:PutItem",
        "dynamodb:UpdateItem",
        "dynamodb:Query",
        "dynamodb:BatchWriteItem",
    } <= denied
    assert "dynamodb:DescribeTable" not in denied  # a table-level action has no leading keys


def test_the_run_metrics_are_granted_in_their_namespace_only(recorded, principals):
    documents, found = recorded
    name = principals["job"].name
    published = [n for n in found if n.call.principal == name and n.action == "cloudwatch:PutMetricData"]
    assert published and all(allows(documents[name], n) for n in published)
    elsewhere = [dataclasses.replace(n, context={"cloudwatch:namespace": "AnotherNamespace"}) for n in published]
    assert not any(allows(documents[name], n) for n in elsewhere)


def _with_leading_keys(document: dict, keys: list[str]) -> dict:
    statements = []
    for statement in document["Statement"]:
        condition = {
            op: {k: (keys if k == "dynamodb:LeadingKeys" else v) for k, v in values.items()}
            for op, values in statement.get("Condition", {}).items()
        }
        statements.append({**statement, **({"Condition": condition} if condition else {})})
    return {**document, "Statement": statements}
