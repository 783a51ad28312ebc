"""Lookups in a synthesized template: a Lambda function by handler (its role, its environment), a connector's
EMR job role, a custom resource's property, a table's partition key and a bucket's default KMS key.

Each raises LookupError naming what it looked for, so a changed construct fails with the reason.
"""

from __future__ import annotations

from typing import Any

from tests.iam.intrinsics import Physical, resolve


def function_id(template: dict, handler: str) -> str:
    """Logical id of the AWS::Lambda::Function whose Handler is `handler`."""
    found = [
        k
        for k, r in template["Resources"].items()
        if r["Type"] == "AWS::Lambda::Function" and r["Properties"].get("Handler") == handler
    ]
    if len(found) != 1:
        raise LookupError(f"expected one function with handler {handler}, found {found}")
    return found[0]


def function_role(template: dict, handler: str) -> str:
    """Logical id of the execution role of the function with `handler` (its Role is Fn::GetAtt <role>.Arn)."""
    role = template["Resources"][function_id(template, handler)]["Properties"]["Role"]
    if not (isinstance(role, dict) and "Fn::GetAtt" in role):
        raise LookupError(f"the role of {handler} is not a role of this template: {role!r}")
    return role["Fn::GetAtt"][0]


def function_environment(template: dict, handler: str, physical: Physical) -> dict[str, str]:
    """The environment variables the stack deploys for the function with `handler`, resolved."""
    properties = template["Resources"][function_id(template, handler)]["Properties"]
    return resolve(properties.get("Environment", {}).get("Variables", {}), physical)


def connector_role(template: dict, connector: str) -> str:
    """Logical id of the EMR job runtime role of `connector`: the role tagged `connector=<name>`, else the one
    whose Description names it."""
    roles = {k: r.get("Properties", {}) for k, r in template["Resources"].items() if r["Type"] == "AWS::IAM::Role"}
    tagged = [k for k, p in roles.items() if {"Key": "connector", "Value": connector} in p.get("Tags", [])]
    described = [k for k, p in roles.items() if connector in str(p.get("Description", ""))]
    found = tagged or described
    if len(found) != 1:
        raise LookupError(
            f"expected one job role of connector {connector} (tag connector={connector} or a "
            f"Description naming it), found {found}"
        )
    return found[0]


def custom_resource_property(template: dict, resource_type: str, name: str, physical: Physical) -> Any:
    """Property `name` of the only resource of `resource_type` (e.g. Custom::SinkConnectors), resolved."""
    found = [r for r in template["Resources"].values() if r["Type"] == resource_type]
    if len(found) != 1:
        raise LookupError(f"expected one {resource_type}, found {len(found)}")
    return resolve(found[0]["Properties"][name], physical)


def table_partition_keys(template: dict, physical: Physical) -> dict[str, str]:
    """Table name -> the attribute name of its partition (HASH) key, for every table of the template."""
    keys = {}
    for logical_id, r in template["Resources"].items():
        if r["Type"] in ("AWS::DynamoDB::Table", "AWS::DynamoDB::GlobalTable"):
            (hash_key,) = [k["AttributeName"] for k in r["Properties"]["KeySchema"] if k["KeyType"] == "HASH"]
            keys[physical.ref(logical_id)] = hash_key
    return keys


def bucket_kms_keys(template: dict, physical: Physical) -> dict[str, str]:
    """Bucket name -> ARN of its default SSE-KMS key, for every bucket encrypted with one."""
    keys = {}
    for logical_id, r in template["Resources"].items():
        if r["Type"] != "AWS::S3::Bucket":
            continue
        for rule in r["Properties"].get("BucketEncryption", {}).get("ServerSideEncryptionConfiguration", []):
            default = rule.get("ServerSideEncryptionByDefault", {})
            if default.get("SSEAlgorithm") == "aws:kms" and "KMSMasterKeyID" in default:
                keys[physical.ref(logical_id)] = resolve(default["KMSMasterKeyID"], physical)
    return keys
