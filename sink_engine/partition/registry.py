"""Partitioner by its canonical config name (see config.keys.PARTITIONER_CLASSES)."""
from __future__ import annotations

from sink_engine.config import SinkConfig
from sink_engine.partition.base import Partitioner
from sink_engine.partition.default import DefaultPartitioner
from sink_engine.partition.field import FieldPartitioner
from sink_engine.partition.field_time import FieldAndTimeBasedPartitioner
from sink_engine.partition.time_based import TimeBasedPartitioner, time_buckets
from sink_engine.partition.timestamps import extractor_for

TIME_BASED = ("time", "daily", "hourly", "fieldtime")


def partitioner_for(config: SinkConfig, extractor=None) -> Partitioner:
    """The configured partitioner. Time-based ones use `extractor` (default: the configured one, with the
    wall clock read now). Raises ConfigError naming a key the partitioner cannot work with."""
    kind = config["partitioner.class"]
    if kind == "default":
        return DefaultPartitioner()
    if kind == "field":
        return FieldPartitioner.from_config(config)
    times = TimeBasedPartitioner(time_buckets(config), extractor or extractor_for(config))
    if kind == "fieldtime":
        return FieldAndTimeBasedPartitioner(FieldPartitioner.from_config(config), times, config["directory.delim"])
    return times

