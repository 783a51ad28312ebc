"""A Python Lambda built without Docker: its code folder assembled from `lambdas/` (and, for functions that run
the engine, top-level packages such as `sink_engine/`), libraries from layers."""

from __future__ import annotations

from typing import cast

from aws_cdk import Duration
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_logs as logs
from constructs import Construct

from infra.errors import PackagingError
from infra.packaging import FUNCTIONS, assemble_code, lambda_layer_path
from infra.settings import NetworkSettings

RUNTIME = lambda_.Runtime.PYTHON_3_14
ARCHITECTURE = lambda_.Architecture.ARM_64


class LibrariesLayer(Construct):
    """Attribute: `layer`, the layer `name` of `infra.packaging.LAYERS` for the Lambda runtime, built by
    `make package` (default: Powertools and its tracer)."""

    def __init__(
        self,
        scope: Construct,
        id: str,
        *,
        name: str = "libraries",
        description: str = "aws-lambda-powertools and aws-xray-sdk",
    ):
        super().__init__(scope, id)
        folder = lambda_layer_path(name)
        if not (folder / "python").is_dir():
            raise PackagingError(f"Lambda layer folder {folder} is missing: run `make package` first")
        self.layer = lambda_.LayerVersion(
            self,
            "Layer",
            code=lambda_.Code.from_asset(str(folder)),
            compatible_runtimes=[RUNTIME],
            compatible_architectures=[ARCHITECTURE],
            description=description,
        )


# What a function attached to subnets needs to manage its network interfaces (none has resource-level scope).
VPC_ACCESS_ACTIONS = [
    "ec2:CreateNetworkInterface",
    "ec2:DescribeNetworkInterfaces",
    "ec2:DeleteNetworkInterface",
    "ec2:DescribeSubnets",
    "ec2:AssignPrivateIpAddresses",
    "ec2:UnassignPrivateIpAddresses",
]


class PythonLambda(Construct):
    """Attribute: `function`. Handler `lambdas.<name>.handler.handler`, X-Ray tracing, Powertools settings, and a
    log group with the environment's retention. Its code folder holds what `packaging.FUNCTIONS[name]` lists;
    `layer` comes first, then `extra_layers`. With `network`, the function runs in those subnets and security
    groups (given as IDs, as the EMR application's) and its role may manage the network interfaces."""

    def __init__(
        self,
        scope: Construct,
        id: str,
        *,
        name: str,
        service: str,
        layer: lambda_.ILayerVersion,
        environment: dict[str, str],
        log_retention_days: int,
        timeout: Duration,
        memory_mb: int = 256,
        extra_layers: tuple[lambda_.ILayerVersion, ...] = (),
        network: NetworkSettings | None = None,
    ):
        super().__init__(scope, id)
        self.log_group = logs.LogGroup(self, "Logs", retention=log_retention(log_retention_days))
        self.function = lambda_.Function(
            self,
            "Function",
            runtime=RUNTIME,
            architecture=ARCHITECTURE,
            code=lambda_.Code.from_asset(str(assemble_code(name, packages=FUNCTIONS[name].packages))),
            handler=f"lambdas.{name}.handler.handler",
            layers=[layer, *extra_layers],
            timeout=timeout,
            memory_size=memory_mb,
            tracing=lambda_.Tracing.ACTIVE,
            log_group=self.log_group,
            environment={
                "POWERTOOLS_SERVICE_NAME": service,
                "POWERTOOLS_METRICS_NAMESPACE": "SinkEngine",
                "POWERTOOLS_LOG_LEVEL": "INFO",
                **environment,
            },
        )
        if network is not None:
            execution_role(self.function).add_to_principal_policy(
                iam.PolicyStatement(actions=VPC_ACCESS_ACTIONS, resources=["*"])
            )
            resource = cast(lambda_.CfnFunction, self.function.node.default_child)  # a Function's L1 resource
            resource.vpc_config = lambda_.CfnFunction.VpcConfigProperty(
                subnet_ids=list(network.subnet_ids), security_group_ids=list(network.security_group_ids)
            )


def execution_role(function: lambda_.IFunction) -> iam.IRole:
    """The role of a function this app creates (CDK types `role` as optional: an imported function may have none)."""
    role = function.role
    assert role is not None
    return role


_RETENTION = {
    1: "ONE_DAY",
    3: "THREE_DAYS",
    5: "FIVE_DAYS",
    7: "ONE_WEEK",
    14: "TWO_WEEKS",
    30: "ONE_MONTH",
    60: "TWO_MONTHS",
    90: "THREE_MONTHS",
    120: "FOUR_MONTHS",
    150: "FIVE_MONTHS",
    180: "SIX_MONTHS",
    365: "ONE_YEAR",
    400: "THIRTEEN_MONTHS",
    545: "EIGHTEEN_MONTHS",
    731: "TWO_YEARS",
    1096: "THREE_YEARS",
    1827: "FIVE_YEARS",
    2192: "SIX_YEARS",
    2557: "SEVEN_YEARS",
    2922: "EIGHT_YEARS",
    3288: "NINE_YEARS",
    3653: "TEN_YEARS",
}


def log_retention(days: int) -> logs.RetentionDays:
    """The CloudWatch Logs retention of `days` (one of the periods settings.py accepts)."""
    return getattr(logs.RetentionDays, _RETENTION[days])
