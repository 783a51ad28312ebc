"""cdk-nag acknowledgements (v3: CDK's native `Validations`), each with the reason it is acceptable here."""

from __future__ import annotations

from aws_cdk import Acknowledgment, CfnElement, Stack, Validations
from constructs import IConstruct


def acknowledge(scope: IConstruct, finding: str, reason: str) -> None:
    """Acknowledge the AwsSolutions finding `finding` (e.g. "IAM5[Resource::*]") on `scope` and below."""
    Validations.of(scope).acknowledge(Acknowledgment(id=f"AwsSolutions-{finding}", reason=reason))


def logical_id(construct: CfnElement) -> str:
    """The CloudFormation logical ID of an L1 construct, as cdk-nag names it in token findings (`<Id.Arn>`)."""
    stack = Stack.of(construct)
    return stack.resolve(stack.get_logical_id(construct))


BASIC_EXECUTION = "Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole"
MSK_EXECUTION = "Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaMSKExecutionRole"
KMS_FAMILIES = ("Action::kms:GenerateDataKey*", "Action::kms:ReEncrypt*")
KMS_REASON = "KMS GenerateDataKey*/ReEncrypt* are action families CDK grants on the one data key, not any key."
XRAY_REASON = "X-Ray PutTraceSegments/PutTelemetryRecords (active tracing) have no resource-level permissions."
