"""Fitting records to an Iceberg table's schema: new fields, widened types, casts that keep values, and the rest
refused naming the column."""

from __future__ import annotations

import pyarrow as pa
import pytest
from pyiceberg.io.pyarrow import _pyarrow_to_schema_without_ids, schema_to_pyarrow
from pyiceberg.schema import assign_fresh_schema_ids

from sink_engine.target.iceberg_tables.schema_fit import (
    FitError,
    evolution,
    evolved,
    fit,
    iceberg_type,
    table_schema_of,
)


def table_schema(records: pa.Table) -> pa.Schema:
    """The Arrow schema (with field ids) of a table created from these records, as pyiceberg gives it."""
    return schema_to_pyarrow(assign_fresh_schema_ids(_pyarrow_to_schema_without_ids(table_schema_of(records.schema))))


FIRST = pa.table(
    {
        "id": pa.array([1], pa.int32()),
        "price": pa.array([1.5], pa.float32()),
        "name": ["a"],
        "address": pa.array([{"city": "Lyon"}]),
        "tags": pa.array([["x"]]),
        "attributes": pa.array([[("k", 1)]], pa.map_(pa.string(), pa.int64())),
        "seen": pa.array([1_700_000_000_000], pa.timestamp("ms", tz="UTC")),
        "always_null": pa.nulls(1),
    }
)


def test_a_created_table_holds_iceberg_types_every_column_optional():
    schema = table_schema_of(FIRST.schema)
    assert schema.names == ["id", "price", "name", "address", "tags", "attributes", "seen"]  # no type yet: left out
    assert schema.field("seen").type == pa.timestamp("us", tz="UTC")
    assert all(f.nullable for f in schema)
    assert iceberg_type(pa.int8()) == pa.int32() and iceberg_type(pa.time32("ms")) == pa.time64("us")


def test_records_of_the_table_schema_fit_and_missing_columns_are_null():
    table = table_schema(FIRST)
    fitted = fit(table, FIRST.select(["id", "name"]))
    assert fitted.schema == table
    assert fitted.to_pylist() == [
        {"id": 1, "price": None, "name": "a", "address": None, "tags": None, "attributes": None, "seen": None}
    ]


def test_a_new_field_and_a_new_nested_field_are_the_evolution():
    table = table_schema(FIRST)
    records = pa.table(
        {"id": pa.array([2], pa.int32()), "address": pa.array([{"city": "Nice", "zip": "06000"}]), "coupon": ["SPRING"]}
    )
    changes = evolution(table, records.schema)
    assert changes == pa.schema(
        [pa.field("address", pa.struct([pa.field("zip", pa.string())])), pa.field("coupon", pa.string())]
    )
    assert fit(evolved(table, changes), records).to_pylist()[0]["address"] == {"city": "Nice", "zip": "06000"}
    # without evolution the new fields are dropped
    assert "coupon" not in fit(table, records).column_names


@pytest.mark.parametrize(
    "column, values, widened",
    [
        ("id", pa.array([2**40], pa.int64()), pa.int64()),
        ("price", pa.array([2.5], pa.float64()), pa.float64()),
    ],
)
def test_a_wider_type_widens_the_column(column, values, widened):
    table = table_schema(FIRST)
    changes = evolution(table, pa.table({column: values}).schema)
    assert changes.field(column).type == widened
    assert fit(evolved(table, changes), pa.table({column: values})).column(column).to_pylist() == values.to_pylist()


def test_narrower_values_are_cast_when_they_fit():
    table = table_schema(FIRST)
    assert evolution(table, pa.table({"id": pa.array([7], pa.int8())}).schema) is None
    assert fit(table, pa.table({"id": pa.array([7], pa.int8())})).column("id").to_pylist() == [7]
    # without evolution a long that fits in the int column is kept, one that does not is refused
    assert fit(table, pa.table({"id": pa.array([7], pa.int64())})).column("id").to_pylist() == [7]
    with pytest.raises(FitError, match="column id: a int64 value does not fit"):
        fit(table, pa.table({"id": pa.array([2**40], pa.int64())}))
    # schemaless JSON: whole doubles are integers, other doubles are not
    assert fit(table, pa.table({"id": [3.0]})).column("id").to_pylist() == [3]
    with pytest.raises(FitError, match="truncated"):
        fit(table, pa.table({"id": [3.5]}))


@pytest.mark.parametrize(
    "records, column",
    [
        (pa.table({"name": [1]}), "name"),
        (pa.table({"id": ["one"]}), "id"),
        (pa.table({"address": ["Lyon"]}), "address"),
        (pa.table({"address": pa.array([{"city": 5}])}), "address.city"),
        (pa.table({"tags": pa.array([[1]])}), "tags.element"),
        (pa.table({"seen": pa.array([1], pa.timestamp("ms"))}), "seen"),  # no time zone where the column has UTC
    ],
)
def test_other_type_changes_are_refused_naming_the_column(records, column):
    table = table_schema(FIRST)
    assert evolution(table, records.schema) is None
    with pytest.raises(FitError) as refused:
        fit(table, records)
    assert refused.value.column == column
