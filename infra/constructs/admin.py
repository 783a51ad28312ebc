"""The admin Lambda as a custom resource reconciling per-connector state, also invoked directly and daily."""
from __future__ import annotations

from aws_cdk import CustomResource, Duration, Stack
from aws_cdk import aws_events as events
from aws_cdk import aws_events_targets as targets
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_s3 as s3
from constructs import Construct

from infra.connectors import CONFIG_PREFIX, ConnectorSpec
from infra.constructs.data_lake import DEFAULT_TOPICS_DIR
from infra.constructs.emr_job import JOB_POLICY_NAME, SinkJob
from infra.constructs.lambda_function import PythonLambda
from infra.constructs.nag import BASIC_EXECUTION, KMS_FAMILIES, KMS_REASON, XRAY_REASON, acknowledge
from infra.settings import Settings

SERVICE = "sink-admin"
RESOURCE_TYPE = "Custom::SinkConnectors"


def desired_state(settings: Settings, connectors: tuple[ConnectorSpec, ...], role_name: str, table_arn: str) -> dict:
    """The document `lambdas.admin.desired.DesiredState` reads (tokens allowed; the stack renders them)."""
    return {
        "bucket": settings.bucket_name, "role_name": role_name, "policy_name": JOB_POLICY_NAME,
        "table_arn": table_arn, "cluster_arn": settings.msk.cluster_arn, "config_prefix": CONFIG_PREFIX,
        "dlq_prefix": settings.retention.dlq_prefix, "default_topics_dir": DEFAULT_TOPICS_DIR,
        "glacier_after_days": settings.retention.glacier_after_days,
        "deep_archive_after_days": settings.retention.deep_archive_after_days,
        "connectors": [{**c.to_properties(), "document": c.document} for c in connectors],
    }


class Admin(Construct):
    """Attributes: `function`, `resource` (the custom resource whose `State` property is the desired state)."""

    def __init__(self, scope: Construct, id: str, *, settings: Settings, connectors: tuple[ConnectorSpec, ...],
                 job: SinkJob, bucket: s3.IBucket, data_key: kms.IKey, table_arn: str, layer: lambda_.ILayerVersion):
        super().__init__(scope, id)
        self.function = PythonLambda(self, "Lambda", name="admin", service=SERVICE, layer=layer,
                                     log_retention_days=settings.retention.log_retention_days,
                                     timeout=Duration.minutes(2), environment={
            "BUCKET": bucket.bucket_name, "CONFIG_PREFIX": CONFIG_PREFIX}).function
        self._grant(settings, bucket, data_key, job)
        state = desired_state(settings, connectors, job.role.role_name, table_arn)
        self.resource = CustomResource(self, "Connectors", service_token=self.function.function_arn,
                                       resource_type=RESOURCE_TYPE, properties={"State": Stack.of(self).to_json_string(state)})
        events.Rule(self, "DailyReconcile", schedule=events.Schedule.rate(Duration.days(1)),
                    description="Re-apply per-connector lifecycle rules, job policy and configs (drift repair)",
                    targets=[targets.LambdaFunction(self.function, event=events.RuleTargetInput.from_object({"action": "apply"}))])

    def _grant(self, settings: Settings, bucket: s3.IBucket, data_key: kms.IKey, job: SinkJob) -> None:
        role = self.function.role
        role.add_to_principal_policy(iam.PolicyStatement(
            actions=["s3:GetLifecycleConfiguration", "s3:PutLifecycleConfiguration"], resources=[bucket.bucket_arn]))
        role.add_to_principal_policy(iam.PolicyStatement(
            actions=["s3:ListBucket"], resources=[bucket.bucket_arn],
            conditions={"StringLike": {"s3:prefix": [f"{CONFIG_PREFIX}*"]}}))
        role.add_to_principal_policy(iam.PolicyStatement(
            actions=["s3:GetObject", "s3:PutObject", "s3:DeleteObject"], resources=[f"arn:aws:s3:::{settings.bucket_name}/{CONFIG_PREFIX}*"]))
        role.add_to_principal_policy(iam.PolicyStatement(
            actions=["iam:GetRolePolicy", "iam:PutRolePolicy", "iam:DeleteRolePolicy"], resources=[job.role.role_arn]))
        data_key.grant_encrypt_decrypt(role)
        function = self.function
        acknowledge(function, f"IAM4[{BASIC_EXECUTION}]", "Lets the function write its own logs; nothing more.")
        acknowledge(function, "IAM5[Resource::*]", XRAY_REASON)
        acknowledge(function, f"IAM5[Resource::arn:aws:s3:::{settings.bucket_name}/{CONFIG_PREFIX}*]",
                    "The admin publishes and prunes connector configs under the config prefix only.")
        for finding in KMS_FAMILIES:
            acknowledge(function, f"IAM5[{finding}]", KMS_REASON)
