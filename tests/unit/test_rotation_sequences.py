"""Rotation sequences: records through a TopicPartitionWriter into S3 (moto, in process) give the expected
files, record counts and next offset for each trigger, whatever the chunking."""

from __future__ import annotations

import orjson
import pytest

from sink_engine.config import parse_config
from sink_engine.records import RecordChunk, ValueColumn
from sink_engine.storage.uploader import Uploader
from tests.builders import connector_keys, range_output
from tests.s3_reader import list_keys, read_json_lines

BASE = connector_keys({"s3.region": "us-east-1", "value.converter.schemas.enable": "false"})
HOUR = 3_600_000
FIELD = {"partitioner.class": "FieldPartitioner", "partition.field.name": "r"}
HOURLY = {"partitioner.class": "HourlyPartitioner", "timestamp.extractor": "Record"}


def write(moto_s3, settings: dict, records: list[tuple[dict, int]], chunk_size: int):
    """Write (document, timestamp) records at offsets 0.. in chunks; returns (files, next offset), files as
    (encoded partition, start offset, record count) read back from S3."""
    config = parse_config({"name": "c", **BASE, **settings})
    uploader = Uploader(moto_s3, "lake")
    output = range_output(config, uploader, wallclock_ms=0)
    writer, partitioner = output.writer, output.partitioner
    for start in range(0, len(records), chunk_size):
        batch = records[start : start + chunk_size]
        values = [orjson.dumps(document) for document, _ in batch]
        chunk = RecordChunk(
            "t",
            0,
            list(range(start, start + len(batch))),
            values,
            keys=[None] * len(batch),
            timestamps=[stamp for _, stamp in batch],
        )
        column = ValueColumn("json", values, [document for document, _ in batch])
        writer.write(chunk, column, partitioner.encode(chunk, column))
    uploader.drain()
    uploader.close()
    files = []
    for key in list_keys(moto_s3, "lake", "topics/t/"):
        encoded, name = key[len("topics/t/") :].rsplit("/", 1)
        files.append((encoded, int(name.split("+")[2].split(".")[0]), len(read_json_lines(moto_s3, "lake", key))))
    return sorted(files, key=lambda f: f[1]), writer.next_offset


def regions(*names: str) -> list[tuple[dict, int]]:
    return [({"r": name}, 0) for name in names]


def hours(*values: float) -> list[tuple[dict, int]]:
    return [({}, int(h * HOUR)) for h in values]


SEQUENCES = [
    ("flush.size", {"flush.size": 3}, regions(*"aaaaaaa"), [("partition=0", 0, 3), ("partition=0", 3, 3)], 6),
    (
        "flush.size counts all open files",
        {"flush.size": 4, **FIELD},
        regions(*"ababa"),
        [("r=a", 0, 2), ("r=b", 1, 2)],
        4,
    ),
    (
        "rotate.interval.ms on record time",
        {"flush.size": 100, "rotate.interval.ms": 1000, "timestamp.extractor": "Record"},
        [({}, 0), ({}, 500), ({}, 999), ({}, 1000), ({}, 1500), ({}, 2100)],
        [("partition=0", 0, 3), ("partition=0", 3, 2)],
        5,
    ),
    (
        "rotate.interval.ms with a time partitioner rotates on partition change",
        {"flush.size": 100, "rotate.interval.ms": 10 * HOUR, **HOURLY},
        hours(10, 10.5, 11, 10.9),
        [("year=1970/month=01/day=01/hour=10", 0, 2), ("year=1970/month=01/day=01/hour=11", 2, 1)],
        3,
    ),
    # rotate.file.on.partition.change counts only with rotate.interval.ms and a time-based partitioner
    # (kafka-connect-storage-cloud TopicPartitionWriter.rotateOnTime: periodicRotation)
    (
        "rotate.file.on.partition.change without rotate.interval.ms closes nothing",
        {"flush.size": 100, "rotate.file.on.partition.change": "true", **FIELD},
        regions(*"aabab"),
        [],
        0,
    ),
    (
        "rotate.file.on.partition.change=false keeps hours out of order in one file each",
        {"flush.size": 100, "rotate.interval.ms": 10 * HOUR, "rotate.file.on.partition.change": "false", **HOURLY},
        hours(10, 11, 10, 11, 20.5),
        [("year=1970/month=01/day=01/hour=10", 0, 2), ("year=1970/month=01/day=01/hour=11", 1, 2)],
        4,
    ),
    (
        "partitioner.max.open.files",
        {"flush.size": 100, "partitioner.max.open.files": 2, **FIELD},
        regions(*"abcab"),
        [("r=a", 0, 1), ("r=b", 1, 1), ("r=c", 2, 1), ("r=a", 3, 1)],
        4,
    ),
    (
        "late data under the open-file cap",
        {"flush.size": 100, "partitioner.max.open.files": 2, **HOURLY},
        hours(10, 11, 10, 12, 10, 11),
        [
            ("year=1970/month=01/day=01/hour=10", 0, 2),
            ("year=1970/month=01/day=01/hour=11", 1, 1),
            ("year=1970/month=01/day=01/hour=12", 3, 1),
            ("year=1970/month=01/day=01/hour=10", 4, 1),
        ],
        5,
    ),
    ("no trigger: everything waits", {"flush.size": 100, **FIELD}, regions(*"abcab"), [], 0),
]


@pytest.mark.parametrize("chunk_size", [1, 2, 100])
@pytest.mark.parametrize("case, settings, records, files, next_offset", SEQUENCES, ids=[s[0] for s in SEQUENCES])
def test_rotation_sequence(moto_s3, case, settings, records, files, next_offset, chunk_size):
    assert write(moto_s3, settings, records, chunk_size) == (sorted(files, key=lambda f: f[1]), next_offset)
