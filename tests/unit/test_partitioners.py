"""Conformance of encoded partitions: each partitioner over a table of records and settings."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest

from sink_engine.errors import ConfigError
from sink_engine.partition import PartitionSettings, partitioner_for
from sink_engine.partition.fields import FieldError
from sink_engine.partition.timestamps import extractor_for
from sink_engine.records import RecordChunk, ValueColumn
from sink_engine.validation import parse_checked_config
from tests.builders import connector_keys

BASE = connector_keys({"value.converter.schemas.enable": "false"})
HOURLY = "'year'=YYYY/'month'=MM/'day'=dd/'hour'=HH"


def ms(text: str) -> int:
    """Epoch ms of an ISO-8601 UTC time."""
    return int(datetime.fromisoformat(text).replace(tzinfo=UTC).timestamp() * 1000)


def encode(settings: dict, documents: list, timestamps: list | None = None, wallclock_ms: int | None = None):
    config = parse_checked_config({"name": "c", **BASE, **settings})
    partitioning = PartitionSettings.from_config(config)
    partitioner = partitioner_for(partitioning, extractor_for(partitioning, wallclock_ms))
    offsets = list(range(100, 100 + len(documents)))
    values = [json.dumps(d).encode() for d in documents]
    chunk = RecordChunk("t", 3, offsets, values, keys=[None] * len(values), timestamps=timestamps or [0] * len(values))
    return partitioner.encode(chunk, ValueColumn("json", values, documents)).as_list(len(documents))


def time_settings(path_format: str, duration_ms: int, zone: str = "UTC", locale: str = "en") -> dict:
    return {
        "partitioner.class": "TimeBasedPartitioner",
        "path.format": path_format,
        "partition.duration.ms": duration_ms,
        "timezone": zone,
        "locale": locale,
        "timestamp.extractor": "Record",
    }


H, D = 3_600_000, 86_400_000

TIME_CASES = [
    # (case, settings, record time (UTC), expected path)
    ("utc hourly", time_settings(HOURLY, H), "2024-01-15T10:00:00", "year=2024/month=01/day=15/hour=10"),
    ("last ms of a bucket", time_settings(HOURLY, H), "2024-01-15T10:59:59.999", "year=2024/month=01/day=15/hour=10"),
    ("first ms of the next", time_settings(HOURLY, H), "2024-01-15T11:00:00", "year=2024/month=01/day=15/hour=11"),
    ("new year in UTC", time_settings("yyyy/MM/dd", D), "2023-12-31T23:59:59.999", "2023/12/31"),
    ("new year, Tokyo", time_settings("yyyy/MM/dd", D, "Asia/Tokyo"), "2023-12-31T15:00:00", "2024/01/01"),
    (
        "NY spring gap, before",
        time_settings(HOURLY, H, "America/New_York"),
        "2024-03-10T06:59:59.999",
        "year=2024/month=03/day=10/hour=01",
    ),
    (
        "NY spring gap, after",
        time_settings(HOURLY, H, "America/New_York"),
        "2024-03-10T07:00:00",
        "year=2024/month=03/day=10/hour=03",
    ),
    (
        "NY fall back, EDT 01:30",
        time_settings(HOURLY, H, "America/New_York"),
        "2024-11-03T05:30:00",
        "year=2024/month=11/day=03/hour=01",
    ),
    (
        "NY fall back, EST 01:30",
        time_settings(HOURLY, H, "America/New_York"),
        "2024-11-03T06:30:00",
        "year=2024/month=11/day=03/hour=01",
    ),
    (
        "NY fall back, EST 02:00",
        time_settings(HOURLY, H, "America/New_York"),
        "2024-11-03T07:00:00",
        "year=2024/month=11/day=03/hour=02",
    ),
    (
        "NY daily, last ms of the day",
        time_settings("yyyy-MM-dd", D, "America/New_York"),
        "2024-03-10T03:59:59.999",
        "2024-03-09",
    ),
    ("NY daily, DST day", time_settings("yyyy-MM-dd", D, "America/New_York"), "2024-03-11T03:59:59.999", "2024-03-10"),
    (
        "Berlin daily, first ms of the fall-back day",
        time_settings("yyyy-MM-dd", D, "Europe/Berlin"),
        "2024-10-26T22:00:00",
        "2024-10-27",
    ),
    (
        "Berlin daily, last ms before it",
        time_settings("yyyy-MM-dd", D, "Europe/Berlin"),
        "2024-10-26T21:59:59.999",
        "2024-10-26",
    ),
    ("Berlin fall back, CET 02:30", time_settings("HH:mm Z", H, "Europe/Berlin"), "2024-10-27T01:30:00", "02:00 +0100"),
    (
        "Berlin fall back, CEST 02:30 (Joda names the CET instant)",
        time_settings("HH:mm Z", H, "Europe/Berlin"),
        "2024-10-27T00:30:00",
        "02:00 +0100",
    ),
    (
        "Havana: midnight in the DST gap",
        time_settings("yyyy-MM-dd'T'HH", D, "America/Havana"),
        "2024-03-10T16:00:00",
        "2024-03-10T01",
    ),
    ("fixed offset, last ms", time_settings("yyyy-MM-dd", D, "+05:30"), "2024-01-15T18:29:59.999", "2024-01-15"),
    ("fixed offset, next day", time_settings("yyyy-MM-dd", D, "+05:30"), "2024-01-15T18:30:00", "2024-01-16"),
    ("negative offset", time_settings("dd HH ZZ", H, "-03:00"), "2024-01-15T02:00:00", "14 23 -03:00"),
    ("15-minute buckets", time_settings("HH-mm", 900_000), "2024-01-15T10:14:59.999", "10-00"),
    ("15-minute buckets, edge", time_settings("HH-mm", 900_000), "2024-01-15T10:15:00", "10-15"),
    ("6-hour buckets in Kolkata", time_settings("dd/HH", 6 * H, "Asia/Kolkata"), "2024-01-15T00:29:00", "15/00"),
    ("6-hour buckets in Kolkata, next", time_settings("dd/HH", 6 * H, "Asia/Kolkata"), "2024-01-15T00:30:00", "15/06"),
    (
        "French month names",
        time_settings("'mois'=MMMM/EEEE", D, "Europe/Paris", "fr"),
        "2024-01-15T12:00:00",
        "mois=janvier/lundi",
    ),
    ("German short names", time_settings("MMM/EEE", D, "Europe/Berlin", "de"), "2024-03-15T12:00:00", "März/Fr."),
    (
        "English, AM/PM and 12-hour clock",
        time_settings("MMM d, h a", H, "UTC", "en"),
        "2024-01-05T13:00:00",
        "Jan 5, 1 PM",
    ),
    # Java's new Locale("fr_FR") is the language fr_fr, which it has no data for: root names at every width
    (
        "a language Java does not know: root names",
        time_settings("MMMM/EEEE/G", D, "Europe/Paris", "fr_FR"),
        "2024-01-15T12:00:00",
        "Jan/Mon/CE",
    ),
    (
        "quoted literals and an escaped quote",
        time_settings("'it''s' yy-D '='w", D),
        "2024-02-01T00:00:00",
        "it's 24-32 =5",
    ),
    ("week year at the turn of the year", time_settings("xxxx-'W'ww-e", D), "2024-12-30T08:00:00", "2025-W01-1"),
    ("fraction of a second", time_settings("ss.SSS", 1), "2024-01-15T10:00:07.042", "07.042"),
    ("zone id", time_settings("ZZZ/z", H, "Europe/Paris"), "2024-07-01T10:00:00", "Europe/Paris/CEST"),
    ("trailing delimiter dropped", time_settings("'y'=yyyy/", D), "2024-07-01T10:00:00", "y=2024"),
]


@pytest.mark.parametrize("case, settings, moment, expected", TIME_CASES, ids=[c[0] for c in TIME_CASES])
def test_time_based_paths(case, settings, moment, expected):
    assert encode(settings, [{}], [ms(moment)]) == [expected]


@pytest.mark.parametrize(
    "kind, moment, expected",
    [
        ("DailyPartitioner", "2024-01-15T23:59:59.999", "year=2024/month=01/day=15"),
        ("HourlyPartitioner", "2024-01-15T23:59:59.999", "year=2024/month=01/day=15/hour=23"),
        (
            "io.confluent.connect.storage.partitioner.HourlyPartitioner",
            "2024-01-16T00:00:00",
            "year=2024/month=01/day=16/hour=00",
        ),
    ],
)
def test_daily_and_hourly(kind, moment, expected):
    settings = {"partitioner.class": kind, "timestamp.extractor": "Record"}
    assert encode(settings, [{}], [ms(moment)]) == [expected]


def test_daily_in_a_zone_follows_the_directory_delimiter():
    settings = {
        "partitioner.class": "DailyPartitioner",
        "timestamp.extractor": "Record",
        "timezone": "Asia/Tokyo",
        "directory.delim": "_",
    }
    assert encode(settings, [{}], [ms("2024-01-15T15:00:00")]) == ["year=2024_month=01_day=16"]


def test_a_bucket_cache_never_crosses_a_dst_change():
    # 30-minute buckets over New York's fall-back hour: local times repeat, buckets must follow them
    settings = time_settings("HH:mm", 1_800_000, "America/New_York")
    moments = ["2024-11-03T05:40:00", "2024-11-03T06:05:00", "2024-11-03T06:40:00", "2024-11-03T07:05:00"]
    assert encode(settings, [{}] * 4, [ms(m) for m in moments]) == ["01:30", "01:00", "01:30", "02:00"]


def test_consecutive_records_share_the_path_of_their_bucket():
    settings = time_settings(HOURLY, H)
    stamps = [ms("2024-01-15T10:00:00") + i * 60_000 for i in range(120)]
    paths = encode(settings, [{}] * 120, stamps)
    assert paths == ["year=2024/month=01/day=15/hour=10"] * 60 + ["year=2024/month=01/day=15/hour=11"] * 60


RECORD_FIELD = {
    **time_settings("yyyy-MM-dd'T'HH:mm", 60_000),
    "timestamp.extractor": "RecordField",
    "timestamp.field": "meta.ts",
}


@pytest.mark.parametrize(
    "value, expected",
    [
        (ms("2024-01-15T10:07:30"), "2024-01-15T10:07"),
        (str(ms("2024-01-15T10:07:30")), "2024-01-15T10:07"),
        ("2024-01-15T10:07:30Z", "2024-01-15T10:07"),
        ("2024-01-15T11:07:30.5+01:00", "2024-01-15T10:07"),
        ("2024-01-15T10:07:30", "2024-01-15T10:07"),
        ("2024-01-15", "2024-01-15T00:00"),
        (1705313250123.9, "2024-01-15T10:07"),
    ],
)
def test_record_field_timestamps(value, expected):
    assert encode(RECORD_FIELD, [{"meta": {"ts": value}}]) == [expected]


@pytest.mark.parametrize(
    "document, problem",
    [
        ({"meta": {}}, "is missing"),
        ({"other": 1}, "is missing"),
        ({"meta": {"ts": "yesterday"}}, "is not epoch milliseconds or an ISO-8601 time"),
        ({"meta": {"ts": True}}, "is not epoch milliseconds"),
        ({"meta": {"ts": None}}, "is not epoch milliseconds"),
    ],
)
def test_unreadable_timestamps_name_record_and_field(document, problem):
    with pytest.raises(FieldError) as caught:
        encode(RECORD_FIELD, [{"meta": {"ts": 0}}, document])
    assert (caught.value.topic, caught.value.partition, caught.value.offset) == ("t", 3, 101)
    assert caught.value.field == "meta.ts" and problem in str(caught.value)
    assert "record t-3@101" in str(caught.value)


@pytest.mark.parametrize("stamp", [10**20, -(10**17)])
def test_a_time_without_a_calendar_date_fails_its_record(stamp):
    with pytest.raises(FieldError, match=rf"record t-3@101: field 'meta.ts' time {stamp} ms is outside the years"):
        encode(RECORD_FIELD, [{"meta": {"ts": 0}}, {"meta": {"ts": stamp}}])


def test_missing_kafka_timestamp_fails_the_record():
    with pytest.raises(FieldError, match="record t-3@100: field 'timestamp"):
        encode(time_settings(HOURLY, H), [{}], [-1])


def test_wallclock_uses_the_planned_time_for_every_record():
    settings = {**time_settings(HOURLY, H), "timestamp.extractor": "Wallclock"}
    paths = encode(settings, [{}, {}], [ms("2020-01-01T00:00:00")] * 2, wallclock_ms=ms("2024-05-06T07:08:09"))
    assert paths == ["year=2024/month=05/day=06/hour=07"] * 2


FIELD_CASES = [
    ("string", ["region"], {"region": "us-east"}, "region=us-east"),
    ("number", ["n"], {"n": 42}, "n=42"),
    ("negative float", ["n"], {"n": -1.5}, "n=-1.5"),
    ("boolean", ["flag"], {"flag": False}, "flag=false"),
    ("null", ["region"], {"region": None}, "region=null"),
    ("nested", ["geo.country"], {"geo": {"country": "FR"}}, "geo.country=FR"),
    ("two fields", ["region", "geo.city"], {"region": "eu", "geo": {"city": "Lyon"}}, "region=eu/geo.city=Lyon"),
    ("slash escaped", ["path"], {"path": "a/b"}, "path=a%2Fb"),
    ("hive specials escaped", ["s"], {"s": "50% = x:y?#"}, "s=50%25 %3D x%3Ay%3F%23"),
    ("control characters escaped", ["s"], {"s": "a\tb\nc\x7f"}, "s=a%09b%0Ac%7F"),
    ("non-ASCII kept", ["city"], {"city": "Zürich 東京"}, "city=Zürich 東京"),
    ("empty string", ["s"], {"s": ""}, "s="),
]


@pytest.mark.parametrize("case, names, document, expected", FIELD_CASES, ids=[c[0] for c in FIELD_CASES])
def test_field_paths(case, names, document, expected):
    settings = {"partitioner.class": "FieldPartitioner", "partition.field.name": ",".join(names)}
    assert encode(settings, [document]) == [expected]


def test_field_values_escape_a_custom_directory_delimiter():
    settings = {"partitioner.class": "FieldPartitioner", "partition.field.name": "a,b", "directory.delim": "|"}
    assert encode(settings, [{"a": "x|y", "b": "z/w"}]) == ["a=x%7Cy|b=z%2Fw"]


@pytest.mark.parametrize(
    "document, problem",
    [
        ({"other": 1}, "field 'region' is missing"),
        ({"region": {"name": "x"}}, "field 'region' is a dict"),
        ({"region": ["a"]}, "field 'region' is a list"),
        ("just a string", "field 'region' is missing"),
    ],
)
def test_unusable_fields_name_record_and_field(document, problem):
    settings = {"partitioner.class": "FieldPartitioner", "partition.field.name": "region"}
    with pytest.raises(FieldError) as caught:
        encode(settings, [{"region": "ok"}, {"region": "ok"}, document])
    assert caught.value.offset == 102 and caught.value.field == "region"
    assert f"record t-3@102: {problem}" in str(caught.value)


def test_field_and_time_in_one_layout():
    settings = {
        "partitioner.class": "FieldAndTimeBasedPartitioner",
        "partition.field.name": "region",
        "path.format": "'year'=YYYY/'month'=MM/'day'=dd",
        "partition.duration.ms": D,
        "timestamp.extractor": "RecordField",
        "timestamp.field": "ts",
        "timezone": "America/Los_Angeles",
    }
    documents = [
        {"region": "us-east", "ts": ms("2024-01-15T12:00:00")},
        {"region": "eu/west", "ts": ms("2024-01-16T07:59:59.999")},
        {"region": None, "ts": ms("2024-01-16T08:00:00")},
    ]
    assert encode(settings, documents) == [
        "region=us-east/year=2024/month=01/day=15",
        "region=eu%2Fwest/year=2024/month=01/day=15",
        "region=null/year=2024/month=01/day=16",
    ]


@pytest.mark.parametrize(
    "settings, key, message",
    [
        ({"partitioner.class": "FieldPartitioner"}, "partition.field.name", "is required"),
        ({"partitioner.class": "TimeBasedPartitioner", "partition.duration.ms": H}, "path.format", "is required"),
        ({"partitioner.class": "TimeBasedPartitioner", "path.format": "yyyy"}, "partition.duration.ms", "positive"),
        (time_settings("yyyy/qq", H), "path.format", "illegal pattern component: qq"),
        (time_settings("'year=yyyy", H), "path.format", "unterminated quoted literal"),
        (time_settings("yyyy", H, "Europe/Nowhere"), "timezone", "not a known time zone"),
        (time_settings("yyyy", H, "+25:00"), "timezone", "not a valid offset"),
        (
            {"partitioner.class": "FieldAndTimeBasedPartitioner", "partition.field.name": "a"},
            "partition.duration.ms",
            "positive",
        ),
        ({"timestamp.extractor": "com.example.MyExtractor"}, "timestamp.extractor", "expected one of"),
    ],
)
def test_bad_partitioning_settings_name_the_key(settings, key, message):
    with pytest.raises(ConfigError) as caught:
        parse_checked_config({"name": "c", **BASE, **settings})
    assert caught.value.key == key and message in str(caught.value)


# Measured with Joda-Time 2.12.5 and OpenJDK 17: DateTimeFormat.forPattern("MMMM/MMM/EEEE/EEE/a")
# .withLocale(new Locale(value)) on 2024-03-05T10:00Z, as TimeBasedPartitioner builds its locale.
JAVA_LOCALES = [
    ("en", "March/Mar/Tuesday/Tue/AM"),
    ("EN", "March/Mar/Tuesday/Tue/AM"),
    ("US", "Mar/Mar/Tue/Tue/AM"),
    ("en-us", "Mar/Mar/Tue/Tue/AM"),
    ("en_US", "Mar/Mar/Tue/Tue/AM"),
    ("fr_FR", "Mar/Mar/Tue/Tue/AM"),
    ("fr-FR", "Mar/Mar/Tue/Tue/AM"),
    ("FR", "mars/mars/mardi/mar./AM"),
    ("de", "März/März/Dienstag/Di./AM"),
    ("de_DE", "Mar/Mar/Tue/Tue/AM"),
    ("in", "Maret/Mar/Selasa/Sel/AM"),
    ("zz-ZZ", "Mar/Mar/Tue/Tue/AM"),
    ("C", "Mar/Mar/Tue/Tue/AM"),
]


@pytest.mark.parametrize("value, written", JAVA_LOCALES, ids=[v for v, _ in JAVA_LOCALES])
def test_locale_is_read_as_javas_new_locale(value, written):
    # given a locale as a connector file may carry it (Java's new Locale(value) refuses none), when a record of
    # that day is partitioned, then the names are the ones the connector writes on Java 17
    assert encode(time_settings("MMMM/MMM/EEEE/EEE/a", D, "UTC", value), [{}], [ms("2024-03-05T10:00:00")]) == [written]
