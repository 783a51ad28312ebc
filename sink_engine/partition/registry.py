"""Partitioner by its canonical config name (see config.keys.PARTITIONER_CLASSES)."""

from __future__ import annotations

from sink_engine.partition.base import Partitioner
from sink_engine.partition.default import DefaultPartitioner
from sink_engine.partition.field import FieldPartitioner
from sink_engine.partition.field_time import FieldAndTimeBasedPartitioner
from sink_engine.partition.settings import PartitionSettings
from sink_engine.partition.time_based import TimeBasedPartitioner, time_buckets
from sink_engine.partition.timestamps import TimestampExtractor, extractor_for

TIME_BASED = ("time", "daily", "hourly", "fieldtime")


def partitioner_for(settings: PartitionSettings, extractor: TimestampExtractor | None = None) -> Partitioner:
    """The configured partitioner. Time-based ones use `extractor` (default: the configured one, with the
    wall clock read now). Raises ConfigError naming a key the partitioner cannot work with."""
    kind = settings.partitioner
    if kind == "default":
        return DefaultPartitioner()
    if kind == "field":
        return FieldPartitioner.from_settings(settings)
    times = TimeBasedPartitioner(time_buckets(settings), extractor or extractor_for(settings))
    if kind == "fieldtime":
        return FieldAndTimeBasedPartitioner(FieldPartitioner.from_settings(settings), times, settings.directory_delim)
    return times
