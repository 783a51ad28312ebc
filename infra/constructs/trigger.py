"""The trigger Lambda: an MSK event source per topic, the idle-flush schedule, and what MSK with IAM needs."""

from __future__ import annotations

from aws_cdk import Duration
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_events as events
from aws_cdk import aws_events_targets as targets
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_lambda_event_sources as sources
from aws_cdk import aws_sqs as sqs
from constructs import Construct

from infra.arn_lists import listed_or_wildcard
from infra.connectors import INDEX_KEY, ConnectorSpec, index_uri
from infra.constructs.emr_job import SinkJob
from infra.constructs.job_role import job_role_arn
from infra.constructs.lambda_function import PythonLambda, execution_role
from infra.constructs.nag import BASIC_EXECUTION, MSK_EXECUTION, XRAY_REASON, acknowledge, logical_id
from infra.settings import Settings
from infra.stacks.connectors import ConnectorStacks

SERVICE = "sink-trigger"
IDLE_FLUSH_INPUT = {"action": "idle-flush"}
# What an MSK batch the trigger fails on gets. An MSK event source retries a failed batch for ever by default
# (MaximumRetryAttempts -1, "All Amazon MSK event source configuration parameters in Lambda",
# https://docs.aws.amazon.com/lambda/latest/dg/msk-esm-parameters.html), holding its partitions back; bounded
# retries and bisecting are provisioned mode's only (CDK's ManagedKafkaEventSource; provisioned pollers bill per
# mapping, one per topic here). An on-failure destination bounds them in the mappings' on-demand mode: "When you
# configure both infinite retries and an on-failure destination, Lambda automatically applies a maximum of 10
# retry attempts" ("Configuring error handling controls for Kafka event sources",
# https://docs.aws.amazon.com/lambda/latest/dg/kafka-retry-configurations.html), and the discarded batch's
# description (topic, partitions, offsets) goes to the destination ("Capturing discarded batches for Amazon MSK and
# self-managed Apache Kafka event sources", https://docs.aws.amazon.com/lambda/latest/dg/kafka-on-failure.html).
# The trigger only counts offsets: a discarded batch loses no record, only what the trigger knew of it until the
# partition's next batch or a forced run (infra/README.md, "How runs start").
DISCARDED_RETENTION_DAYS = 14  # SQS's longest retention


def discarded_batches_queue_name(env: str) -> str:
    """The queue of the MSK batches the trigger's event sources discarded (a fixed name: its ARN is known in nested
    stacks without a reference to the service stack)."""
    return f"sink-{env}-trigger-discarded-batches"


def trigger_group_id(env: str, topic: str) -> str:
    """Consumer group of the trigger's event source mapping for `topic` (apart from the job's groups)."""
    return f"sink-trigger-{env}-{topic}"


class Trigger(Construct):
    """Attributes: `function`, `schedule`, `discarded` (the SQS queue each mapping's on-failure destination names).
    One ManagedKafkaEventSource per topic of `msk.topics` read by a
    connector, starting at LATEST (the trigger counts what arrives; the job reads from committed offsets); a
    Lambda MSK mapping reads one topic (CreateEventSourceMapping's `Topics` holds exactly one). A topic's mapping
    lies where `placement` puts the resources of the first connector (by name) reading it. A batch the trigger
    keeps failing on is retried 10 times, then described in `discarded` (see DISCARDED_RETENTION_DAYS' comment).
    The connectors come from the index the admin publishes (CONNECTORS_URI; its role may read that object only,
    decrypting with the data key), so the environment is the same size whatever their number."""

    def __init__(
        self,
        scope: Construct,
        id: str,
        *,
        settings: Settings,
        connectors: tuple[ConnectorSpec, ...],
        job: SinkJob,
        table: dynamodb.ITable,
        layer: lambda_.ILayerVersion,
        bucket_name: str,
        data_key: kms.IKey,
        placement: ConnectorStacks,
    ):
        super().__init__(scope, id)
        tuning = settings.trigger
        environment = {
            "TABLE_NAME": table.table_name,
            "CONNECTORS_URI": index_uri(bucket_name),
            "APPLICATION_ID": job.application.attr_application_id,
            "ENTRY_POINT": job.entry_point,
            "SPARK_PARAMETERS": job.spark_parameters,
            "JOB_TIMEOUT_MINUTES": str(settings.emr.job_timeout_minutes),
            # the application's maximum capacity, which the trigger keeps each run's workers within
            "MAX_CPU": settings.emr.max_cpu,
            "MAX_MEMORY": settings.emr.max_memory,
            "MAX_DISK": settings.emr.max_disk,
            # the executors a data run may have (the trigger sizes runs with dynamic allocation off)
            "MAX_EXECUTORS_PER_RUN": str(settings.emr.max_executors_per_run),
            "RUN_CLAIM_MS": str(tuning.run_claim_minutes * 60_000),
            "BACKOFF_BASE_MS": str(tuning.backoff_base_seconds * 1000),
            "BACKOFF_CAP_MS": str(tuning.backoff_cap_seconds * 1000),
            # the connectors one job run serves at most (lambdas/trigger/batches.py)
            "CONNECTORS_PER_RUN": str(tuning.connectors_per_run),
        }
        self.function = PythonLambda(
            self,
            "Lambda",
            name="trigger",
            service=SERVICE,
            layer=layer,
            log_retention_days=settings.retention.log_retention_days,
            timeout=Duration.seconds(60),
            environment=environment,
        ).function
        self.discarded = sqs.Queue(
            self,
            "DiscardedBatches",
            queue_name=discarded_batches_queue_name(settings.env),
            encryption=sqs.QueueEncryption.SQS_MANAGED,
            enforce_ssl=True,
            retention_period=Duration.days(DISCARDED_RETENTION_DAYS),
        )
        acknowledge(
            self.discarded,
            "SQS3",
            "It is the on-failure destination of the trigger's MSK event sources "
            "(descriptions of discarded batches, read by operators), not a work queue needing its own DLQ.",
        )
        self._grant(settings, connectors, job, table, placement)
        # what the mappings need to describe a discarded batch there (their execution role is the function's)
        execution_role(self.function).add_to_principal_policy(
            iam.PolicyStatement(actions=["sqs:SendMessage"], resources=[self.discarded.queue_arn])
        )
        execution_role(self.function).add_to_principal_policy(
            iam.PolicyStatement(actions=["s3:GetObject"], resources=[f"arn:aws:s3:::{bucket_name}/{INDEX_KEY}"])
        )
        data_key.grant_decrypt(execution_role(self.function))
        self._add_mappings(settings, connectors, placement)
        self.schedule = events.Rule(
            self,
            "IdleFlush",
            schedule=events.Schedule.rate(Duration.minutes(tuning.idle_flush_minutes)),
            description="Idle flush: start the runs a scheduled rotation or a first run makes due",
            targets=[targets.LambdaFunction(self.function, event=events.RuleTargetInput.from_object(IDLE_FLUSH_INPUT))],
        )

    def _add_mappings(
        self, settings: Settings, connectors: tuple[ConnectorSpec, ...], placement: ConnectorStacks
    ) -> None:
        """Each topic's MSK event source mapping: in the service stack as ManagedKafkaEventSource adds them; in
        nested stacks the same mapping (L1: one call into CDK's node process per topic), and the grants
        ManagedKafkaEventSource adds, once here."""
        tuning, msk = settings.trigger, settings.msk
        readers: dict[str, str] = {}  # topic -> the connector whose mapping reads it
        for spec in sorted(connectors, key=lambda c: c.name):
            for topic in spec.topics:
                readers.setdefault(topic, spec.name)
        if not placement.grouped:
            for topic in sorted(readers):
                self.function.add_event_source(
                    sources.ManagedKafkaEventSource(
                        cluster_arn=msk.cluster_arn,
                        topic=topic,
                        starting_position=lambda_.StartingPosition.LATEST,
                        batch_size=tuning.batch_size,
                        max_batching_window=Duration.seconds(tuning.max_batching_window_seconds),
                        consumer_group_id=trigger_group_id(settings.env, topic),
                    )
                )
            # the destination without SqsDlq, which grants the queue's attributes and URL besides SendMessage
            for mapping in self.function.node.find_all():
                if isinstance(mapping, lambda_.CfnEventSourceMapping):
                    mapping.destination_config = lambda_.CfnEventSourceMapping.DestinationConfigProperty(
                        on_failure=lambda_.CfnEventSourceMapping.OnFailureProperty(destination=self.discarded.queue_arn)
                    )
            return
        self.function.add_to_role_policy(
            iam.PolicyStatement(
                actions=["kafka:DescribeCluster", "kafka:GetBootstrapBrokers", "kafka:ListScramSecrets"],
                resources=[msk.cluster_arn],
            )
        )
        execution_role(self.function).add_managed_policy(
            iam.ManagedPolicy.from_aws_managed_policy_name("service-role/AWSLambdaMSKExecutionRole")
        )
        function_name = self.function.function_name
        kafka = lambda_.CfnEventSourceMapping.AmazonManagedKafkaEventSourceConfigProperty
        on_failure = lambda_.CfnEventSourceMapping.DestinationConfigProperty(
            on_failure=lambda_.CfnEventSourceMapping.OnFailureProperty(
                destination=(
                    f"arn:aws:sqs:{settings.region}:{settings.account}:{discarded_batches_queue_name(settings.env)}"
                )
            )
        )
        for topic, reader in sorted(readers.items()):
            lambda_.CfnEventSourceMapping(
                placement.scope(self, reader),
                f"KafkaEventSource-{topic}",
                function_name=function_name,
                event_source_arn=msk.cluster_arn,
                topics=[topic],
                starting_position="LATEST",
                batch_size=tuning.batch_size,
                maximum_batching_window_in_seconds=tuning.max_batching_window_seconds,
                amazon_managed_kafka_event_source_config=kafka(consumer_group_id=trigger_group_id(settings.env, topic)),
                destination_config=on_failure,
            )

    def _grant(
        self, settings: Settings, connectors, job: SinkJob, table: dynamodb.ITable, placement: ConnectorStacks
    ) -> None:
        role, msk = execution_role(self.function), settings.msk
        table.grant(
            role,
            "dynamodb:GetItem",
            "dynamodb:PutItem",
            "dynamodb:UpdateItem",
            "dynamodb:Query",
            "dynamodb:BatchWriteItem",
        )
        role.add_to_principal_policy(
            iam.PolicyStatement(
                actions=["emr-serverless:StartJobRun", "emr-serverless:GetJobRun", "emr-serverless:TagResource"],
                resources=[job.application_arn, f"{job.application_arn}/jobruns/*"],
            )
        )
        # continuous connectors' jobs (lambdas/trigger/continuous.py): cancelled with a grace period when their config
        # or the job changed, and on each tick the STREAMING runs no continuous connector owns any more (listed on the
        # application). Granted whatever the connectors: a deploy that removes the last continuous connector must
        # leave the trigger able to stop its job.
        role.add_to_principal_policy(
            iam.PolicyStatement(actions=["emr-serverless:ListJobRuns"], resources=[job.application_arn])
        )
        role.add_to_principal_policy(
            iam.PolicyStatement(actions=["emr-serverless:CancelJobRun"], resources=[f"{job.application_arn}/jobruns/*"])
        )
        # the named job roles of nested stacks: their path (a list of hundreds of ARNs would exceed IAM's quotas)
        passed = (
            [job_role_arn(settings.account, settings.env, "*")] if placement.grouped else list(job.role_arns().values())
        )
        role.add_to_principal_policy(
            iam.PolicyStatement(
                actions=["iam:PassRole"],
                resources=passed,
                conditions={"StringEquals": {"iam:PassedToService": "emr-serverless.amazonaws.com"}},
            )
        )
        # what the event source mappings need for MSK with IAM, beyond what CDK adds (Lambda's "Configuring Lambda
        # permissions for Amazon MSK event source mappings" lists DescribeClusterDynamicConfiguration for IAM auth)
        topics = sorted({t for c in connectors for t in c.topics})
        role.add_to_principal_policy(
            iam.PolicyStatement(
                actions=[
                    "kafka:DescribeClusterV2",
                    "kafka:DescribeCluster",
                    "kafka:GetBootstrapBrokers",
                    "kafka-cluster:Connect",
                    "kafka-cluster:DescribeCluster",
                    "kafka-cluster:DescribeClusterDynamicConfiguration",
                ],
                resources=[msk.cluster_arn],
            )
        )
        topic_arns = listed_or_wildcard(msk, "topic", topics, "*")
        group_arns = listed_or_wildcard(
            msk, "group", [trigger_group_id(settings.env, t) for t in topics], trigger_group_id(settings.env, "*")
        )
        role.add_to_principal_policy(
            iam.PolicyStatement(actions=["kafka-cluster:DescribeTopic", "kafka-cluster:ReadData"], resources=topic_arns)
        )
        role.add_to_principal_policy(
            iam.PolicyStatement(
                actions=["kafka-cluster:DescribeGroup", "kafka-cluster:AlterGroup"], resources=group_arns
            )
        )
        role.add_to_principal_policy(
            iam.PolicyStatement(
                actions=[
                    "ec2:CreateNetworkInterface",
                    "ec2:DescribeNetworkInterfaces",
                    "ec2:DeleteNetworkInterface",
                    "ec2:DescribeVpcs",
                    "ec2:DescribeSubnets",
                    "ec2:DescribeSecurityGroups",
                ],
                resources=["*"],
            )
        )
        function = self.function
        acknowledge(function, f"IAM4[{BASIC_EXECUTION}]", "Lets the function write its own logs; nothing more.")
        acknowledge(
            function,
            f"IAM4[{MSK_EXECUTION}]",
            "Added by ManagedKafkaEventSource: what Lambda's MSK "
            "poller needs (cluster description, bootstrap brokers, VPC network interfaces).",
        )
        acknowledge(
            function,
            "IAM5[Resource::*]",
            XRAY_REASON + " Neither have the EC2 network-interface actions of the MSK event source.",
        )
        acknowledge(
            function,
            f"IAM5[Resource::<{logical_id(job.application)}.Arn>/jobruns/*]",
            "GetJobRun on the runs of the sink application only; run IDs exist only after StartJobRun.",
        )
        for arn, reason in (
            (
                topic_arns[0],
                "The cluster's topics: the ARNs of this many topics exceed IAM's policy "
                "size quotas; the mappings read only the connectors' topics.",
            ),
            (
                group_arns[0],
                "The trigger's own consumer groups (sink-trigger-<env>-<topic>), too "
                "many to list within IAM's policy size quotas.",
            ),
            (
                passed[0],
                "The environment's named job roles (their path), too many to list within "
                "IAM's policy size quotas; passed to EMR Serverless only.",
            ),
        ):
            if arn.endswith("*"):
                acknowledge(function, f"IAM5[Resource::{arn}]", reason)
