"""The recorded-calls check's own parts: calls mapped to what AWS authorizes, and policies evaluated with
resources and conditions (what moto leaves out)."""

from __future__ import annotations

import pytest

from tests.iam.actions import Facts, Need, needs
from tests.iam.evaluate import allows, resource_allows
from tests.iam.policies import PolicyDocument
from tests.iam.recorder import Call

TABLE = "arn:aws:dynamodb:eu-west-1:123456789012:table/offsets"
FACTS = Facts("123456789012", {"offsets": "pk"}, {"lake": "arn:aws:kms:eu-west-1:123456789012:key/k"})


def _call(service: str, operation: str, **params) -> Call:
    return Call("job", service, operation, "eu-west-1", params)


def _need(service: str, operation: str, **params) -> list[tuple]:
    return [(n.action, n.resource, dict(n.context)) for n in needs(_call(service, operation, **params), FACTS)]


def test_a_transaction_needs_the_action_of_each_item_under_its_leading_key():
    assert _need(
        "dynamodb",
        "TransactWriteItems",
        TransactItems=[
            {"ConditionCheck": {"TableName": "offsets", "Key": {"pk": {"S": "c1"}, "sk": {"S": "LEASE"}}}},
            {"Put": {"TableName": "offsets", "Item": {"pk": {"S": "c1"}, "sk": {"S": "PLAN#t#0"}}}},
        ],
    ) == [
        ("dynamodb:ConditionCheckItem", TABLE, {"dynamodb:LeadingKeys": ["c1"]}),
        ("dynamodb:PutItem", TABLE, {"dynamodb:LeadingKeys": ["c1"]}),
    ]


def test_a_query_leads_with_the_value_its_key_condition_gives_the_partition_key():
    assert _need(
        "dynamodb",
        "Query",
        TableName="offsets",
        KeyConditionExpression="#k = :v AND begins_with(sk, :p)",
        ExpressionAttributeNames={"#k": "pk"},
        ExpressionAttributeValues={":v": {"S": "c1"}, ":p": {"S": "OFFSET#"}},
    ) == [("dynamodb:Query", TABLE, {"dynamodb:LeadingKeys": ["c1"]})]


def test_a_tagged_put_to_a_kms_bucket_needs_tagging_and_the_key():
    assert _need("s3", "PutObject", Bucket="lake", Key="topics/a", Tagging="x=1") == [
        ("s3:PutObject", "arn:aws:s3:::lake/topics/a", {}),
        ("s3:PutObjectTagging", "arn:aws:s3:::lake/topics/a", {}),
        ("kms:GenerateDataKey", "arn:aws:kms:eu-west-1:123456789012:key/k", {}),
    ]


def test_an_operation_without_a_mapping_is_named():
    with pytest.raises(KeyError, match="dynamodb.Scan"):
        needs(_call("dynamodb", "Scan", TableName="offsets"), FACTS)


def _allows(statement: dict, service: str, operation: str, **params) -> bool:
    policy = PolicyDocument("test", {"Statement": [{"Effect": "Allow", **statement}]})
    return all(allows([policy], n) for n in needs(_call(service, operation, **params), FACTS))


LEADING = {
    "Action": "dynamodb:*Item",
    "Resource": TABLE,
    "Condition": {"ForAllValues:StringEquals": {"dynamodb:LeadingKeys": ["c1"]}},
}


@pytest.mark.parametrize(
    "statement, call, allowed",
    [
        (LEADING, ("GetItem", {"Key": {"pk": {"S": "c1"}}}), True),
        (LEADING, ("GetItem", {"Key": {"pk": {"S": "c2"}}}), False),  # another connector's item
        ({**LEADING, "Resource": TABLE + "-other"}, ("GetItem", {"Key": {"pk": {"S": "c1"}}}), False),
        ({**LEADING, "Action": "dynamodb:Query"}, ("GetItem", {"Key": {"pk": {"S": "c1"}}}), False),
    ],
)
def test_dynamodb_item_calls_need_action_table_and_leading_key(statement, call, allowed):
    operation, params = call
    assert _allows(statement, "dynamodb", operation, TableName="offsets", **params) is allowed


def test_a_table_action_is_not_restricted_by_a_leading_keys_condition():
    # ForAllValues over a key the request lacks matches: AWS's rule (and why DescribeTable may share the statement)
    assert _allows({**LEADING, "Action": "dynamodb:DescribeTable"}, "dynamodb", "DescribeTable", TableName="offsets")


@pytest.mark.parametrize("prefix, allowed", [("_connectors/", True), ("topics/", False)])
def test_a_listing_needs_its_prefix_in_the_condition(prefix, allowed):
    statement = {
        "Action": "s3:ListBucket",
        "Resource": "arn:aws:s3:::lake",
        "Condition": {"StringLike": {"s3:prefix": ["_connectors/*"]}},
    }
    assert _allows(statement, "s3", "ListObjectsV2", Bucket="lake", Prefix=prefix) is allowed


LIST_UPLOADS = {"Action": "s3:ListBucketMultipartUploads", "Resource": "arn:aws:s3:::lake"}


def test_a_multipart_listing_carries_no_prefix_so_a_prefix_condition_denies_it():
    # the SAR lists s3:prefix for ListBucket and ListBucketVersions only: a ListMultipartUploads request naming a
    # Prefix carries no such key
    assert _need("s3", "ListMultipartUploads", Bucket="lake", Prefix="topics/a/x.json") == [
        ("s3:ListBucketMultipartUploads", "arn:aws:s3:::lake", {})
    ]
    conditioned = {**LIST_UPLOADS, "Condition": {"StringLike": {"s3:prefix": ["topics/a/*"]}}}
    assert not _allows(conditioned, "s3", "ListMultipartUploads", Bucket="lake", Prefix="topics/a/x.json")
    assert _allows(LIST_UPLOADS, "s3", "ListMultipartUploads", Bucket="lake", Prefix="topics/a/x.json")


@pytest.mark.parametrize(
    "action, context, message",
    [
        ("s3:ListBucketMultipartUploads", {"s3:prefix": "topics/"}, "carries no s3:prefix"),
        ("dynamodb:DescribeTable", {"dynamodb:LeadingKeys": ["c1"]}, "carries no dynamodb:LeadingKeys"),
        ("s3:GetObjectRetention", {}, "s3:GetObjectRetention is not in service_authorization.json"),
    ],
)
def test_a_need_holds_only_condition_keys_the_sar_lists_for_its_action(action, context, message):
    with pytest.raises(ValueError, match=message):
        Need(action, "arn:aws:s3:::lake", context, _call("s3", "GetObject"))


def test_global_keys_and_the_sars_own_keys_are_accepted_in_any_case():
    call = _call("s3", "ListObjectsV2")
    assert Need("s3:ListBucket", "arn:aws:s3:::lake", {"s3:Prefix": "a/", "aws:SourceVpce": "v"}, call).context


def test_a_deny_wins_and_an_unknown_operator_is_refused():
    deny = PolicyDocument(
        "deny",
        {
            "Statement": [
                {"Effect": "Allow", "Action": "s3:*", "Resource": "*"},
                {"Effect": "Deny", "Action": "s3:GetObject", "Resource": "arn:aws:s3:::lake/secret/*"},
            ]
        },
    )
    (secret,) = needs(_call("s3", "GetObject", Bucket="other", Key="secret/x"), FACTS)
    assert allows([deny], secret)
    (denied,) = [
        n for n in needs(_call("s3", "GetObject", Bucket="lake", Key="secret/x"), FACTS) if n.action == "s3:GetObject"
    ]
    assert not allows([deny], denied)
    numeric = PolicyDocument(
        "n",
        {
            "Statement": [
                {
                    "Effect": "Allow",
                    "Action": "s3:*",
                    "Resource": "*",
                    "Condition": {"NumericLessThan": {"s3:max-keys": "10"}},
                }
            ]
        },
    )
    with pytest.raises(NotImplementedError, match="NumericLessThan"):
        allows([numeric], secret)


def _publish(principal: str, **context) -> bool:
    topic = "arn:aws:sns:eu-west-1:123456789012:alarms"
    policy = PolicyDocument(
        "topic",
        {
            "Statement": [
                {
                    "Effect": "Allow",
                    "Principal": {"Service": "events.amazonaws.com"},
                    "Action": "sns:Publish",
                    "Resource": topic,
                    "Condition": {"StringEquals": {"aws:SourceAccount": "123456789012"}},
                },
                {
                    "Effect": "Deny",
                    "Principal": {"AWS": "*"},
                    "Action": "sns:Publish",
                    "Resource": topic,
                    "Condition": {"Bool": {"aws:SecureTransport": "false"}},
                },
            ]
        },
    )
    call = Call(principal, "sns", "Publish", "eu-west-1", {})
    return resource_allows(policy, principal, Need("sns:Publish", topic, context, call))


@pytest.mark.parametrize(
    "principal, context, allowed",
    [
        ("events.amazonaws.com", {"aws:SourceAccount": "123456789012", "aws:SecureTransport": "true"}, True),
        ("events.amazonaws.com", {"aws:SourceAccount": "123456789012", "aws:SecureTransport": "false"}, False),  # Deny
        ("events.amazonaws.com", {"aws:SourceAccount": "999999999999", "aws:SecureTransport": "true"}, False),
        ("s3.amazonaws.com", {"aws:SourceAccount": "123456789012", "aws:SecureTransport": "true"}, False),  # not named
    ],
)
def test_a_resource_policy_names_its_principals_and_a_bool_deny_wins(principal, context, allowed):
    assert _publish(principal, **context) is allowed
