"""What a run checks before it starts Spark (which takes 8 to 20 s): the offsets table, the bucket, that Kafka's
bootstrap addresses can be reached, and that the connector's lease is free or lapses, waiting for it when asked.
Each failure is the error the run itself would end with, only sooner."""

from __future__ import annotations

import os
import time
from collections.abc import Callable

from botocore.exceptions import ClientError

from sink_engine.aws import S3Access, dynamodb_client, s3_client
from sink_engine.aws_types import S3Client
from sink_engine.config import SinkConfig
from sink_engine.errors import LeaseHeldError, SinkError
from sink_engine.offsets import Leases, table_exists
from sink_engine.offsets.lease import held_error
from sink_engine.run.settings import RunSettings
from sink_engine.source.reachability import check_bootstrap
from sink_engine.source.settings import SourceSettings

POLL_S = 5.0  # the longest a wait for the lease sleeps between two looks at it
# Environment variable; "true" when the bucket is the deployment's own (the deployed job sets it,
# infra/constructs/emr_job.py): its existence is not checked, since HeadBucket needs s3:ListBucket, which the job
# role is not granted, and a denied call in every run would only fill CloudTrail with AccessDenied.
BUCKET_MANAGED_SETTING = "SINK_BUCKET_MANAGED"


def missing_table(table: str) -> str:
    return f"offsets table {table} does not exist (offset.storage.dynamodb.table); run `sink-engine init` first"


def preflight(
    config: SinkConfig,
    wait_for_lease_s: float,
    say: Callable[[str], None],
    clock: Callable[[], int],
) -> None:
    """SinkError naming what a run of `config` would fail on; LeaseHeldError when the lease is still held after
    `wait_for_lease_s` seconds (0: do not wait). `say` is told each holder it waits for."""
    run = RunSettings.from_config(config)
    dynamodb = dynamodb_client(run.region)
    if not table_exists(dynamodb, run.offsets_table):
        raise SinkError(missing_table(run.offsets_table))
    managed = os.environ.get(BUCKET_MANAGED_SETTING) == "true"
    if not managed and bucket_missing(s3_client(S3Access.from_config(config)), run.bucket):
        raise SinkError(f"bucket {run.bucket} does not exist (s3.bucket.name); nothing was read")
    check_bootstrap(SourceSettings.from_config(config).bootstrap_servers)
    wait_for_lease(Leases(dynamodb, run.offsets_table, clock), config.name, wait_for_lease_s, say, clock)


def bucket_missing(s3: S3Client, bucket: str) -> bool:
    """Whether HeadBucket answers 404: the bucket does not exist. It needs s3:ListBucket, which a job role writing S3
    objects is not granted (infra/job_policy.py): its 403 ("does not exist or you do not have permission", HeadBucket,
    Amazon S3 API Reference: https://docs.aws.amazon.com/AmazonS3/latest/API/API_HeadBucket.html) tells nothing, and
    the run goes on as before, its first upload naming what S3 refuses."""
    try:
        s3.head_bucket(Bucket=bucket)
        return False
    except ClientError as e:
        return e.response["Error"]["Code"] in ("404", "NoSuchBucket")


def wait_for_lease(
    leases: Leases, connector: str, wait_s: float, say: Callable[[str], None], clock: Callable[[], int]
) -> None:
    """Return once the connector's lease is free or lapsed, looking at it at most every POLL_S seconds for up to
    `wait_s`; then LeaseHeldError describing its holder (LeaseHeldError.situation). Each new holder, or one whose
    renewals stopped, is told to `say` once."""
    deadline = time.monotonic() + wait_s
    told: tuple | None = None
    while True:
        holder, now = leases.describe(connector), clock()
        if holder is None or holder["expires_at_ms"] <= now:
            return
        error: LeaseHeldError = held_error(connector, holder, now)
        left = deadline - time.monotonic()
        if left <= 0:
            raise error
        if told != (holder["owner"], holder["epoch"], error.renewals_stopped):
            told = (holder["owner"], holder["epoch"], error.renewals_stopped)
            say(f"waiting for the lease: connector '{connector}' is leased by {error.situation()}")
        time.sleep(min(POLL_S, left, max(0.2, (holder["expires_at_ms"] - now) / 1000)))
