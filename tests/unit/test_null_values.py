"""`behavior.on.null.values` decided in one place (task/null_values.py), for tombstones read from Kafka: what the
record steps make of a chunk with null values, and what a writer then gets."""

from __future__ import annotations

import json

import pytest

from sink_engine.config import parse_config
from sink_engine.convert import ConverterSettings, converter_for
from sink_engine.errors import NullValueError
from sink_engine.partition import PartitionSettings, partitioner_for
from sink_engine.records import PreparedRecords, RecordChunk, Transformed
from sink_engine.task.bad_records import StepFailed
from sink_engine.task.record_writer import RecordWriter
from sink_engine.task.steps import RecordSteps, write_chunk
from tests.unit.test_bad_records import Router

CONFIG = parse_config(
    {
        "name": "c",
        "topics": "t",
        "bootstrap.servers": "k:9092",
        "s3.bucket.name": "lake",
        "flush.size": 10,
        "format.class": "JsonFormat",
        "value.converter.schemas.enable": "false",
    }
)
NULLS = {1, 2, 5}


class Recorded(RecordWriter):
    def __init__(self):
        self.last_added_offset, self.closed, self.calls = -1, [], []

    def write(self, chunk, values, partitions):
        self.calls.append(("records", list(chunk.offsets)))
        self.last_added_offset = chunk.offsets[-1]

    def write_tombstones(self, chunk, routed=None, sidecars=None):
        self.calls.append(("tombstones", list(chunk.offsets)))


def steps(behavior: str) -> RecordSteps:
    return RecordSteps(
        behavior,
        converter_for(ConverterSettings.from_config(CONFIG), "t"),
        partitioner_for(PartitionSettings.from_config(CONFIG)),
    )


def chunk() -> RecordChunk:
    values = [None if i in NULLS else json.dumps({"n": i}).encode() for i in range(7)]
    return RecordChunk("t", 0, list(range(7)), values, keys=[None] * 7, timestamps=[0] * 7)


def test_ignored_nulls_leave_one_part_of_the_other_records():
    prepared = steps("ignore").prepare(chunk())
    assert isinstance(prepared, PreparedRecords) and prepared.records.offsets == [0, 3, 4, 6]


def test_written_nulls_keep_their_place_among_the_records():
    prepared = steps("write").prepare(chunk())
    assert isinstance(prepared, Transformed) and prepared.dropped == []
    assert [list(part.records.offsets) for part in prepared.parts] == [[0], [1, 2], [3, 4], [5], [6]]
    writer = Recorded()
    write_chunk(writer, steps("write"), chunk(), Router(tolerates=False))
    assert writer.calls == [
        ("records", [0]),
        ("tombstones", [1, 2]),
        ("records", [3, 4]),
        ("tombstones", [5]),
        ("records", [6]),
    ]


def test_a_failed_null_is_a_bad_record_of_the_one_path():
    with pytest.raises(StepFailed) as failed:
        steps("fail").prepare(chunk())
    assert isinstance(failed.value.error, NullValueError) and failed.value.error.offset == 1
    assert failed.value.stage == "TASK_PUT" and "(tombstone)" in failed.value.error.cause
    writer, router = Recorded(), Router(tolerates=True)
    write_chunk(writer, steps("fail"), chunk(), router)
    assert [offset for _, offsets in writer.calls for offset in offsets] == [0, 3, 4, 6]
    assert router.reported == [(offset, "NullValueError", "TASK_PUT") for offset in sorted(NULLS)]
