"""Reading dead letters back for a replay: every record of the dead-letter topic, or every JSON line
under the S3 prefix (narrowed to one topic or partition when the request filters on them)."""

from __future__ import annotations

from collections.abc import Iterator

from sink_engine.aws_types import S3Client
from sink_engine.dlq.letter import DeadLetter
from sink_engine.dlq.replay_request import ReplayRequest
from sink_engine.dlq.settings import DeadLetterSettings
from sink_engine.errors import SourceError, StorageError
from sink_engine.model import PartitionRange, TopicPartition
from sink_engine.source.consumer import make_consumer
from sink_engine.source.metadata import watermarks
from sink_engine.source.reader import read_range
from sink_engine.source.settings import SourceSettings


def dead_letters(settings: DeadLetterSettings, request: ReplayRequest, s3_client: S3Client) -> Iterator[DeadLetter]:
    if request.source_topic is not None:
        return from_topic(settings.source, request.source_topic)
    return from_s3(settings, request, s3_client)


def from_topic(source: SourceSettings, topic: str) -> Iterator[DeadLetter]:
    """Dead letters of every partition of `topic`, partition by partition in offset order (read committed)."""
    consumer = make_consumer(source)
    try:
        metadata = consumer.list_topics(topic=topic, timeout=15).topics.get(topic)
        if metadata is None or metadata.error is not None:
            raise SourceError(f"dead-letter topic {topic} not found")
        tps = [TopicPartition(topic, p) for p in sorted(metadata.partitions)]
        marks = watermarks(consumer, tps)
    finally:
        consumer.close()
    for tp in tps:
        low, high = marks[tp]
        for chunk in read_range(source, PartitionRange(topic, tp.partition, low, high, None)):
            for key, value, headers in zip(chunk.keys, chunk.values, chunk.headers):
                letter = DeadLetter.from_kafka(key, value, headers)
                if letter is not None and letter.connector == source.connector:
                    yield letter


def from_s3(settings: DeadLetterSettings, request: ReplayRequest, s3_client: S3Client) -> Iterator[DeadLetter]:
    """Objects in key order, which is offset order within a topic-partition (zero-padded first offsets). Their
    offsets are disjoint (dlq/s3_destination.py) unless a rerun planned a shorter range than a crashed attempt
    of it (a lowered `sink.run.max.records.per.partition`): a source offset seen before is skipped."""
    bucket, delim = settings.bucket, settings.directory_delim
    assert request.source_s3_prefix is not None  # a replay from S3
    prefix = request.source_s3_prefix.strip("/") + delim
    if request.topic is not None:
        prefix += (
            request.topic + delim + (f"partition={request.partition}{delim}" if request.partition is not None else "")
        )
    highest: dict[tuple[str, int], int] = {}
    for key in _keys(s3_client, bucket, prefix):
        try:
            body = s3_client.get_object(Bucket=bucket, Key=key)["Body"].read()
        except Exception as e:  # botocore errors: the replay stops, nothing more is claimed
            raise StorageError(f"cannot read s3://{bucket}/{key}: {e}") from e
        for line in body.splitlines():
            letter = DeadLetter.from_json_line(line)
            tp = (letter.topic, letter.partition)
            if letter.connector == settings.connector and letter.offset > highest.get(tp, -1):
                highest[tp] = letter.offset
                yield letter


def _keys(s3_client: S3Client, bucket: str, prefix: str) -> Iterator[str]:
    for page in s3_client.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix):
        for item in page.get("Contents", []):
            yield item["Key"]
