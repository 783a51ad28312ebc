"""The keys a run's driver reads itself, once: where the connector's offsets, lease and plans are, its bucket, and
the run's bounds (each seam's own keys are its settings': source/, target/, task/)."""

from __future__ import annotations

from dataclasses import dataclass

from sink_engine.config import SinkConfig


@dataclass(frozen=True)
class RunSettings:
    connector: str  # name: the partition key of its offsets and lease
    offsets_table: str  # offset.storage.dynamodb.table: committed offsets, the lease, recorded plans
    region: str  # s3.region: the DynamoDB and CloudWatch clients' region when the environment names none
    bucket: str  # s3.bucket.name
    lease_ms: int  # sink.lease.duration.ms
    timeout_ms: int  # sink.run.timeout.ms
    tasks_max: int  # tasks.max: Spark tasks a run's ranges are grouped into, at most
    max_records_per_partition: int  # sink.run.max.records.per.partition

    @classmethod
    def from_config(cls, config: SinkConfig) -> RunSettings:
        return cls(
            config.name,
            config["offset.storage.dynamodb.table"],
            config["s3.region"],
            config["s3.bucket.name"],
            config["sink.lease.duration.ms"],
            config["sink.run.timeout.ms"],
            config["tasks.max"],
            config["sink.run.max.records.per.partition"],
        )
