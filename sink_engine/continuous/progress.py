"""What a continuous run's task reports every `sink.continuous.metrics.interval.ms`: the freshness of its partitions
(the age of the oldest record read but not yet in S3), the records it wrote since its last report and its lag
(records after its partitions' committed offsets up to their high watermarks). Logged as a STREAM_PROGRESS event;
with SINK_METRICS=cloudwatch (the deployed job) also published to CloudWatch in one PutMetricData call: namespace
SinkEngine, dimension Connector, `StreamFreshnessSeconds` (alarm on its Maximum), `StreamRecordsWritten` and
`StreamLag` (their Sum over a minute adds up the tasks). `TaskReporter` makes the reports, and puts the task's totals
for the driver's progress line (continuous/run_progress.py)."""

from __future__ import annotations

import datetime
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import boto3
from botocore.exceptions import BotoCoreError, ClientError
from confluent_kafka import Consumer
from confluent_kafka import TopicPartition as KafkaTP

from sink_engine import events
from sink_engine.aws import region
from sink_engine.aws_types import CloudWatchClient, DynamoDBClient
from sink_engine.continuous.run_progress import TaskTotals, put_task_totals
from sink_engine.offsets import LeaseToken
from sink_engine.run.metrics import DIMENSION, NAMESPACE

if TYPE_CHECKING:
    from sink_engine.continuous.settings import ContinuousSettings
    from sink_engine.model import TopicPartition
    from sink_engine.task.stream import PartitionStream


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


def report(
    connector: str, progress: StreamProgress, timestamp_ms: int, cloudwatch: CloudWatchClient | None = None
) -> None:
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


class TaskReporter:
    """A continuous run's task's progress reports, every `sink.continuous.metrics.interval.ms` (`report`), and its
    totals for the driver to show (continuous/run_progress.py), from its first tick on. `item`: (the DynamoDB
    client, the lease token, the task's index)."""

    def __init__(
        self,
        settings: ContinuousSettings,
        streams: dict[TopicPartition, PartitionStream],
        consumer: Consumer,
        publish: bool,
        clock: Callable[[], int],
        item: tuple[DynamoDBClient, LeaseToken, int],
    ) -> None:
        self._connector, self._streams, self._consumer, self._clock = settings.run.connector, streams, consumer, clock
        self._every_ms, self._table, self._item = settings.metrics_interval_ms, settings.run.offsets_table, item
        cloudwatch = boto3.client("cloudwatch", region_name=region(settings.run.region)) if publish else None
        self._cloudwatch = cloudwatch
        self._last_ms: int | None = None
        self._written = 0

    def tick(self) -> None:
        now = self._clock()
        if self._last_ms is not None and now - self._last_ms < self._every_ms:
            return
        self._put(now)

    def end(self, error: str | None, lost: bool) -> None:
        """The share ended: its totals, with its end and the error it failed on (`lost`: the lease was lost)."""
        self._put(self._clock(), ended=True, error=error or ("lease lost" if lost else None))

    def _put(self, now: int, ended: bool = False, error: str | None = None) -> None:
        written = sum(s.records_written for s in self._streams.values())
        oldest = [t for s in self._streams.values() if (t := s.oldest_unsettled_ms) is not None]
        freshness = max(0, now - min(oldest)) / 1000 if oldest else 0.0
        lag = sum(self._lag(tp, s) for tp, s in self._streams.items())
        if self._last_ms is not None:  # the first tick only tells the driver the task has started
            report(self._connector, StreamProgress(freshness, written - self._written, lag), now, self._cloudwatch)
        files = sum(s.files_written for s in self._streams.values())
        dynamodb, token, task = self._item
        try:
            put_task_totals(
                dynamodb,
                self._table,
                token,
                task,
                TaskTotals(written, files, lag, freshness, len(self._streams), ended, error),
                now,
            )
        except (ClientError, BotoCoreError) as e:  # it only informs: the task goes on
            events.emit(events.METRICS_PUBLISH_FAILED, level=logging.WARNING, connector=self._connector, error=str(e))
        self._last_ms, self._written = now, written

    def _lag(self, tp: TopicPartition, stream: PartitionStream) -> int:
        """Records after the committed offset up to the high watermark the consumer last fetched (0 unknown)."""
        _, high = self._consumer.get_watermark_offsets(KafkaTP(tp.topic, tp.partition), cached=True)
        return max(0, high - stream.committed) if high is not None and high >= 0 else 0
