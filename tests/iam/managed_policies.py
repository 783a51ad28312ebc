"""The AWS managed policies the stacks attach, as AWS documents them (hardcoded here, since a template holds only
their ARNs). Source: the AWS Managed Policy Reference, https://docs.aws.amazon.com/aws-managed-policy/latest/
reference/<name>.html, default versions: AWSLambdaBasicExecutionRole v1, AWSLambdaMSKExecutionRole v2 (edited
2022-08-02), AWSLambdaVPCAccessExecutionRole v3 (edited 2024-01-05). test_policies.py compares them with the copies
moto bundles, so a drift between the two shows up.
"""

from __future__ import annotations

_LOGS = ["logs:CreateLogGroup", "logs:CreateLogStream", "logs:PutLogEvents"]

MANAGED_POLICIES: dict[str, dict] = {
    "arn:aws:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole": {
        "Version": "2012-10-17",
        "Statement": [{"Effect": "Allow", "Action": _LOGS, "Resource": "*"}],
    },
    "arn:aws:iam::aws:policy/service-role/AWSLambdaMSKExecutionRole": {
        "Version": "2012-10-17",
        "Statement": [
            {
                "Effect": "Allow",
                "Action": [
                    "kafka:DescribeCluster",
                    "kafka:DescribeClusterV2",
                    "kafka:GetBootstrapBrokers",
                    "ec2:CreateNetworkInterface",
                    "ec2:DescribeNetworkInterfaces",
                    "ec2:DescribeVpcs",
                    "ec2:DeleteNetworkInterface",
                    "ec2:DescribeSubnets",
                    "ec2:DescribeSecurityGroups",
                    *_LOGS,
                ],
                "Resource": "*",
            }
        ],
    },
    "arn:aws:iam::aws:policy/service-role/AWSLambdaVPCAccessExecutionRole": {
        "Version": "2012-10-17",
        "Statement": [
            {
                "Sid": "AWSLambdaVPCAccessExecutionPermissions",
                "Effect": "Allow",
                "Action": [
                    *_LOGS,
                    "ec2:CreateNetworkInterface",
                    "ec2:DescribeNetworkInterfaces",
                    "ec2:DescribeSubnets",
                    "ec2:DeleteNetworkInterface",
                    "ec2:AssignPrivateIpAddresses",
                    "ec2:UnassignPrivateIpAddresses",
                ],
                "Resource": "*",
            }
        ],
    },
}


def managed_policy(arn: str) -> dict:
    """The document of an AWS managed policy the stacks use; KeyError naming any other."""
    if arn not in MANAGED_POLICIES:
        raise KeyError(
            f"AWS managed policy {arn} is not in tests/iam/managed_policies.py: add its document from "
            "the AWS Managed Policy Reference"
        )
    return MANAGED_POLICIES[arn]
