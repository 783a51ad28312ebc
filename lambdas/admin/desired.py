"""The desired per-connector state, as pure data computed from the deployment's connector specs.

`DesiredState.from_json` reads the document the stack passes (custom resource property `State`, and the copy
kept at `<config_prefix>_desired.json` for direct invokes); the methods derive what must exist in AWS.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

RULE_PREFIX = "sink-connector:"
STATE_FILE = "_desired.json"


@dataclass(frozen=True)
class ConnectorState:
    name: str
    topics: tuple[str, ...]
    topics_dir: str
    group_id: str
    config_key: str
    document: dict[str, Any]
    dlq_topic: str | None = None  # errors.deadletterqueue.topic.name, when the dead letters go to a topic


@dataclass(frozen=True)
class DesiredState:
    bucket: str
    role_name: str
    policy_name: str
    table_arn: str
    cluster_arn: str
    config_prefix: str
    dlq_prefix: str
    default_topics_dir: str
    glacier_after_days: int
    deep_archive_after_days: int
    connectors: tuple[ConnectorState, ...]

    @classmethod
    def from_json(cls, text: str) -> "DesiredState":
        doc = json.loads(text)
        connectors = tuple(ConnectorState(c["name"], tuple(c["topics"]), c["topics_dir"], c["group_id"],
                                          c["config_key"], c["document"], c.get("dlq_topic"))
                           for c in doc["connectors"])
        return cls(**{**doc, "connectors": connectors})

    @property
    def state_key(self) -> str:
        return f"{self.config_prefix}{STATE_FILE}"

    def lifecycle_rules(self) -> list[dict]:
        """Archive rules for connector prefixes other than the default `topics.dir`, which the stack's own rule
        covers. One rule per distinct prefix, IDs starting with RULE_PREFIX (the rules this function owns)."""
        dirs = sorted({c.topics_dir for c in self.connectors} - {self.default_topics_dir})
        return [{
            "ID": f"{RULE_PREFIX}{d}/", "Status": "Enabled", "Filter": {"Prefix": f"{d}/"},
            "Transitions": [{"Days": self.glacier_after_days, "StorageClass": "GLACIER"},
                            {"Days": self.deep_archive_after_days, "StorageClass": "DEEP_ARCHIVE"}],
        } for d in dirs]

    def job_policy(self) -> dict:
        """The job role's connector-scoped policy: S3 prefixes, its DynamoDB items, its MSK topics and groups, and
        for connectors whose dead letters go to a topic, what `sink_engine.dlq.topic_destination` does there:
        create, describe, read (the scan for letters of a crashed attempt) and write the topic, idempotently and
        in transactions whose IDs start with `sink-engine-dlq.<connector>.`."""
        arn = f"arn:aws:s3:::{self.bucket}"
        prefixes = sorted({f"{c.topics_dir}/{t}/" for c in self.connectors for t in c.topics}
                          | {f"{self.dlq_prefix}{c.name}/" for c in self.connectors})
        cluster_base = self.cluster_arn.split(":cluster/")[0]
        cluster_path = self.cluster_arn.split(":cluster/")[1]
        cluster_name, cluster_uuid = cluster_path.split("/")[:2]
        topics = sorted({t for c in self.connectors for t in c.topics})
        groups = sorted({c.group_id for c in self.connectors})
        return {"Version": "2012-10-17", "Statement": [
            {"Sid": "WriteConnectorPrefixes", "Effect": "Allow",
             "Action": ["s3:GetObject", "s3:PutObject", "s3:AbortMultipartUpload"],
             "Resource": [f"{arn}/{p}*" for p in prefixes]},
            {"Sid": "ReadConnectorConfigs", "Effect": "Allow", "Action": ["s3:GetObject"],
             "Resource": [f"{arn}/{c.config_key}" for c in sorted(self.connectors, key=lambda c: c.name)]},
            {"Sid": "ListConnectorPrefixes", "Effect": "Allow", "Action": ["s3:ListBucket"], "Resource": [arn],
             "Condition": {"StringLike": {"s3:prefix": [f"{p}*" for p in prefixes]}}},
            {"Sid": "OwnOffsetsAndLease", "Effect": "Allow",
             "Action": ["dynamodb:GetItem", "dynamodb:PutItem", "dynamodb:UpdateItem", "dynamodb:DeleteItem",
                        "dynamodb:Query", "dynamodb:ConditionCheckItem"],
             "Resource": [self.table_arn],
             "Condition": {"ForAllValues:StringEquals": {"dynamodb:LeadingKeys": sorted(c.name for c in self.connectors)}}},
            {"Sid": "ConnectToCluster", "Effect": "Allow",
             "Action": ["kafka-cluster:Connect", "kafka-cluster:DescribeCluster"], "Resource": [self.cluster_arn]},
            {"Sid": "ReadTopics", "Effect": "Allow", "Action": ["kafka-cluster:DescribeTopic", "kafka-cluster:ReadData"],
             "Resource": [f"{cluster_base}:topic/{cluster_name}/{cluster_uuid}/{t}" for t in topics]},
            {"Sid": "UseConsumerGroups", "Effect": "Allow",
             "Action": ["kafka-cluster:DescribeGroup", "kafka-cluster:AlterGroup"],
             "Resource": [f"{cluster_base}:group/{cluster_name}/{cluster_uuid}/{g}" for g in groups]},
            *self._dead_letter_topic_statements(f"{cluster_name}/{cluster_uuid}", cluster_base),
        ]}

    def _dead_letter_topic_statements(self, cluster: str, cluster_base: str) -> list[dict]:
        writers = sorted((c for c in self.connectors if c.dlq_topic), key=lambda c: c.name)
        if not writers:
            return []
        return [
            {"Sid": "WriteDeadLetterTopics", "Effect": "Allow",
             "Action": ["kafka-cluster:CreateTopic", "kafka-cluster:DescribeTopic", "kafka-cluster:ReadData",
                        "kafka-cluster:WriteData"],
             "Resource": sorted({f"{cluster_base}:topic/{cluster}/{c.dlq_topic}" for c in writers})},
            {"Sid": "WriteIdempotently", "Effect": "Allow", "Action": ["kafka-cluster:WriteDataIdempotently"],
             "Resource": [self.cluster_arn]},
            {"Sid": "DeadLetterTransactions", "Effect": "Allow",
             "Action": ["kafka-cluster:DescribeTransactionalId", "kafka-cluster:AlterTransactionalId"],
             "Resource": [f"{cluster_base}:transactional-id/{cluster}/sink-engine-dlq.{c.name}.*" for c in writers]},
        ]

    def config_objects(self) -> dict[str, bytes]:
        """Object key -> bytes of each connector's published config (what the job reads with --config)."""
        return {c.config_key: json.dumps(c.document, indent=2, sort_keys=True).encode()
                for c in self.connectors}
