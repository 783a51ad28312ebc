"""The connector's partitioner as the table's partition spec, and the extra columns of its rows.

- DefaultPartitioner: unpartitioned (the Kafka partition is no table partition).
- FieldPartitioner: an `identity` partition of each field of `partition.field.name` (nested as `a.b`).
- DailyPartitioner / HourlyPartitioner, and TimeBasedPartitioner with `partition.duration.ms` of a day or an
  hour: a `day` / `hour` partition of the record's time: with `timestamp.extractor` Record the Kafka timestamp,
  kept as the column `_kafka_metadata_timestamp`; with RecordField the time read from `timestamp.field` (epoch ms,
  digits or ISO-8601, as the S3 path reads it), kept as the column `_record_timestamp`. Iceberg's transforms are
  in UTC, so `timezone` must be UTC; `path.format` and `locale` play no part.
- FieldAndTimeBasedPartitioner: the field partitions, then the time partition.

Pure (no pyiceberg import): config checks use it.
"""
from __future__ import annotations

from datetime import datetime, timezone

from sink_engine.errors import ConfigError
from sink_engine.iceberg.settings import METADATA_COLUMNS, RECORD_TIME_COLUMN, TIMESTAMP_COLUMN

HOUR_MS, DAY_MS = 3_600_000, 86_400_000
_DURATIONS = {"daily": DAY_MS, "hourly": HOUR_MS}
_TRANSFORMS = {HOUR_MS: "hour", DAY_MS: "day"}


def partition_fields(config) -> list[tuple[str, str, str]]:
    """[(source column, transform, partition field name)] of an auto-created table; ConfigError naming the key
    when the partitioner has no Iceberg equivalent."""
    partitioner = config["partitioner.class"]
    fields = []
    if partitioner in ("field", "fieldtime"):
        fields += [(name, "identity", name.replace(".", "_")) for name in config["partition.field.name"] or ()]
    if partitioner in ("time", "daily", "hourly", "fieldtime"):
        source, transform = time_column(config), _transform(config)
        fields.append((source, transform, f"{source.lstrip('_')}_{transform}"))
    return fields


def time_column(config) -> str | None:
    """The column a time partition transforms (None without one)."""
    if config["partitioner.class"] not in ("time", "daily", "hourly", "fieldtime"):
        return None
    extractor = config["timestamp.extractor"]
    if extractor == "wallclock":
        raise ConfigError("timestamp.extractor", "Wallclock cannot partition an Iceberg table (a row holds no "
                                                 "wall-clock time); use Record or RecordField")
    _check_utc(config["timezone"])
    return TIMESTAMP_COLUMN if extractor == "record" else RECORD_TIME_COLUMN


def extra_columns(config) -> tuple[str, ...]:
    """The Kafka metadata columns of each row (all, or only the time partition's source), and `_record_timestamp`
    when a time partition reads the record's field."""
    time_source = time_column(config)
    metadata = METADATA_COLUMNS if config["iceberg.tables.kafka-metadata-enabled"] else \
        tuple(c for c in METADATA_COLUMNS if c == time_source)
    return metadata + ((RECORD_TIME_COLUMN,) if time_source == RECORD_TIME_COLUMN else ())


def _transform(config) -> str:
    duration = _DURATIONS.get(config["partitioner.class"], config["partition.duration.ms"])
    if duration not in _TRANSFORMS:
        raise ConfigError("partition.duration.ms", f"{duration} has no Iceberg transform: with IcebergFormat a time "
                                                   f"partition is an hour ({HOUR_MS}) or a day ({DAY_MS})")
    return _TRANSFORMS[duration]


def _check_utc(zone_text: str) -> None:
    from sink_engine.partition.time_buckets import parse_zone

    zone = parse_zone(zone_text)
    instants = (datetime(2024, 1, 1, tzinfo=timezone.utc), datetime(2024, 7, 1, tzinfo=timezone.utc))
    if any(instant.astimezone(zone).utcoffset().total_seconds() for instant in instants):
        raise ConfigError("timezone", f"{zone_text} is not UTC: Iceberg's hour and day partitions are UTC hours and "
                                      "days; set timezone UTC")
