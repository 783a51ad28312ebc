"""Kafka's field transforms with IcebergFormat: the chain of tests/functional/test_field_transforms_formats.py on
schemaless and schema'd values; the auto-created table's columns follow the transforms, every record is one row."""

from __future__ import annotations

import pytest

from sink_engine.driver.job import run_job
from sink_engine.target.iceberg_tables.catalog import ensure_namespace, load_table
from tests.functional.test_field_transforms_formats import COUNT, VALUES, chain_keys, expected_row
from tests.iceberg.tables import catalog_of
from tests.runs import committed_offsets


@pytest.mark.parametrize("values", VALUES)
def test_a_chain_of_field_transforms_lands_as_table_rows(new_topic, spark, dynamodb, iceberg_connector, unique, values):
    converter, encode = VALUES[values]
    keys = {k: v for k, v in chain_keys().items() if not k.startswith("transforms.hdr.")}
    keys["transforms"] = ",".join(alias for alias in keys["transforms"].split(",") if alias != "hdr")
    config = iceberg_connector(**{"flush.size": 6, **keys, **converter})
    topic = config["topics"][0]
    catalog = catalog_of(config)
    ensure_namespace(catalog, f"lake_{unique}.x")
    new_topic(topic, 1, [encode(i) for i in range(COUNT)])
    # when the sink runs
    run_job(config, spark, dynamodb)
    # then the table's columns are the transformed record's, and each record is one row holding what Kafka's
    # transforms make of it
    table = load_table(catalog, f"lake_{unique}.events")
    columns = set(expected_row(0))
    assert columns <= {field.name for field in table.schema().fields}
    rows = sorted(table.scan().to_arrow().to_pylist(), key=lambda row: row["kafka_offset"])
    assert [{k: row[k] for k in columns} for row in rows] == [expected_row(i) for i in range(COUNT)]
    assert committed_offsets(dynamodb, config) == {0: COUNT}
