"""A data file streamed a row group at a time: described exactly as pyiceberg describes the file it writes from the
same rows at once (statistics, bounds, field ids), and read back whole."""

from __future__ import annotations

import datetime
import itertools
import uuid
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pyiceberg.catalog.sql import SqlCatalog
from pyiceberg.io.pyarrow import _dataframe_to_data_files, schema_to_pyarrow

from sink_engine.target.iceberg_tables.data_file import StreamedDataFile
from sink_engine.target.iceberg_tables.schema_fit import fit, table_schema_of

N = 3_000
START = datetime.datetime(2024, 1, 1, tzinfo=datetime.UTC)
RECORDS = pa.table(
    {
        "id": pa.array(range(N), pa.int64()),
        "name": pa.array([f"n{i}" if i % 7 else None for i in range(N)]),
        "ratio": pa.array([i / 3 if i % 11 else float("nan") for i in range(N)]),
        "at": pa.array([START + datetime.timedelta(seconds=i) for i in range(N)], pa.timestamp("us", tz="UTC")),
        "nested": pa.array([{"a": i, "b": [i, i + 1]} for i in range(N)]),
    }
)
DESCRIBED = (
    "content",
    "file_format",
    "partition",
    "record_count",
    "value_counts",
    "null_value_counts",
    "nan_value_counts",
    "lower_bounds",
    "upper_bounds",
    "sort_order_id",
    "equality_ids",
    "key_metadata",
)


@pytest.fixture
def iceberg_table(tmp_path):
    catalog = SqlCatalog("local", uri=f"sqlite:///{tmp_path}/catalog.db", warehouse=f"file://{tmp_path}/warehouse")
    catalog.create_namespace("db")
    return catalog.create_table(
        "db.events", schema=table_schema_of(RECORDS.schema), properties={"write.parquet.compression-codec": "snappy"}
    )


def _local(data_file) -> str:
    return data_file.file_path.removeprefix("file://")


@pytest.mark.parametrize("groups", [1, 3])
def test_a_streamed_file_is_described_as_pyiceberg_describes_its_own(iceberg_table, groups):
    # given the records fitted to the table, written by pyiceberg at once and streamed in `groups` row groups
    rows = fit(schema_to_pyarrow(iceberg_table.schema()), RECORDS)
    write_id = uuid.uuid4()
    [expected] = _dataframe_to_data_files(iceberg_table.metadata, rows, iceberg_table.io, write_id, itertools.count())
    streamed = StreamedDataFile(iceberg_table, write_id, 1)
    size = -(-N // groups)
    for start in range(0, N, size):
        streamed.write(rows.slice(start, size))
    found = streamed.close()
    # then its description is pyiceberg's (sizes and row group offsets aside when the row groups differ), under the
    # table's data location with pyiceberg's name for the next task id
    assert {name: getattr(found, name) for name in DESCRIBED} == {name: getattr(expected, name) for name in DESCRIBED}
    assert found.file_path == expected.file_path.replace("/00000-0-", "/00000-1-")
    assert len(found.split_offsets) == groups and found.file_size_in_bytes == len(Path(_local(found)).read_bytes())
    # and with one row group the file is pyiceberg's byte for byte
    if groups == 1:
        assert Path(_local(found)).read_bytes() == Path(_local(expected)).read_bytes()
    # and it reads back as the rows, with the table's field ids
    parquet = pq.read_table(_local(found))
    assert parquet.column("id").to_pylist() == list(range(N))
    assert (
        parquet.schema.field("id").metadata[b"PARQUET:field_id"]
        == str(iceberg_table.schema().find_field("id").field_id).encode()
    )
    assert streamed.records == N and streamed.bytes == pytest.approx(rows.nbytes, rel=0.01)
