"""What AWS authorizes for a recorded call: the IAM actions, each on a resource ARN with the request's condition
keys (as the Service Authorization Reference lists them for the operations the engine and the Lambdas use).

An operation without a mapping raises KeyError naming it: a new call in the code must be mapped here, so that
the recorded-calls test keeps covering every call. A Need's action must be in the SAR extract
(`service_authorization.py`) and its context may hold only keys the extract lists for that action (or global
`aws:*` ones): ValueError otherwise, so that no mapping feeds a condition a key AWS would not send.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from tests.iam.recorder import Call
from tests.iam.service_authorization import authorization


@dataclass(frozen=True)
class Facts:
    """What the mapping needs of the deployment beyond the call itself."""

    account: str
    partition_keys: Mapping[str, str]  # table name -> its partition key attribute (for dynamodb:LeadingKeys)
    bucket_keys: Mapping[str, str] = field(default_factory=dict)  # bucket -> ARN of its default SSE-KMS key
    secret_arns: Mapping[str, str] = field(default_factory=dict)  # Secrets Manager secret name -> its ARN


@dataclass(frozen=True)
class Need:
    action: str
    resource: str
    context: Mapping[str, object]  # condition keys of the request, e.g. {"dynamodb:LeadingKeys": ["orders"]}
    call: Call

    def __post_init__(self):
        try:
            entry = authorization(self.action)
        except KeyError as e:
            raise ValueError(e.args[0]) from None
        foreign = sorted(key for key in self.context if not entry.carries(key))
        if foreign:
            raise ValueError(
                f"a request for {self.action} carries no {', '.join(foreign)} (SAR extract "
                "tests/iam/service_authorization.json)"
            )

    def __str__(self) -> str:
        context = f" with {dict(self.context)}" if self.context else ""
        return f"{self.call} needs {self.action} on {self.resource}{context}"


def needs(call: Call, facts: Facts) -> list[Need]:
    mapping = _SERVICES.get(call.service, {})
    if call.operation not in mapping:
        raise KeyError(f"no IAM mapping for {call.service}.{call.operation}: add it to tests/iam/actions.py")
    return [Need(action, resource, context, call) for action, resource, context in mapping[call.operation](call, facts)]


# --- S3 -------------------------------------------------------------------------------------------------------------


def _object(call: Call) -> str:
    return f"arn:aws:s3:::{call.params['Bucket']}/{call.params['Key']}"


def _bucket(call: Call) -> str:
    return f"arn:aws:s3:::{call.params['Bucket']}"


def _kms_key(call: Call, facts: Facts) -> str | None:
    """The KMS key S3 uses for the object: the request's SSE-KMS key, else the bucket's default key."""
    key = call.params.get("SSEKMSKeyId")
    if key and not key.startswith("arn:"):
        key = f"arn:aws:kms:{call.region}:{facts.account}:key/{key}"
    return key or facts.bucket_keys.get(call.params["Bucket"])


def _s3_read(call: Call, facts: Facts):
    key = _kms_key(call, facts)
    return [("s3:GetObject", _object(call), {})] + ([("kms:Decrypt", key, {})] if key else [])


def _s3_write(call: Call, facts: Facts, kms_actions=("kms:GenerateDataKey",)):
    """PutObject / CreateMultipartUpload: tags need PutObjectTagging, an ACL PutObjectAcl, SSE-KMS the key."""
    found = [("s3:PutObject", _object(call), {})]
    if call.params.get("Tagging"):
        found.append(("s3:PutObjectTagging", _object(call), {}))
    if call.params.get("ACL") or any(k.startswith("Grant") for k in call.params):
        found.append(("s3:PutObjectAcl", _object(call), {}))
    key = _kms_key(call, facts)
    return found + [(a, key, {}) for a in kms_actions if key]


def _s3_list(call: Call, facts: Facts):
    return [("s3:ListBucket", _bucket(call), {"s3:prefix": call.params.get("Prefix", "")})]


def _s3_list_uploads(call: Call, facts: Facts):
    """ListMultipartUploads: the SAR gives s3:ListBucketMultipartUploads no s3:prefix key, whatever Prefix the
    request names; the bucket is the resource."""
    return [("s3:ListBucketMultipartUploads", _bucket(call), {})]


def _s3_object_action(action: str):
    return lambda call, facts: [(action, _object(call), {})]


def _s3_bucket_action(action: str):
    return lambda call, facts: [(action, _bucket(call), {})]


_S3 = {
    "GetObject": _s3_read,
    "HeadObject": _s3_read,
    "PutObject": _s3_write,
    "CreateMultipartUpload": lambda call, facts: _s3_write(call, facts, ("kms:GenerateDataKey", "kms:Decrypt")),
    "UploadPart": _s3_object_action("s3:PutObject"),
    "CompleteMultipartUpload": _s3_object_action("s3:PutObject"),
    "AbortMultipartUpload": _s3_object_action("s3:AbortMultipartUpload"),
    "PutObjectTagging": _s3_object_action("s3:PutObjectTagging"),
    "PutObjectAcl": _s3_object_action("s3:PutObjectAcl"),
    "DeleteObject": _s3_object_action("s3:DeleteObject"),
    "ListObjectsV2": _s3_list,
    "ListObjects": _s3_list,
    "ListMultipartUploads": _s3_list_uploads,
    "HeadBucket": _s3_bucket_action("s3:ListBucket"),
    "GetBucketLifecycleConfiguration": _s3_bucket_action("s3:GetLifecycleConfiguration"),
    "PutBucketLifecycleConfiguration": _s3_bucket_action("s3:PutLifecycleConfiguration"),
}


# --- DynamoDB -------------------------------------------------------------------------------------------------------


def _table(call: Call, facts: Facts, table: str) -> str:
    return f"arn:aws:dynamodb:{call.region}:{facts.account}:table/{table}"


def _scalar(attribute: dict) -> str:
    (value,) = attribute.values()
    return str(value)


def _leading(facts: Facts, table: str, item: dict) -> dict:
    """dynamodb:LeadingKeys of a request on one item (its Key or Item)."""
    return {"dynamodb:LeadingKeys": [_scalar(item[facts.partition_keys[table]])]}


def _query_leading(facts: Facts, params: dict) -> dict:
    """dynamodb:LeadingKeys of a Query: the value its key condition gives the partition key."""
    key = facts.partition_keys[params["TableName"]]
    aliases = [re.escape(key)] + [
        re.escape(alias) for alias, name in params.get("ExpressionAttributeNames", {}).items() if name == key
    ]
    match = re.search(rf"(?<![\w#])(?:{'|'.join(aliases)})\s*=\s*(:\w+)", params["KeyConditionExpression"])
    if not match:
        raise ValueError(f"cannot find the partition key {key} in {params['KeyConditionExpression']!r}")
    return {"dynamodb:LeadingKeys": [_scalar(params["ExpressionAttributeValues"][match.group(1)])]}


def _item_action(action: str):
    def needed(call: Call, facts: Facts):
        table = call.params["TableName"]
        item = call.params.get("Key") or call.params["Item"]
        return [(action, _table(call, facts, table), _leading(facts, table, item))]

    return needed


def _table_action(action: str):
    return lambda call, facts: [(action, _table(call, facts, call.params["TableName"]), {})]


def _query(call: Call, facts: Facts):
    table = call.params["TableName"]
    return [("dynamodb:Query", _table(call, facts, table), _query_leading(facts, call.params))]


def _batch_write(call: Call, facts: Facts):
    found = []
    for table, requests in call.params["RequestItems"].items():
        items = [r.get("DeleteRequest", {}).get("Key") or r["PutRequest"]["Item"] for r in requests]
        keys = sorted({_scalar(i[facts.partition_keys[table]]) for i in items})
        found.append(("dynamodb:BatchWriteItem", _table(call, facts, table), {"dynamodb:LeadingKeys": keys}))
    return found


_TRANSACTION_ITEM_ACTIONS = {
    "Put": "dynamodb:PutItem",
    "Update": "dynamodb:UpdateItem",
    "Delete": "dynamodb:DeleteItem",
    "ConditionCheck": "dynamodb:ConditionCheckItem",
    "Get": "dynamodb:GetItem",
}


def _transaction(call: Call, facts: Facts):
    """AWS authorizes TransactWriteItems / TransactGetItems by the item action of each of its items."""
    found = []
    for entry in call.params["TransactItems"]:
        ((kind, request),) = entry.items()
        table = request["TableName"]
        found.append(
            (
                _TRANSACTION_ITEM_ACTIONS[kind],
                _table(call, facts, table),
                _leading(facts, table, request.get("Key") or request["Item"]),
            )
        )
    return found


_DYNAMODB = {
    "GetItem": _item_action("dynamodb:GetItem"),
    "PutItem": _item_action("dynamodb:PutItem"),
    "UpdateItem": _item_action("dynamodb:UpdateItem"),
    "DeleteItem": _item_action("dynamodb:DeleteItem"),
    "Query": _query,
    "BatchWriteItem": _batch_write,
    "TransactWriteItems": _transaction,
    "TransactGetItems": _transaction,
    "DescribeTable": _table_action("dynamodb:DescribeTable"),
    "CreateTable": _table_action("dynamodb:CreateTable"),
}


# --- EMR Serverless, IAM, STS, Glue ---------------------------------------------------------------------------------


def _application(call: Call, facts: Facts) -> str:
    return f"arn:aws:emr-serverless:{call.region}:{facts.account}:/applications/{call.params['applicationId']}"


def _start_job_run(call: Call, facts: Facts):
    """StartJobRun passes the job role (iam:PassRole to EMR Serverless); tags on the new run need TagResource
    (the run's ARN does not exist yet: `<application>/jobruns/*`)."""
    found = [
        ("emr-serverless:StartJobRun", _application(call, facts), {}),
        ("iam:PassRole", call.params["executionRoleArn"], {"iam:PassedToService": "emr-serverless.amazonaws.com"}),
    ]
    if call.params.get("tags"):
        found.append(("emr-serverless:TagResource", f"{_application(call, facts)}/jobruns/*", {}))
    return found


def _application_action(action: str):
    return lambda call, facts: [(action, _application(call, facts), {})]


def _job_run_action(action: str):
    return lambda call, facts: [(action, f"{_application(call, facts)}/jobruns/{call.params['jobRunId']}", {})]


def _glue_arns(call: Call, facts: Facts, database: str, table: str | None = None) -> list[str]:
    """Glue authorizes a database action on the catalog and the database, a table action on the table too."""
    base = f"arn:aws:glue:{call.region}:{call.params.get('CatalogId', facts.account)}"
    arns = [f"{base}:catalog", f"{base}:database/{database}"]
    return arns + ([f"{base}:table/{database}/{table}"] if table is not None else [])


def _glue_database_action(action: str):
    return lambda call, facts: [
        (action, arn, {})
        for arn in _glue_arns(call, facts, call.params.get("Name") or call.params["DatabaseInput"]["Name"])
    ]


def _glue_table_action(action: str):
    def needed(call: Call, facts: Facts):
        table = call.params.get("Name") or call.params["TableInput"]["Name"]
        return [(action, arn, {}) for arn in _glue_arns(call, facts, call.params["DatabaseName"], table)]

    return needed


def _secret_value(call: Call, facts: Facts):
    """AWS authorizes a read of a secret on the secret's ARN (its name, `-` and six characters), however the
    request names it; a name the facts do not know raises KeyError."""
    secret = call.params["SecretId"]
    return [("secretsmanager:GetSecretValue", secret if secret.startswith("arn:") else facts.secret_arns[secret], {})]


def _parameter_value(call: Call, facts: Facts):
    """AWS authorizes a read of a parameter on its ARN: `parameter/` and the name without its leading slash, in the
    request's region and the caller's account, however the request names it."""
    name = call.params["Name"]
    if name.startswith("arn:"):
        return [("ssm:GetParameter", name, {})]
    return [("ssm:GetParameter", f"arn:aws:ssm:{call.region}:{facts.account}:parameter/{name.removeprefix('/')}", {})]


def _role_action(action: str):
    return lambda call, facts: [(action, f"arn:aws:iam::{facts.account}:role/{call.params['RoleName']}", {})]


_SERVICES = {
    "s3": _S3,
    "dynamodb": _DYNAMODB,
    "emr-serverless": {
        "StartJobRun": _start_job_run,
        "GetJobRun": _job_run_action("emr-serverless:GetJobRun"),
        "CancelJobRun": _job_run_action("emr-serverless:CancelJobRun"),
        "ListJobRuns": _application_action("emr-serverless:ListJobRuns"),
        "GetApplication": _application_action("emr-serverless:GetApplication"),
        "StopApplication": _application_action("emr-serverless:StopApplication"),
        "ListApplications": lambda call, facts: [("emr-serverless:ListApplications", "*", {})],  # no resource type
    },
    "iam": {
        op: _role_action(f"iam:{op}")
        for op in ("GetRolePolicy", "PutRolePolicy", "DeleteRolePolicy", "ListRolePolicies")
    },
    "sts": {"GetCallerIdentity": lambda call, facts: []},  # needs no permission
    "secretsmanager": {"GetSecretValue": _secret_value},
    "ssm": {"GetParameter": _parameter_value},
    "glue": {
        "GetSchemaVersion": lambda call, facts: [("glue:GetSchemaVersion", "*", {})],
        "GetDatabase": _glue_database_action("glue:GetDatabase"),
        "CreateDatabase": _glue_database_action("glue:CreateDatabase"),
        **{op: _glue_table_action(f"glue:{op}") for op in ("GetTable", "CreateTable", "UpdateTable")},
        # a listing of a database's tables: authorized on every table of it (pyiceberg's list_tables)
        "GetTables": lambda call, facts: [
            ("glue:GetTables", arn, {}) for arn in _glue_arns(call, facts, call.params["DatabaseName"], "*")
        ],
    },
    # a run's metrics: no resource-level permission in use; the request carries its namespace
    "cloudwatch": {
        "PutMetricData": lambda call, facts: [
            ("cloudwatch:PutMetricData", "*", {"cloudwatch:namespace": call.params["Namespace"]})
        ]
    },
}
