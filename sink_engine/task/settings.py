"""Everything one task's range is built from, read once from the config: each seam's settings, the S3 objects'
names and options, the rotation policy, and the few keys the record steps and the writer read themselves (a
target's own settings are its own: sink_engine.target)."""

from __future__ import annotations

from dataclasses import dataclass

from sink_engine.config import SinkConfig
from sink_engine.convert.settings import ConverterSettings
from sink_engine.dlq.settings import DeadLetterSettings
from sink_engine.format.settings import FormatSettings
from sink_engine.partition.registry import TIME_BASED
from sink_engine.partition.settings import PartitionSettings
from sink_engine.source.settings import SourceSettings
from sink_engine.storage.naming import ObjectNaming
from sink_engine.storage.object_options import ObjectOptions
from sink_engine.storage.s3 import S3Access
from sink_engine.task.rotation import RotationPolicy
from sink_engine.transform.settings import TransformSettings


@dataclass(frozen=True)
class SidecarSettings:
    """`store.kafka.keys` / `store.kafka.headers`: what each sidecar is written with, None when it is off."""

    key_converter: ConverterSettings | None  # key.converter
    keys_format: str | None  # keys.format.class
    headers_format: str | None  # headers.format.class

    @classmethod
    def from_config(cls, config: SinkConfig) -> SidecarSettings:
        keys, headers = config["store.kafka.keys"], config["store.kafka.headers"]
        return cls(
            ConverterSettings.from_config(config, "key") if keys else None,
            config["keys.format.class"] if keys else None,
            config["headers.format.class"] if headers else None,
        )


@dataclass(frozen=True)
class TaskSettings:
    source: SourceSettings
    s3: S3Access
    bucket: str  # s3.bucket.name
    object_options: ObjectOptions
    naming: ObjectNaming
    partitioning: PartitionSettings
    formats: FormatSettings
    values: ConverterSettings  # value.converter
    sidecars: SidecarSettings
    rotation: RotationPolicy  # without a timestamp extractor: a range adds its own (`with_extractor`)
    dead_letters: DeadLetterSettings
    null_values: str  # behavior.on.null.values
    schema_compatibility: str
    schema_files: str  # sink.schema.files
    tombstone_partition: str  # tombstone.encoded.partition
    transforms: TransformSettings  # transforms, predicates (empty: no transform step)

    @classmethod
    def from_config(cls, config: SinkConfig) -> TaskSettings:
        return cls(
            SourceSettings.from_config(config),
            S3Access.from_config(config),
            config["s3.bucket.name"],
            ObjectOptions.from_config(config),
            ObjectNaming.from_config(config),
            PartitionSettings.from_config(config),
            FormatSettings.from_config(config),
            ConverterSettings.from_config(config),
            SidecarSettings.from_config(config),
            rotation_policy(config),
            DeadLetterSettings.from_config(config),
            config["behavior.on.null.values"],
            config["schema.compatibility"],
            config["sink.schema.files"],
            config["tombstone.encoded.partition"],
            TransformSettings.from_config(config),
        )


def rotation_policy(config: SinkConfig) -> RotationPolicy:
    """The rotation keys as task/rotation.py applies them: `rotate.interval.ms` is off with Wallclock times (the
    driver cuts wall-clock rotation, run/wall_clock.py); `rotate.file.on.partition.change` counts only with
    `rotate.interval.ms` and a time-based partitioner, and `partitioner.max.open.files=-1` is no cap, as in the
    connector (kafka-connect-storage-cloud TopicPartitionWriter: rotateOnTime's periodicRotation,
    rotateOnPartitionerMaxOpenFiles)."""
    interval = config["rotate.interval.ms"] if config["timestamp.extractor"] != "wallclock" else -1
    time_based = config["partitioner.class"] in TIME_BASED
    return RotationPolicy(
        config["flush.size"],
        interval,
        config["rotate.file.on.partition.change"] and config["rotate.interval.ms"] > 0 and time_based,
        max(config["partitioner.max.open.files"], 0),
        tombstone_partition=(
            config["tombstone.encoded.partition"] if config["behavior.on.null.values"] == "write" else None
        ),
    )
