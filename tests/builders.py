"""Builders shared by the tests: connector configs with overrides, and a topic-partition's writer as a task builds
it. (The fixtures are in tests/conftest.py: `connector` for a config on the local stack, `new_topic` for a topic
with records, `s3` / `dynamodb` for the stack's stores, `moto_s3` for S3 in this process.)

A test states what it needs of a config as overrides of one base, instead of each module spelling a base of its
own: `connector_keys` for tests that reach no broker and no bucket (a flat map, parsed by the test as it needs),
`with_overrides` for another version of a config already built."""

from __future__ import annotations

from collections.abc import Mapping

from sink_engine.config import SinkConfig, parse_config
from sink_engine.model import PartitionRange
from sink_engine.storage.uploader import Uploader
from sink_engine.target.s3_objects.output import ObjectOutput
from sink_engine.task.settings import TaskSettings
from tests.dlq_corpus import raw_config

# Connector `c` reading topic `t` into bucket `lake`: the keys every config needs, with values no test reaches.
CONNECTOR_KEYS = {
    "name": "c",
    "topics": "t",
    "bootstrap.servers": "b:9092",
    "s3.bucket.name": "lake",
    "flush.size": 10,
    "format.class": "JsonFormat",
}


def connector_keys(overrides: Mapping | None = None) -> dict:
    """CONNECTOR_KEYS with `overrides` (connector keys) on top; an override of None removes the key."""
    keys = {**CONNECTOR_KEYS, **(overrides or {})}
    return {key: value for key, value in keys.items() if value is not None}


def with_overrides(config: SinkConfig, overrides: Mapping) -> SinkConfig:
    """The same connector (name and keys) with `overrides` on top."""
    return parse_config({"name": config.name, "config": {**raw_config(config), **overrides}})


def range_output(
    config: SinkConfig,
    uploader: Uploader,
    topic: str = "t",
    partition: int = 0,
    start: int = 0,
    wallclock_ms: int | None = None,
) -> ObjectOutput:
    """The output a task builds for a range of the topic-partition from offset `start`
    (target/s3_objects/output.py): its
    `writer` (the TopicPartitionWriter: format, naming, rotation with the range's timestamp extractor, schema gate,
    tombstone partition, sidecars, all from the config), `partitioner` and `sidecars`. `wallclock_ms` is the time
    the Wallclock extractor gives every record (None: now)."""
    planned = PartitionRange(topic, partition, start, start, None, wallclock_ms=wallclock_ms)
    return ObjectOutput(TaskSettings.from_config(config), planned, uploader)
