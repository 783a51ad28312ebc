"""What a continuous run's task reports every `sink.continuous.metrics.interval.ms`: the freshness of its partitions
(the age of the oldest record read but not yet in S3), the records it wrote since its last report and its lag
(records after its partitions' committed offsets up to their high watermarks). Logged as a STREAM_PROGRESS event;
with SINK_METRICS=cloudwatch (the deployed job) also published to CloudWatch in one PutMetricData call: namespace
SinkEngine, dimension Connector, `StreamFreshnessSeconds` (alarm on its Maximum), `StreamRecordsWritten` and
`StreamLag` (their Sum over a minute adds up the tasks)."""

from __future__ import annotations

import datetime
import logging
from dataclasses import dataclass

from botocore.exceptions import BotoCoreError, ClientError

from sink_engine import events
from sink_engine.driver.metrics import DIMENSION, NAMESPACE


@dataclass(frozen=True)
class StreamProgress:
    freshness_s: float
    records_written: int
    lag: int


# metric name -> (StreamProgress field, unit)
STREAM_METRICS = {
    "StreamFreshnessSeconds": ("freshness_s", "Seconds"),
    "StreamRecordsWritten": ("records_written", "Count"),
    "StreamLag": ("lag", "Count"),
}


def report(connector: str, progress: StreamProgress, timestamp_ms: int, cloudwatch=None) -> None:
    """Log the task's STREAM_PROGRESS; publish it when `cloudwatch` (a client) is given. A publish CloudWatch
    refuses is logged (METRICS_PUBLISH_FAILED) and does not stop the task."""
    events.emit(
        events.STREAM_PROGRESS,
        connector=connector,
        freshness_s=round(progress.freshness_s, 3),
        records_written=progress.records_written,
        lag=progress.lag,
    )
    if cloudwatch is None:
        return
    when = datetime.datetime.fromtimestamp(timestamp_ms / 1000, datetime.UTC)
    data = [
        {
            "MetricName": name,
            "Dimensions": [{"Name": DIMENSION, "Value": connector}],
            "Timestamp": when,
            "Value": float(getattr(progress, field)),
            "Unit": unit,
        }
        for name, (field, unit) in STREAM_METRICS.items()
    ]
    try:
        cloudwatch.put_metric_data(Namespace=NAMESPACE, MetricData=data)
    except (ClientError, BotoCoreError) as e:
        events.emit(events.METRICS_PUBLISH_FAILED, level=logging.WARNING, connector=connector, error=str(e))
