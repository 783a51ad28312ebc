"""Logical types land as Parquet and Avro logical types: dates, times, timestamps (millis and micros, with and
without a zone), decimals and UUIDs from Avro, read back with pyarrow, duckdb and fastavro; JSON output keeps
what Kafka Connect writes."""

from __future__ import annotations

import datetime
import decimal
import io
import uuid

import duckdb
import fastavro
import orjson
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from sink_engine.convert.avro_schema import AvroDecoder
from sink_engine.convert.schema import Field, Schema
from sink_engine.format.avro_format import AvroFormat
from sink_engine.format.json_format import JsonFormat
from sink_engine.format.parquet_format import ParquetFormat
from sink_engine.records import ValueColumn

UTC = datetime.UTC
AVRO = {
    "type": "record",
    "name": "Event",
    "namespace": "ns",
    "fields": [
        {"name": "day", "type": {"type": "int", "logicalType": "date"}},
        {"name": "at_ms", "type": {"type": "long", "logicalType": "timestamp-millis"}},
        {"name": "at_us", "type": {"type": "long", "logicalType": "timestamp-micros"}},
        {"name": "local_us", "type": {"type": "long", "logicalType": "local-timestamp-micros"}},
        {"name": "clock_ms", "type": {"type": "int", "logicalType": "time-millis"}},
        {"name": "clock_us", "type": {"type": "long", "logicalType": "time-micros"}},
        {"name": "price", "type": {"type": "bytes", "logicalType": "decimal", "precision": 9, "scale": 2}},
        {
            "name": "big",
            "type": {"type": "fixed", "name": "Big", "size": 16, "logicalType": "decimal", "precision": 30, "scale": 4},
        },
        {"name": "id", "type": {"type": "string", "logicalType": "uuid"}},
        {"name": "maybe_at", "type": ["null", {"type": "long", "logicalType": "timestamp-micros"}], "default": None},
    ],
}
AT = datetime.datetime(2024, 1, 15, 10, 30, 0, 123456, tzinfo=UTC)
DATUM = {
    "day": datetime.date(2024, 1, 15),
    "at_ms": AT.replace(microsecond=123000),
    "at_us": AT,
    "local_us": AT.replace(tzinfo=None),
    "clock_ms": datetime.time(10, 30, 0, 123000),
    "clock_us": datetime.time(10, 30, 0, 123456),
    "price": decimal.Decimal("1234.50"),
    "big": decimal.Decimal("12345678901234567890.1234"),
    "id": str(uuid.UUID(int=7)),
    "maybe_at": None,
}
EPOCH_US = (AT - datetime.datetime(1970, 1, 1, tzinfo=UTC)) // datetime.timedelta(microseconds=1)


@pytest.fixture(scope="module")
def column() -> ValueColumn:
    buffer = io.BytesIO()
    fastavro.schemaless_writer(buffer, fastavro.parse_schema(AVRO), DATUM)
    decoder = AvroDecoder(AVRO, 1)
    values = [decoder.decode(buffer.getvalue())] * 2
    return ValueColumn("struct", values, values, [decoder.schema] * 2)


def test_avro_logical_types_are_parquet_logical_types(column, tmp_path):
    path = tmp_path / "events.parquet"
    path.write_bytes(ParquetFormat().encode(column).body)
    types = {f.name: f.type for f in pq.read_schema(path)}
    assert types == {
        "day": pa.date32(),
        "at_ms": pa.timestamp("ms", tz="UTC"),
        "at_us": pa.timestamp("us", tz="UTC"),
        "local_us": pa.timestamp("us"),
        "clock_ms": pa.time32("ms"),
        "clock_us": pa.time64("us"),
        "price": pa.decimal128(9, 2),
        "big": pa.decimal128(30, 4),
        "id": pa.string(),
        "maybe_at": pa.timestamp("us", tz="UTC"),
    }
    logical = {c.name: str(c.logical_type) for c in pq.ParquetFile(path).schema}
    assert logical["at_us"].startswith("Timestamp(isAdjustedToUTC=true, timeUnit=microseconds")
    assert logical["price"] == "Decimal(precision=9, scale=2)" and logical["id"] == "String"
    # DuckDB (as Athena does) reads dates, timestamps and decimals, not integers; pyarrow writes every TIME as
    # adjusted to UTC (Connect's Time is milliseconds after midnight UTC)
    described = dict(row[:2] for row in duckdb.sql(f"DESCRIBE SELECT * FROM read_parquet('{path}')").fetchall())
    assert described == {
        "day": "DATE",
        "at_ms": "TIMESTAMP WITH TIME ZONE",
        "at_us": "TIMESTAMP WITH TIME ZONE",
        "local_us": "TIMESTAMP",
        "clock_ms": "TIME WITH TIME ZONE",
        "clock_us": "TIME WITH TIME ZONE",
        "price": "DECIMAL(9,2)",
        "big": "DECIMAL(30,4)",
        "id": "VARCHAR",
        "maybe_at": "TIMESTAMP WITH TIME ZONE",
    }
    row = duckdb.sql(f"SELECT day, epoch_us(at_us), local_us, price, big, id FROM read_parquet('{path}')").fetchall()[0]
    assert row == (DATUM["day"], EPOCH_US, DATUM["local_us"], DATUM["price"], DATUM["big"], DATUM["id"])


def test_avro_logical_types_are_avro_logical_types_in_avro_output(column):
    reader = fastavro.reader(io.BytesIO(AvroFormat().encode(column).body))
    fields = {f["name"]: f["type"] for f in reader.writer_schema["fields"]}
    assert fields["at_us"] == {"type": "long", "logicalType": "timestamp-micros"}
    assert fields["local_us"] == {"type": "long", "logicalType": "local-timestamp-micros"}
    assert fields["clock_ms"] == {"type": "int", "logicalType": "time-millis"}
    assert fields["price"] == {"type": "bytes", "logicalType": "decimal", "precision": 9, "scale": 2}
    assert list(reader) == [{**DATUM, "big": DATUM["big"]}] * 2


def test_json_output_keeps_connects_values(column):
    line = orjson.loads(JsonFormat().encode(column.slice(0, 1)).body)
    # Connect's Date/Timestamp as days and epoch ms; micros stay the Avro long, as AvroData reads them
    assert line["day"] == 19737 and line["at_ms"] == EPOCH_US // 1000 and line["at_us"] == EPOCH_US
    assert line["id"] == DATUM["id"]


def test_maps_with_string_and_other_keys_land_in_avro_output():
    schema = Schema(
        "struct",
        name="M",
        version=1,
        fields=(
            Field("by_name", Schema("map", keys=Schema("string"), values=Schema("int32", True))),
            Field("by_number", Schema("map", True, keys=Schema("int32"), values=Schema("string", True))),
        ),
    )
    values = [{"by_name": {"a": 1, "b": None}, "by_number": {1: "x", 2: None}}, {"by_name": {}, "by_number": None}]
    body = AvroFormat().encode(ValueColumn("struct", values, values, [schema] * 2)).body
    reader = fastavro.reader(io.BytesIO(body))
    assert list(reader) == [
        {"by_name": {"a": 1, "b": None}, "by_number": [{"key": 1, "value": "x"}, {"key": 2, "value": None}]},
        {"by_name": {}, "by_number": None},
    ]
