"""What a refused AWS call needs: the IAM action, and the statement of the deployed job role that grants it.

One table, `JOB_ROLE_SIDS`, maps each action the doctor's probes (and so the run) call to the `Sid` of the statement
in infra/job_policy.py that grants it to a connector's job role (tests/unit/test_doctor_grants.py holds the table
to those statements). A connector deployed otherwise (its own role, a local user) needs the same actions; the Sid
then only says where the stack would put them.
"""

from __future__ import annotations

from botocore.exceptions import ClientError

JOB_ROLE_SIDS = {
    "s3:GetObject": "ReadOwnConfig",  # its published config (ReadOwnDeadLetters: of its dead-letter objects)
    "s3:PutObject": "WriteOwnPrefixes",
    "s3:PutObjectTagging": "WriteOwnPrefixes",
    "s3:PutObjectAcl": "WriteOwnPrefixes",
    "s3:ListBucketMultipartUploads": "ListUploads",
    "sts:AssumeRole": "AssumeS3WriterRole",
    "kms:GenerateDataKey": "UseOwnKmsKey",
    "dynamodb:DescribeTable": "DescribeOffsetsTable",
    "dynamodb:GetItem": "OwnOffsetsLeaseAndPlans",
    "dynamodb:UpdateItem": "OwnOffsetsLeaseAndPlans",
    "glue:GetSchemaVersion": "ReadGlueSchemaVersions",
    "glue:GetDatabase": "ReadIcebergDatabase",
    "glue:GetTable": "CommitIcebergTables",
    "s3tables:GetNamespace": "ReadOwnNamespace",  # S3 Tables' loadNamespaceMetadata
    "lakeformation:GetDataLakeSettings": "ReadLakeFormationSettings",
    "secretsmanager:GetSecretValue": "ReadOwnSecrets",
    "ssm:GetParameter": "ReadOwnParameters",
    "kafka-cluster:DescribeTopic": "ReadOwnTopics",
    "kafka-cluster:CreateTopic": "WriteDeadLetterTopic",
}
_DENIED = ("AccessDenied", "AccessDeniedException", "UnauthorizedOperation", "403")
# botocore operations whose IAM action is not `<service>:<operation>`
_ACTIONS = {
    ("s3", "ListMultipartUploads"): "s3:ListBucketMultipartUploads",
    ("s3", "HeadBucket"): "s3:ListBucket",
    ("s3", "ListObjectsV2"): "s3:ListBucket",
}


def error_code(e: ClientError) -> str:
    return str(e.response.get("Error", {}).get("Code", "?"))


def is_denied(e: ClientError) -> bool:
    return error_code(e) in _DENIED or "AccessDenied" in error_code(e)


def action_of(e: ClientError, service: str) -> str:
    """The IAM action of the refused call; a role assumed for the client (STS) is named as sts:AssumeRole."""
    if e.operation_name == "AssumeRole":
        return "sts:AssumeRole"
    return _ACTIONS.get((service, e.operation_name), f"{service}:{e.operation_name}")


def grant_hint(action: str, resource: str | None = None, grantor: str | None = None, sid: str | None = None) -> str:
    """`needs <action> [on <resource>]: <where it is granted>`. `grantor`: who grants it instead of the job role
    (the role the S3 client assumes); `sid`: the statement, where not the table's (the same action on another
    resource)."""
    on = f" on {resource}" if resource else ""
    if grantor:
        return f"needs {action}{on}, which {grantor} must grant"
    sid = sid or JOB_ROLE_SIDS.get(action)
    where = (
        f"the job role's statement {sid} (infra/job_policy.py) grants it"
        if sid
        else "no statement of the job role grants it"
    )
    return f"needs {action}{on}: {where}"


def describe(
    e: ClientError, service: str, resource: str | None = None, grantor: str | None = None, sid: str | None = None
) -> str:
    """One line for a failed call: operation, AWS's code and message, and, when access was denied, the grant."""
    message = e.response.get("Error", {}).get("Message", "") or str(e)
    line = f"{e.operation_name}: {error_code(e)}: {message}"
    if is_denied(e):
        action = action_of(e, service)
        assumed = action == "sts:AssumeRole"
        line += f"; {grant_hint(action, None if assumed else resource, None if assumed else grantor, sid)}"
    return line
