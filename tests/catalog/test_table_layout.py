"""Partition projection of each layout: the engine's own time paths are among the values Athena's date projection
generates (emulated with java.time), each once, across DST changes; layouts Athena cannot project are refused
naming the key."""

from __future__ import annotations

from collections import Counter
from datetime import date, datetime, timedelta

import pytest

from infra.errors import ConnectorSpecError, SettingsError
from infra.table_layout import layout, time_projection
from sink_engine.config import parse_config
from sink_engine.partition.settings import PartitionSettings
from sink_engine.partition.time_based import time_buckets
from tests.builders import connector_keys

BASE = connector_keys({"flush.size": 1})


def config(**keys):
    return parse_config({**BASE, **{k.replace("_", "."): v for k, v in keys.items()}})


def time_config(path_format: str, duration_ms: int, zone: str = "UTC", locale: str = "en"):
    return parse_config(
        {
            **BASE,
            "partitioner.class": "TimeBasedPartitioner",
            "path.format": path_format,
            "partition.duration.ms": duration_ms,
            "timezone": zone,
            "locale": locale,
        }
    )


# (config, first day, days, sampling step): windows cross DST changes where the zone has them
TIME_LAYOUTS = {
    "hourly Paris, spring forward": (
        parse_config({**BASE, "partitioner.class": "HourlyPartitioner", "timezone": "Europe/Paris"}),
        date(2024, 3, 29),
        4,
        7,
    ),
    "hourly Paris, fall back": (
        parse_config({**BASE, "partitioner.class": "HourlyPartitioner", "timezone": "Europe/Paris"}),
        date(2024, 10, 25),
        4,
        7,
    ),
    "daily New York, fall back": (
        parse_config({**BASE, "partitioner.class": "DailyPartitioner", "timezone": "America/New_York"}),
        date(2024, 10, 30),
        10,
        53,
    ),
    "6 hours Kolkata": (time_config("'dt'=yyyy-MM-dd/'h6'=HH", 6 * 3_600_000, "Asia/Kolkata"), date(2024, 1, 1), 5, 31),
    "90 minutes": (time_config("YYYY/MM/dd/HHmm", 90 * 60_000), date(2024, 2, 28), 3, 11),
    "15 minutes named by the hour": (
        time_config("'date'=YYYY-MM-dd/'hour'=HH", 900_000, "Europe/Paris"),
        date(2024, 3, 30),
        2,
        5,
    ),
    "7 hours named by the hour": (time_config("YYYY-MM-dd/HH", 7 * 3_600_000, "+05:30"), date(2024, 1, 1), 4, 13),
    "daily, month names": (
        time_config("'year'=YYYY/'month'=MMM", 86_400_000, locale="en-US"),
        date(2024, 1, 20),
        70,
        600,
    ),
    # new Locale("en_US") is a language Java has no data for: root names, abbreviated at every width
    "daily, full names in the root locale": (
        time_config("YYYY/MMMM/dd/EEEE", 86_400_000, locale="en_US"),
        date(2024, 1, 20),
        70,
        600,
    ),
    "hourly, day names and AM/PM": (
        time_config("YYYY-MM-dd/EEEE/hh-a", 3_600_000, "America/Los_Angeles"),
        date(2024, 3, 9),
        3,
        9,
    ),
    "daily, day of year": (time_config("yyyy/DDD", 86_400_000), date(2024, 12, 29), 5, 97),
    "two-digit year": (time_config("yy/MM/dd", 86_400_000, "Pacific/Auckland"), date(2024, 4, 4), 4, 61),
    "1.5 seconds, milliseconds": (time_config("yyyy/MM/dd/HH/mm/ss/SSS", 1_500, "UTC"), date(2024, 5, 1), 0.005, 0.1),
    "quote and brackets": (time_config("'it''s'/[YYYY]/MM", 86_400_000), date(2024, 1, 30), 5, 300),
}


@pytest.mark.parametrize("name", list(TIME_LAYOUTS))
def test_every_engine_time_path_is_projected_once(java_time, name):
    cfg, first_day, days, step_minutes = TIME_LAYOUTS[name]
    projection = time_projection(cfg, first_day, "c.json").projection()
    buckets = time_buckets(PartitionSettings.from_config(cfg))
    start = datetime(first_day.year, first_day.month, first_day.day, tzinfo=buckets.zone) + timedelta(hours=1)
    end = start + timedelta(days=days)
    step_ms = int(step_minutes * 60_000)
    paths = {buckets.path(ms) for ms in range(int(start.timestamp() * 1000), int(end.timestamp() * 1000), step_ms)}
    projected = java_time.projected(projection, now=end)
    assert [v for v, n in Counter(projected).items() if n > 1] == []
    assert sorted(paths - set(projected)) == []


def test_hourly_paris_projection_reads_as_documented():
    cfg = parse_config({**BASE, "partitioner.class": "HourlyPartitioner", "timezone": "Europe/Paris"})
    projected = layout(
        cfg,
        "t",
        "lake",
        source="c.json",
        kafka_partitions=3,
        field_values={},
        time_range_start=date(2026, 1, 1),
        settings_source="dev.json",
    )
    assert projected.parameters() == {
        "projection.enabled": "true",
        "storage.location.template": "s3://lake/topics/t/${time_bucket}/",
        "projection.time_bucket.type": "date",
        "projection.time_bucket.format": "'year='yyyy'/month='MM'/day='dd'/hour='HH",
        "projection.time_bucket.range": "year=2026/month=01/day=01/hour=00,NOW+2HOURS",  # Paris is UTC+2 in summer
        "projection.time_bucket.interval": "1",
        "projection.time_bucket.interval.unit": "HOURS",
    }


def test_field_and_time_layout_puts_fields_first():
    cfg = config(
        partitioner_class="FieldAndTimeBasedPartitioner",
        partition_field_name="region,meta.kind",
        path_format="'day'=YYYYMMdd",
        partition_duration_ms=86_400_000,
        topics_dir="raw/events",
    )
    projected = layout(
        cfg,
        "t",
        "lake",
        source="c.json",
        kafka_partitions=3,
        field_values={"region": ("us/east", "eu")},
        time_range_start=date(2026, 1, 1),
        settings_source="dev.json",
    )
    parameters = projected.parameters()
    assert projected.location == "s3://lake/raw/events/t/"
    assert (
        parameters["storage.location.template"]
        == "s3://lake/raw/events/t/region=${region}/meta.kind=${meta_kind}/${time_bucket}/"
    )
    assert parameters["projection.region.type"] == "enum"
    assert parameters["projection.region.values"] == "us%2Feast,eu"  # escaped as the engine writes the key
    assert parameters["projection.meta_kind.type"] == "injected"
    assert [c.name for c in projected.columns] == ["region", "meta_kind", "time_bucket"]


@pytest.mark.parametrize(
    "keys, key, message",
    [
        ({"directory.delim": "_"}, "directory.delim", "from a folder"),
        (
            {
                "partitioner.class": "TimeBasedPartitioner",
                "path.format": "'hour'=HH",
                "partition.duration.ms": 3_600_000,
            },
            "path.format",
            "from the year down",
        ),
        (
            {"partitioner.class": "TimeBasedPartitioner", "path.format": "xxxx/ww", "partition.duration.ms": 3_600_000},
            "path.format",
            "no counterpart",
        ),
        (
            {
                "partitioner.class": "TimeBasedPartitioner",
                "path.format": "YYYY/MM/dd/HH/Z",
                "partition.duration.ms": 3_600_000,
            },
            "path.format",
            "no counterpart",
        ),
        (
            {
                "partitioner.class": "TimeBasedPartitioner",
                "path.format": "YYYY/MM/ddd",
                "partition.duration.ms": 86_400_000,
            },
            "path.format",
            "at most 2 'd'",
        ),
        (
            {
                "partitioner.class": "TimeBasedPartitioner",
                "path.format": "YYYY/MM/dd/hh",
                "partition.duration.ms": 3_600_000,
            },
            "path.format",
            "without AM/PM",
        ),
        (
            {
                "partitioner.class": "TimeBasedPartitioner",
                "path.format": "YYYY/MMM",
                "partition.duration.ms": 86_400_000,
                "locale": "fr",
            },
            "locale",
            "English only",
        ),
        (
            {
                "partitioner.class": "TimeBasedPartitioner",
                "path.format": "YYYY/G",
                "partition.duration.ms": 86_400_000,
                "locale": "en_US",
            },
            "locale",
            "CE/BCE",
        ),
        ({"partitioner.class": "FieldPartitioner", "partition.field.name": "a.b,a_b"}, "partition.field.name", "twice"),
    ],
)
def test_layout_athena_cannot_project_is_refused_naming_the_key(keys, key, message):
    with pytest.raises(ConnectorSpecError, match=f"key '{key}'.*{message}"):
        layout(
            parse_config({**BASE, **keys}),
            "t",
            "lake",
            source="c.json",
            kafka_partitions=3,
            field_values={},
            time_range_start=date(2026, 1, 1),
            settings_source="dev.json",
        )


def test_enum_values_with_a_comma_are_refused_naming_the_setting():
    with pytest.raises(SettingsError, match="catalog.tables.t.field_values.region"):
        layout(
            config(partitioner_class="FieldPartitioner", partition_field_name="region"),
            "t",
            "lake",
            source="c.json",
            kafka_partitions=3,
            field_values={"region": ("a,b",)},
            time_range_start=date(2026, 1, 1),
            settings_source="dev.json",
        )
