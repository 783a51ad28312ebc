"""Registry Avro values read columnarly (convert/avro_arrow.py) write the same bytes as the general path."""

from __future__ import annotations

import io
import uuid

import fastavro
import orjson
import pytest

from sink_engine.convert import avro_arrow
from sink_engine.convert.arrow_column import ArrowStructColumn
from sink_engine.convert.glue_converter import GlueSchemaRegistryConverter
from sink_engine.errors import RecordError
from sink_engine.format.parquet_format import ParquetFormat
from tests.columnar import (
    FORMAT_IDS,
    FORMATS,
    assert_runs_encode_alike,
    assert_same_output,
    assert_same_record_error,
    chunk_of,
    encoded,
)

pytest.importorskip("polars")

CLICK = {
    "type": "record",
    "name": "Click",
    "namespace": "bench",
    "fields": [
        {"name": "id", "type": "long"},
        {"name": "kind", "type": {"type": "enum", "name": "Kind", "symbols": ["click", "view", "purchase"]}},
        {"name": "at", "type": {"type": "long", "logicalType": "timestamp-millis"}},
        {"name": "at_us", "type": {"type": "long", "logicalType": "timestamp-micros"}},
        {"name": "local", "type": {"type": "long", "logicalType": "local-timestamp-millis"}},
        {"name": "day", "type": {"type": "int", "logicalType": "date"}},
        {"name": "price", "type": ["null", "double"], "default": None},
        {"name": "mode", "type": {"type": "enum", "name": "Mode", "symbols": list("abcd")}},
        {"name": "ratio", "type": ["float", "null"]},
        {"name": "ok", "type": "boolean"},
        {"name": "tags", "type": {"type": "array", "items": "string"}},
        {"name": "maybe_tags", "type": ["null", {"type": "array", "items": "string"}]},
        {
            "name": "device",
            "type": {
                "type": "record",
                "name": "Device",
                "fields": [
                    {"name": "os", "type": "string"},
                    {"name": "version", "type": "int"},
                    {"name": "grid", "type": {"type": "array", "items": {"type": "array", "items": "double"}}},
                ],
            },
        },
        {
            "name": "owner",
            "type": [
                "null",
                {
                    "type": "record",
                    "name": "Owner",
                    "fields": [{"name": "name", "type": "string"}, {"name": "blob", "type": "bytes"}],
                },
            ],
        },
        {"name": "user", "type": "string"},
    ],
}
# a second schema id of the same subject: a field fewer, one more
CLICK_V2 = {**CLICK, "fields": [f for f in CLICK["fields"] if f["name"] != "ratio"] + [{"name": "n", "type": "int"}]}
WITH_MAP = {"type": "record", "name": "M", "fields": [{"name": "m", "type": {"type": "map", "values": "long"}}]}
REUSED = {
    "type": "record",
    "name": "R",
    "fields": [{"name": "a", "type": {"type": "enum", "name": "E", "symbols": ["x"]}}, {"name": "b", "type": "E"}],
}
ENUM_ITEMS = {
    "type": "record",
    "name": "A",
    "fields": [
        {"name": "a", "type": {"type": "array", "items": {"type": "enum", "name": "E", "symbols": ["x", "y"]}}},
        {"name": "r", "type": {"type": "record", "name": "B", "fields": [{"name": "e", "type": "E"}]}},
        {"name": "u", "type": ["null", "E"]},
    ],
}
KINDS = ("click", "view", "purchase")


def click(i: int, large: bool = False) -> dict:
    return {
        "id": i * 7_919 - 2**40 * (i % 2),
        "kind": KINDS[i % 3],
        "at": 1_700_000_000_000 + i * 1_001,
        "at_us": -5 + i * 10**9,
        "local": i * 3_600_000,
        "day": 19_000 + i - 400 * (i % 2),
        "price": None if i % 4 == 0 else i * 0.25,
        "mode": "dcba"[i % 4],
        "ratio": None if i % 5 == 0 else 1 / (i + 1),
        "ok": i % 2 == 0,
        "tags": ["x" * (200_000 if large else 3), "ünï-ⓒ-😀"][: i % 3],
        "maybe_tags": None if i % 3 == 0 else ["", f"t{i}"][: i % 3],
        "device": {
            "os": ("ios", "android", "")[i % 3],
            "version": -i,
            "grid": [[i / 3] * (i % 3), [-i, 1e300]][: i % 3],
        },
        "owner": None if i % 2 else {"name": "名前" * (i % 4), "blob": bytes(range(i % 256))},
        "user": f"user-{i % 997:04d}",
        "n": i,
    }


class StaticGlue:
    """get_schema_version for the schema versions given."""

    def __init__(self, schemas: dict):
        self.schemas = schemas

    def get_schema_version(self, SchemaVersionId):
        return {
            "SchemaDefinition": orjson.dumps(self.schemas[uuid.UUID(SchemaVersionId).bytes]).decode(),
            "DataFormat": "AVRO",
            "VersionNumber": 1,
        }


def glue_value(version: bytes, schema: dict, value: dict) -> bytes:
    out = io.BytesIO()
    fastavro.schemaless_writer(out, fastavro.parse_schema(schema), value)
    return b"\x03\x00" + version + out.getvalue()


IN_ARRAY = {
    "type": "record",
    "name": "Ar",
    "fields": [
        {"name": "flags", "type": {"type": "array", "items": "boolean"}},
        {"name": "maybe", "type": {"type": "array", "items": ["null", "string"]}},
    ],
}
V1, V2, VM, VR, VE, VA = (uuid.uuid4().bytes for _ in range(6))
SCHEMAS = {V1: CLICK, V2: CLICK_V2, VM: WITH_MAP, VR: REUSED, VE: ENUM_ITEMS, VA: IN_ARRAY}


def converters(monkeypatch):
    """(columnar, general): the same converter with and without the columnar reader."""
    columnar = GlueSchemaRegistryConverter(StaticGlue(SCHEMAS))
    with monkeypatch.context() as patch:
        patch.setattr(avro_arrow, "polars", None)
        general = GlueSchemaRegistryConverter(StaticGlue(SCHEMAS))
        first = [glue_value(V1, CLICK, click(0)), glue_value(V2, CLICK_V2, click(0))]
        general.convert(chunk_of(first))  # fetches both decoders while polars is hidden
    return columnar, general


@pytest.mark.parametrize("fmt", FORMATS, ids=FORMAT_IDS)
@pytest.mark.parametrize("large", [False, True], ids=["small", "large-values"])
def test_columnar_values_encode_to_the_same_bytes_as_the_general_path(monkeypatch, fmt, large):
    # given mixed click events of one schema id (nulls, enums, logical types, nested records, arrays, unicode)
    columnar, general = converters(monkeypatch)
    chunk = chunk_of([glue_value(V1, CLICK, click(i, large and i == 7)) for i in range(40)])
    # when both convert them
    fast, slow = columnar.convert(chunk), general.convert(chunk)
    # then the columnar column came from Arrow, and every format writes the same bytes from both
    assert_same_output(fmt, fast, slow)


def test_several_schema_ids_in_one_batch_give_one_table_per_schema_and_the_same_files(monkeypatch):
    # given a chunk alternating runs of two schema ids
    columnar, general = converters(monkeypatch)
    values = [
        glue_value(V2, CLICK_V2, click(i)) if (i // 5) % 2 else glue_value(V1, CLICK, click(i)) for i in range(30)
    ]
    fast, slow = columnar.convert(chunk_of(values)), general.convert(chunk_of(values))
    # when each run of one schema is encoded (as the schema gate cuts files), then the bytes match
    assert_runs_encode_alike(fast, slow, 5)
    assert fast.schemas == slow.schemas


ID_BYTES = len(avro_arrow._long(click(5)["id"]))  # the enum's index follows the id


@pytest.mark.parametrize(
    "bad, refused",
    [
        pytest.param(lambda datum: datum[:-3], True, id="truncated"),
        pytest.param(lambda datum: datum[:ID_BYTES] + b"\x0e" + datum[ID_BYTES + 1 :], True, id="enum-index-7-of-3"),
        pytest.param(lambda datum: datum + b"\x02\x02", False, id="trailing-bytes"),
    ],
)
def test_a_bad_datum_in_the_middle_takes_the_general_path(monkeypatch, bad, refused):
    # given a bad datum at offset 105 among good ones
    columnar, general = converters(monkeypatch)
    values = [glue_value(V1, CLICK, click(i)) for i in range(12)]
    values[5] = values[5][:18] + bad(values[5][18:])
    chunk = chunk_of(values)
    if refused:
        # when converted, then both converters name offset 105 with the same cause (what the dead-letter queue takes)
        assert_same_record_error(columnar, general, chunk, 105)
    else:
        # when converted, then bytes after a complete datum (which fastavro ignores) send the chunk down the general
        # path, and the values are the general path's
        got = columnar.convert(chunk)
        assert not isinstance(got, ArrowStructColumn)
        assert encoded(ParquetFormat(), got) == encoded(ParquetFormat(), general.convert(chunk))


@pytest.mark.parametrize(
    "version, schema, value",
    [
        (VM, WITH_MAP, {"m": {"a": 1}}),
        (VR, REUSED, {"a": "x", "b": "x"}),
        (VE, ENUM_ITEMS, {"a": ["y", "x"], "r": {"e": "y"}, "u": "x"}),
        (VA, IN_ARRAY, {"flags": [True], "maybe": [None, "a"]}),
    ],
    ids=["map", "named-type-reused", "nested-enums", "booleans-and-unions-in-arrays"],
)
def test_schemas_the_reader_does_not_cover_take_the_general_path(monkeypatch, version, schema, value):
    # given values of a schema polars' reader does not take
    columnar, _ = converters(monkeypatch)
    chunk = chunk_of([glue_value(version, schema, value)] * 3)
    # when converted, then the values come from the general path
    column = columnar.convert(chunk)
    assert not isinstance(column, ArrowStructColumn) and column.items[1] == value


def test_a_selection_of_a_columnar_column_builds_from_its_values(monkeypatch):
    # given a columnar column, when records are picked out of order (a field partitioner's groups)
    columnar, general = converters(monkeypatch)
    chunk = chunk_of([glue_value(V1, CLICK, click(i)) for i in range(10)])
    fast, slow = columnar.convert(chunk).select([7, 2, 3]), general.convert(chunk).select([7, 2, 3])
    # then it encodes the same bytes as the general path
    assert encoded(ParquetFormat(), fast) == encoded(ParquetFormat(), slow)


BOUNDARIES = {
    "type": "record",
    "name": "B",
    "fields": [
        {"name": "l", "type": "long"},
        {"name": "i", "type": "int"},
        {"name": "s", "type": "string"},
        {"name": "a", "type": {"type": "array", "items": "string"}},
    ],
}
LONGS = [0, -1, 63, 64, -64, -65, 8191, 8192, -8193, 2**31 - 1, -(2**31), 2**35, 2**63 - 1, -(2**63)]


def test_values_at_every_varint_length_are_read_columnarly_with_the_same_values(monkeypatch):
    # given longs, ints, string lengths and array counts on both sides of each varint length
    version = uuid.uuid4().bytes
    SCHEMAS[version] = BOUNDARIES
    columnar, _ = converters(monkeypatch)
    values = [
        {"l": n, "i": max(-(2**31), min(2**31 - 1, n)), "s": "s" * (abs(n) % 20_000), "a": ["é"] * (abs(n) % 200)}
        for n in LONGS + [127, 128, 16_383, 16_384]
    ]
    # when converted, then each datum's length was matched (else the general path would have taken the chunk)
    column = columnar.convert(chunk_of([glue_value(version, BOUNDARIES, value) for value in values]))
    assert isinstance(column, ArrowStructColumn)
    assert column.arrow_table().to_pylist() == values == column.items


MARKED = {
    "type": "record",
    "name": "Mk",
    "fields": [
        {"name": "n", "type": "long"},
        {"name": "b", "type": "boolean"},
        {
            "name": "inner",
            "type": {
                "type": "record",
                "name": "In",
                "fields": [{"name": "s", "type": "string"}, {"name": "u", "type": ["long", "null"]}],
            },
        },
    ],
}


@pytest.mark.parametrize(
    "datum",
    [
        pytest.param(b"\x02\x02\x00\x02", id="boolean-byte-2"),
        pytest.param(b"\x02\xff\x00\x02", id="boolean-byte-ff"),
        pytest.param(b"\x02\x01\x00\x04\x02", id="union-index-2-of-2"),
        pytest.param(b"\x02\x01\x00\x03\x02", id="union-index-negative"),
    ],
)
def test_bytes_polars_reads_more_leniently_than_fastavro_take_the_general_path(monkeypatch, datum):
    # given a datum whose boolean byte or union index the general path reads otherwise than polars (or refuses)
    version = uuid.uuid4().bytes
    SCHEMAS[version] = MARKED
    columnar, _ = converters(monkeypatch)
    with monkeypatch.context() as patch:
        patch.setattr(avro_arrow, "polars", None)
        general = GlueSchemaRegistryConverter(StaticGlue(SCHEMAS))
    good = glue_value(version, MARKED, {"n": 1, "b": True, "inner": {"s": "", "u": 1}})
    chunk = chunk_of([good, b"\x03\x00" + version + datum, good])
    # when converted, then the columnar converter gives the general path's values or its error
    try:
        expected = general.convert(chunk)
    except RecordError as e:
        with pytest.raises(RecordError) as raised:
            columnar.convert(chunk)
        assert raised.value.offset == e.offset == 101
    else:
        got = columnar.convert(chunk)
        assert not isinstance(got, ArrowStructColumn) and got.items == expected.items


def test_booleans_and_unions_in_well_formed_datums_are_read_columnarly(monkeypatch):
    version = uuid.uuid4().bytes
    SCHEMAS[version] = MARKED
    columnar, _ = converters(monkeypatch)
    values = [{"n": i, "b": i % 2 == 0, "inner": {"s": "x" * i, "u": None if i % 3 else -i}} for i in range(9)]
    column = columnar.convert(chunk_of([glue_value(version, MARKED, value) for value in values]))
    assert isinstance(column, ArrowStructColumn) and column.arrow_table().to_pylist() == values


@pytest.mark.parametrize("number", [2**33 + 2**30, -(2**34) - 7], ids=["positive", "negative"])
def test_an_int_past_32_bits_takes_the_general_path(monkeypatch, number):
    # given an `int` field whose varint holds more than 32 bits, wrapping to a value of the same varint length
    version = uuid.uuid4().bytes
    SCHEMAS[version] = {**MARKED, "fields": [{"name": "n", "type": "int"}] + MARKED["fields"][1:]}
    columnar, _ = converters(monkeypatch)
    datum = avro_arrow._long(number) + b"\x00\x00\x02"  # n, b false, inner {s "", u null}
    # when converted, then the general path reads it (keeping the big integer), as before
    column = columnar.convert(chunk_of([b"\x03\x00" + version + datum]))
    assert not isinstance(column, ArrowStructColumn) and column.items[0]["n"] == number
