"""Files separated by schema (`sink.schema.files=separate` under schema.compatibility=NONE): struct records of
interleaved schemas through a TopicPartitionWriter into S3 (moto, in process). Each schema's files rotate on their
own flush.size; runs cut anywhere and resumed from their commit point write the same objects as one run."""

from __future__ import annotations

import random

import pytest

from sink_engine.config import parse_config
from sink_engine.convert.schema import Field, Schema
from sink_engine.errors import ConfigError
from sink_engine.records import RecordChunk, ValueColumn
from sink_engine.storage.uploader import Uploader
from sink_engine.target.s3_objects.output import commit_point
from sink_engine.target.s3_objects.writer import TopicPartitionWriter
from sink_engine.task.settings import TaskSettings
from sink_engine.validation import parse_checked_config
from tests.builders import connector_keys, range_output
from tests.s3_reader import list_keys, object_bodies, read_json_lines

BASE = connector_keys({"s3.region": "us-east-1"})
ID = Field("id", Schema("int64"))
REGION = Field("r", Schema("string"))
A = Schema("struct", name="shop.Order", fields=(ID, REGION))
B = Schema("struct", name="shop.Refund", fields=(ID, REGION, Field("why", Schema("string", optional=True))))
C = Schema("struct", name="shop.Click", fields=(ID, REGION, Field("x", Schema("int32", optional=True))))
A2 = Schema("struct", name="shop.Order", version=2, fields=(ID, REGION, Field("n", Schema("int32", default=0))))
A1 = Schema("struct", name="shop.Order", version=1, fields=(ID, REGION))


@pytest.mark.parametrize("value, expected", [(None, "separate"), ("rotate", "rotate"), ("SEPARATE", "separate")])
def test_sink_schema_files_is_read_once_with_the_task_settings(value, expected):
    raw = {"name": "c", **BASE, "flush.size": 3, **({"sink.schema.files": value} if value else {})}
    assert TaskSettings.from_config(parse_checked_config(raw)).schema_files == expected


def test_another_sink_schema_files_is_refused_naming_the_key():
    with pytest.raises(ConfigError) as caught:
        parse_checked_config({"name": "c", **BASE, "flush.size": 3, "sink.schema.files": "per-schema"})
    assert caught.value.key == "sink.schema.files" and "separate" in str(caught.value)


def record(offset: int, schema: Schema, region: str = "eu") -> tuple[dict, Schema, int]:
    value = {field.name: None for field in schema.fields}
    value.update(id=offset, r=region)
    if "n" in value:
        value["n"] = 0
    return value, schema, offset * 1000


def run(
    moto_s3,
    settings: dict,
    records: list,
    start: int,
    end: int,
    chunk_size: int,
    bucket: str = "lake",
    mode: str = "none",
    files: str = "separate",
) -> tuple[int, TopicPartitionWriter]:
    """One run's range [start, end) of `records` (offset = position) in chunks, ended as task/run.py ends it:
    returns its commit point and the writer, its open files abandoned and its uploads drained."""
    config = parse_config({"name": "c", **BASE, **settings, "schema.compatibility": mode, "sink.schema.files": files})
    uploader = Uploader(moto_s3, bucket)
    output = range_output(config, uploader, start=start, wallclock_ms=0)
    writer, partitioner = output.writer, output.partitioner
    processed = start
    for first in range(start, end, chunk_size):
        batch = records[first : min(end, first + chunk_size)]
        offsets = list(range(first, first + len(batch)))
        chunk = RecordChunk(
            "t", 0, offsets, [b"v"] * len(batch), keys=[None] * len(batch), timestamps=[stamp for _, _, stamp in batch]
        )
        items = [value for value, _, _ in batch]
        column = ValueColumn("struct", items, items, [schema for _, schema, _ in batch])
        writer.write(chunk, column, partitioner.encode(chunk, column))
        processed = offsets[-1] + 1
    commit = commit_point(writer, processed)
    writer.abandon_open()
    uploader.drain()
    uploader.close()
    return commit, writer


def landed(moto_s3, bucket: str = "lake") -> list[tuple[str, list[int]]]:
    """(key, record ids) of every object, in key order."""
    return [
        (key, [value["id"] for value in read_json_lines(moto_s3, bucket, key)])
        for key in list_keys(moto_s3, bucket, "topics/t/")
    ]


def interleaved(pattern: list[Schema], count: int) -> list:
    return [record(i, pattern[i % len(pattern)]) for i in range(count)]


def name(offset: int, encoded: str = "partition=0") -> str:
    return f"topics/t/{encoded}/t+0+{offset:010d}.json"


@pytest.mark.parametrize("chunk_size", [1, 2, 5, 100])
def test_three_interleaved_schemas_fill_their_own_files(moto_s3, chunk_size):
    # given three event types interleaved, flush.size 3
    records = interleaved([A, B, C], 10)
    # when they are written in chunks of any size
    commit, writer = run(moto_s3, {"flush.size": 3}, records, 0, 10, chunk_size)
    # then each schema's file holds three records of its own, closed when its third record came
    assert landed(moto_s3) == [(name(0), [0, 3, 6]), (name(1), [1, 4, 7]), (name(2), [2, 5, 8])]
    assert [f.start_offset for f in writer.closed] == [0, 1, 2]
    # and the commit point is where no file was open: after 8, record 9 opened a file of A
    assert commit == 9


def test_rotate_keeps_the_connectors_file_boundaries(moto_s3):
    records = interleaved([A, B, C], 7)
    commit, _ = run(moto_s3, {"flush.size": 3}, records, 0, 7, 4, files="rotate")
    assert landed(moto_s3) == [(name(i), [i]) for i in range(6)]
    assert commit == 6


def test_thecommit_point_is_the_last_offset_at_which_no_file_was_open(moto_s3):
    # given A's file [0, 2, 4] closed while B's [1, 3] stays open
    records = interleaved([A, B], 6)
    commit, writer = run(moto_s3, {"flush.size": 3}, records, 0, 5, 5)
    assert landed(moto_s3) == [(name(0), [0, 2, 4])]
    # then the next run starts at 0 (it writes A's file again, the same), not at B's file's first offset
    assert writer.first_open_offset is None and commit == 0


def test_a_version_rollout_goes_to_separate_files(moto_s3):
    # given producers moving from v1 to v2 of one record, both writing for a while
    records = [record(i, A1 if i < 4 or i in (5, 7) else A2) for i in range(12)]
    commit, _ = run(moto_s3, {"flush.size": 4}, records, 0, 12, 3)
    # then v2's file fills while v1's stays open
    assert landed(moto_s3) == [(name(0), [0, 1, 2, 3]), (name(4), [4, 6, 8, 9])]
    # and the next run starts where no file was open: at 4, writing v2's closed file again
    assert commit == 4


def test_the_open_file_cap_closes_every_lane(moto_s3):
    # given at most two open files and three schemas
    records = interleaved([A, B, C], 6)
    commit, _ = run(moto_s3, {"flush.size": 10, "partitioner.max.open.files": 2}, records, 0, 6, 6)
    # then C's first record closes A's and B's files, B's next one closes C's and A's
    assert landed(moto_s3) == [(name(0), [0]), (name(1), [1]), (name(2), [2]), (name(3), [3])]
    assert commit == 4


# A time-based partitioner with rotate.interval.ms (which turns rotate.file.on.partition.change on) and a field
# segment first: records of one time bucket whose encoded partitions change with the field.
FIELD_TIME = {
    "partitioner.class": "io.confluent.connect.storage.partitioner.FieldAndTimeBasedPartitioner",
    "partition.field.name": "r",
    "path.format": "'year'=YYYY",
    "partition.duration.ms": 3_600_000,
    "timestamp.extractor": "Record",
    "rotate.interval.ms": 3_600_000,
}
EU, US = "r=eu/year=1970", "r=us/year=1970"


def test_a_partition_change_closes_every_lane(moto_s3):
    # given a time-based partitioner under rotate.interval.ms, whose encoded partitions change with a field
    regions = ["eu", "eu", "us", "eu", "us", "eu"]
    records = [record(i, [A, B][i % 2], regions[i]) for i in range(6)]
    commit, _ = run(moto_s3, {"flush.size": 10, **FIELD_TIME}, records, 0, 6, 6)
    # then a record in another partition than the previous record's closes every file, as with one schema
    assert landed(moto_s3) == [
        (name(0, EU), [0]),
        (name(1, EU), [1]),
        (name(3, EU), [3]),
        (name(2, US), [2]),
        (name(4, US), [4]),
    ]
    assert commit == 5


def test_a_span_bound_closes_a_rare_schemas_file(moto_s3):
    # given a schema seen once among many records of another, flush.size 5
    records = [record(i, B if i == 3 else A) for i in range(40)]
    commit, _ = run(moto_s3, {"flush.size": 5}, records, 0, 40, 7)
    # then B's lone record is closed, with A's open file, once 2 x 5 x 2 lanes records were taken since no file
    # was open (before record 20), and A alone fills its files from there
    assert landed(moto_s3) == [
        (name(0), [0, 1, 2, 4, 5]),
        (name(3), [3]),
        (name(6), [6, 7, 8, 9, 10]),
        (name(11), [11, 12, 13, 14, 15]),
        (name(16), [16, 17, 18, 19]),
        (name(20), [20, 21, 22, 23, 24]),
        (name(25), [25, 26, 27, 28, 29]),
        (name(30), [30, 31, 32, 33, 34]),
        (name(35), [35, 36, 37, 38, 39]),
    ]
    assert commit == 40


def test_backward_still_projects_and_closes_on_a_newer_version(moto_s3):
    records = [record(0, A1), record(1, A2), record(2, A1), record(3, A2)]
    run(moto_s3, {"flush.size": 10}, records, 0, 4, 4, mode="backward")
    assert landed(moto_s3) == [(name(0), [0])]  # v2 at 1 closed v1's file; v1 at 2 is projected into v2's open file


def rollout(count: int) -> list:
    rng = random.Random(7)
    return [record(i, A1 if rng.random() < max(0.0, 1 - i / count * 1.5) else A2) for i in range(count)]


SEQUENCES = [  # (name, settings, records, range sizes: more than the span bound, 2 x flush.size x lanes)
    ("three schemas round-robin", {"flush.size": 4}, interleaved([A, B, C], 60), [25, 31, 40]),
    (
        "three schemas at random",
        {"flush.size": 4},
        [record(i, random.Random(i).choice([A, B, B, C])) for i in range(80)],
        [25, 33],
    ),
    ("a version rollout", {"flush.size": 5}, rollout(70), [21, 27]),
    (
        "fields, a cap and partition changes",
        {"flush.size": 3, **FIELD_TIME, "rotate.interval.ms": 10**9, "partitioner.max.open.files": 3},
        [record(i, [A, B][i % 3 == 0], ["eu", "us"][i % 5 < 2]) for i in range(60)],
        [7, 13],
    ),
    (
        "record time rotation",
        {"flush.size": 50, "rotate.interval.ms": 6000, "timestamp.extractor": "Record"},
        interleaved([A, B, C, C], 60),
        [7, 13, 29],
    ),
]


@pytest.mark.parametrize(
    "settings, records, range_size",
    [(s[1], s[2], size) for s in SEQUENCES for size in s[3]],
    ids=[f"{s[0]}, ranges of {size}" for s in SEQUENCES for size in s[3]],
)
def test_runs_resumed_from_theircommit_point_write_what_one_run_writes(moto_s3, settings, records, range_size):
    # given one run over every record, into a bucket of its own
    moto_s3.create_bucket(Bucket="whole")
    run(moto_s3, settings, records, 0, len(records), 11, bucket="whole")
    whole = object_bodies(moto_s3, "whole", "topics/t/")
    # when runs of `range_size` records each start at the previous run's commit point
    start, end = 0, 0
    while end < len(records):
        before = object_bodies(moto_s3, "lake", "topics/t/")
        end = min(len(records), start + range_size)
        commit, _ = run(moto_s3, settings, records, start, end, 5)
        # then each run commits further, and the objects it writes again have the same bytes
        assert start < commit or end == len(records)
        after = object_bodies(moto_s3, "lake", "topics/t/")
        assert {key: after[key] for key in before} == before
        start = commit
    # and together they write the objects one run writes, every record once
    assert object_bodies(moto_s3, "lake", "topics/t/") == whole
    ids = [i for _, found in landed(moto_s3) for i in found]
    assert len(ids) == len(set(ids)) and len(whole) > 3
