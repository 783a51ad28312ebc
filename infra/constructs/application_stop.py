"""Custom resources that stop the EMR Serverless application before CloudFormation updates it and before it deletes
it.

CloudFormation's UpdateApplication fails while the application is STARTED ("Only MaxConcurrentRuns from
SchedulerConfiguration can be updated when application is in STARTED state": aws/aws-cdk#35488,
aws-cloudformation/cloudformation-coverage-roadmap#2370; the API needs CREATED or STOPPED, EMR Serverless API
Reference, UpdateApplication), and with the idle-flush tick and auto-stop the sink's application is STARTED most of
the time. The application depends on this resource, whose properties carry a hash of the application's properties
(tags included): CloudFormation updates it, so its function (lambdas/app_stop) cancels the application's active
runs and stops it, exactly when the application is about to be updated, and not otherwise. Auto-start starts the
application again at the next StartJobRun.

DeleteApplication needs the same states ("An application has to be in a stopped or created state in order to be
deleted", EMR Serverless API Reference, DeleteApplication,
https://docs.aws.amazon.com/emr-serverless/latest/APIReference/API_DeleteApplication.html), and the application
stays STARTED after any run until its idle stop: a stack deleted then ends DELETE_FAILED. A second resource
(`before_delete`, RESOURCE_TYPE_ON_DELETE) depends on the application (its id) and on the grant, and the trigger on
it: CloudFormation deletes in reverse order of dependencies, so the trigger (and what invokes it) goes first, then
this resource, whose Delete cancels the application's runs and stops it, then the application.

Plain Lambda-backed resources (as the admin's), not the Provider framework: one function with its own role and
no framework functions; its 15 minutes hold a cancel and a stop (minutes). Its role: ListApplications (no
resource-level permissions: it finds the application by name, since its id cannot be passed without a dependency
cycle) and, in a policy that follows the application (on its ARN only), GetApplication, StopApplication,
ListJobRuns and CancelJobRun. That policy exists only once the application does, so Create does nothing (a first
deployment of this resource onto a stack whose running application also changes needs the application stopped by
hand: infra/README.md, "Redeploys").
"""

from __future__ import annotations

import hashlib
import json
from typing import cast

import jsii
from aws_cdk import AspectPriority, Aspects, CfnResource, CustomResource, Duration, IAspect, Stack
from aws_cdk import aws_emrserverless as emr
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from constructs import Construct

from infra.constructs.lambda_function import PythonLambda, execution_role
from infra.constructs.nag import BASIC_EXECUTION, XRAY_REASON, acknowledge, logical_id
from infra.settings import Settings

SERVICE = "sink-application-stop"
RESOURCE_TYPE = "Custom::SinkApplicationStop"
RESOURCE_TYPE_ON_DELETE = "Custom::SinkApplicationStopOnDelete"
# the longest grace period a STREAMING run is cancelled with here: the function has 15 minutes to stop the application
STREAMING_GRACE_CAP_S = 600
STOP_ACTIONS = [
    "emr-serverless:GetApplication",
    "emr-serverless:StopApplication",
    "emr-serverless:ListJobRuns",
    "emr-serverless:CancelJobRun",
]


def configuration(application: emr.CfnApplication) -> dict:
    """The application's CloudFormation properties as the template holds them (references as intrinsics; tags
    included once the Tags aspects ran)."""
    return Stack.of(application).resolve(application._render_properties(application._cfn_properties))


def _hash(properties: dict) -> str:
    return hashlib.sha256(json.dumps(properties, sort_keys=True).encode()).hexdigest()


def _references(value) -> list:
    """The intrinsics (Ref, Fn::...) in `value`: their rendered values change the resource's properties too."""
    if isinstance(value, dict):
        if len(value) == 1 and (next(iter(value)) == "Ref" or next(iter(value)).startswith("Fn::")):
            return [value]
        return [r for v in value.values() for r in _references(v)]
    if isinstance(value, list):
        return [r for v in value for r in _references(v)]
    return []


@jsii.implements(IAspect)
class _Fingerprint:
    """Sets the resource's `ConfigurationHash` (of the application's properties) and `References` (the
    intrinsics among them, which CloudFormation renders: a hash of `{"Ref": ...}` would not see their values
    change)."""

    def __init__(self, resource: CfnResource, application: emr.CfnApplication):
        self._resource, self._application = resource, application

    def visit(self, node) -> None:
        if node.node.path != self._resource.node.path:
            return
        properties = configuration(self._application)
        self._resource.add_property_override("ConfigurationHash", _hash(properties))
        self._resource.add_property_override("References", _references(properties))


class ApplicationStop(Construct):
    """Attributes: `function`, `resource` (the custom resource `application` depends on: stops it before an
    update), `before_delete` (the custom resource that depends on `application`: stops it before its deletion; what
    starts runs must depend on it), `policy` (the grant on the application)."""

    def __init__(
        self,
        scope: Construct,
        id: str,
        *,
        settings: Settings,
        application: emr.CfnApplication,
        layer: lambda_.ILayerVersion,
        streaming_grace_seconds: int | None = None,
    ):
        super().__init__(scope, id)
        # continuous connectors' STREAMING runs are cancelled with a grace period (the longest of theirs), within the
        # function's 15 minutes: at most STREAMING_GRACE_CAP_S
        grace = None if streaming_grace_seconds is None else min(streaming_grace_seconds, STREAMING_GRACE_CAP_S)
        self.function = PythonLambda(
            self,
            "Lambda",
            name="app_stop",
            service=SERVICE,
            layer=layer,
            log_retention_days=settings.retention.log_retention_days,
            timeout=Duration.minutes(15),
            environment={} if grace is None else {"STREAMING_GRACE_SECONDS": str(grace)},
        ).function
        execution_role(self.function).add_to_principal_policy(
            iam.PolicyStatement(actions=["emr-serverless:ListApplications"], resources=["*"])
        )
        # not the role's default policy: the function (and so the resource) must not depend on the application
        self.policy = iam.Policy(
            self,
            "ApplicationPolicy",
            roles=[execution_role(self.function)],
            statements=[
                iam.PolicyStatement(
                    actions=STOP_ACTIONS, resources=[application.attr_arn, f"{application.attr_arn}/jobruns/*"]
                )
            ],
        )
        self.resource = CustomResource(
            self,
            "Resource",
            service_token=self.function.function_arn,
            resource_type=RESOURCE_TYPE,
            service_timeout=Duration.minutes(16),
            properties={"ApplicationName": application.name},
        )
        # the hash is taken after the stack's Tags aspects (MUTATING) reached the application
        resource = cast(CfnResource, self.resource.node.default_child)  # a CustomResource's L1 resource
        Aspects.of(self.resource).add(_Fingerprint(resource, application), priority=AspectPriority.READONLY)
        application.node.add_dependency(self.resource)
        self.before_delete = CustomResource(
            self,
            "BeforeDelete",
            service_token=self.function.function_arn,
            resource_type=RESOURCE_TYPE_ON_DELETE,
            service_timeout=Duration.minutes(16),
            properties={"ApplicationId": application.attr_application_id},
        )
        self.before_delete.node.add_dependency(self.policy)  # the grant is deleted after the stop, not before
        acknowledge(self.function, f"IAM4[{BASIC_EXECUTION}]", "Lets the function write its own logs; nothing more.")
        acknowledge(
            self.function,
            "IAM5[Resource::*]",
            XRAY_REASON + " Nor has emr-serverless:ListApplications, "
            "with which the function finds the application by name.",
        )
        acknowledge(
            self.policy,
            f"IAM5[Resource::<{logical_id(application)}.Arn>/jobruns/*]",
            "CancelJobRun on the runs of the sink application only; run IDs exist only at run time.",
        )
