"""Run metrics: what one run wrote and what it left, published to CloudWatch once its commits are done.

One PutMetricData call per run (namespace SinkEngine, dimension Connector). Only when the environment says so:
`SINK_METRICS=cloudwatch`, which the deployed job sets (infra/constructs/emr_job.py); the CLI publishes nothing
without it. Why PutMetricData and not the embedded metric format (EMF) on the driver's stdout: CloudWatch Logs
extracts EMF from any log event that is one JSON document with an `_aws` member ("Specification: Embedded metric
format", https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/CloudWatch_Embedded_Metric_Format_Specification.html),
but EMR Serverless's documentation does not say that each line of the driver's stdout reaches the log group as one
event, unchanged; PutMetricData does not depend on that (docs/aws-fidelity.md).

A failed publish never fails the run (its offsets are committed): it is logged as METRICS_PUBLISH_FAILED.
"""

from __future__ import annotations

import datetime
import logging
from collections.abc import Mapping
from dataclasses import dataclass

import boto3
from botocore.exceptions import BotoCoreError, ClientError

from sink_engine import events
from sink_engine.aws import region
from sink_engine.aws_types import CloudWatchClient
from sink_engine.errors import SinkError

NAMESPACE = "SinkEngine"
DIMENSION = "Connector"
SETTING = "SINK_METRICS"  # environment variable; "cloudwatch" publishes
CLOUDWATCH = "cloudwatch"

# metric name -> (RunMetrics field, CloudWatch unit); the fields are those of the RUN_FINISHED event
METRICS = {
    "RecordsWritten": ("records", "Count"),
    "BytesWritten": ("bytes", "Bytes"),
    "FilesWritten": ("files", "Count"),
    "DeadLetters": ("dead_letters", "Count"),
    "RecordsDropped": ("dropped", "Count"),
    "RunSeconds": ("seconds", "Seconds"),
    "Lag": ("lag", "Count"),
    "Executors": ("executors", "Count"),
    "TasksInDriver": ("tasks_in_driver", "Count"),  # 1 when a task ran inside the driver's process
}


@dataclass(frozen=True)
class RunMetrics:
    """One run's figures: records, bytes and files it wrote; records it sent to the dead-letter queue and records
    the transforms dropped (both committed); its duration; and `lag`, the records left in Kafka after its commits
    (each partition's end offset at planning less its committed next offset); `executors`, how many Spark
    executors ran its tasks, and `tasks_in_driver`, whether any task ran inside the driver's process (a local
    master: on EMR, the run would not use the executors it is billed for)."""

    records: int
    bytes: int
    files: int
    dead_letters: int
    dropped: int
    seconds: float
    lag: int
    executors: int = 0
    tasks_in_driver: bool = False


def metric_data(connector: str, metrics: RunMetrics, timestamp_ms: int) -> list[dict]:
    """PutMetricData's MetricData for one run: every metric of METRICS with its unit, dimension Connector."""
    when = datetime.datetime.fromtimestamp(timestamp_ms / 1000, datetime.UTC)
    return [
        {
            "MetricName": name,
            "Dimensions": [{"Name": DIMENSION, "Value": connector}],
            "Timestamp": when,
            "Value": float(getattr(metrics, field)),
            "Unit": unit,
        }
        for name, (field, unit) in METRICS.items()
    ]


class MetricsPublisher:
    """Publishes a run's metrics with an injected CloudWatch client."""

    def __init__(self, cloudwatch: CloudWatchClient) -> None:
        self._cloudwatch = cloudwatch

    def publish(self, connector: str, metrics: RunMetrics, timestamp_ms: int) -> None:
        """One PutMetricData call; METRICS_PUBLISH_FAILED (warning) when CloudWatch does not take it."""
        try:
            self._cloudwatch.put_metric_data(
                Namespace=NAMESPACE, MetricData=metric_data(connector, metrics, timestamp_ms)
            )
        except (ClientError, BotoCoreError) as e:
            events.emit(events.METRICS_PUBLISH_FAILED, level=logging.WARNING, connector=connector, error=str(e))


def publisher_from_environment(environ: Mapping[str, str], configured_region: str) -> MetricsPublisher | None:
    """A publisher when `SINK_METRICS=cloudwatch`, None when the variable is unset or empty; any other value is
    refused naming the variable (SinkError)."""
    setting = environ.get(SETTING, "")
    if not setting:
        return None
    if setting != CLOUDWATCH:
        raise SinkError(
            f"environment variable {SETTING}={setting!r}: the one value is {CLOUDWATCH!r} (unset: no metrics)"
        )
    return MetricsPublisher(boto3.client("cloudwatch", region_name=region(configured_region)))
