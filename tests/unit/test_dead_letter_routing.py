"""The task's routing of bad records, over a real writer and uploader on in-process moto S3: every good
record is written once and in order, every bad one reported once, however the bad ones cluster."""

from __future__ import annotations

import json
import logging

import pytest

from sink_engine.config import parse_config
from sink_engine.convert import ConverterSettings, converter_for
from sink_engine.dlq.router import DeadLetterRouter
from sink_engine.dlq.settings import DeadLetterSettings
from sink_engine.errors import ConversionError
from sink_engine.partition import PartitionSettings, partitioner_for
from sink_engine.records import RecordChunk
from sink_engine.storage.uploader import Uploader
from sink_engine.target.s3_objects.writer import TopicPartitionWriter
from sink_engine.task.steps import RecordSteps, write_chunk
from tests.builders import connector_keys, range_output

BASE = connector_keys({"s3.region": "us-east-1", "flush.size": 100, "value.converter.schemas.enable": "false"})


def pipeline(moto_s3, config) -> tuple[Uploader, TopicPartitionWriter, DeadLetterRouter, RecordSteps]:
    """The task's parts for topic-partition t-0, writing into the lake bucket."""
    uploader = Uploader(moto_s3, "lake")
    writer = range_output(config, uploader).writer
    router = DeadLetterRouter(DeadLetterSettings.from_config(config), None)
    steps = RecordSteps(
        config["behavior.on.null.values"],
        converter_for(ConverterSettings.from_config(config), "t"),
        partitioner_for(PartitionSettings.from_config(config)),
    )
    return uploader, writer, router, steps


def route(moto_s3, config, chunk: RecordChunk) -> tuple[list[int], DeadLetterRouter, TopicPartitionWriter]:
    uploader, writer, router, steps = pipeline(moto_s3, config)
    try:
        write_chunk(writer, steps, chunk, router)
    finally:
        uploader.drain()
        uploader.close()
    written = [
        json.loads(line)["n"]
        for f in writer.closed
        for line in moto_s3.get_object(Bucket="lake", Key=f.key)["Body"].read().splitlines()
    ]
    return written, router, writer


def chunk_of(bad: set[int], count: int) -> RecordChunk:
    values = [b"{cut" if i in bad else json.dumps({"n": i}).encode() for i in range(count)]
    return RecordChunk("t", 0, list(range(count)), values, keys=[b"k"] * count, timestamps=[0] * count)


@pytest.mark.parametrize(
    "bad",
    [
        set(),
        {0},
        {999},
        set(range(0, 1000, 7)),
        set(range(300, 700)),
        {i for i in range(1000) if i % 10 != 3},
    ],
    ids=["none", "first", "last", "every-7th", "a-block", "nine-in-ten"],
)
def test_good_records_are_written_once_in_order_and_bad_ones_reported_once(moto_s3, bad):
    config = parse_config({"name": "c", **BASE, "errors.tolerance": "all"})
    written, router, writer = route(moto_s3, config, chunk_of(bad, 1000))
    good = [i for i in range(1000) if i not in bad]
    closed = len(good) // 100 * 100
    assert written == good[:closed]
    counts, _ = router.flush(1000)
    assert counts == ({"ConversionError": len(bad)} if bad else {})
    assert writer.first_open_offset == (good[closed] if closed < len(good) else None)


def test_tolerance_none_stops_at_the_first_bad_record_and_logs_it(moto_s3, caplog):
    config = parse_config(
        {"name": "c", **BASE, "flush.size": 2, "errors.log.enable": "true", "errors.log.include.messages": "true"}
    )
    caplog.set_level(logging.INFO, logger="sink_engine")
    with pytest.raises(ConversionError, match=r"record t-0@5: value is not valid JSON"):
        route(moto_s3, config, chunk_of({5, 8}, 10))
    events = [json.loads(r.getMessage()) for r in caplog.records if "RECORD_FAILED" in r.getMessage()]
    assert [(e["offset"], e["error_class"], e["stage"], e["tolerated"], e["value"]) for e in events] == [
        (5, "ConversionError", "VALUE_CONVERTER", False, "e2N1dA==")
    ]


def test_values_parquet_cannot_hold_are_reported_once_across_interleaved_files(moto_s3):
    import io

    import pyarrow.parquet as pq

    config = parse_config(
        {
            "name": "c",
            **BASE,
            "flush.size": 1000,
            "format.class": "ParquetFormat",
            "errors.tolerance": "all",
            "partitioner.class": "TimeBasedPartitioner",
            "partition.duration.ms": 3_600_000,
            "path.format": "'h'=HH",
            "timestamp.extractor": "Record",
        }
    )
    bad = {0, 1, 9, 20}  # the first records of both files, and two more
    values = [b"[1]" if i in bad else json.dumps({"n": i}).encode() for i in range(40)]
    chunk = RecordChunk(
        "t", 0, list(range(40)), values, keys=[b"k"] * 40, timestamps=[(i % 2) * 3_600_000 for i in range(40)]
    )  # two files, records alternating
    uploader, writer, router, steps = pipeline(moto_s3, config)
    write_chunk(writer, steps, chunk, router)
    writer.close_all(40)
    uploader.drain()
    uploader.close()
    files = {
        f.key: [
            row["n"]
            for row in pq.read_table(
                io.BytesIO(moto_s3.get_object(Bucket="lake", Key=f.key)["Body"].read()), use_threads=False
            ).to_pylist()
        ]
        for f in writer.closed
    }
    assert sorted(n for rows in files.values() for n in rows) == [i for i in range(40) if i not in bad]
    for key, rows in files.items():  # each file is named after its first record, in order
        assert rows == sorted(rows) and key.endswith(f"+{rows[0]:010d}.snappy.parquet")
    assert router.flush(40)[0] == {"FormatError": 4}
