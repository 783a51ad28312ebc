"""Objects go up while their files are written (multipart, one part at a time), against moto's server:
nothing appears before the file closes, the parts are the configured size, memory stays near a part,
an unwritten tail leaves no upload behind, and a crash and rerun gives the same bytes."""

from __future__ import annotations

import io
import random
import tracemalloc

import orjson
import pyarrow.parquet as pq
import pytest
from botocore.exceptions import ClientError

from devtools.producer import produce
from sink_engine.driver.job import run_job
from sink_engine.storage.object_options import ObjectOptions
from sink_engine.storage.object_stream import ObjectStream
from sink_engine.storage.uploader import Uploader
from tests.conftest import BUCKET
from tests.runs import crash_at, past_the_lease
from tests.s3_reader import list_keys, object_bodies

MIB = 1024 * 1024


def uploads_under(s3, prefix: str) -> list:
    return s3.list_multipart_uploads(Bucket=BUCKET, Prefix=prefix).get("Uploads", [])


def test_parts_go_up_while_writing_and_the_object_appears_on_finish(s3, unique):
    key = f"streamed/{unique}/object"
    uploader = Uploader(s3, BUCKET, ObjectOptions(part_size=5 * MIB))
    stream = ObjectStream(uploader, key)
    piece = bytes(range(256)) * 400  # 100 KiB
    for _ in range(120):  # 12,000 KiB: two full parts and the rest
        stream.write(piece)
    uploader.drain()
    [upload] = uploads_under(s3, key)
    parts = s3.list_parts(Bucket=BUCKET, Key=key, UploadId=upload["UploadId"])["Parts"]
    assert [p["Size"] for p in parts] == [5 * MIB, 5 * MIB]
    with pytest.raises(ClientError):
        s3.head_object(Bucket=BUCKET, Key=key)
    stream.finish()
    uploader.drain()
    uploader.close()
    assert s3.get_object(Bucket=BUCKET, Key=key)["Body"].read() == piece * 120
    assert s3.head_object(Bucket=BUCKET, Key=key, PartNumber=1)["PartsCount"] == 3
    assert uploads_under(s3, key) == []


def test_writes_of_any_size_and_buffer_type_give_the_object_as_written(s3, unique):
    """The buffered pieces are joined only when a part leaves: bytes, bytearrays and memoryviews (pyarrow's and
    fastavro's writes) of sizes around the part size end as exactly their concatenation, parts cut at 5 MiB."""
    key = f"streamed/{unique}/mixed"
    generator = random.Random(11)
    writes = []
    for size in [1, 5 * MIB - 1, 2, 5 * MIB, 0, 3 * MIB, 7 * MIB + 5, 17]:
        data = generator.randbytes(size)
        writes.append([data, bytearray(data), memoryview(data)][len(writes) % 3])
    uploader = Uploader(s3, BUCKET, ObjectOptions(part_size=5 * MIB))
    stream = ObjectStream(uploader, key)
    for data in writes:
        assert stream.write(data) == len(data)
    stream.finish()
    uploader.drain()
    uploader.close()
    expected = b"".join(bytes(w) for w in writes)
    assert stream.size == len(expected) and s3.get_object(Bucket=BUCKET, Key=key)["Body"].read() == expected
    parts = s3.head_object(Bucket=BUCKET, Key=key, PartNumber=1)
    assert parts["PartsCount"] == 5 and parts["ContentLength"] == 5 * MIB


def test_an_abandoned_object_leaves_nothing(s3, unique):
    key = f"streamed/{unique}/abandoned"
    uploader = Uploader(s3, BUCKET, ObjectOptions(part_size=5 * MIB))
    stream = ObjectStream(uploader, key)
    stream.write(b"x" * (11 * MIB))
    stream.abandon()
    uploader.drain()
    uploader.close()
    assert uploads_under(s3, key) == [] and list_keys(s3, BUCKET, key) == []


def test_memory_while_streaming_stays_near_a_few_parts(s3, unique):
    key = f"streamed/{unique}/large"
    piece = b"y" * MIB
    uploader = Uploader(s3, BUCKET, ObjectOptions(part_size=5 * MIB), threads=1)
    stream = ObjectStream(uploader, key)
    tracemalloc.start()
    for _ in range(100):  # a 100 MiB object
        stream.write(piece)
    stream.finish()
    uploader.drain()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    uploader.close()
    assert s3.head_object(Bucket=BUCKET, Key=key)["ContentLength"] == 100 * MIB
    # the part being filled, the part being queued, and the two in flight (plus the HTTP client's copies)
    assert peak < 8 * 5 * MIB, f"peak {peak / MIB:.1f} MiB"


@pytest.mark.parametrize(
    "settings, extension",
    [
        ({"format.class": "JsonFormat"}, ".json"),
        ({"format.class": "ParquetFormat", "parquet.codec": "none"}, ".parquet"),
    ],
    ids=["json", "parquet"],
)
def test_large_files_stream_and_a_rerun_after_a_crash_is_byte_identical(
    stack, new_topic, spark, s3, dynamodb, connector, settings, extension
):
    config = connector(**{"flush.size": 110, "s3.part.size": 5 * MIB, "sink.lease.duration.ms": 1500, **settings})
    topic = new_topic(config, 1)
    # 210 records of 60 kB that do not compress: one file of 110 (6.6 MB, more than a part), a tail of 100 (6 MB)
    records = [{"n": n, "blob": random.Random(n).randbytes(30_000).hex()} for n in range(210)]
    produce(stack.bootstrap_servers, topic, [orjson.dumps(r) for r in records], 1)
    prefix = f"topics/{topic}/"
    crash_at("after_upload_before_commit", config, spark, dynamodb)
    first = object_bodies(s3, BUCKET, prefix)
    s3.delete_objects(Bucket=BUCKET, Delete={"Objects": [{"Key": k} for k in first]})
    run_job(config, spark, dynamodb, clock=past_the_lease(config))  # past the dead run's lease
    [key] = list_keys(s3, BUCKET, prefix)
    assert key.endswith(extension) and object_bodies(s3, BUCKET, prefix) == first
    assert s3.head_object(Bucket=BUCKET, Key=key, PartNumber=1)["PartsCount"] == 2
    assert uploads_under(s3, prefix) == []  # the tail's started upload was aborted
    body = first[key]
    rows = (
        pq.read_table(io.BytesIO(body), use_threads=False).to_pylist()
        if extension == ".parquet"
        else [orjson.loads(line) for line in body.splitlines()]
    )
    assert rows == records[:110]
