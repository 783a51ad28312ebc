"""Stateless stack: EMR Serverless application and job role, trigger, admin and DLQ replay Lambdas, monitoring,
Glue catalog, the Iceberg connectors' scheduled upkeep.

Everything here can be destroyed and redeployed without losing data (replay progress is in the offsets table).
"""

from __future__ import annotations

import re

from aws_cdk import CfnOutput, Stack
from constructs import Construct

from infra.connectors import ConnectorSpec
from infra.constructs.admin import Admin
from infra.constructs.application_stop import ApplicationStop
from infra.constructs.catalog import Catalog
from infra.constructs.dlq_replay import DlqReplay
from infra.constructs.emr_job import SinkJob
from infra.constructs.lambda_function import LibrariesLayer
from infra.constructs.maintenance import IcebergMaintenance
from infra.constructs.monitoring import Monitoring
from infra.constructs.network import JobNetwork
from infra.constructs.trigger import Trigger
from infra.settings import Settings
from infra.stacks.connectors import ConnectorStacks
from infra.stacks.data import DataStack


class ServiceStack(Stack):
    """Attributes: `job`, `application_stop`, `trigger`, `admin`, `network` (VPC endpoints or a stated NAT), `replay`,
    `monitoring`, `catalog`, `maintenance`, `placement` (ConnectorStacks: where each connector's own resources lie,
    the service stack or its nested stacks). Outputs: `ReplayFunctionName`,
    `TriggerFunctionName`, `AdminFunctionName`, `ApplicationId`, `DashboardName` and `JobRole<Connector>` per
    connector (see `_outputs`; with nested stacks, each connector's is its nested stack's)."""

    def __init__(
        self,
        scope: Construct,
        id: str,
        *,
        settings: Settings,
        connectors: tuple[ConnectorSpec, ...],
        data: DataStack,
        **kwargs,
    ):
        super().__init__(scope, id, **kwargs)
        bucket, key, table = data.lake.bucket, data.lake.key, data.offsets.table
        layer = LibrariesLayer(self, "Libraries").layer
        self.placement = placement = ConnectorStacks(self, settings.connector_stacks)
        self.job = SinkJob(
            self,
            "Job",
            settings=settings,
            data_key=key,
            connectors=connectors,
            table_arn=table.table_arn,
            placement=placement,
        )
        # stops the application before CloudFormation updates it (UpdateApplication fails while it is STARTED)
        graces = [c.continuous.shutdown_grace_seconds for c in connectors if c.continuous is not None]
        self.application_stop = ApplicationStop(
            self,
            "ApplicationStop",
            settings=settings,
            application=self.job.application,
            layer=layer,
            streaming_grace_seconds=max(graces) if graces else None,
        )
        self.admin = Admin(
            self,
            "Admin",
            settings=settings,
            connectors=connectors,
            role_arns=self.job.role_arns(),
            bucket=bucket,
            data_key=key,
            layer=layer,
            packed=placement.grouped,
        )
        self.trigger = Trigger(
            self,
            "Trigger",
            settings=settings,
            connectors=connectors,
            job=self.job,
            table=table,
            layer=layer,
            bucket_name=settings.bucket_name,
            data_key=key,
            placement=placement,
        )
        # runs start once the connector configs and the index the trigger reads are published
        self.trigger.node.add_dependency(self.admin.resource)
        # and stop before the application is deleted: the trigger, its event sources and schedules are deleted
        # first, then the application is stopped (infra/constructs/application_stop.py), then deleted
        self.trigger.node.add_dependency(self.application_stop.before_delete)
        # the doctor's Lake Formation check runs for an Iceberg connector whose tables are in Glue
        glue_tables = any(c.iceberg is not None and c.iceberg.table_bucket_arn is None for c in connectors)
        self.network = JobNetwork(self, "Network", settings=settings, lake_formation=glue_tables)
        self.trigger.node.add_dependency(self.network)  # MSK event source pollers and the first runs need the endpoints
        self.maintenance = IcebergMaintenance(
            self,
            "IcebergMaintenance",
            settings=settings,
            connectors=connectors,
            function=self.trigger.function,
            placement=placement,
        )
        self.maintenance.node.add_dependency(self.admin.resource)  # the trigger finds connectors in the index
        self.replay = DlqReplay(
            self,
            "DlqReplay",
            settings=settings,
            connectors=connectors,
            data_key=key,
            table_arn=table.table_arn,
            layer=layer,
        )
        self.monitoring = Monitoring(
            self,
            "Monitoring",
            settings=settings,
            connectors=connectors,
            application_id=self.job.application.attr_application_id,
            bucket_name=settings.bucket_name,
            trigger=self.trigger.function,
            replay=self.replay.function,
            admin=self.admin.function,
            placement=placement,
            discarded=self.trigger.discarded,
        )
        self.catalog = Catalog(self, "Catalog", settings=settings, connectors=connectors, placement=placement)
        for nested in placement.nested.values():  # as the trigger and the upkeep rules: after the index, endpoints
            nested.node.add_dependency(self.admin.resource, self.network)
        self._outputs(settings)

    def _outputs(self, settings: Settings) -> None:
        """What an operator needs after `cdk deploy`: every function, the EMR application, the dashboard."""
        for name, function, how in (
            (
                "ReplayFunctionName",
                self.replay.function,
                "aws lambda invoke --function-name <this> "
                "--cli-binary-format raw-in-base64-out --cli-read-timeout 900 --payload '{\"connector\": ...}' out.json",
            ),
            (
                "TriggerFunctionName",
                self.trigger.function,
                "force a run: aws lambda invoke --function-name <this> "
                '--cli-binary-format raw-in-base64-out --payload \'{"action": "run", "connector": ...}\' out.json',
            ),
            (
                "AdminFunctionName",
                self.admin.function,
                "drift check: aws lambda invoke --function-name <this> "
                '--cli-binary-format raw-in-base64-out --payload \'{"action": "plan"}\' out.json',
            ),
        ):
            CfnOutput(self, name, value=function.function_name, description=how)
        CfnOutput(
            self,
            "ApplicationId",
            value=self.job.application.attr_application_id,
            description="EMR Serverless application of the sink job (aws emr-serverless list-job-runs)",
        )
        CfnOutput(
            self,
            "JobLogGroupName",
            value=self.job.log_group.log_group_name,
            description="CloudWatch log group of the job runs (driver and executor STDOUT/STDERR, doctor "
            "output); named by CloudFormation",
        )
        CfnOutput(
            self,
            "DashboardName",
            value=self.monitoring.dashboard.dashboard_name,
            description=f"CloudWatch dashboard (console: CloudWatch > Dashboards, region {settings.region})",
        )
        for name, arn in self.job.role_arns().items():
            scope = self.placement.stack_of(name) if self.placement.grouped else self
            CfnOutput(
                scope, f"JobRole{_output_id(name)}", value=arn, description=f"EMR job runtime role of connector {name}"
            )


def _output_id(name: str) -> str:
    """A connector name as the letters and digits an output's logical id may hold."""
    return "".join(part.capitalize() for part in re.split(r"[^A-Za-z0-9]+", name))
