"""Files are encoded as records arrive: the bytes depend only on the records, never on how they were batched."""

from __future__ import annotations

import gzip
import io
import os
import random

import fastavro
import orjson
import pyarrow.parquet as pq
import pytest

from sink_engine.convert.schema import Field, Schema
from sink_engine.errors import RecordError
from sink_engine.format.avro_format import AvroFormat
from sink_engine.format.base import FileContext
from sink_engine.format.block_gzip_format import BlockGzipFormat
from sink_engine.format.bytearray_format import ByteArrayFormat
from sink_engine.format.gzip_stream import UNIT, GzipStream
from sink_engine.format.json_format import JsonFormat
from sink_engine.format.parquet_format import ParquetFormat
from sink_engine.records import ValueColumn

CONTEXT = FileContext("events", 1, 500)
DOCUMENTS = [{"id": i, "name": f"user-{i}", "score": i * 0.5, "tags": ["x"] * (i % 3)} for i in range(3000)]
SCHEMA = Schema("struct", name="Event", fields=(Field("id", Schema("int64")), Field("name", Schema("string"))))


def json_column(documents=DOCUMENTS) -> ValueColumn:
    return ValueColumn("json", [orjson.dumps(d) for d in documents])


def struct_column() -> ValueColumn:
    items = [{"id": d["id"], "name": d["name"]} for d in DOCUMENTS]
    return ValueColumn("struct", items, items, [SCHEMA] * len(items))


def encode_in_batches(fmt, values: ValueColumn, cuts: list[int]) -> tuple[bytes, dict]:
    """Encode through one file encoder, adding the values in batches that end at `cuts`."""
    out = io.BytesIO()
    encoder = fmt.open(CONTEXT, out)
    offsets = list(range(CONTEXT.start_offset, CONTEXT.start_offset + len(values)))
    sizes = (
        [len(orjson.dumps(item)) for item in values.items]
        if values.kind == "struct"
        else [len(item) for item in values.items]
    )
    start = 0
    for stop in cuts + [len(values)]:
        if stop > start:
            encoder.write(encoder.prepare(values.slice(start, stop), offsets[start:stop]), sizes[start:stop])
            start = stop
    companions = encoder.finish()
    return out.getvalue(), companions


FORMATS = {
    "json": (JsonFormat(), json_column),
    "json-gzip": (JsonFormat("gzip"), json_column),
    "bytearray-gzip": (ByteArrayFormat(compression="gzip"), json_column),
    "blockgzip": (BlockGzipFormat(block_size=10_000), json_column),
    "parquet-json": (ParquetFormat("snappy", row_group_bytes=20_000), json_column),
    "parquet-struct": (ParquetFormat("zstd", row_group_bytes=20_000), struct_column),
    "avro-json": (AvroFormat("deflate"), json_column),
    "avro-struct": (AvroFormat("snappy"), struct_column),
}


@pytest.mark.parametrize("name", FORMATS)
def test_bytes_do_not_depend_on_how_records_were_batched(name):
    fmt, column = FORMATS[name]
    values = column()
    whole = encode_in_batches(fmt, values, [])
    for seed in range(3):
        cuts = sorted(random.Random(seed).sample(range(1, len(values)), 40))
        assert encode_in_batches(fmt, values, cuts) == whole
    assert encode_in_batches(fmt, values, list(range(1, len(values)))) == whole  # one record at a time


def test_parquet_row_groups_close_at_the_record_that_reaches_the_size():
    body, _ = encode_in_batches(ParquetFormat("snappy", row_group_bytes=10_000), struct_column(), [7, 1000])
    sizes = [len(orjson.dumps({"id": d["id"], "name": d["name"]})) for d in DOCUMENTS]
    expected_rows, rows, total = [], 0, 0
    for size in sizes:
        rows, total = rows + 1, total + size
        if total >= 10_000:
            expected_rows.append(rows)
            rows, total = 0, 0
    parquet = pq.ParquetFile(io.BytesIO(body))
    groups = [parquet.metadata.row_group(i).num_rows for i in range(parquet.num_row_groups)]
    assert groups == expected_rows + ([rows] if rows else []) and len(groups) > 5
    assert parquet.read(use_threads=False).to_pylist() == [{"id": d["id"], "name": d["name"]} for d in DOCUMENTS]


def test_schemaless_json_parquet_is_cut_into_row_groups_when_the_file_closes():
    body, _ = encode_in_batches(ParquetFormat("snappy", row_group_bytes=20_000), json_column(), [100])
    parquet = pq.ParquetFile(io.BytesIO(body))
    assert parquet.num_row_groups > 5
    assert parquet.read(use_threads=False).to_pylist() == DOCUMENTS


def test_schemaless_json_spills_to_disk_past_one_part_and_reads_back():
    fmt = AvroFormat("null", spool_bytes=4096)  # the spool leaves memory after 4 KiB
    body, _ = encode_in_batches(fmt, json_column(), [10, 2000])
    assert list(fastavro.reader(io.BytesIO(body))) == [{**d, "score": float(d["score"])} for d in DOCUMENTS]


def test_gzip_stream_matches_gzip_compress_whatever_the_writes():
    data = os.urandom(UNIT // 2) + b"repeat me " * UNIT
    out = io.BytesIO()
    stream = GzipStream(out, 6)
    position, rng = 0, random.Random(1)
    while position < len(data):
        step = rng.randint(1, UNIT // 3)
        stream.write(data[position : position + step])
        position += step
    stream.finish()
    assert out.getvalue() == gzip.compress(data, 6, mtime=0)


def test_block_gzip_index_matches_members_when_records_arrive_one_by_one():
    values = json_column()
    body, companions = encode_in_batches(BlockGzipFormat(block_size=10_000), values, list(range(1, 3000, 1)))
    chunks = orjson.loads(companions[".index.json"])["chunks"]
    assert len(chunks) > 10 and sum(c["num_records"] for c in chunks) == len(values)
    for chunk in chunks:
        member = gzip.decompress(body[chunk["byte_offset"] : chunk["byte_offset"] + chunk["byte_length"]])
        first = chunk["first_record_offset"] - CONTEXT.start_offset
        assert member == b"".join(line + b"\n" for line in values.items[first : first + chunk["num_records"]])


@pytest.mark.parametrize("fmt", [ParquetFormat(), AvroFormat()], ids=["parquet", "avro"])
@pytest.mark.parametrize(
    "bad, cause",
    [
        (b"[1,2]", "needs a JSON object value, got list"),
        (b'"text"', "needs a JSON object value, got str"),
        (b"null", "cannot share"),
    ],
)
def test_a_value_a_columnar_file_cannot_hold_is_refused_when_it_arrives(fmt, bad, cause):
    encoder = fmt.open(CONTEXT, io.BytesIO())
    encoder.write(encoder.prepare(json_column(DOCUMENTS[:2]), [500, 501]), [1, 1])
    with pytest.raises(RecordError) as caught:
        encoder.prepare(ValueColumn("json", [b'{"id": 9}', bad]), [502, 503])
    assert caught.value.offset == 503 and cause in caught.value.cause


@pytest.mark.parametrize("fmt", [ParquetFormat(), AvroFormat()], ids=["parquet", "avro"])
def test_a_tombstone_file_is_one_column_of_nulls(fmt):
    body = fmt.encode(ValueColumn("json", [b"null"] * 3), CONTEXT).body
    rows = (
        pq.read_table(io.BytesIO(body), use_threads=False).to_pylist()
        if isinstance(fmt, ParquetFormat)
        else list(fastavro.reader(io.BytesIO(body)))
    )
    assert rows == [{"value": None}] * 3
