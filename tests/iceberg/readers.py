"""A table read by three Iceberg readers, asserted to agree: pyiceberg's scan, DuckDB's iceberg extension
(duckdb_reader.py) and Iceberg's Java reader in Spark (spark_reader.py), row by row and column by column.

Values are compared in one form (`canonical`): what each reader hands Python (pyarrow's `to_pylist`, DuckDB's
values as its subprocess prints them, JSON with `str` for the rest), instants in UTC. Schemas are compared as each
reader's own type names: pyiceberg's Iceberg schema says what Spark (`spark_type`) and DuckDB (`duckdb_type`)
should call each column, and whether Spark should find it nullable."""

from __future__ import annotations

import json
from datetime import UTC, datetime

from pyiceberg import types as t

from sink_engine.target.iceberg_tables.catalog import load_table
from sink_engine.target.iceberg_tables.settings import IcebergSettings
from tests.iceberg.duckdb_reader import duckdb_rows
from tests.iceberg.spark_reader import SparkIcebergReader
from tests.iceberg.tables import catalog_of, table_name

_SPARK = {
    t.BooleanType: "boolean",
    t.IntegerType: "integer",
    t.LongType: "long",
    t.FloatType: "float",
    t.DoubleType: "double",
    t.DateType: "date",
    t.TimestampType: "timestamp_ntz",
    t.TimestamptzType: "timestamp",
    t.StringType: "string",
    t.UUIDType: "string",
    t.FixedType: "binary",
    t.BinaryType: "binary",
}
_DUCKDB = {
    t.BooleanType: "BOOLEAN",
    t.IntegerType: "INTEGER",
    t.LongType: "BIGINT",
    t.FloatType: "FLOAT",
    t.DoubleType: "DOUBLE",
    t.DateType: "DATE",
    t.TimeType: "TIME",
    t.TimestampType: "TIMESTAMP",
    t.TimestamptzType: "TIMESTAMP WITH TIME ZONE",
    t.StringType: "VARCHAR",
    t.UUIDType: "UUID",
    t.FixedType: "BLOB",
    t.BinaryType: "BLOB",
}


def read_three_ways(reader: SparkIcebergReader, config, identifier: str | None = None) -> list[dict]:
    """The rows of the connector's table `identifier` (that of its first topic by default; tables.table_view for a
    routed one's table), in `canonical` form, after asserting that the three readers find the same rows and the
    schema pyiceberg reads."""
    identifier = identifier or table_name(config)
    table = load_table(catalog_of(config), identifier)
    assert table is not None, f"{identifier}: no such table"
    settings = IcebergSettings.from_config(config)
    schema = table.schema()
    names = [field.name for field in schema.fields]
    found = [_sorted(table.scan().to_arrow().to_pylist())]
    spark_rows, spark_schema = reader.read(settings.catalog, settings.catalog_properties, identifier)
    found.append(_sorted(spark_rows.to_pylist()))
    quoted = tuple('"' + name.replace('"', '""') + '"' for name in names)
    found.append(_sorted(duckdb_rows(table.metadata_location, quoted)))
    assert found[0] == found[1], f"{identifier}: Spark reads other rows than pyiceberg"
    assert found[0] == found[2], f"{identifier}: DuckDB reads other rows than pyiceberg"
    expected_spark = [(f.name, spark_type(f.field_type), not f.required) for f in schema.fields]
    assert [(f["name"], f["type"], f["nullable"]) for f in spark_schema["fields"]] == expected_spark, identifier
    described = duckdb_rows(table.metadata_location, quoted, verb="DESCRIBE SELECT")
    expected_duckdb = [(f.name, duckdb_type(f.field_type)) for f in schema.fields]
    assert [(d["column_name"], d["column_type"]) for d in described] == expected_duckdb, identifier
    return found[0]


def canonical(value):
    """One form of a value whichever reader read it: instants in UTC, then anything JSON lacks as `str` (as the
    DuckDB reader prints it)."""
    if isinstance(value, datetime) and value.tzinfo is not None:
        value = value.astimezone(UTC)
    if isinstance(value, dict):
        return {k: canonical(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [canonical(v) for v in value]
    return value if value is None or isinstance(value, bool | int | float | str) else str(value)


def _sorted(rows: list[dict]) -> list[dict]:
    canonical_rows = [canonical(row) for row in rows]
    return sorted(canonical_rows, key=lambda row: json.dumps(row, sort_keys=True))


def spark_type(kind: t.IcebergType) -> str | dict:
    """Spark's type of an Iceberg type, as `StructType.jsonValue()` writes it."""
    if isinstance(kind, t.DecimalType):
        return f"decimal({kind.precision},{kind.scale})"
    if isinstance(kind, t.StructType):
        return {
            "type": "struct",
            "fields": [
                {"name": f.name, "type": spark_type(f.field_type), "nullable": not f.required, "metadata": {}}
                for f in kind.fields
            ],
        }
    if isinstance(kind, t.ListType):
        return {
            "type": "array",
            "elementType": spark_type(kind.element_type),
            "containsNull": not kind.element_required,
        }
    if isinstance(kind, t.MapType):
        return {
            "type": "map",
            "keyType": spark_type(kind.key_type),
            "valueType": spark_type(kind.value_type),
            "valueContainsNull": not kind.value_required,
        }
    return _SPARK[type(kind)]


def duckdb_type(kind: t.IcebergType) -> str:
    """DuckDB's type name of an Iceberg type, as DESCRIBE writes it."""
    if isinstance(kind, t.DecimalType):
        return f"DECIMAL({kind.precision},{kind.scale})"
    if isinstance(kind, t.StructType):
        return "STRUCT(" + ", ".join(f"{_duckdb_name(f.name)} {duckdb_type(f.field_type)}" for f in kind.fields) + ")"
    if isinstance(kind, t.ListType):
        return duckdb_type(kind.element_type) + "[]"
    if isinstance(kind, t.MapType):
        return f"MAP({duckdb_type(kind.key_type)}, {duckdb_type(kind.value_type)})"
    return _DUCKDB[type(kind)]


def _duckdb_name(name: str) -> str:
    return name if name.isidentifier() and name.islower() else '"' + name.replace('"', '""') + '"'
