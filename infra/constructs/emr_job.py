"""The EMR Serverless application that runs the sink job, its uploaded artifacts and one runtime role per connector."""

from __future__ import annotations

from typing import cast

from aws_cdk import CfnRule, CfnRuleAssertion, Fn, Names, Stack
from aws_cdk import aws_ecr_assets as ecr_assets
from aws_cdk import aws_emrserverless as emr
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_logs as logs
from aws_cdk import aws_s3_assets as assets
from constructs import Construct

from infra.capacity import check_concurrency
from infra.connectors import ConnectorSpec
from infra.constructs.job_role import ConnectorJobRole, job_role_arn
from infra.constructs.lambda_function import log_retention
from infra.constructs.nag import acknowledge, logical_id
from infra.errors import PackagingError
from infra.job_policy import JobPhysicalNames
from infra.job_timeout import check_job_timeout
from infra.packaging import ROOT, Target, job_archive_path
from infra.quotas import check_start_rate, check_vcpu_quota
from infra.settings import EmrSettings, Settings
from infra.stacks.connectors import ConnectorStacks
from sink_engine.config.worker import CLUSTER_ENV
from sink_engine.run.metrics import CLOUDWATCH
from sink_engine.run.metrics import SETTING as METRICS_SETTING
from sink_engine.run.preflight import BUCKET_MANAGED_SETTING

ARCHIVE_ALIAS = "environment"
IMAGE_DIR = ROOT / "infra" / "job" / "image"
_PLATFORMS = {"ARM64": ecr_assets.Platform.LINUX_ARM64, "X86_64": ecr_assets.Platform.LINUX_AMD64}
# The first CDK bootstrap template whose container asset repository lets EMR Serverless pull (its statement
# EmrServerlessImageRetrievalPolicy: ecr:BatchGetImage, GetDownloadUrlForLayer, DescribeImages for
# emr-serverless.amazonaws.com from the account's applications; aws/aws-cdk-cli#112, CLI aws-cdk@2.1003.0).
EMR_PULL_BOOTSTRAP_VERSION = 27


# Without log types EMR Serverless sends only the driver's STDOUT and STDERR (API_CloudWatchLoggingConfiguration,
# logTypes: https://docs.aws.amazon.com/emr-serverless/latest/APIReference/API_CloudWatchLoggingConfiguration.html):
# a failed task's traceback is in an executor's STDERR, so both worker types are sent.
_LOG_TYPES = [
    emr.CfnApplication.LogTypeMapKeyValuePairProperty(key=worker, value=["STDOUT", "STDERR"])
    for worker in ("SPARK_DRIVER", "SPARK_EXECUTOR")
]


class SinkJob(Construct):
    """Attributes: `application` (CfnApplication), `roles` (connector name -> its job runtime role),
    `entry_point` (S3 URI), `spark_parameters` (the spark-submit parameters wiring the archive's interpreter),
    `image` (the DockerImageAsset of the application's image with `emr.interpreter` "image", else None),
    `log_group`, `log_group_name` (a token: CloudFormation names the group), `concurrency` (the application's
    MaxConcurrentRuns, and what the runs it admits need, which `emr.max_capacity` holds: infra/capacity.py, checked
    here).

    The log group's name is CloudFormation's, not a fixed one: it is retained when the stack is deleted (the runs'
    logs outlive it), so a fixed name would make the next create of the stack (after a destroy, or a failed first
    create rolled back) fail with "already exists"; a generated name differs at each creation. (Not
    RetainExceptOnCreate with a fixed name: a destroyed stack's group would still be left behind.)

    Each connector's runs use its own role (`ConnectorJobRole`): its S3 prefixes, its DynamoDB items, its MSK
    topics and group, the data key, the job's artifacts and log group; never another connector's. The roles lie
    where `placement` puts the connector's resources; in nested stacks they are named (`job_role_arn`)."""

    def __init__(
        self,
        scope: Construct,
        id: str,
        *,
        settings: Settings,
        data_key: kms.IKey,
        connectors: tuple[ConnectorSpec, ...],
        table_arn: str,
        placement: ConnectorStacks,
    ):
        super().__init__(scope, id)
        emr_settings = settings.emr
        archive_file = job_archive_path(Target(emr_settings.python, emr_settings.architecture))
        if not archive_file.is_file():
            raise PackagingError(f"job archive {archive_file} is missing: run `make package` first")
        archive = assets.Asset(self, "Archive", path=str(archive_file))
        entry = assets.Asset(self, "EntryPoint", path=str(ROOT / "infra" / "job" / "entrypoint.py"))
        self.log_group = logs.LogGroup(self, "Logs", retention=log_retention(settings.retention.log_retention_days))
        self.log_group_name = self.log_group.log_group_name
        self.image = self._image(emr_settings) if emr_settings.interpreter_source == "image" else None
        self.concurrency = check_concurrency(settings, connectors)
        check_vcpu_quota(settings, self.concurrency)  # the account's vCPUs hold the worst case
        check_start_rate(settings, connectors)  # one tick's StartJobRun calls fit EMR's burst
        check_job_timeout(settings, connectors)  # EMR's timeout must not cancel a run before it commits
        self.application = emr.CfnApplication(
            self,
            "Application",
            name=f"sink-{settings.env}",
            release_label=emr_settings.release_label,
            type="SPARK",
            architecture=emr_settings.architecture,
            image_configuration=emr.CfnApplication.ImageConfigurationInputProperty(image_uri=self.image.image_uri)
            if self.image
            else None,
            maximum_capacity=emr.CfnApplication.MaximumAllowedResourcesProperty(
                cpu=emr_settings.max_cpu, memory=emr_settings.max_memory, disk=emr_settings.max_disk
            ),
            auto_start_configuration=emr.CfnApplication.AutoStartConfigurationProperty(enabled=True),
            # from release 7.3.0 runs past 15 at once queue unless this says otherwise (infra/capacity.py)
            scheduler_configuration=emr.CfnApplication.SchedulerConfigurationProperty(
                max_concurrent_runs=self.concurrency.runs
            ),
            auto_stop_configuration=emr.CfnApplication.AutoStopConfigurationProperty(
                enabled=True, idle_timeout_minutes=emr_settings.idle_timeout_minutes
            ),
            network_configuration=emr.CfnApplication.NetworkConfigurationProperty(
                subnet_ids=list(settings.network.subnet_ids),
                security_group_ids=list(settings.network.security_group_ids),
            ),
            monitoring_configuration=emr.CfnApplication.MonitoringConfigurationProperty(
                cloud_watch_logging_configuration=emr.CfnApplication.CloudWatchLoggingConfigurationProperty(
                    enabled=True, log_group_name=self.log_group.log_group_name, log_type_map=_LOG_TYPES
                )
            ),
        )
        self._artifacts = (archive, entry)
        stack = Stack.of(self)
        names = JobPhysicalNames(
            settings.bucket_name,
            table_arn,
            settings.msk.cluster_arn,
            settings.retention.dlq_prefix,
            stack.region,
            stack.account,
        )
        self.roles: dict[str, iam.Role] = {}
        self._named, self._account, self._env = placement.grouped, settings.account, settings.env
        for spec in connectors:
            role = ConnectorJobRole(
                placement.scope(self, spec.name),
                f"Role-{spec.name}",
                spec=spec,
                names=names,
                data_key=data_key,
                env=settings.env,
                named=self._named,
            ).role
            self._grant_run(role, settings)
            self.roles[spec.name] = role
        self.entry_point = entry.s3_object_url
        interpreter = f"./{ARCHIVE_ALIAS}/bin/python"
        self.spark_parameters = " ".join(
            [
                f"--conf spark.archives={archive.s3_object_url}#{ARCHIVE_ALIAS}",
                f"--conf spark.emr-serverless.driverEnv.PYSPARK_DRIVER_PYTHON={interpreter}",
                f"--conf spark.emr-serverless.driverEnv.PYSPARK_PYTHON={interpreter}",
                f"--conf spark.executorEnv.PYSPARK_PYTHON={interpreter}",
                f"--conf spark.emr-serverless.driverEnv.AWS_REGION={settings.region}",
                f"--conf spark.executorEnv.AWS_REGION={settings.region}",
                f"--conf spark.emr-serverless.driverEnv.{METRICS_SETTING}={CLOUDWATCH}",  # each run's metrics
                f"--conf spark.emr-serverless.driverEnv.{BUCKET_MANAGED_SETTING}=true",  # the stack's bucket: no check
                # the brokers of a connector file without bootstrap.servers (sink_engine/config/worker.py)
                f"--conf spark.emr-serverless.driverEnv.{CLUSTER_ENV}={settings.msk.cluster_arn}",
            ]
        )

    def _image(self, emr_settings: EmrSettings) -> ecr_assets.DockerImageAsset:
        """The application's image (infra/job/image/Dockerfile) for its release, interpreter and architecture.
        `cdk deploy` builds it with Docker and pushes it to the CDK bootstrap's container asset repository, which
        EMR Serverless may pull from only with bootstrap version EMR_PULL_BOOTSTRAP_VERSION or later: the stack's
        rule fails the deployment before any change otherwise."""
        image = ecr_assets.DockerImageAsset(
            self,
            "Image",
            directory=str(IMAGE_DIR),
            platform=_PLATFORMS[emr_settings.architecture],
            build_args={"RELEASE_LABEL": emr_settings.release_label, "PYTHON_VERSION": emr_settings.python},
        )
        older = [str(v) for v in range(1, EMR_PULL_BOOTSTRAP_VERSION)]
        CfnRule(
            Stack.of(self),
            "CheckBootstrapVersionForEmrImage",
            assertions=[
                CfnRuleAssertion(
                    assert_=Fn.condition_not(Fn.condition_contains(older, Fn.ref("BootstrapVersion"))),
                    assert_description=f"emr.interpreter 'image' needs CDK bootstrap version {EMR_PULL_BOOTSTRAP_VERSION} or "
                    "later (its container asset repository lets EMR Serverless pull the job's image): "
                    "run `npx aws-cdk bootstrap` with this project's CLI",
                )
            ],
        )
        return image

    @property
    def application_arn(self) -> str:
        return self.application.attr_arn

    def role_arns(self) -> dict[str, str]:
        """Connector name -> the ARN of its job runtime role (the named roles': literal, no cross-stack reference)."""
        if self._named:
            return {name: job_role_arn(self._account, self._env, name) for name in self.roles}
        return {name: role.role_arn for name, role in self.roles.items()}

    def _grant_run(self, role: iam.IRole, settings: Settings) -> None:
        """What every run of the job needs, for a connector's job role: read the job's two artifacts (those
        objects only, not the rest of the CDK asset bucket), decrypting them with the bootstrap's key when the
        settings name one (`cdk_bootstrap_kms_key_arn`: S3 needs only kms:Decrypt to serve an SSE-KMS object's
        GetObject; scoped to requests S3 makes in the region), and write its log group."""
        role.add_to_principal_policy(
            iam.PolicyStatement(
                actions=["s3:GetObject"],
                resources=[f"arn:aws:s3:::{a.s3_bucket_name}/{a.s3_object_key}" for a in self._artifacts],
            )
        )
        if settings.cdk_bootstrap_kms_key_arn:
            role.add_to_principal_policy(
                iam.PolicyStatement(
                    actions=["kms:Decrypt"],
                    resources=[settings.cdk_bootstrap_kms_key_arn],
                    conditions={"StringEquals": {"kms:ViaService": f"s3.{settings.region}.amazonaws.com"}},
                )
            )
        log_group = f"arn:aws:logs:{settings.region}:{settings.account}:log-group:{self.log_group_name}"
        group = cast(logs.CfnLogGroup, self.log_group.node.default_child)  # a LogGroup's L1 resource
        # as cdk-nag shows it: the group's Ref, or in a nested stack the parameter CDK passes it in
        shown = logical_id(group) if Stack.of(role) is Stack.of(self) else f"referenceto{Names.unique_id(group)}Ref"
        finding = f"arn:aws:logs:{settings.region}:{settings.account}:log-group:<{shown}>"
        role.add_to_principal_policy(
            iam.PolicyStatement(
                actions=["logs:CreateLogStream", "logs:PutLogEvents", "logs:DescribeLogStreams"],
                resources=[log_group, f"{log_group}:*"],
            )
        )
        role.add_to_principal_policy(iam.PolicyStatement(actions=["logs:DescribeLogGroups"], resources=["*"]))
        acknowledge(role, f"IAM5[Resource::{finding}:*]", "The log streams of the job's own log group.")
        acknowledge(
            role, "IAM5[Resource::*]", "logs:DescribeLogGroups has no resource-level permissions; EMR needs it to log."
        )
