"""Rows of converted records for a table: one table per schema, extra columns, and schemaless JSON whose row does
not depend on which records were read with it."""

from __future__ import annotations

import orjson
import pyarrow as pa
import pytest

from sink_engine.errors import FormatError
from sink_engine.records import RecordChunk, ValueColumn
from sink_engine.target.iceberg_tables.rows import record_tables

DOCS = [{"n": 1, "name": "a"}, {"n": 2.5, "name": {"first": "b"}}, {"n": 3, "tags": ["x"]}, {"name": None}]


def chunk_of(docs: list, first_offset: int = 10) -> tuple[RecordChunk, ValueColumn]:
    items = [orjson.dumps(d) for d in docs]
    offsets = list(range(first_offset, first_offset + len(items)))
    chunk = RecordChunk("t", 0, offsets, items, keys=[b"k"] * len(items), timestamps=[1_000 * o for o in offsets])
    return chunk, ValueColumn("json", items)


def rows_of(chunk, values) -> list[dict]:
    """Each record's row without its nulls (a missing field and a null are the same null in a table)."""
    return [
        {k: v for k, v in row.items() if v is not None}
        for _, _, table in record_tables(chunk, values)
        for row in table.to_pylist()
    ]


def test_conflicting_json_fields_are_inferred_apart_never_as_json_text():
    together = rows_of(*chunk_of(DOCS))
    alone = [row for doc in DOCS for row in rows_of(*chunk_of([doc]))]
    assert together == alone
    assert together[:2] == [{"n": 1, "name": "a"}, {"n": 2.5, "name": {"first": "b"}}]


def test_tables_cover_the_records_in_order_with_extra_columns():
    chunk, values = chunk_of(DOCS)
    pieces = list(record_tables(chunk, values, ("_kafka_metadata_offset", "_kafka_metadata_timestamp")))
    assert [(start, stop) for start, stop, _ in pieces][0][0] == 0 and pieces[-1][1] == len(DOCS)
    assert all(a[1] == b[0] for a, b in zip(pieces, pieces[1:]))
    offsets = [o for _, _, t in pieces for o in t.column("_kafka_metadata_offset").to_pylist()]
    assert offsets == [10, 11, 12, 13]
    assert pieces[0][2].schema.field("_kafka_metadata_timestamp").type == pa.timestamp("ms", tz="UTC")


def test_a_value_that_is_not_an_object_is_a_format_error_naming_it():
    chunk, values = chunk_of([{"n": 1}, [1, 2]])
    with pytest.raises(FormatError, match=r"t-0@11"):
        list(record_tables(chunk, values))
