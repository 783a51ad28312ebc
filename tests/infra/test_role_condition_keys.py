"""Every statement of every synthesized role (dev and prod: identity policies, attached AWS managed policies, trust
policies) and of each job-role variant the connector features bring grants only actions of the Service
Authorization Reference extract (tests/iam/service_authorization.json), and conditions only on keys a request for
one of its actions carries, or global aws:* keys. moto ignores conditions: a key no request carries (the old
`s3:prefix` on ListBucketMultipartUploads) denies every call on AWS and shows up only here."""

from __future__ import annotations

import dataclasses
import json

import pytest

from infra.connectors import load_connectors
from infra.job_policy import job_statements
from infra.settings import load_settings
from tests.iam.physical import stack_exports, stack_physical
from tests.iam.policies import role_documents
from tests.iam.service_authorization import statement_flaws
from tests.infra.iceberg_connector import DEV, FAN_OUT, NAMES, iceberg_document, load_spec, settings_with

(ORDERS,) = load_connectors(DEV)


def _role_statements(synthesized) -> list[tuple[str, dict]]:
    """(role and where its statement comes from, statement) of every role of both templates."""
    settings, deployment, found = load_settings(synthesized.env), synthesized.deployment, []
    common = {"region": settings.region, "account": settings.account}
    data = stack_physical(synthesized.templates["data"], stack_name=deployment.data.stack_name, **common)
    physical = {
        "data": data,
        "service": stack_physical(
            synthesized.templates["service"],
            stack_name=deployment.service.stack_name,
            exports=stack_exports(synthesized.templates["data"], data),
            **common,
        ),
    }
    for which, template in synthesized.templates.items():
        for role_id, resource in template["Resources"].items():
            if resource["Type"] != "AWS::IAM::Role":
                continue
            trust = resource["Properties"]["AssumeRolePolicyDocument"]["Statement"]
            found += [(f"{role_id} trust policy", s) for s in trust]
            found += [
                (f"{role_id} {d.source}", s)
                for d in role_documents(template, role_id, physical[which])
                for s in d.statements
            ]
    return found


def test_every_statement_of_every_synthesized_role_passes_the_sar_check(each_env):
    statements = _role_statements(each_env)
    assert any(s.get("Condition") for _, s in statements)  # the check has conditions to look at
    flaws = [
        f"{where} {statement.get('Sid', '')}: {flaw}"
        for where, statement in statements
        for flaw in statement_flaws(statement)
    ]
    assert flaws == []


def _with(spec, **config):
    document = json.loads(json.dumps(spec.document))
    document["config"].update(config)
    return dataclasses.replace(spec, document=document)


TABLE_BUCKET_ARN = f"arn:aws:s3tables:{DEV.region}:{DEV.account}:bucket/sink-dev-tables"
FEATURES = {
    "tags, ACL, Glue converter": {
        "s3.object.tagging": "true",
        "s3.acl.canned": "bucket-owner-full-control",
        "value.converter": "com.amazonaws.services.schemaregistry.kafkaconnect.AWSKafkaAvroConverter",
        "value.converter.region": "eu-west-1",
    },
    "KMS key by alias": {"s3.ssea.name": "aws:kms", "s3.sse.kms.key.id": "alias/orders"},
    "secret and parameter references": {
        "value.converter.basic.auth.user.info": "u:${secrets:sr/orders:password}",
        "key.converter.basic.auth.user.info": "u:${ssm:/sink/orders/registry}",
    },
}


@pytest.mark.parametrize("feature", FEATURES)
def test_every_job_role_feature_passes_the_sar_check(feature):
    spec = dataclasses.replace(_with(ORDERS, **FEATURES[feature]), dlq_topic="orders-dlq")
    assert [flaw for s in job_statements(spec, NAMES) for flaw in statement_flaws(s)] == []


@pytest.mark.parametrize("fan_out", [False, True])
@pytest.mark.parametrize("catalog", ["glue", "s3tables"])
def test_every_iceberg_job_role_passes_the_sar_check(catalog, fan_out, tmp_path):
    routing = FAN_OUT if fan_out else {}
    if catalog == "glue":
        spec = load_spec(tmp_path, iceberg_document(**routing))
    else:
        spec = load_spec(
            tmp_path,
            iceberg_document(
                **{"iceberg.catalog.type": "rest", "iceberg.catalog.warehouse": TABLE_BUCKET_ARN, **routing}
            ),
            settings_with(table_bucket="sink-dev-tables"),
        )
    assert [flaw for s in job_statements(spec, NAMES) for flaw in statement_flaws(s)] == []


# the job role's multipart listing as it was: its condition is false for every request on AWS
OLD_LIST_OWN_UPLOADS = {
    "Sid": "ListOwnUploads",
    "Effect": "Allow",
    "Action": ["s3:ListBucketMultipartUploads"],
    "Resource": ["arn:aws:s3:::lake"],
    "Condition": {"StringLike": {"s3:prefix": ["topics/a/*"]}},
}


@pytest.mark.parametrize(
    "statement, flaws",
    [
        (
            OLD_LIST_OWN_UPLOADS,
            ["condition key s3:prefix: no request for s3:ListBucketMultipartUploads carries it (SAR)"],
        ),
        ({**OLD_LIST_OWN_UPLOADS, "Action": ["s3:ListBucket"]}, []),  # ListBucket does carry s3:prefix
        ({"Action": "s3:ListBucket*", "Condition": {"StringLike": {"s3:prefix": ["a/*"]}}}, []),  # one of them does
        (
            {
                "Action": "sts:AssumeRole",
                "Condition": {
                    "StringEquals": {"sts:ExternalId": "x", "sts:RoleSessionName": "y", "aws:SourceAccount": "1"}
                },
            },
            [],
        ),
        ({"Action": "sts:AssumeRole", "Condition": {"ForAnyValue:StringEquals": {"sts:TransitiveTagKeys": ["t"]}}}, []),
        ({"Action": "sts:AssumeRole", "Condition": {"StringEquals": {"sts:ExternalID": "x"}}}, []),  # any case
        (
            {"Action": "dynamodb:DescribeTable", "Condition": {"StringEquals": {"dynamodb:LeadingKeys": ["c"]}}},
            ["condition key dynamodb:LeadingKeys: no request for dynamodb:DescribeTable carries it (SAR)"],
        ),
        ({"Action": "kms:Decrypt", "Condition": {"StringEquals": {"kms:EncryptionContext:tenant": "a"}}}, []),
        (
            {
                "Action": "secretsmanager:GetSecretValue",  # the SAR's placeholders: ${TagKey}, <key>, tag-key
                "Condition": {"StringEquals": {"secretsmanager:ResourceTag/team": "a"}},
            },
            [],
        ),
        (
            {"Action": ["s3:GetObject", "s3:GetObjectRetention"]},
            ["s3:GetObjectRetention is not in service_authorization.json"],
        ),
    ],
)
def test_the_check_names_keys_no_request_carries_and_actions_missing_from_the_extract(statement, flaws):
    assert statement_flaws(statement) == flaws
