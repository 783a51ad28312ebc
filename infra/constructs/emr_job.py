"""The EMR Serverless application that runs the sink job, its runtime role and its uploaded artifacts."""
from __future__ import annotations

from aws_cdk import Stack
from aws_cdk import aws_emrserverless as emr
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_logs as logs
from aws_cdk import aws_s3_assets as assets
from constructs import Construct

from infra.constructs.lambda_function import log_retention
from infra.constructs.nag import KMS_FAMILIES, KMS_REASON, acknowledge
from infra.errors import PackagingError
from infra.packaging import ROOT, Target, job_archive_path
from infra.settings import Settings

JOB_POLICY_NAME = "sink-connectors"
ARCHIVE_ALIAS = "environment"


class SinkJob(Construct):
    """Attributes: `application` (CfnApplication), `role` (job runtime role), `entry_point` (S3 URI),
    `spark_parameters` (the spark-submit parameters wiring the archive's interpreter), `log_group`, `log_group_name`.

    The role's own policy covers the artifacts, the KMS key and the logs; the connector-scoped permissions (S3
    prefixes, DynamoDB items, MSK topics and groups) are the inline policy JOB_POLICY_NAME the admin Lambda puts."""

    def __init__(self, scope: Construct, id: str, *, settings: Settings, data_key: kms.IKey):
        super().__init__(scope, id)
        emr_settings = settings.emr
        archive_file = job_archive_path(Target(emr_settings.python, emr_settings.architecture))
        if not archive_file.is_file():
            raise PackagingError(f"job archive {archive_file} is missing: run `make package` first")
        archive = assets.Asset(self, "Archive", path=str(archive_file))
        entry = assets.Asset(self, "EntryPoint", path=str(ROOT / "infra" / "job" / "entrypoint.py"))
        self.log_group_name = f"/aws/emr-serverless/sink-{settings.env}"
        self.log_group = logs.LogGroup(self, "Logs", log_group_name=self.log_group_name,
                                       retention=log_retention(settings.retention.log_retention_days))
        self.application = emr.CfnApplication(
            self, "Application", name=f"sink-{settings.env}", release_label=emr_settings.release_label, type="SPARK",
            architecture=emr_settings.architecture,
            maximum_capacity=emr.CfnApplication.MaximumAllowedResourcesProperty(
                cpu=emr_settings.max_cpu, memory=emr_settings.max_memory, disk=emr_settings.max_disk),
            auto_start_configuration=emr.CfnApplication.AutoStartConfigurationProperty(enabled=True),
            auto_stop_configuration=emr.CfnApplication.AutoStopConfigurationProperty(
                enabled=True, idle_timeout_minutes=emr_settings.idle_timeout_minutes),
            network_configuration=emr.CfnApplication.NetworkConfigurationProperty(
                subnet_ids=list(settings.network.subnet_ids), security_group_ids=list(settings.network.security_group_ids)),
            monitoring_configuration=emr.CfnApplication.MonitoringConfigurationProperty(
                cloud_watch_logging_configuration=emr.CfnApplication.CloudWatchLoggingConfigurationProperty(
                    enabled=True, log_group_name=self.log_group.log_group_name)),
        )
        self.role = self._role(settings, data_key)
        archive.grant_read(self.role)
        entry.grant_read(self.role)
        self.entry_point = entry.s3_object_url
        interpreter = f"./{ARCHIVE_ALIAS}/bin/python"
        self.spark_parameters = " ".join([
            f"--conf spark.archives={archive.s3_object_url}#{ARCHIVE_ALIAS}",
            f"--conf spark.emr-serverless.driverEnv.PYSPARK_DRIVER_PYTHON={interpreter}",
            f"--conf spark.emr-serverless.driverEnv.PYSPARK_PYTHON={interpreter}",
            f"--conf spark.executorEnv.PYSPARK_PYTHON={interpreter}",
            f"--conf spark.emr-serverless.driverEnv.AWS_REGION={settings.region}",
            f"--conf spark.executorEnv.AWS_REGION={settings.region}",
        ])

    @property
    def application_arn(self) -> str:
        return self.application.attr_arn

    def _role(self, settings: Settings, data_key: kms.IKey) -> iam.Role:
        stack = Stack.of(self)
        role = iam.Role(self, "Role", assumed_by=iam.ServicePrincipal("emr-serverless.amazonaws.com", conditions={
            "StringEquals": {"aws:SourceAccount": stack.account},
            "ArnLike": {"aws:SourceArn": f"arn:{stack.partition}:emr-serverless:{stack.region}:{stack.account}:/applications/*"},
        }), description=f"Sink job runtime role ({settings.env}); connector permissions: inline {JOB_POLICY_NAME}")
        data_key.grant_encrypt_decrypt(role)
        log_group = f"arn:aws:logs:{settings.region}:{settings.account}:log-group:{self.log_group_name}"
        role.add_to_policy(iam.PolicyStatement(
            actions=["logs:CreateLogStream", "logs:PutLogEvents", "logs:DescribeLogStreams"],
            resources=[log_group, f"{log_group}:*"]))
        role.add_to_policy(iam.PolicyStatement(actions=["logs:DescribeLogGroups"], resources=["*"]))
        assets_bucket = f"cdk-hnb659fds-assets-{settings.account}-{settings.region}"
        for finding, reason in (
            *((f"IAM5[{k}]", KMS_REASON) for k in KMS_FAMILIES),
            (f"IAM5[Resource::{log_group}:*]", "The log streams of the job's own log group."),
            ("IAM5[Resource::*]", "logs:DescribeLogGroups has no resource-level permissions; EMR needs it to log."),
            *((f"IAM5[Action::{a}]", "CDK asset read grant (s3:GetObject*, GetBucket*, List*) on the asset bucket.")
              for a in ("s3:GetBucket*", "s3:GetObject*", "s3:List*")),
            (f"IAM5[Resource::arn:<AWS::Partition>:s3:::{assets_bucket}/*]",
             "CDK asset grants name the bootstrap asset bucket's objects; the job reads its archive and entry point."),
        ):
            acknowledge(role, finding, reason)
        return role
