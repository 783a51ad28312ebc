"""The doctor's table of IAM action -> job-role statement (sink_engine/doctor/grants.py) against the statements
infra/job_policy.py gives job roles: each Sid it names exists and grants that action."""

from __future__ import annotations

import pytest
from botocore.exceptions import ClientError

from infra.connectors import ConnectorSpec
from infra.iceberg import IcebergTables
from infra.job_policy import JobPhysicalNames, job_statements
from sink_engine.doctor import grants

NAMES = JobPhysicalNames(
    "lake",
    "arn:aws:dynamodb:eu-west-1:111122223333:table/offsets",
    "arn:aws:kafka:eu-west-1:111122223333:cluster/dev/0000",
    "dlq/",
    "eu-west-1",
    "111122223333",
)
BASE = {
    "connector.class": "io.confluent.connect.s3.S3SinkConnector",
    "topics": "orders",
    "s3.bucket.name": "lake",
    "bootstrap.servers": "b:9098",
    "flush.size": "10",
    "format.class": "JsonFormat",
}


def _spec(name: str, dlq_topic: str | None = None, iceberg: IcebergTables | None = None, **config) -> ConnectorSpec:
    document = {"name": name, "config": {**BASE, **{k.replace("_", "."): v for k, v in config.items()}}}
    return ConnectorSpec(
        name,
        "test",
        ("orders",),
        "topics",
        "json",
        document,
        dlq_topic=dlq_topic,
        dlq_s3_prefix=f"dlq/{name}",
        iceberg=iceberg,
    )


SPECS = (
    _spec(
        "objects",
        dlq_topic="orders-dlq",
        s3_object_tagging="true",
        s3_acl_canned="bucket-owner-full-control",
        s3_ssea_name="aws:kms",
        s3_sse_kms_key_id="arn:aws:kms:eu-west-1:111122223333:key/k",
        value_converter="com.amazonaws.services.schemaregistry.kafkaconnect.AWSKafkaAvroConverter",
        **{"aws.secret.access.key": "${secrets:sink/orders:secret}", "aws.access.key.id": "${ssm:/sink/orders/key}"},
    ),
    _spec(
        "assumed",
        s3_credentials_provider_class="AwsAssumeRoleCredentialsProvider",
        s3_credentials_provider_sts_role_arn="arn:aws:iam::111122223333:role/writer",
        s3_credentials_provider_sts_role_session_name="sink",
        s3_credentials_provider_sts_role_external_id="ext-id",
    ),
    _spec("tables", iceberg=IcebergTables((("lake_db", "orders"),), auto_create=True)),
    _spec(
        "s3tables",
        iceberg=IcebergTables(
            (("lake", "orders"),),
            auto_create=False,
            table_bucket_arn="arn:aws:s3tables:eu-west-1:111122223333:bucket/t",
        ),
    ),
)


def _granted() -> set[tuple[str, str]]:
    return {
        (statement["Sid"], action)
        for spec in SPECS
        for statement in job_statements(spec, NAMES)
        for action in statement["Action"]
    }


@pytest.mark.parametrize("action, sid", sorted(grants.JOB_ROLE_SIDS.items()))
def test_each_statement_the_doctor_names_grants_its_action(action, sid):
    assert (sid, action) in _granted()


def test_the_dead_letter_objects_read_names_its_own_statement():
    assert ("ReadOwnDeadLetters", "s3:GetObject") in _granted()


GRANTED_BY = "the job role's statement {} (infra/job_policy.py) grants it"


@pytest.mark.parametrize(
    "code, operation, service, expected",
    [
        ("AccessDenied", "PutObject", "s3", "needs s3:PutObject on r: " + GRANTED_BY.format("WriteOwnPrefixes")),
        (
            "AccessDenied",
            "ListMultipartUploads",
            "s3",
            "needs s3:ListBucketMultipartUploads on r: " + GRANTED_BY.format("ListUploads"),
        ),
        (
            "AccessDeniedException",
            "UpdateItem",
            "dynamodb",
            "needs dynamodb:UpdateItem on r: " + GRANTED_BY.format("OwnOffsetsLeaseAndPlans"),
        ),
        ("AccessDenied", "AssumeRole", "s3", "needs sts:AssumeRole: " + GRANTED_BY.format("AssumeS3WriterRole")),
        (
            "AccessDeniedException",
            "DeleteTable",
            "dynamodb",
            "needs dynamodb:DeleteTable on r: no statement of the job role grants it",
        ),
    ],
)
def test_a_denied_call_names_its_action_and_statement(code, operation, service, expected):
    error = ClientError({"Error": {"Code": code, "Message": "not authorized"}}, operation)
    assert grants.describe(error, service, "r") == f"{operation}: {code}: not authorized; {expected}"


def test_an_error_that_is_not_a_denial_names_no_grant():
    error = ClientError({"Error": {"Code": "NoSuchBucket", "Message": "gone"}}, "PutObject")
    assert grants.describe(error, "s3", "r") == "PutObject: NoSuchBucket: gone"
