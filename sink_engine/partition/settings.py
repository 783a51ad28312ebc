"""The partitioning keys, read once from the config: what partitioners and timestamp extractors are built from."""

from __future__ import annotations

from dataclasses import dataclass

from sink_engine.config import SinkConfig


@dataclass(frozen=True)
class PartitionSettings:
    partitioner: str  # partitioner.class, canonical (config.keys.PARTITIONER_CLASSES)
    field_names: tuple[str, ...] | None  # partition.field.name
    directory_delim: str
    path_format: str | None
    duration_ms: int  # partition.duration.ms
    locale: str
    timezone: str
    extractor: str  # timestamp.extractor, canonical: record, recordfield or wallclock
    timestamp_field: str

    @classmethod
    def from_config(cls, config: SinkConfig) -> PartitionSettings:
        return cls(
            config["partitioner.class"],
            config["partition.field.name"],
            config["directory.delim"],
            config["path.format"],
            config["partition.duration.ms"],
            config["locale"],
            config["timezone"],
            config["timestamp.extractor"],
            config["timestamp.field"],
        )
