"""Every type name Kafka's JsonConverter writes in an envelope's schema (apache/kafka connect/json JsonSchema.java:
boolean, int8, int16, int32, int64, float, double, bytes, string, array, map, struct; asJsonSchema adds the
logical types' `name`, `version` and `parameters`, e.g. Decimal's `scale`) read by the converter and written by
every format, through a transform and the schema gate."""

from __future__ import annotations

import base64
import datetime
import decimal

import pytest

from tests.confluent_scenarios import Rec, avro_schema_of, envelope, key_of, landed, run_records

LOGICAL = "org.apache.kafka.connect.data."


def field(field_name: str, kind: str, **more) -> dict:
    return {"field": field_name, "type": kind, "optional": False, **more}


# A Struct of every Connect type as JsonConverter.asJsonSchema writes it
SCHEMA = {
    "type": "struct",
    "optional": False,
    "name": "every.Type",
    "version": 1,
    "fields": [
        field("b", "boolean"),
        field("i8", "int8"),
        field("i16", "int16"),
        field("i32", "int32"),
        field("i64", "int64"),
        field("f32", "float"),
        field("f64", "double"),
        field("raw", "bytes"),
        field("s", "string"),
        field("list", "array", items={"type": "int32", "optional": False}),
        field("map", "map", keys={"type": "string", "optional": False}, values={"type": "double", "optional": True}),
        field("inner", "struct", fields=[field("x", "int64")]),
        field("dec", "bytes", name=LOGICAL + "Decimal", version=1, parameters={"scale": "2"}),
        field("date", "int32", name=LOGICAL + "Date", version=1),
        field("time", "int32", name=LOGICAL + "Time", version=1),
        field("ts", "int64", name=LOGICAL + "Timestamp", version=1),
    ],
}
# JsonConverter.convertToJson's payload: bytes and Decimal (unscaled 12345, scale 2) base64, Date days, Time ms of
# the day, Timestamp epoch ms
PAYLOAD = {
    "b": True,
    "i8": -8,
    "i16": 1600,
    "i32": 320000,
    "i64": 2**40,
    "f32": 1.5,
    "f64": 12.25,
    "raw": base64.b64encode(b"\x00\xff").decode(),
    "s": "text",
    "list": [1, 2],
    "map": {"k": 0.5, "n": None},
    "inner": {"x": 7},
    "dec": base64.b64encode((12345).to_bytes(2, "big")).decode(),
    "date": 19000,
    "time": 3_723_004,
    "ts": 1_700_000_000_123,
}
# What Avro and Parquet readers give back for them
TYPED = {
    **PAYLOAD,
    "raw": b"\x00\xff",
    "dec": decimal.Decimal("123.45"),
    "date": datetime.date(2022, 1, 8),
    "time": datetime.time(1, 2, 3, 4000),
    "ts": datetime.datetime(2023, 11, 14, 22, 13, 20, 123000, tzinfo=datetime.UTC),
}
ENVELOPES = {"value.converter.schemas.enable": "true", "flush.size": 2}


@pytest.mark.parametrize(
    "fmt, extension, expected",
    [
        ("JsonFormat", ".json", PAYLOAD),  # JsonFormat writes the values as JsonConverter does without a schema
        ("AvroFormat", ".avro", {**TYPED, "map": {"k": 0.5, "n": None}}),
        ("ParquetFormat", ".snappy.parquet", {**TYPED, "map": [("k", 0.5), ("n", None)]}),
    ],
)
def test_every_type_name_json_converter_writes_is_read_and_written_by_every_format(moto_s3, fmt, extension, expected):
    result = run_records(moto_s3, {**ENVELOPES, "format.class": fmt}, [Rec(envelope(SCHEMA, PAYLOAD))] * 2)
    assert result.error is None
    assert landed(moto_s3) == {key_of(0, extension=extension): [expected] * 2}


def test_floating_types_are_avro_float_and_double(moto_s3):
    run_records(moto_s3, {**ENVELOPES, "format.class": "AvroFormat"}, [Rec(envelope(SCHEMA, PAYLOAD))] * 2)
    fields = {f["name"]: f["type"] for f in avro_schema_of(moto_s3, key_of(0, extension=".avro"))["fields"]}
    assert (fields["f32"], fields["f64"]) == ("float", "double")


def test_a_transform_reads_and_casts_the_floating_fields(moto_s3):
    # Cast$Value (Kafka's Cast SMT names types as Connect's Schema.Type: float32, float64)
    settings = {
        **ENVELOPES,
        "transforms": "cast",
        "transforms.cast.type": "org.apache.kafka.connect.transforms.Cast$Value",
        "transforms.cast.spec": "f32:float64,f64:string",
    }
    run_records(moto_s3, settings, [Rec(envelope(SCHEMA, PAYLOAD))] * 2)
    [records] = landed(moto_s3).values()
    assert [(r["f32"], r["f64"]) for r in records] == [(1.5, "12.25")] * 2


def test_float_and_float32_spell_one_schema_for_the_schema_gate(moto_s3):
    # JsonConverter writes `float`; Connect's Schema.Type name `float32` reads as the same type: no schema change
    other = {
        **SCHEMA,
        "fields": [
            {**f, "type": {"float": "float32", "double": "float64"}.get(f["type"], f["type"])} for f in SCHEMA["fields"]
        ],
    }
    settings = {**ENVELOPES, "sink.schema.files": "rotate"}
    run_records(moto_s3, settings, [Rec(envelope(SCHEMA, PAYLOAD)), Rec(envelope(other, PAYLOAD))])
    assert list(landed(moto_s3)) == [key_of(0)]


def test_an_unknown_type_name_is_a_bad_record_naming_it(moto_s3):
    result = run_records(moto_s3, ENVELOPES, [Rec(envelope({"type": "float128", "optional": False}, 1.0))])
    assert "float128" in (result.error or "") and "t-0@0" in (result.error or "")
