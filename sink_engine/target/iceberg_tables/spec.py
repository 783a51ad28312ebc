"""The connector's partitioner as the table's partition spec, and the extra columns of its rows.

- DefaultPartitioner: unpartitioned (the Kafka partition is no table partition).
- FieldPartitioner: an `identity` partition of each field of `partition.field.name` (nested as `a.b`).
- DailyPartitioner / HourlyPartitioner, and TimeBasedPartitioner with `partition.duration.ms` of a day or an
  hour: a `day` / `hour` partition of the record's time: with `timestamp.extractor` Record the Kafka timestamp,
  kept as the column `_kafka_metadata_timestamp`; with RecordField the time read from `timestamp.field` (epoch ms,
  digits or ISO-8601, as the S3 path reads it), kept as the column `_record_timestamp`. Iceberg's transforms are
  in UTC, so `timezone` must be UTC; `path.format` and `locale` play no part.
- FieldAndTimeBasedPartitioner: the field partitions, then the time partition.

Pure (no pyiceberg import): IcebergSettings is built with it.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from sink_engine.errors import ConfigError
from sink_engine.partition.registry import TIME_BASED
from sink_engine.partition.settings import PartitionSettings
from sink_engine.partition.time_buckets import parse_zone

# Kafka metadata columns of a row (iceberg.tables.kafka-metadata-enabled), named as the Iceberg sink's
# KafkaMetadataTransform names them when not nested
TOPIC_COLUMN, PARTITION_COLUMN, OFFSET_COLUMN, TIMESTAMP_COLUMN, KEY_COLUMN = (
    f"_kafka_metadata_{name}" for name in ("topic", "partition", "offset", "timestamp", "key")
)
METADATA_COLUMNS = (TOPIC_COLUMN, PARTITION_COLUMN, OFFSET_COLUMN, TIMESTAMP_COLUMN, KEY_COLUMN)
RECORD_TIME_COLUMN = "_record_timestamp"  # the time read from timestamp.field, for a time partition

HOUR_MS, DAY_MS = 3_600_000, 86_400_000
_DURATIONS = {"daily": DAY_MS, "hourly": HOUR_MS}
_TRANSFORMS = {HOUR_MS: "hour", DAY_MS: "day"}


def partition_fields(partitioning: PartitionSettings) -> list[tuple[str, str, str]]:
    """[(source column, transform, partition field name)] of an auto-created table; ConfigError naming the key
    when the partitioner has no Iceberg equivalent."""
    fields = []
    if partitioning.partitioner in ("field", "fieldtime"):
        fields += [(name, "identity", name.replace(".", "_")) for name in partitioning.field_names or ()]
    if partitioning.partitioner in TIME_BASED:
        source, transform = time_column(partitioning), _transform(partitioning)
        assert source is not None  # a time-based partitioner's
        fields.append((source, transform, f"{source.lstrip('_')}_{transform}"))
    return fields


def time_column(partitioning: PartitionSettings) -> str | None:
    """The column a time partition transforms (None without one)."""
    if partitioning.partitioner not in TIME_BASED:
        return None
    if partitioning.extractor == "wallclock":
        raise ConfigError(
            "timestamp.extractor",
            "Wallclock cannot partition an Iceberg table (a row holds no wall-clock time); use Record or RecordField",
        )
    _check_utc(partitioning.timezone)
    return TIMESTAMP_COLUMN if partitioning.extractor == "record" else RECORD_TIME_COLUMN


def extra_columns(partitioning: PartitionSettings, kafka_metadata: bool) -> tuple[str, ...]:
    """The Kafka metadata columns of each row (all with `kafka_metadata`, else only the time partition's source),
    and `_record_timestamp` when a time partition reads the record's field."""
    time_source = time_column(partitioning)
    metadata = METADATA_COLUMNS if kafka_metadata else tuple(c for c in METADATA_COLUMNS if c == time_source)
    return metadata + ((RECORD_TIME_COLUMN,) if time_source == RECORD_TIME_COLUMN else ())


def _transform(partitioning: PartitionSettings) -> str:
    duration = _DURATIONS.get(partitioning.partitioner, partitioning.duration_ms)
    if duration not in _TRANSFORMS:
        raise ConfigError(
            "partition.duration.ms",
            f"{duration} has no Iceberg transform: with IcebergFormat a time "
            f"partition is an hour ({HOUR_MS}) or a day ({DAY_MS})",
        )
    return _TRANSFORMS[duration]


def _check_utc(zone_text: str) -> None:
    zone = parse_zone(zone_text)
    instants = (datetime(2024, 1, 1, tzinfo=UTC), datetime(2024, 7, 1, tzinfo=UTC))
    if any(instant.astimezone(zone).utcoffset() != timedelta(0) for instant in instants):
        raise ConfigError(
            "timezone",
            f"{zone_text} is not UTC: Iceberg's hour and day partitions are UTC hours and days; set timezone UTC",
        )
