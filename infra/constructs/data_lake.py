"""The data-lake bucket: SSE-KMS, no public access, TLS only, access logs, lifecycle rules, DLQ request metrics."""

from __future__ import annotations

from aws_cdk import Duration, RemovalPolicy
from aws_cdk import aws_kms as kms
from aws_cdk import aws_s3 as s3
from constructs import Construct

from infra.settings import Settings

DLQ_METRICS_ID = "dlq"
DEFAULT_TOPICS_DIR = "topics"


class DataLake(Construct):
    """Attributes: `bucket` (the sink's output, KMS-encrypted with `key`), `key`, `access_logs` (the log bucket).

    Every lifecycle rule of the bucket is declared here, so CloudFormation is their only owner: archive under
    `topics/` and under each other `topics.dir` of `topics_dirs` (Glacier, then Deep Archive), abort incomplete
    multipart uploads, expire the DLQ prefix."""

    def __init__(self, scope: Construct, id: str, *, settings: Settings, topics_dirs: tuple[str, ...] = ()):
        super().__init__(scope, id)
        retention = settings.retention
        # RetainExceptOnCreate: kept on delete and replacement, but removed when the stack's first create fails and
        # rolls back, so that the fixed bucket name is free for the next create (CloudFormation DeletionPolicy:
        # https://docs.aws.amazon.com/AWSCloudFormation/latest/UserGuide/aws-attribute-deletionpolicy.html)
        keep = RemovalPolicy.RETAIN_ON_UPDATE_OR_DELETE
        self.key = kms.Key(
            self,
            "Key",
            alias=f"alias/sink-{settings.env}-data",
            enable_key_rotation=True,
            description=f"Sink data lake ({settings.env})",
            removal_policy=keep,
        )
        self.access_logs = s3.Bucket(
            self,
            "AccessLogs",
            encryption=s3.BucketEncryption.S3_MANAGED,
            enforce_ssl=True,
            block_public_access=s3.BlockPublicAccess.BLOCK_ALL,
            object_ownership=s3.ObjectOwnership.BUCKET_OWNER_ENFORCED,
            removal_policy=keep,
            lifecycle_rules=[
                s3.LifecycleRule(
                    id="expire-access-logs", expiration=Duration.days(retention.access_logs_expire_after_days)
                )
            ],
        )
        self.bucket = s3.Bucket(
            self,
            "Bucket",
            bucket_name=settings.bucket_name,
            encryption=s3.BucketEncryption.KMS,
            encryption_key=self.key,
            bucket_key_enabled=True,
            enforce_ssl=True,
            block_public_access=s3.BlockPublicAccess.BLOCK_ALL,
            object_ownership=s3.ObjectOwnership.BUCKET_OWNER_ENFORCED,
            server_access_logs_bucket=self.access_logs,
            server_access_logs_prefix=f"{settings.bucket_name}/",
            removal_policy=keep,
            metrics=[s3.BucketMetrics(id=DLQ_METRICS_ID, prefix=retention.dlq_prefix)],
            lifecycle_rules=[
                *(_archive_rule(d, retention) for d in sorted({DEFAULT_TOPICS_DIR, *topics_dirs})),
                s3.LifecycleRule(
                    id="abort-incomplete-uploads", abort_incomplete_multipart_upload_after=Duration.days(7)
                ),
                s3.LifecycleRule(
                    id="expire-dlq",
                    prefix=retention.dlq_prefix,
                    expiration=Duration.days(retention.dlq_expire_after_days),
                ),
            ],
        )


def _archive_rule(topics_dir: str, retention) -> s3.LifecycleRule:
    """Objects under `<topics_dir>/` go to Glacier, then Deep Archive (rule id `archive-topics` for the default)."""
    rule_id = "archive-topics" if topics_dir == DEFAULT_TOPICS_DIR else f"archive-{topics_dir.replace('/', '-')}"
    return s3.LifecycleRule(
        id=rule_id,
        prefix=f"{topics_dir}/",
        transitions=[
            s3.Transition(
                storage_class=s3.StorageClass.GLACIER, transition_after=Duration.days(retention.glacier_after_days)
            ),
            s3.Transition(
                storage_class=s3.StorageClass.DEEP_ARCHIVE,
                transition_after=Duration.days(retention.deep_archive_after_days),
            ),
        ],
    )
