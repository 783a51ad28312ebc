"""JsonConverter envelopes, Avro schemas, Connect JSON output and Arrow types: pure, no I/O."""

from __future__ import annotations

import datetime
import decimal
import io

import fastavro
import orjson
import pyarrow as pa
import pytest

from sink_engine.convert.arrow_types import arrow_schema
from sink_engine.convert.avro_schema import AvroDecoder
from sink_engine.convert.connect_json import to_json
from sink_engine.convert.envelope_json_converter import EnvelopeJsonConverter
from sink_engine.errors import RecordError
from sink_engine.records import RecordChunk

SCHEMA = {
    "type": "struct",
    "name": "Order",
    "version": 1,
    "fields": [
        {"field": "id", "type": "int64"},
        {"field": "qty", "type": "int16", "optional": True},
        {
            "field": "price",
            "type": "bytes",
            "name": "org.apache.kafka.connect.data.Decimal",
            "parameters": {"scale": "2"},
        },
        {"field": "day", "type": "int32", "name": "org.apache.kafka.connect.data.Date"},
        {"field": "at", "type": "int64", "name": "org.apache.kafka.connect.data.Timestamp"},
        {"field": "tags", "type": "array", "items": {"type": "string"}},
        {"field": "attrs", "type": "map", "keys": {"type": "string"}, "values": {"type": "float64"}, "optional": True},
        {"field": "blob", "type": "bytes", "optional": True},
        {"field": "status", "type": "string", "default": "new"},
    ],
}
PAYLOAD = {
    "id": 7,
    "qty": None,
    "price": "MDk=",
    "day": 19000,
    "at": 1700000000123,
    "tags": ["a", "b"],
    "attrs": {"w": 1},
    "blob": "AAE=",
}


def chunk_of(*values: bytes) -> RecordChunk:
    return RecordChunk(
        "t", 0, list(range(len(values))), list(values), keys=[None] * len(values), timestamps=[0] * len(values)
    )


def envelope(payload, schema=SCHEMA) -> bytes:
    return orjson.dumps({"schema": schema, "payload": payload})


def test_envelope_payload_becomes_typed_values_and_writes_back_as_connect_json():
    # given an envelope with every kind of field
    column = EnvelopeJsonConverter().convert(chunk_of(envelope(PAYLOAD)))
    # then the values are typed, defaults applied, and the schema is known
    value = column.items[0]
    assert column.kind == "struct" and column.schema.describe() == "Order v1"
    assert value["price"] == decimal.Decimal("123.45") and value["status"] == "new"
    assert value["day"] == datetime.date(2022, 1, 8) and value["blob"] == b"\x00\x01"
    assert value["at"] == datetime.datetime(2023, 11, 14, 22, 13, 20, 123000, tzinfo=datetime.UTC)
    assert value["attrs"] == {"w": 1.0}
    # and the Connect JSON of the value is the payload again (with the default filled in)
    assert orjson.loads(to_json(value)) == {**PAYLOAD, "attrs": {"w": 1.0}, "status": "new"}


def test_envelope_values_fit_their_arrow_schema():
    column = EnvelopeJsonConverter().convert(chunk_of(envelope(PAYLOAD), envelope({**PAYLOAD, "id": 8})))
    schema = arrow_schema(column.schema)
    assert schema.field("id").type == pa.int64() and not schema.field("id").nullable
    assert schema.field("price").type == pa.decimal128(38, 2)
    assert schema.field("at").type == pa.timestamp("ms", tz="UTC")
    assert schema.field("attrs").type.item_type == pa.float64() and schema.field("qty").nullable
    table = pa.Table.from_pylist(column.items, schema=schema)
    assert table.column("id").to_pylist() == [7, 8]


def test_records_sharing_a_schema_share_one_schema_object():
    column = EnvelopeJsonConverter().convert(chunk_of(envelope(PAYLOAD), envelope({**PAYLOAD, "id": 8})))
    assert column.schemas[0] is column.schemas[1]


@pytest.mark.parametrize(
    "value, message",
    [
        (b'{"a": 1}', 'requires "schema" and "payload"'),
        (envelope({**PAYLOAD, "id": "x"}), "id: expected an int64"),
        (envelope({**PAYLOAD, "qty": 70000}), "qty: expected an int16"),
        (envelope({k: v for k, v in PAYLOAD.items() if k != "day"}), "day: null for a required"),
        (envelope({**PAYLOAD, "blob": "!!"}), "blob: '!!' is not valid base64"),
        (envelope({**PAYLOAD, "day": 3_000_000}), "day: 3000000 days from the epoch is past year 9999"),
        (
            envelope({**PAYLOAD, "at": -(10**17)}),
            "at: -100000000000000000 milliseconds from the epoch is past year 9999",
        ),
        (b"not json", "not valid JSON"),
        # after a first value in Connect's layout, its schema's text is known: what follows it must still be a payload
        (envelope(PAYLOAD)[:-1] + b',"extra":1}', 'requires "schema" and "payload"'),
        (envelope(PAYLOAD)[:-2] + b",}", "not valid JSON"),
    ],
)
def test_bad_envelopes_name_the_record_and_the_field(value, message):
    with pytest.raises(RecordError) as caught:
        EnvelopeJsonConverter().convert(chunk_of(envelope(PAYLOAD), value))
    assert caught.value.offset == 1 and message in str(caught.value)


def test_values_in_connects_layout_decode_as_a_full_parse_would():
    """Once a schema's text is known, only payloads are parsed: a payload holding `,"payload":` itself, another
    schema, and the same envelope written with spaces decode as when each value is read whole."""
    other = {**SCHEMA, "name": "Other"}
    nested = {
        "type": "struct",
        "fields": [{"field": "payload", "type": "struct", "fields": [{"field": "payload", "type": "string"}]}],
    }
    values = [
        envelope(PAYLOAD),
        envelope({**PAYLOAD, "id": 8}),
        envelope({**PAYLOAD, "id": 9}, other),
        envelope({"payload": {"payload": ',"payload":'}}, nested),
        envelope({"payload": {"payload": "x"}}, nested),
        orjson.dumps({"schema": SCHEMA, "payload": {**PAYLOAD, "id": 10}}, option=orjson.OPT_INDENT_2),
    ]
    converter = EnvelopeJsonConverter()
    items = [converter.convert(chunk_of(value)).items[0] for value in values]
    assert items == [EnvelopeJsonConverter().convert(chunk_of(value)).items[0] for value in values]
    assert [item["id"] for item in items[:3] + items[5:]] == [7, 8, 9, 10]
    assert items[3] == {"payload": {"payload": ',"payload":'}} and items[4] == {"payload": {"payload": "x"}}


def test_a_primitive_envelope_gives_json_text():
    column = EnvelopeJsonConverter().convert(chunk_of(envelope(5, {"type": "int32"})))
    assert column.kind == "json" and column.items == [b"5"]


def test_avro_schema_maps_to_connect_types_and_decodes():
    avro = {
        "type": "record",
        "name": "Ev",
        "namespace": "ns",
        "fields": [
            {"name": "id", "type": "long"},
            {"name": "n", "type": ["null", "int"], "default": None},
            {"name": "kind", "type": {"type": "enum", "name": "K", "symbols": ["A", "B"]}},
            {"name": "amount", "type": {"type": "bytes", "logicalType": "decimal", "precision": 9, "scale": 2}},
            {"name": "ts", "type": {"type": "long", "logicalType": "timestamp-micros"}},
        ],
    }
    datum = {"id": 1, "n": None, "kind": "B", "amount": decimal.Decimal("2.50"), "ts": 5}
    buffer = io.BytesIO()
    fastavro.schemaless_writer(buffer, fastavro.parse_schema(avro), datum)
    decoder = AvroDecoder(avro, 3)
    assert decoder.schema.describe() == "ns.Ev v3"
    assert [(f.name, f.schema.type, f.schema.optional) for f in decoder.schema.fields] == [
        ("id", "int64", False),
        ("n", "int32", True),
        ("kind", "string", False),
        ("amount", "bytes", False),
        ("ts", "int64", False),
    ]
    assert decoder.decode(buffer.getvalue()) == datum
    assert arrow_schema(decoder.schema).field("amount").type == pa.decimal128(9, 2)


def test_avro_unions_become_connect_union_structs_with_one_field_set():
    import pyarrow.parquet as pq

    from sink_engine.format.parquet_format import ParquetFormat
    from sink_engine.records import ValueColumn

    avro = {
        "type": "record",
        "name": "R",
        "namespace": "ns",
        "fields": [
            {
                "name": "u",
                "type": [
                    "null",
                    "string",
                    "long",
                    {"type": "enum", "name": "E", "symbols": ["A", "B"]},
                    {"type": "record", "name": "Inner", "fields": [{"name": "a", "type": "int"}]},
                ],
            },
            {
                "name": "o",
                "type": ["null", {"type": "record", "name": "Opt", "fields": [{"name": "b", "type": "int"}]}],
            },
            {"name": "v", "type": ["int", "boolean"]},
        ],
    }
    decoder = AvroDecoder(avro, 1)
    union = decoder.schema.field("u").schema
    assert (union.name, union.optional) == ("io.confluent.connect.avro.Union", True)
    assert [(f.name, f.schema.type, f.schema.optional) for f in union.fields] == [
        ("string", "string", True),
        ("long", "int64", True),
        ("E", "string", True),
        ("Inner", "struct", True),
    ]
    assert not decoder.schema.field("v").schema.optional
    writer_schema, values = fastavro.parse_schema(avro), []
    for u in [None, "x", 5, ("ns.E", "B"), {"a": 1}]:
        buffer = io.BytesIO()
        fastavro.schemaless_writer(buffer, writer_schema, {"u": u, "o": {"b": 2}, "v": True if u is None else 7})
        values.append(decoder.decode(buffer.getvalue()))
    empty = {"string": None, "long": None, "E": None, "Inner": None}
    assert [v["u"] for v in values] == [
        None,
        {**empty, "string": "x"},
        {**empty, "long": 5},
        {**empty, "E": "B"},
        {**empty, "Inner": {"a": 1}},
    ]
    assert values[0]["o"] == {"b": 2} and values[0]["v"] == {"int": None, "boolean": True}
    assert values[1]["v"] == {"int": 7, "boolean": None}
    column = ValueColumn("struct", values, values, [decoder.schema] * len(values))
    body = ParquetFormat().encode(column).body
    assert pq.read_table(io.BytesIO(body), use_threads=False).to_pylist() == values


def test_avro_union_branches_with_one_connect_name_are_refused_clearly():
    with pytest.raises(ValueError, match="two branches map to the Connect union field 'A'"):
        AvroDecoder(
            {
                "type": "record",
                "name": "R",
                "fields": [
                    {
                        "name": "x",
                        "type": [
                            {"type": "record", "name": "p.A", "fields": []},
                            {"type": "record", "name": "q.A", "fields": []},
                        ],
                    }
                ],
            },
            1,
        )


def test_json_decimal_format_numeric_writes_decimals_as_numbers_with_their_scale():
    from sink_engine.config import parse_config
    from sink_engine.format import FormatSettings, format_for
    from sink_engine.records import ValueColumn

    column = EnvelopeJsonConverter().convert(chunk_of(envelope(PAYLOAD)))
    column = ValueColumn("struct", [{**column.items[0], "price": decimal.Decimal("2.55")}], None, column.schemas)
    config = {
        "name": "c",
        "topics": "t",
        "bootstrap.servers": "k:9092",
        "s3.bucket.name": "lake",
        "s3.region": "us-east-1",
        "flush.size": 1,
        "format.class": "JsonFormat",
    }
    base64_line = format_for(FormatSettings.from_config(parse_config(config))).encode(column).body
    numeric_config = parse_config({**config, "json.decimal.format": "NUMERIC"})
    numeric = format_for(FormatSettings.from_config(numeric_config)).encode(column).body
    assert orjson.loads(base64_line)["price"] == "AP8="
    assert b'"price":2.55,' in numeric and orjson.loads(numeric)["price"] == 2.55
    assert to_json({"d": decimal.Decimal("-0.10")}, numeric_decimals=True) == b'{"d":-0.10}'
