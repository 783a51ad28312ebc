"""Stateless stack: EMR Serverless application and job role, trigger, admin and DLQ replay Lambdas, monitoring,
Glue catalog.

Everything here can be destroyed and redeployed without losing data (replay progress is in the offsets table).
"""
from __future__ import annotations

from aws_cdk import CfnOutput, Stack
from constructs import Construct

from infra.connectors import ConnectorSpec
from infra.constructs.admin import Admin
from infra.constructs.catalog import Catalog
from infra.constructs.dlq_replay import DlqReplay
from infra.constructs.emr_job import SinkJob
from infra.constructs.lambda_function import LibrariesLayer
from infra.constructs.monitoring import Monitoring
from infra.constructs.trigger import Trigger
from infra.settings import Settings
from infra.stacks.data import DataStack


class ServiceStack(Stack):
    """Attributes: `job`, `trigger`, `admin`, `replay`, `monitoring`, `catalog`. Output `ReplayFunctionName`: the
    function an operator invokes to replay dead letters."""

    def __init__(self, scope: Construct, id: str, *, settings: Settings, connectors: tuple[ConnectorSpec, ...],
                 data: DataStack, **kwargs):
        super().__init__(scope, id, **kwargs)
        bucket, key, table = data.lake.bucket, data.lake.key, data.offsets.table
        layer = LibrariesLayer(self, "Libraries").layer
        self.job = SinkJob(self, "Job", settings=settings, data_key=key, connectors=connectors,
                           table_arn=table.table_arn)
        self.admin = Admin(self, "Admin", settings=settings, connectors=connectors, bucket=bucket, data_key=key,
                           layer=layer)
        self.trigger = Trigger(self, "Trigger", settings=settings, connectors=connectors, job=self.job, table=table,
                               layer=layer, bucket_name=settings.bucket_name)
        self.trigger.node.add_dependency(self.admin.resource)  # runs start once the connector configs are published
        self.replay = DlqReplay(self, "DlqReplay", settings=settings, connectors=connectors, data_key=key,
                                table_arn=table.table_arn, layer=layer)
        CfnOutput(self, "ReplayFunctionName", value=self.replay.function.function_name,
                  description="aws lambda invoke --function-name <this> --payload '{\"connector\": ...}' out.json")
        self.monitoring = Monitoring(self, "Monitoring", settings=settings, connectors=connectors,
                                     application_id=self.job.application.attr_application_id,
                                     bucket_name=settings.bucket_name, trigger=self.trigger.function,
                                     replay=self.replay.function)
        self.catalog = Catalog(self, "Catalog", settings=settings, connectors=connectors)
