"""A routed range's output (fan-out by field) opens only the tables its records go to: a task whose records name two
of five tables loads those two, once each, and never the other three (a fan-out to hundreds of tables does not load
each one in every task)."""

from __future__ import annotations

import orjson
import pyarrow as pa
import pytest
from pyiceberg.catalog.sql import SqlCatalog

from sink_engine.model import PartitionRange, TaskResult
from sink_engine.records import RecordChunk, ValueColumn
from sink_engine.target.iceberg_tables.catalog import open_catalog
from sink_engine.target.iceberg_tables.schema_fit import table_schema_of
from sink_engine.target.iceberg_tables.settings import IcebergSettings
from sink_engine.target.iceberg_tables.task import RoutedFiles, TableOutput
from sink_engine.validation import parse_checked_config
from tests.builders import connector_keys

TABLES = [f"lake.t{n}" for n in range(5)]


@pytest.fixture
def settings(tmp_path) -> IcebergSettings:
    """Fan-out by `__table` into a SQL catalog on disk holding the five tables."""
    config = parse_checked_config(
        connector_keys(
            {
                "format.class": "IcebergFormat",
                "iceberg.tables.dynamic-enabled": "true",
                "iceberg.tables.route-field": "__table",
                "iceberg.catalog.type": "sql",
                "iceberg.catalog.uri": f"sqlite:///{tmp_path}/catalog.db",
                "iceberg.catalog.warehouse": f"file://{tmp_path}/warehouse",
            }
        )
    )
    settings = IcebergSettings.from_config(config)
    catalog = open_catalog(settings)
    catalog.create_namespace("lake")
    schema = table_schema_of(pa.schema([("id", pa.int64()), ("__table", pa.string())]))
    for identifier in TABLES:
        catalog.create_table(identifier, schema=schema)
    return settings


def chunk_of(docs: list[dict], first: int) -> tuple[RecordChunk, ValueColumn]:
    items = [orjson.dumps(d) for d in docs]
    offsets = list(range(first, first + len(items)))
    return RecordChunk("t", 0, offsets, items, keys=[None] * len(items), timestamps=offsets), ValueColumn("json", items)


def test_a_range_loads_only_the_tables_its_records_go_to(settings, monkeypatch):
    loads: list[str] = []
    real = SqlCatalog.load_table
    monkeypatch.setattr(
        SqlCatalog, "load_table", lambda self, identifier: loads.append(identifier) or real(self, identifier)
    )
    # given a range whose records, over two chunks, name tables t1 and t3 of the five
    planned = PartitionRange("t", 0, 100, 120, None)
    output = TableOutput(settings, planned, "c")
    for first in (100, 110):
        chunk, values = chunk_of(
            [{"id": n, "__table": TABLES[1 + 2 * (n % 2)]} for n in range(first, first + 10)], first
        )
        # when its task writes them
        output.writer.write(chunk, values, output.partitioner.encode(chunk, values))
    output.settle(120, None)
    # then it loaded t1 and t3, each once, and wrote a data file of each, of ten records
    assert sorted(loads) == [TABLES[1], TABLES[3]]
    result = TaskResult(range=planned, next_offset=120)
    output.finish(result)
    assert isinstance(result.target_result, RoutedFiles)
    written = {table: sum(f.record_count for f in files.data_files) for table, files, _ in result.target_result.tables}
    assert written == {TABLES[1]: 10, TABLES[3]: 10}
