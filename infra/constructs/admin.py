"""The admin Lambda as a custom resource publishing the connector configs and the connector index, also invoked
directly and daily."""

from __future__ import annotations

import base64
import gzip
import json

from aws_cdk import CustomResource, Duration, Stack
from aws_cdk import aws_events as events
from aws_cdk import aws_events_targets as targets
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_s3 as s3
from constructs import Construct

from infra.connectors import CONFIG_PREFIX, INDEX_KEY, ConnectorSpec, connector_index
from infra.constructs.lambda_function import PythonLambda, execution_role
from infra.constructs.nag import BASIC_EXECUTION, KMS_FAMILIES, KMS_REASON, XRAY_REASON, acknowledge
from infra.settings import Settings

SERVICE = "sink-admin"
RESOURCE_TYPE = "Custom::SinkConnectors"


def desired_state(
    settings: Settings, connectors: tuple[ConnectorSpec, ...], role_arns: dict[str, str], packed: bool = False
) -> dict:
    """The document `lambdas.admin.desired.DesiredState` reads: the connector configs, and the connector index
    (`connector_index`, with each connector's job role from `role_arns`) to publish at INDEX_KEY. `packed`: both
    as `connectors_gzip` and `index_gzip` (base64 of the gzipped JSON list), a twentieth of their size in the
    template (hundreds of connectors would fill CloudFormation's 1 MB alone); then `role_arns` must be literal (no
    CloudFormation token: the nested stacks' named roles)."""
    configs = [{"name": c.name, "config_key": c.config_key, "document": c.document} for c in connectors]
    index = connector_index(connectors, settings.bucket_name, role_arns)
    if packed:
        return {
            "bucket": settings.bucket_name,
            "config_prefix": CONFIG_PREFIX,
            "connectors_gzip": _packed(configs),
            "index_key": INDEX_KEY,
            "index_gzip": _packed(index),
        }
    return {
        "bucket": settings.bucket_name,
        "config_prefix": CONFIG_PREFIX,
        "connectors": configs,
        "index_key": INDEX_KEY,
        "index": index,
    }


def _packed(items: list) -> str:
    """Base64 of the gzipped compact JSON of `items` (no gzip time stamp: the same items give the same text)."""
    return base64.b64encode(
        gzip.compress(json.dumps(items, sort_keys=True, separators=(",", ":")).encode(), mtime=0)
    ).decode()


class Admin(Construct):
    """Attributes: `function`, `resource` (the custom resource whose `State` property is the desired state, its
    role ARNs rendered by CloudFormation). `role_arns`: connector name -> its job runtime role's ARN; `packed`: see
    `desired_state`."""

    def __init__(
        self,
        scope: Construct,
        id: str,
        *,
        settings: Settings,
        connectors: tuple[ConnectorSpec, ...],
        role_arns: dict[str, str],
        bucket: s3.IBucket,
        data_key: kms.IKey,
        layer: lambda_.ILayerVersion,
        packed: bool = False,
    ):
        super().__init__(scope, id)
        self.function = PythonLambda(
            self,
            "Lambda",
            name="admin",
            service=SERVICE,
            layer=layer,
            log_retention_days=settings.retention.log_retention_days,
            timeout=Duration.minutes(2),
            environment={"BUCKET": bucket.bucket_name, "CONFIG_PREFIX": CONFIG_PREFIX},
        ).function
        self._grant(settings, bucket, data_key)
        state = desired_state(settings, connectors, role_arns, packed)
        # service_timeout: if the function dies before answering, CloudFormation fails the resource after this
        # long instead of waiting an hour
        self.resource = CustomResource(
            self,
            "Connectors",
            service_token=self.function.function_arn,
            resource_type=RESOURCE_TYPE,
            service_timeout=Duration.minutes(5),
            properties={"State": Stack.of(self).to_json_string(state)},
        )
        events.Rule(
            self,
            "DailyReconcile",
            schedule=events.Schedule.rate(Duration.days(1)),
            description="Re-publish the connector configs and index (drift repair)",
            targets=[
                targets.LambdaFunction(self.function, event=events.RuleTargetInput.from_object({"action": "apply"}))
            ],
        )

    def _grant(self, settings: Settings, bucket: s3.IBucket, data_key: kms.IKey) -> None:
        role = execution_role(self.function)
        role.add_to_principal_policy(
            iam.PolicyStatement(
                actions=["s3:ListBucket"],
                resources=[bucket.bucket_arn],
                conditions={"StringLike": {"s3:prefix": [f"{CONFIG_PREFIX}*"]}},
            )
        )
        role.add_to_principal_policy(
            iam.PolicyStatement(
                actions=["s3:GetObject", "s3:PutObject", "s3:DeleteObject"],
                resources=[f"arn:aws:s3:::{settings.bucket_name}/{CONFIG_PREFIX}*"],
            )
        )
        data_key.grant_encrypt_decrypt(role)
        function = self.function
        acknowledge(function, f"IAM4[{BASIC_EXECUTION}]", "Lets the function write its own logs; nothing more.")
        acknowledge(function, "IAM5[Resource::*]", XRAY_REASON)
        acknowledge(
            function,
            f"IAM5[Resource::arn:aws:s3:::{settings.bucket_name}/{CONFIG_PREFIX}*]",
            "The admin publishes and prunes connector configs and the index under the config prefix only.",
        )
        for finding in KMS_FAMILIES:
            acknowledge(function, f"IAM5[{finding}]", KMS_REASON)
