"""With ICEBERG_JAVA_READER=1 (make test-iceberg-readers), every table a test reads back through tables.table_of is
read again, once the test's body has passed (before its fixtures close: a REST catalog's server is one), by the three
readers of readers.py, which must agree on its rows and schema (left out: a table whose metadata pyiceberg can no
longer load, as a test made it so, and a table with a `time` column, which Spark's reader refuses). A hook
(`pytest_runtest_call`) that a conftest imports; one Spark reader serves the whole session (shared_reader)."""

from __future__ import annotations

import os

import pytest
from pyiceberg.schema import index_by_id
from pyiceberg.types import TimeType

from sink_engine.target.iceberg_tables.catalog import load_table
from sink_engine.target.iceberg_tables.errors import TableError
from tests.iceberg import tables
from tests.iceberg.readers import read_three_ways
from tests.iceberg.spark_reader import shared_reader

ENABLED = os.environ.get("ICEBERG_JAVA_READER") == "1"


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item):
    if not ENABLED:
        return (yield)
    tables.LOADED = {}
    try:
        outcome = yield  # (raises when the test failed: then nothing more is read)
        for (_, identifier), config in tables.LOADED.items():
            if _readable(config, identifier):
                read_three_ways(shared_reader(), config, identifier)
        return outcome
    finally:
        tables.LOADED = None


def _readable(config, identifier: str) -> bool:
    """Whether the three can read the table now: not when the test made its metadata unreadable on purpose (a
    metadata file deleted: test_catalog.py), nor when a column is of Iceberg's `time`, which Spark's reader refuses
    (docs/iceberg.md; test_java_reader.py shows it)."""
    try:
        table = load_table(tables.catalog_of(config), identifier)
    except TableError:
        return False
    fields = index_by_id(table.schema()).values() if table is not None else ()
    return table is not None and not any(isinstance(field.field_type, TimeType) for field in fields)
