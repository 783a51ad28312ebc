"""Every output format and codec, read back by an independent reader, and byte-identical on a re-encode."""

from __future__ import annotations

import gzip
import io

import duckdb
import fastavro
import orjson
import pyarrow.parquet as pq
import pytest

from sink_engine.errors import RecordError
from sink_engine.format.avro_format import CODECS as AVRO_CODECS
from sink_engine.format.avro_format import AvroFormat
from sink_engine.format.base import FileContext
from sink_engine.format.block_gzip_format import BlockGzipFormat
from sink_engine.format.bytearray_format import ByteArrayFormat, unescape
from sink_engine.format.parquet_format import CODECS as PARQUET_CODECS
from sink_engine.format.parquet_format import ParquetFormat
from sink_engine.records import ValueColumn

EVENTS = [
    {
        "id": i,
        "kind": ["click", "view"][i % 2],
        "price": i * 1.5,
        "tags": ["a", "b"][: i % 3],
        "user": {"name": f"u{i}", "age": None if i % 4 else 30},
    }
    for i in range(40)
]
CONTEXT = FileContext("events", 2, 100)


def json_values(documents: list) -> ValueColumn:
    return ValueColumn("json", [orjson.dumps(d) for d in documents])


def read_parquet(body: bytes) -> list:
    return pq.read_table(io.BytesIO(body), use_threads=False).to_pylist()


def read_parquet_with_duckdb(body: bytes, tmp_path) -> list:
    path = tmp_path / "file.parquet"
    path.write_bytes(body)
    cursor = duckdb.connect().execute(f"select * from read_parquet('{path}')")
    names = [d[0] for d in cursor.description]
    return [dict(zip(names, row)) for row in cursor.fetchall()]


@pytest.mark.parametrize(
    "codec, extension",
    [
        ("none", ".parquet"),
        ("snappy", ".snappy.parquet"),
        ("gzip", ".gz.parquet"),
        ("lz4", ".lz4raw.parquet"),
        ("zstd", ".zstd.parquet"),
        ("brotli", ".br.parquet"),
    ],
)
def test_parquet_every_codec_reads_back_and_is_deterministic(codec, extension, tmp_path):
    fmt = ParquetFormat(codec)
    body = fmt.encode(json_values(EVENTS), CONTEXT).body
    assert fmt.extension == extension
    assert read_parquet(body) == EVENTS
    assert read_parquet_with_duckdb(body, tmp_path) == EVENTS
    assert fmt.encode(json_values(EVENTS), CONTEXT).body == body
    assert codec in PARQUET_CODECS and parquet_codec(body, tmp_path) == {"none": "UNCOMPRESSED", "lz4": "LZ4_RAW"}.get(
        codec, codec.upper()
    )


def parquet_codec(body: bytes, tmp_path) -> str:
    """The codec written in the file's own metadata, as duckdb reads it."""
    path = tmp_path / "codec.parquet"
    path.write_bytes(body)
    return duckdb.sql(f"select distinct compression from parquet_metadata('{path}')").fetchall()[0][0]


@pytest.mark.parametrize("codec", AVRO_CODECS)
def test_avro_every_codec_reads_back_and_is_deterministic(codec):
    body = AvroFormat(codec).encode(json_values(EVENTS), CONTEXT).body
    reader = fastavro.reader(io.BytesIO(body))
    assert reader.metadata["avro.codec"] == codec
    assert list(reader) == EVENTS
    assert AvroFormat(codec).encode(json_values(EVENTS), CONTEXT).body == body


def test_avro_sync_marker_follows_the_file_identity():
    values = json_values(EVENTS)
    same = AvroFormat().encode(values, FileContext("events", 2, 100)).body
    moved = AvroFormat().encode(values, FileContext("events", 3, 100)).body
    assert AvroFormat().encode(values, CONTEXT).body == same != moved
    assert fastavro.reader(io.BytesIO(same))._header["sync"] != fastavro.reader(io.BytesIO(moved))._header["sync"]


def test_avro_field_names_are_made_valid_and_unique():
    documents = [{"my key": 1, "my_key": 2, "9lives": {"a-b": True}}]
    body = AvroFormat().encode(json_values(documents), FileContext("t", 0, 0)).body
    reader = fastavro.reader(io.BytesIO(body))
    assert list(reader) == [{"my_key": 1, "my_key_2": 2, "_9lives": {"a_b": True}}]
    assert reader.writer_schema["name"] == "io.confluent.connect.avro.ConnectDefault"


@pytest.mark.parametrize("kind, items", [("string", ["a", "é"]), ("bytes", [b"\x00", b"\xff"])])
def test_strings_and_bytes_are_one_value_column(kind, items, tmp_path):
    """A record in Avro too, where the connector writes them bare: Athena's AvroSerDe reads only records
    (format/wrapped.py)."""
    context = FileContext("t", 0, 0)
    assert read_parquet(ParquetFormat().encode(ValueColumn(kind, items), context).body) == [{"value": v} for v in items]
    avro = AvroFormat().encode(ValueColumn(kind, items), context).body
    assert list(fastavro.reader(io.BytesIO(avro))) == [{"value": v} for v in items]


def test_bytearray_writes_raw_values_with_the_separator():
    values = ValueColumn("bytes", [b"\x00\x01", b"", b"abc"])
    assert ByteArrayFormat().encode(values).body == b"\x00\x01\n\nabc\n"
    assert ByteArrayFormat(separator="\\r\\n").encode(values).body == b"\x00\x01\r\n\r\nabc\r\n"
    assert ByteArrayFormat(separator="").encode(values).body == b"\x00\x01abc"
    gz = ByteArrayFormat(".dat", "|", "gzip", 9)
    assert gz.extension == ".dat.gz" and gzip.decompress(gz.encode(values).body) == b"\x00\x01||abc|"
    assert ByteArrayFormat().encode(ValueColumn("string", ["é"])).body == "é\n".encode()


def test_separator_escapes():
    assert unescape("\\t|\\u00e9\\\\n") == "\t|é\\n"
    with pytest.raises(ValueError, match="unknown escape"):
        unescape("\\x")


def test_block_gzip_member_ends_at_the_record_that_reaches_the_block_size():
    values = ValueColumn("json", [b"x" * 9] * 10)  # 10 bytes a line with its newline
    chunks = orjson.loads(BlockGzipFormat(block_size=25).encode(values, CONTEXT).companions[".index.json"])["chunks"]
    assert [c["num_records"] for c in chunks] == [3, 3, 3, 1]
    big_first = ValueColumn("json", [b"x" * 99, b"y", b"z"])
    chunks = orjson.loads(BlockGzipFormat(block_size=50).encode(big_first, CONTEXT).companions[".index.json"])["chunks"]
    assert [c["num_records"] for c in chunks] == [1, 2]


def test_block_gzip_members_and_index():
    values = json_values(EVENTS)
    encoded = BlockGzipFormat(block_size=500).encode(values, CONTEXT)
    index = orjson.loads(encoded.companions[".index.json"])["chunks"]
    # the whole object is one gzip stream to a gzip tool
    assert [orjson.loads(line) for line in gzip.decompress(encoded.body).splitlines()] == EVENTS
    assert len(index) > 3
    assert sum(c["num_records"] for c in index) == 40 and index[0]["first_record_offset"] == 100
    for chunk in index:
        member = encoded.body[chunk["byte_offset"] : chunk["byte_offset"] + chunk["byte_length"]]
        lines = gzip.decompress(member).splitlines()
        assert len(lines) == chunk["num_records"]
        assert sum(len(line) + 1 for line in lines) == chunk["byte_length_uncompressed"]
        first = chunk["first_record_offset"] - 100
        assert [orjson.loads(line) for line in lines] == EVENTS[first : first + chunk["num_records"]]
    assert BlockGzipFormat(block_size=500).encode(values, CONTEXT) == encoded


def test_parquet_of_a_non_object_value_names_the_record():
    with pytest.raises(RecordError) as caught:
        ParquetFormat().encode(ValueColumn("json", [b'{"a":1}', b"[1]"]), FileContext("t", 4, 7), offsets=[7, 9])
    assert (caught.value.topic, caught.value.partition, caught.value.offset) == ("t", 4, 9)
    assert "needs a JSON object" in str(caught.value)


def test_avro_rows_follow_the_inferred_schema_where_documents_differ_from_it():
    documents = [{"a": 1, "o": {"x": 1}}, {"a": 2.5, "o": {}}, {"b": "s"}, {"a": 3, "c": [1, "x"]}]
    body = AvroFormat().encode(json_values(documents), FileContext("t", 0, 0)).body
    assert list(fastavro.reader(io.BytesIO(body))) == [
        {"a": 1.0, "o": {"x": 1}, "b": None, "c": None},
        {"a": 2.5, "o": {"x": None}, "b": None, "c": None},
        {"a": None, "o": None, "b": "s", "c": None},
        {"a": 3.0, "o": None, "b": None, "c": ["1", '"x"']},
    ]


def test_block_gzip_reader_finds_the_chunk_and_the_record_only_where_offsets_are_consecutive():
    from sink_engine.format.block_gzip_reader import Chunk, find_chunk, index_key

    chunks = [
        {"first_record_offset": 0, "last_record_offset": 9, "num_records": 10},
        {"first_record_offset": 12, "last_record_offset": 20, "num_records": 5},
    ]
    assert find_chunk(chunks, 9) is chunks[0] and find_chunk(chunks, 12) is chunks[1]
    assert find_chunk(chunks, 11) is None and find_chunk(chunks, 21) is None
    assert Chunk(chunks[0], [b"%d" % i for i in range(10)]).record(7) == b"7"
    assert Chunk(chunks[1], [b"a"] * 5).record(14) is None  # 5 records over 9 offsets: positions unknown
    assert index_key("t/p/t+0+0000000000.json.gz") == "t/p/t+0+0000000000.index.json"
