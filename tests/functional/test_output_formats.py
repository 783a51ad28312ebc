"""Every output format end to end (real broker, moto's server, local Spark): read back record for record by
an independent reader, and byte-identical objects after a crash and a rerun."""

from __future__ import annotations

import gzip
import io

import boto3
import fastavro
import orjson
import pyarrow.parquet as pq
import pytest

from devtools.producer import sample_event
from sink_engine import cli
from sink_engine.driver.job import run_job
from sink_engine.format.block_gzip_reader import read_chunk_at
from tests.conftest import BUCKET
from tests.functional.test_exactly_once import _raw
from tests.runs import rewritten_after_crash

FORMATS = {
    "json-gzip": ({"format.class": "JsonFormat", "s3.compression.type": "gzip"}, ".json.gz"),
    "parquet-snappy": ({"format.class": "io.confluent.connect.s3.format.parquet.ParquetFormat"}, ".snappy.parquet"),
    "avro-deflate": (
        {"format.class": "io.confluent.connect.s3.format.avro.AvroFormat", "avro.codec": "deflate"},
        ".avro",
    ),
    "bytearray": ({"format.class": "ByteArrayFormat", "format.bytearray.separator": "\\r\\n"}, ".bin"),
    "blockgzip": ({"format.class": "BlockGzipFormat", "format.blockgzip.block.size": 400}, ".json.gz"),
}


def read_back(body: bytes, extension: str) -> list:
    """The records of one object, read with the format's standard reader."""
    if extension.endswith(".parquet"):
        return pq.read_table(io.BytesIO(body), use_threads=False).to_pylist()
    if extension == ".avro":
        return list(fastavro.reader(io.BytesIO(body)))
    if extension == ".bin":
        return [orjson.loads(v) for v in body.split(b"\r\n")[:-1]]
    return [orjson.loads(line) for line in gzip.decompress(body).splitlines()]


@pytest.mark.parametrize("name", FORMATS)
def test_format_reads_back_and_rerun_after_crash_is_byte_identical(new_topic, spark, s3, dynamodb, connector, name):
    overrides, extension = FORMATS[name]
    config = connector(**{"flush.size": 20, "sink.lease.duration.ms": 1500, **overrides})
    topic = new_topic(config, 2, events=90)
    # given a run that dies after its uploads, before any commit; when its objects are gone and the job runs again
    # once the dead run's lease has lapsed
    crashed, after = rewritten_after_crash(config, spark, dynamodb, s3, f"topics/{topic}/")
    # then every object was written again byte for byte
    assert after == crashed
    data_keys = [k for k in after if not k.endswith(".index.json")]
    assert sorted(data_keys) == sorted(
        f"topics/{topic}/partition={p}/{topic}+{p}+{s:010d}{extension}" for p in (0, 1) for s in (0, 20)
    )
    # and each file holds its records in offset order, read back by an independent reader
    for key in data_keys:
        partition, start = int(key.split("+")[1]), int(key.split("+")[2][:10])
        expected = [sample_event(2 * offset + partition) for offset in range(start, start + 20)]
        assert read_back(after[key], extension) == expected, key


def test_block_gzip_record_by_offset_with_one_ranged_get(new_topic, spark, s3, dynamodb, connector, tmp_path, capsys):
    config = connector(**{"flush.size": 30, "format.class": "BlockGzipFormat", "format.blockgzip.block.size": 500})
    topic = new_topic(config, 1, events=30)
    run_job(config, spark, dynamodb)
    key = f"topics/{topic}/partition=0/{topic}+0+0000000000.json.gz"
    index = orjson.loads(s3.get_object(Bucket=BUCKET, Key=key[:-8] + ".index.json")["Body"].read())["chunks"]
    assert len(index) > 2
    # when a reader asks for offset 17 through a client that records its requests
    client, gets = boto3.client("s3"), []
    client.meta.events.register("before-call.s3.GetObject", lambda params, **kw: gets.append(params))
    chunk = read_chunk_at(client, BUCKET, key, 17)
    # then it fetched the index and one byte range: the member holding 17, and only it
    assert chunk.entry["first_record_offset"] <= 17 <= chunk.entry["last_record_offset"]
    ranged = [g for g in gets if "Range" in g["headers"]]
    assert len(gets) == 2 and len(ranged) == 1
    assert orjson.loads(chunk.record(17)) == sample_event(17)
    assert [orjson.loads(line) for line in chunk.lines] == [
        sample_event(o) for o in range(chunk.entry["first_record_offset"], chunk.entry["last_record_offset"] + 1)
    ]
    # and the CLI prints that record
    config_file = tmp_path / "c.json"
    config_file.write_text(orjson.dumps({"name": config.name, "config": _raw(config)}).decode())
    assert cli.main(["read", "--config", str(config_file), "--key", key, "--offset", "17"]) == 0
    assert orjson.loads(capsys.readouterr().out) == sample_event(17)
