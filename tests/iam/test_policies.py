"""The harness's parts: intrinsics resolved as CloudFormation does, a role's documents gathered from every place a
template puts them, the managed policies as AWS documents them, the moto copy; and, on the deployed stacks, the
real ARNs of every resource the moto copies relax (moto cannot check them) and the connector's leading keys."""

from __future__ import annotations

import json

import pytest

from infra.constructs.trigger import trigger_group_id
from tests.iam.deployment import ENV
from tests.iam.functions import HANDLERS
from tests.iam.intrinsics import Physical, UnresolvedError, resolve
from tests.iam.managed_policies import MANAGED_POLICIES
from tests.iam.moto_policy import for_moto
from tests.iam.physical import MOTO_ACCOUNT, to_moto_account
from tests.iam.policies import PolicyDocument, role_documents, without_action

PHYSICAL = Physical(
    refs={"Bucket": "lake", "Table": "offsets", "Role": "job-role", "Other": "other-role"},
    attributes={("Table", "Arn"): "arn:aws:dynamodb:eu-west-1:111111111111:table/offsets"},
    pseudo={"AWS::Partition": "aws", "AWS::Region": "eu-west-1", "AWS::AccountId": "111111111111"},
    exports={"Data:KeyArn": "arn:aws:kms:eu-west-1:111111111111:key/k-1"},
)


@pytest.mark.parametrize(
    "token, expected",
    [
        (
            {"Fn::Join": ["", ["arn:", {"Ref": "AWS::Partition"}, ":s3:::", {"Ref": "Bucket"}, "/*"]]},
            "arn:aws:s3:::lake/*",
        ),
        ({"Fn::GetAtt": ["Table", "Arn"]}, "arn:aws:dynamodb:eu-west-1:111111111111:table/offsets"),
        ({"Fn::GetAtt": "Table.Arn"}, "arn:aws:dynamodb:eu-west-1:111111111111:table/offsets"),
        ({"Fn::Select": [1, {"Fn::Split": ["/", "a/b/c"]}]}, "b"),
        ({"Fn::Sub": "arn:${AWS::Partition}:s3:::${Bucket}/${!Literal}"}, "arn:aws:s3:::lake/${Literal}"),
        ({"Fn::Sub": "arn:${AWS::Partition}:logs:${AWS::Region}:${AWS::AccountId}:log-group:${Name}"}, UnresolvedError),
        (
            {"Fn::Sub": ["${Table.Arn}/index/${Index}", {"Index": "by-time"}]},
            "arn:aws:dynamodb:eu-west-1:111111111111:table/offsets/index/by-time",
        ),
        ({"Fn::ImportValue": "Data:KeyArn"}, "arn:aws:kms:eu-west-1:111111111111:key/k-1"),
        ({"Fn::If": ["IsProd", "a", "b"]}, UnresolvedError),
        ({"Statement": [{"Resource": [{"Ref": "Bucket"}, "*"]}]}, {"Statement": [{"Resource": ["lake", "*"]}]}),
    ],
)
def test_intrinsics_resolve_as_cloudformation_does(token, expected):
    if expected is UnresolvedError:
        with pytest.raises(UnresolvedError):
            resolve(token, PHYSICAL)
    else:
        assert resolve(token, PHYSICAL) == expected


def test_arns_move_to_motos_account_and_names_do_not():
    value = {
        "Resource": ["arn:aws:dynamodb:eu-west-1:111111111111:table/t", "arn:aws:s3:::lake-111111111111/*"],
        "Env": '[{"role_arn":"arn:aws:iam::111111111111:role/job"}]',
        "Other": "arn:aws:iam::222222222222:role/x",
    }
    assert to_moto_account(value, "111111111111") == {
        "Resource": [f"arn:aws:dynamodb:eu-west-1:{MOTO_ACCOUNT}:table/t", "arn:aws:s3:::lake-111111111111/*"],
        "Env": f'[{{"role_arn":"arn:aws:iam::{MOTO_ACCOUNT}:role/job"}}]',
        "Other": "arn:aws:iam::222222222222:role/x",
    }


def _statement(action, resource):
    return {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": action, "Resource": resource}]}


TEMPLATE = {
    "Resources": {
        "Role": {
            "Type": "AWS::IAM::Role",
            "Properties": {
                "Policies": [
                    {
                        "PolicyName": "own",
                        "PolicyDocument": _statement(
                            "s3:GetObject", {"Fn::Join": ["", ["arn:aws:s3:::", {"Ref": "Bucket"}, "/config.json"]]}
                        ),
                    }
                ],
                "ManagedPolicyArns": [
                    {
                        "Fn::Join": [
                            "",
                            [
                                "arn:",
                                {"Ref": "AWS::Partition"},
                                ":iam::aws:policy/service-role/AWSLambdaBasicExecutionRole",
                            ],
                        ]
                    }
                ],
            },
        },
        "Other": {"Type": "AWS::IAM::Role", "Properties": {}},
        "Attached": {
            "Type": "AWS::IAM::Policy",
            "Properties": {
                "PolicyName": "attached",
                "Roles": [{"Ref": "Role"}],
                "PolicyDocument": _statement(
                    ["dynamodb:Query", "kms:Decrypt"],
                    [{"Fn::GetAtt": ["Table", "Arn"]}, {"Fn::ImportValue": "Data:KeyArn"}],
                ),
            },
        },
        "NotMine": {
            "Type": "AWS::IAM::Policy",
            "Properties": {
                "PolicyName": "other",
                "Roles": [{"Ref": "Other"}],
                "PolicyDocument": _statement("sqs:*", "*"),
            },
        },
    }
}


def test_a_roles_documents_are_its_inline_attached_and_managed_policies():
    documents = role_documents(TEMPLATE, "Role", PHYSICAL)
    assert [d.source for d in documents] == [
        "inline own",
        "managed AWSLambdaBasicExecutionRole",
        "AWS::IAM::Policy Attached",
    ]
    assert documents[0].statements[0]["Resource"] == "arn:aws:s3:::lake/config.json"
    assert documents[2].statements[0]["Resource"] == [
        "arn:aws:dynamodb:eu-west-1:111111111111:table/offsets",
        "arn:aws:kms:eu-west-1:111111111111:key/k-1",
    ]
    with pytest.raises(KeyError, match="Attached is not an AWS::IAM::Role"):
        role_documents(TEMPLATE, "Attached", PHYSICAL)


def test_the_managed_policies_are_the_documents_moto_bundles():
    from moto.iam.aws_managed_policies import aws_managed_policies_data

    bundled = json.loads(aws_managed_policies_data)
    for arn, document in MANAGED_POLICIES.items():
        assert bundled[arn.rsplit("/", 1)[-1]]["Document"] == document, arn


def test_the_moto_copy_keeps_s3_resources_and_relaxes_the_rest_with_a_record():
    policy = PolicyDocument(
        "test",
        {
            "Statement": [
                {
                    "Sid": "Mixed",
                    "Effect": "Allow",
                    "Action": ["s3:PutObject", "dynamodb:PutItem"],
                    "Resource": ["arn:aws:s3:::lake/topics/*", "arn:aws:dynamodb:eu-west-1:1:table/t"],
                    "Condition": {"ForAllValues:StringEquals": {"dynamodb:LeadingKeys": ["c"]}},
                }
            ]
        },
    )
    copy, relaxed = for_moto(policy)
    s3, other = copy["Statement"]
    assert s3["Action"] == ["s3:PutObject"] and s3["Resource"] == policy.statements[0]["Resource"]
    assert other["Action"] == ["dynamodb:PutItem", "dynamodb:TransactWriteItems"] and other["Resource"] == "*"
    assert [(r.sid, r.actions) for r in relaxed] == [
        ("Mixed", ("dynamodb:PutItem",)),
        ("Mixed", ("dynamodb:TransactWriteItems",)),
    ]


def test_the_moto_copy_keeps_the_role_an_assume_role_statement_names():
    # moto authorizes sts:AssumeRole against the role's ARN, as AWS does: nothing to relax
    policy = PolicyDocument("test", _statement(["sts:AssumeRole"], ["arn:aws:iam::1:role/writer"]))
    copy, relaxed = for_moto(policy)
    assert copy["Statement"] == policy.statements and relaxed == []


def test_removing_an_action_removes_the_wildcards_granting_it_and_refuses_one_never_granted():
    policy = PolicyDocument("test", _statement(["kms:GenerateDataKey*", "kms:Decrypt"], "*"))
    assert without_action([policy], "kms:GenerateDataKey")[0].statements[0]["Action"] == ["kms:Decrypt"]
    with pytest.raises(ValueError, match="no statement grants s3:PutObject"):
        without_action([policy], "s3:PutObject")


def test_every_relaxed_resource_is_an_arn_of_this_deployment(principals, deployed):
    """moto checks only S3 resources: the ARNs the copies relax are checked here, against the deployment."""
    settings, connector = deployed.synthesized.settings, deployed.synthesized.connector
    msk = settings.msk

    def kafka(kind: str, names) -> set[str]:
        return {deployed.in_moto(msk.resource_arn(kind, n)) for n in names}

    application = (
        f"arn:aws:emr-serverless:{settings.region}:{MOTO_ACCOUNT}:/applications/"
        + deployed.environment(HANDLERS["trigger"])["APPLICATION_ID"]
    )
    # the job's log group is named by CloudFormation (the harness names it after its logical id)
    (emr_application,) = [
        r
        for r in deployed.synthesized.templates["service"]["Resources"].values()
        if r["Type"] == "AWS::EMRServerless::Application"
    ]
    group = emr_application["Properties"]["MonitoringConfiguration"]["CloudWatchLoggingConfiguration"]["LogGroupName"][
        "Ref"
    ]
    log_group = f"arn:aws:logs:{settings.region}:{MOTO_ACCOUNT}:log-group:{group}"
    topics = ("orders", "payments")
    expected = {
        "dynamodb": {f"arn:aws:dynamodb:{settings.region}:{MOTO_ACCOUNT}:table/{settings.table_name}"},
        "kms": set(deployed.facts().bucket_keys.values()),
        "kafka": {deployed.in_moto(msk.cluster_arn)},
        "kafka-cluster": {deployed.in_moto(msk.cluster_arn)}
        | kafka("topic", topics)
        | kafka("topic", settings.restore.targets_of(connector))
        | kafka("group", [f"connect-{connector}", *(trigger_group_id(ENV, t) for t in topics)]),
        "emr-serverless": {application, f"{application}/jobruns/*"},
        "iam": {principals["job"].arn},
        "logs": {log_group, f"{log_group}:*"},
        # the trigger's MSK event sources send the batches they discard there (trigger.py)
        "sqs": {f"arn:aws:sqs:{settings.region}:{MOTO_ACCOUNT}:sink-{ENV}-trigger-discarded-batches"},
    }
    unexpected = sorted(
        (p, r.sid, a, arn)
        for p, principal in principals.items()
        for r in principal.relaxations
        for a in r.actions
        for arn in r.resources
        if arn not in expected[a.split(":")[0]]
    )
    assert unexpected == []
    assert not [r for p in principals.values() for r in p.relaxations if any(a.startswith("s3:") for a in r.actions)]


def test_leading_keys_conditions_name_only_the_connector_and_its_restore_targets_leases(principals, deployed):
    statements = [s for p in principals.values() for d in p.documents for s in d.statements]
    conditions = [
        (s.get("Sid"), values["dynamodb:LeadingKeys"])
        for s in statements
        for values in s.get("Condition", {}).values()
        if "dynamodb:LeadingKeys" in values
    ]
    connector = deployed.synthesized.connector
    targets = deployed.synthesized.settings.restore.targets_of(connector)
    assert targets and ("RestoreLease", [f"restore#{t}" for t in targets]) in conditions
    assert all(keys == [connector] for sid, keys in conditions if sid != "RestoreLease")
