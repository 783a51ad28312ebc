"""The DLQ replay Lambda, which an operator invokes (`aws lambda invoke`) to replay a connector's dead letters."""

from __future__ import annotations

from aws_cdk import Duration
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_lambda as lambda_
from constructs import Construct

from infra.arn_lists import listed_or_wildcard, over_budget
from infra.connectors import CONFIG_PREFIX, INDEX_KEY, ConnectorSpec, index_uri
from infra.constructs.lambda_function import LibrariesLayer, PythonLambda, execution_role
from infra.constructs.nag import BASIC_EXECUTION, XRAY_REASON, acknowledge
from infra.job_policy import reference_reads
from infra.settings import Settings
from sink_engine.config.worker import CLUSTER_ENV

SERVICE = "sink-dlq-replay"
TIMEOUT = Duration.minutes(15)  # Lambda's maximum; `max_records` keeps one invocation shorter
MEMORY_MB = 1024


class DlqReplay(Construct):
    """Attribute: `function`, handler `lambdas.dlq_replay.handler.handler`, with the engine in its code folder and
    the `replay` layer (confluent-kafka, orjson, the MSK IAM signer) after the Powertools layer, in the MSK subnets
    and security groups of `settings.network`, CONNECTORS_URI (the connector index) as the trigger's.

    Its role may read the connector index and, only for the deployed connectors: read their published configs and
    their S3 dead letters (decrypting with the data key); get, put, update and query items under their keys in the
    offsets table (replay progress); read their dead-letter topics; write to their topics (the default replay
    targets) over MSK IAM; read the secrets and SSM parameters their files reference (the replay loads a connector's
    config as the job does, references resolved). A payload naming another source or target is refused by IAM.
    Lists longer than `infra.arn_lists.ARN_LIST_BUDGET` (hundreds of connectors) become a wildcard, as IAM's
    policy size quotas require: the published configs (the config prefix), the topics and dead-letter topics and
    groups (the cluster's), the dead-letter prefixes (`retention.dlq_prefix`, when every connector's lies under
    it), and the offsets table's items (no dynamodb:LeadingKeys condition)."""

    def __init__(
        self,
        scope: Construct,
        id: str,
        *,
        settings: Settings,
        connectors: tuple[ConnectorSpec, ...],
        data_key: kms.IKey,
        table_arn: str,
        layer: lambda_.ILayerVersion,
    ):
        super().__init__(scope, id)
        libraries = LibrariesLayer(
            self, "Libraries", name="replay", description="confluent-kafka, orjson, aws-msk-iam-sasl-signer-python"
        ).layer
        self.function = PythonLambda(
            self,
            "Lambda",
            name="dlq_replay",
            service=SERVICE,
            layer=layer,
            extra_layers=(libraries,),
            network=settings.network,
            timeout=TIMEOUT,
            memory_mb=MEMORY_MB,
            log_retention_days=settings.retention.log_retention_days,
            # the cluster whose brokers a connector file without bootstrap.servers means (sink_engine/config/worker.py)
            environment={"CONNECTORS_URI": index_uri(settings.bucket_name), CLUSTER_ENV: settings.msk.cluster_arn},
        ).function
        statements = replay_statements(settings, connectors, table_arn)
        for statement in statements:
            execution_role(self.function).add_to_principal_policy(statement)
        data_key.grant_decrypt(execution_role(self.function))
        self._acknowledge(statements)

    def _acknowledge(self, statements: list[iam.PolicyStatement]) -> None:
        function = self.function
        acknowledge(function, f"IAM4[{BASIC_EXECUTION}]", "Lets the function write its own logs; nothing more.")
        acknowledge(
            function,
            "IAM5[Resource::*]",
            XRAY_REASON + " Neither have the EC2 network-interface actions a function in a VPC needs, nor "
            "kafka:GetBootstrapBrokers (the cluster's brokers, for a connector file without bootstrap.servers).",
        )
        for resource in sorted({r for s in statements for r in s.resources if r.endswith("*") and r != "*"}):
            acknowledge(
                function,
                f"IAM5[Resource::{resource}]",
                "Replay reads the dead-letter objects under a connector's own DLQ prefix, whose keys name "
                "topics and offsets unknown at deploy time; with hundreds of connectors, the configs, "
                "topics and groups are wildcards too: their lists exceed IAM's policy size quotas.",
            )


def replay_statements(
    settings: Settings, connectors: tuple[ConnectorSpec, ...], table_arn: str
) -> list[iam.PolicyStatement]:
    """The replay role's statements beyond logs, tracing, VPC access and KMS decrypt (see `DlqReplay`)."""
    bucket, msk = f"arn:aws:s3:::{settings.bucket_name}", settings.msk
    prefixes = sorted({c.dlq_s3_prefix for c in connectors if c.dlq_s3_prefix})
    if over_budget(prefixes) and all(f"{p}/".startswith(settings.retention.dlq_prefix) for p in prefixes):
        prefixes = [settings.retention.dlq_prefix.rstrip("/")]
    dlq_connectors = [c for c in connectors if c.dlq_topic]
    topics = sorted({t for c in connectors for t in c.topics})
    configs = [f"{bucket}/{c.config_key}" for c in connectors]
    names = sorted(c.name for c in connectors)
    statements = [
        iam.PolicyStatement(
            actions=["s3:GetObject"],
            resources=[f"{bucket}/{INDEX_KEY}", *([f"{bucket}/{CONFIG_PREFIX}*"] if over_budget(configs) else configs)],
        ),
        iam.PolicyStatement(
            actions=["dynamodb:GetItem", "dynamodb:PutItem", "dynamodb:UpdateItem", "dynamodb:Query"],
            resources=[table_arn],
            conditions=None if over_budget(names) else {"ForAllValues:StringEquals": {"dynamodb:LeadingKeys": names}},
        ),
        iam.PolicyStatement(
            actions=["kafka-cluster:Connect", "kafka-cluster:WriteDataIdempotently"], resources=[msk.cluster_arn]
        ),
        # no resource type in the Service Authorization Reference: "*" (infra/job_policy.py)
        *(
            [iam.PolicyStatement(actions=["kafka:GetBootstrapBrokers"], resources=["*"])]
            if any(c.brokers_from_cluster for c in connectors)
            else []
        ),
        iam.PolicyStatement(
            actions=["kafka-cluster:DescribeTopic", "kafka-cluster:WriteData"],
            resources=listed_or_wildcard(msk, "topic", topics, "*"),
        ),
    ]
    reads: dict[str, set[str]] = {}
    for connector in connectors:
        for action, resources in reference_reads(connector, settings.region, settings.account).items():
            reads.setdefault(action, set()).update(resources)
    statements += [
        iam.PolicyStatement(actions=[action], resources=sorted(resources))
        for action, resources in reads.items()
        if resources
    ]
    if prefixes:
        statements.append(
            iam.PolicyStatement(actions=["s3:GetObject"], resources=[f"{bucket}/{p}/*" for p in prefixes])
        )
        statements.append(
            iam.PolicyStatement(
                actions=["s3:ListBucket"],
                resources=[bucket],
                conditions={"StringLike": {"s3:prefix": [f"{p}/*" for p in prefixes]}},
            )
        )
    if dlq_connectors:
        statements.append(
            iam.PolicyStatement(
                actions=["kafka-cluster:DescribeTopic", "kafka-cluster:ReadData"],
                resources=listed_or_wildcard(
                    msk, "topic", sorted({c.dlq_topic for c in dlq_connectors if c.dlq_topic}), "*"
                ),
            )
        )
        # the engine's consumers carry the connector's group.id (no commits): the coordinator lookup needs Describe
        statements.append(
            iam.PolicyStatement(
                actions=["kafka-cluster:DescribeGroup"],
                resources=listed_or_wildcard(msk, "group", sorted({c.group_id for c in dlq_connectors}), "*"),
            )
        )
    return statements
