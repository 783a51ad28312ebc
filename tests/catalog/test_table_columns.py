"""Columns of a topic's table from its declared schema, per format and converter; what cannot be a table is
refused naming the setting (or gets no table where the output is not tabular)."""

from __future__ import annotations

import pyarrow as pa
import pytest

from infra.errors import SettingsError
from infra.table_columns import hive_type, table_storage
from sink_engine.config import parse_config
from tests.builders import connector_keys

BASE = connector_keys({"flush.size": 1, "format.class": None})
SCHEMALESS = {"value.converter": "JsonConverter", "value.converter.schemas.enable": "false"}
REGISTRY = {"value.converter": "AvroConverter", "value.converter.schema.registry.url": "http://registry:8081"}


def record(*fields) -> dict:
    return {"type": "record", "name": "R", "fields": [{"name": n, "type": t} for n, t in fields]}


def storage(fmt: str, converter: dict, declared, **keys):
    config = parse_config({**BASE, **converter, "format.class": fmt, **keys})
    return table_storage(config, "t", declared, "dev.json")


AMOUNT = {"type": "bytes", "logicalType": "decimal", "precision": 9, "scale": 2}
MILLIS = {"type": "long", "logicalType": "timestamp-millis"}


@pytest.mark.parametrize(
    "fmt, keys, expected",
    [
        ("ParquetFormat", {}, [("amount", "decimal(9,2)"), ("at", "timestamp"), ("n", "int")]),
        ("JsonFormat", {}, [("amount", "string"), ("at", "bigint"), ("n", "int")]),  # base64, epoch ms
        (
            "JsonFormat",
            {"json.decimal.format": "NUMERIC"},
            [("amount", "decimal(9,2)"), ("at", "bigint"), ("n", "int")],
        ),
    ],
)
def test_registry_columns_are_typed_as_each_format_holds_them(fmt, keys, expected):
    declared = record(("amount", AMOUNT), ("at", MILLIS), ("n", "int"))
    assert list(storage(fmt, REGISTRY, declared, **keys).columns) == expected


def test_schemaless_json_in_parquet_declares_what_the_engine_infers():
    declared = record(
        ("n", "int"), ("x", "float"), ("mixed", ["null", "long", "string"]), ("inner", record(("k", "int")))
    )
    assert list(storage("ParquetFormat", SCHEMALESS, declared).columns) == [
        ("n", "bigint"),
        ("x", "double"),
        ("mixed", "string"),
        ("inner", "struct<k:bigint>"),
    ]


def test_json_keys_that_are_not_column_names_are_mapped():
    declared = record(("User-Id", "string"))
    got = storage("JsonFormat", SCHEMALESS, declared)
    assert (got.columns, got.serde_parameters) == ((("user_id", "string"),), {"mapping.user_id": "User-Id"})


def test_avro_tables_read_with_the_engines_own_avro_schema():
    got = storage("AvroFormat", REGISTRY, record(("n", "int"), ("inner", record(("k", "long")))))
    literal = got.serde_parameters["avro.schema.literal"]
    assert '"name":"ConnectDefault"' in literal and '"name":"ConnectDefault2"' in literal
    assert got.columns == (("n", "int"), ("inner", "struct<k:bigint>"))


@pytest.mark.parametrize(
    "fmt, converter, declared, message",
    [
        ("ParquetFormat", SCHEMALESS, record(("m", {"type": "map", "values": "long"})), "land as structs"),
        ("ParquetFormat", SCHEMALESS, record(("b", "bytes")), "JSON's own types"),
        ("ParquetFormat", SCHEMALESS, record(("user-id", "string")), "not a valid column name"),
        ("ParquetFormat", REGISTRY, record(("a", "int"), ("A", "long")), "column 'a'"),
        ("ParquetFormat", REGISTRY, record(("t", {"type": "int", "logicalType": "time-millis"})), "no Hive type"),
        ("ParquetFormat", {"value.converter": "StringConverter"}, record(("a", "int")), "not records"),
        ("ByteArrayFormat", SCHEMALESS, record(("a", "int")), "no table"),
    ],
)
def test_declaration_that_cannot_be_a_table_is_refused_naming_the_setting(fmt, converter, declared, message):
    with pytest.raises(SettingsError, match=f"'catalog.tables.t' in dev.json: .*{message}"):
        storage(fmt, converter, declared)


@pytest.mark.parametrize(
    "fmt, converter",
    [
        ("ByteArrayFormat", SCHEMALESS),
        ("JsonFormat", {"value.converter": "StringConverter"}),
        ("BlockGzipFormat", {"value.converter": "ByteArrayConverter"}),
        ("ParquetFormat", SCHEMALESS),
    ],
)
def test_output_without_known_columns_gets_no_table(fmt, converter):
    assert storage(fmt, converter, None) is None


def test_hive_types_of_arrow_types():
    assert [
        hive_type(t)
        for t in (
            pa.int8(),
            pa.int16(),
            pa.float32(),
            pa.binary(),
            pa.date32(),
            pa.map_(pa.string(), pa.list_(pa.int64())),
        )
    ] == ["tinyint", "smallint", "float", "binary", "date", "map<string,array<bigint>>"]
    with pytest.raises(TypeError, match="no Hive type"):
        hive_type(pa.time32("ms"))
