"""Physical values of a synthesized stack as the test world creates it, and the one place where ARNs move from
the deployed account to moto's.

Names follow the template where it sets them (BucketName, TableName, ...); otherwise `names[logical_id]` (e.g. the
EMR application id moto assigned), else the logical id itself (moto's role for a template role is created under
that name). ARNs are built as AWS builds them, in the deployed account; `to_moto_account` then rewrites them.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Mapping
from typing import Any

from tests.iam.intrinsics import Physical, resolve

MOTO_ACCOUNT = "123456789012"  # moto's default account (moto.core.DEFAULT_ACCOUNT_ID)

_NAME_PROPERTIES = {
    "AWS::S3::Bucket": "BucketName",
    "AWS::DynamoDB::Table": "TableName",
    "AWS::DynamoDB::GlobalTable": "TableName",
    "AWS::IAM::Role": "RoleName",
    "AWS::Lambda::Function": "FunctionName",
    "AWS::Logs::LogGroup": "LogGroupName",
    "AWS::SNS::Topic": "TopicName",
    "AWS::KMS::Alias": "AliasName",
    "AWS::SQS::Queue": "QueueName",
}


def stack_physical(
    template: dict,
    *,
    stack_name: str,
    region: str,
    account: str,
    names: Mapping[str, str] | None = None,
    exports: Mapping[str, str] | None = None,
) -> Physical:
    """The Ref and Fn::GetAtt values of every resource of `template` deployed as `stack_name`."""
    names = names or {}
    refs, attributes = {}, {}
    for logical_id, resource in template["Resources"].items():
        kind = resource["Type"]
        declared = resource.get("Properties", {}).get(_NAME_PROPERTIES.get(kind, ""))
        name = declared if isinstance(declared, str) else names.get(logical_id, logical_id[:64])
        ref, attrs = _values(kind, name, logical_id, region, account)
        refs[logical_id] = ref
        attributes.update({(logical_id, a): v for a, v in attrs.items()})
    pseudo = {
        "AWS::Region": region,
        "AWS::AccountId": account,
        "AWS::Partition": "aws",
        "AWS::URLSuffix": "amazonaws.com",
        "AWS::StackName": stack_name,
    }
    return Physical(refs, attributes, pseudo, dict(exports or {}))


def stack_exports(template: dict, physical: Physical) -> dict[str, str]:
    """Export name -> value of the stack's Outputs (what Fn::ImportValue in another stack receives)."""
    return {
        resolve(o["Export"]["Name"], physical): resolve(o["Value"], physical)
        for o in template.get("Outputs", {}).values()
        if "Export" in o
    }


def _values(kind: str, name: str, logical_id: str, region: str, account: str) -> tuple[str, dict[str, str]]:
    if kind == "AWS::S3::Bucket":
        return name, {"Arn": f"arn:aws:s3:::{name}", "DomainName": f"{name}.s3.amazonaws.com"}
    if kind in ("AWS::DynamoDB::Table", "AWS::DynamoDB::GlobalTable"):
        return name, {"Arn": f"arn:aws:dynamodb:{region}:{account}:table/{name}"}
    if kind == "AWS::KMS::Key":
        key_id = str(uuid.uuid5(uuid.NAMESPACE_URL, logical_id))
        return key_id, {"Arn": f"arn:aws:kms:{region}:{account}:key/{key_id}", "KeyId": key_id}
    if kind == "AWS::IAM::Role":
        return name, {"Arn": f"arn:aws:iam::{account}:role/{name}", "RoleId": f"AROA{logical_id[:16].upper()}"}
    if kind == "AWS::Lambda::Function":
        return name, {"Arn": f"arn:aws:lambda:{region}:{account}:function:{name}"}
    if kind == "AWS::EMRServerless::Application":
        return name, {"ApplicationId": name, "Arn": f"arn:aws:emr-serverless:{region}:{account}:/applications/{name}"}
    if kind == "AWS::Logs::LogGroup":
        return name, {"Arn": f"arn:aws:logs:{region}:{account}:log-group:{name}:*"}
    if kind == "AWS::SQS::Queue":
        url = f"https://sqs.{region}.amazonaws.com/{account}/{name}"
        return url, {"Arn": f"arn:aws:sqs:{region}:{account}:{name}", "QueueName": name, "QueueUrl": url}
    if kind == "AWS::Events::Rule":
        return name, {"Arn": f"arn:aws:events:{region}:{account}:rule/{name}"}
    if kind == "AWS::SNS::Topic":
        arn = f"arn:aws:sns:{region}:{account}:{name}"
        return arn, {"TopicArn": arn, "TopicName": name}
    return name, {}


_ARN_ACCOUNT = re.compile(r"(arn:aws[a-z-]*:[a-z0-9-]+:[a-z0-9-]*:)(\d{12})(:)")


def to_moto_account(value: Any, deployed_account: str) -> Any:
    """`value` (strings, dicts, lists; ARNs also inside longer strings such as a JSON environment variable) with
    every ARN of `deployed_account` moved to MOTO_ACCOUNT. Names that merely contain the account number (the
    bucket `acme-sink-dev-111111111111`, the CDK asset bucket) are left as they are: they are names in moto too."""
    if isinstance(value, dict):
        return {k: to_moto_account(v, deployed_account) for k, v in value.items()}
    if isinstance(value, list):
        return [to_moto_account(v, deployed_account) for v in value]
    if isinstance(value, str):
        return _ARN_ACCOUNT.sub(
            lambda m: m.group(1) + (MOTO_ACCOUNT if m.group(2) == deployed_account else m.group(2)) + m.group(3), value
        )
    return value
