"""Partitioners and rotation end to end (real broker, moto's server, local Spark): layouts, exactly once
across a crash for each partitioner and for wall-clock rotation, tombstones, bad partitioning fields."""

from __future__ import annotations

from datetime import datetime
from zoneinfo import ZoneInfo

import orjson
import pytest

from devtools.producer import REGIONS, produce
from sink_engine.driver.job import TaskFailedError, run_job
from tests.conftest import BUCKET
from tests.runs import committed_offsets, crash_at
from tests.s3_reader import landed_by_key, object_bodies

BASE_MS = 1_705_276_800_000  # 2024-01-15T00:00:00Z
STEP_MS = 23 * 60_000  # events 23 minutes apart cross hours and days


def event(i: int) -> dict:
    return {"id": i, "region": REGIONS[i % 3], "meta": {"at": BASE_MS + i * STEP_MS}}


def produce_events(stack, topic: str, first: int, count: int, partitions: int) -> None:
    produce(stack.bootstrap_servers, topic, [orjson.dumps(event(i)) for i in range(first, first + count)], partitions)


def local(e: dict, zone: str) -> datetime:
    return datetime.fromtimestamp(e["meta"]["at"] / 1000, ZoneInfo(zone))


# partitioner settings, and the encoded partition each event must land under (computed independently)
LAYOUTS = {
    "field": (
        {"partitioner.class": "FieldPartitioner", "partition.field.name": "region"},
        lambda e: f"region={e['region']}",
    ),
    "time": (
        {
            "partitioner.class": "TimeBasedPartitioner",
            "path.format": "'dt'=yyyy-MM-dd/'h6'=HH",
            "partition.duration.ms": 6 * 3_600_000,
            "timezone": "Europe/Paris",
            "locale": "en-US",
            "timestamp.extractor": "RecordField",
            "timestamp.field": "meta.at",
        },
        lambda e: f"dt={local(e, 'Europe/Paris'):%Y-%m-%d}/h6={local(e, 'Europe/Paris').hour // 6 * 6:02d}",
    ),
    "daily": (
        {
            "partitioner.class": "io.confluent.connect.storage.partitioner.DailyPartitioner",
            "timezone": "America/New_York",
            "timestamp.extractor": "RecordField",
            "timestamp.field": "meta.at",
        },
        lambda e: f"year={local(e, 'America/New_York'):%Y/month=%m/day=%d}",
    ),
    "hourly": (
        {"partitioner.class": "HourlyPartitioner", "timestamp.extractor": "RecordField", "timestamp.field": "meta.at"},
        lambda e: f"year={local(e, 'UTC'):%Y/month=%m/day=%d/hour=%H}",
    ),
    "field and time": (
        {
            "partitioner.class": "FieldAndTimeBasedPartitioner",
            "partition.field.name": "region",
            "path.format": "'year'=YYYY/'month'=MM/'day'=dd",
            "partition.duration.ms": 86_400_000,
            "timezone": "UTC",
            "timestamp.extractor": "RecordField",
            "timestamp.field": "meta.at",
        },
        lambda e: f"region={e['region']}/year={local(e, 'UTC'):%Y/month=%m/day=%d}",
    ),
}


@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_crash_then_rerun_gives_each_record_once_in_its_partition(
    stack, new_topic, spark, s3, dynamodb, connector, layout
):
    settings, expected_path = LAYOUTS[layout]
    config = connector(**{"flush.size": 7, "sink.lease.duration.ms": 1000, **settings})
    topic = new_topic(config, 2)
    produce_events(stack, topic, 0, 60, 2)
    # given a run that dies after its uploads and before any commit
    crash_at("after_upload_before_commit", config, spark, dynamodb)
    crashed = object_bodies(s3, BUCKET, f"topics/{topic}/")
    assert crashed and committed_offsets(dynamodb, config) == {}
    # when more records arrive and the job runs again after the dead run's lease lapsed
    produce_events(stack, topic, 60, 30, 2)
    clock = _after_lease(config)
    run_job(config, spark, dynamodb, clock=clock)
    # then the crashed objects were rewritten byte for byte, every record is there once, under its partition
    after = landed_by_key(s3, topic)
    assert {k: object_bodies(s3, BUCKET, k)[k] for k in crashed} == crashed
    ids = sorted(e["id"] for records in after.values() for e in records)
    assert ids == sorted(set(ids)) and len(ids) == sum(committed_offsets(dynamodb, config).values())
    assert set(range(84)) <= set(ids)  # 42 per partition: six flushes of 7
    for key, records in after.items():
        encoded = key[len(f"topics/{topic}/") :].rsplit("/", 1)[0]
        assert {expected_path(e) for e in records} == {encoded}, key


def test_scheduled_rotation_cuts_once_and_a_rerun_repeats_the_cut(stack, new_topic, spark, s3, dynamodb, connector):
    # hourly wall-clock paths and hourly scheduled rotation; the clock is the test's
    config = connector(
        **{
            "flush.size": 1000,
            "rotate.schedule.interval.ms": 3_600_000,
            "partitioner.class": "HourlyPartitioner",
            "timestamp.extractor": "Wallclock",
            "sink.lease.duration.ms": 1000,
        }
    )
    topic = new_topic(config, 2)
    produce_events(stack, topic, 0, 20, 2)
    now = [BASE_MS + 10 * 3_600_000 + 3_599_000]  # 10:59:59 UTC
    clock = lambda: now[0]  # noqa: E731
    # given a first run (never committed: the cut is due) that dies after uploading
    crash_at("after_upload_before_commit", config, spark, dynamodb, clock=clock)
    crashed = object_bodies(s3, BUCKET, f"topics/{topic}/")
    hour_10 = f"topics/{topic}/year=2024/month=01/day=15/hour=10"
    assert sorted(crashed) == [f"{hour_10}/{topic}+{p}+0000000000.json" for p in (0, 1)]
    # when records keep arriving and the job reruns at 11:00:01, past the lease and into the next hour
    produce_events(stack, topic, 20, 10, 2)
    now[0] += 2000
    run_job(config, spark, dynamodb, clock=clock)
    # then the rerun repeated the recorded cut: same keys, same bytes, same offsets, the new records wait
    assert object_bodies(s3, BUCKET, f"topics/{topic}/") == crashed
    assert committed_offsets(dynamodb, config) == {0: 10, 1: 10}
    # and a run before the next boundary leaves the waiting records alone
    now[0] += 30 * 60_000
    assert run_job(config, spark, dynamodb, clock=clock).files == []
    # and once the boundary has passed, the idle partitions' records land (under wall-clock hour 12)
    now[0] += 30 * 60_000
    run_job(config, spark, dynamodb, clock=clock)
    after = landed_by_key(s3, topic)
    assert sorted(e["id"] for records in after.values() for e in records) == list(range(30))
    assert sorted(k for k in after if k not in crashed) == [
        f"topics/{topic}/year=2024/month=01/day=15/hour=12/{topic}+{p}+0000000010.json" for p in (0, 1)
    ]
    assert committed_offsets(dynamodb, config) == {0: 15, 1: 15}


def test_tombstones_written_under_the_tombstone_partition(stack, new_topic, spark, s3, dynamodb, connector):
    config = connector(
        **{"flush.size": 4, "behavior.on.null.values": "write", "tombstone.encoded.partition": "deleted"}
    )
    topic = new_topic(config, 1)
    values = [b'{"n":0}', b'{"n":1}', None, b'{"n":3}', None, b'{"n":5}', b'{"n":6}', b'{"n":7}', None]
    produce(stack.bootstrap_servers, topic, values, 1)
    run_job(config, spark, dynamodb)
    assert {k.split("/", 2)[2]: v for k, v in landed_by_key(s3, topic).items()} == {
        f"partition=0/{topic}+0+0000000000.json": [{"n": 0}, {"n": 1}, {"n": 3}],
        f"deleted/{topic}+0+0000000002.json": [None],
        f"deleted/{topic}+0+0000000004.json": [None],
        f"partition=0/{topic}+0+0000000005.json": [{"n": 5}, {"n": 6}, {"n": 7}],
    }
    assert committed_offsets(dynamodb, config) == {0: 8}


def test_a_missing_partition_field_fails_the_run_naming_it(stack, new_topic, spark, s3, dynamodb, connector):
    config = connector(
        **{"flush.size": 2, "partitioner.class": "FieldPartitioner", "partition.field.name": "geo.country"}
    )
    topic = new_topic(config, 1)
    values = [orjson.dumps({"geo": {"country": c}}) for c in ("FR", "DE", "FR")] + [b'{"geo": {}}', b"{}"]
    produce(stack.bootstrap_servers, topic, values, 1)
    with pytest.raises(TaskFailedError, match=rf"record {topic}-0@3: field 'geo.country' is missing"):
        run_job(config, spark, dynamodb)
    assert committed_offsets(dynamodb, config) == {0: 2}
    assert sorted(landed_by_key(s3, topic)) == [
        f"topics/{topic}/geo.country={c}/{topic}+0+000000000{o}.json" for c, o in (("DE", 1), ("FR", 0))
    ]


def _after_lease(config):
    """A clock that reads past the crashed run's lease, so that the rerun need not sleep."""
    import time

    skew = config["sink.lease.duration.ms"] + 1000
    return lambda: int(time.time() * 1000) + skew


ROTATIONS = {
    # events 23 minutes apart: an hour of record time from a file's first record holds three of them
    "rotate.interval.ms": (
        {"rotate.interval.ms": 3_600_000, "timestamp.extractor": "RecordField", "timestamp.field": "meta.at"},
        {"partition=0": [[0, 1, 2], [3, 4, 5], [6, 7, 8]]},
        9,
    ),
    # regions cycle us-east, us-west, eu-central: a cap of two open files cuts before every third record
    "partitioner.max.open.files": (
        {"partitioner.class": "FieldPartitioner", "partition.field.name": "region", "partitioner.max.open.files": 2},
        {"region=us-east": [[0], [3], [6]], "region=us-west": [[1], [4], [7]], "region=eu-central": [[2], [5]]},
        8,
    ),
}


@pytest.mark.parametrize("trigger", list(ROTATIONS))
def test_rotation_triggers_end_to_end(stack, new_topic, spark, s3, dynamodb, connector, trigger):
    settings, expected, next_offset = ROTATIONS[trigger]
    config = connector(**{"flush.size": 1000, **settings})
    topic = new_topic(config, 1)
    produce_events(stack, topic, 0, 10, 1)
    run_job(config, spark, dynamodb)
    files: dict[str, list] = {}
    for key, records in landed_by_key(s3, topic).items():  # keys sort by start offset within an encoded partition
        files.setdefault(key.split("/")[2], []).append([e["id"] for e in records])
        assert key.endswith(f"+{records[0]['id']:010d}.json")
    assert files == expected
    assert committed_offsets(dynamodb, config) == {0: next_offset}
