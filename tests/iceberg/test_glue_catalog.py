"""IcebergFormat with the AWS Glue Data Catalog (moto's Glue; the warehouse in moto's S3): the same commit path as
the SQL catalog, through pyiceberg's Glue catalog (a commit is Glue's UpdateTable with the VersionId it read)."""

from __future__ import annotations

import boto3
import pytest

from sink_engine.driver.job import run_job
from tests.conftest import BUCKET
from tests.iceberg.tables import connector_snapshots, ids, newest_offsets, table_of
from tests.runs import committed_offsets, crash_at, past_the_lease


@pytest.fixture
def glue_config(stack, new_topic, connector, unique):
    """A connector writing `glue_<unique>.events` in Glue; the database exists (the deployed stack creates it)."""
    database = f"glue_{unique}"
    boto3.client("glue").create_database(
        DatabaseInput={"Name": database, "LocationUri": f"s3://{BUCKET}/glue-{unique}"}
    )
    config = connector(
        **{
            "format.class": "IcebergFormat",
            "iceberg.tables": f"{database}.events",
            "iceberg.catalog.type": "glue",
            "iceberg.tables.auto-create-enabled": "true",
            "iceberg.tables.evolve-schema-enabled": "true",
            "sink.lease.duration.ms": 2000,
        }
    )
    new_topic(config, 2, events=100)
    return config


def test_records_land_once_in_a_glue_table(stack, spark, dynamodb, glue_config, unique):
    config = glue_config
    run_job(config, spark, dynamodb)
    run_job(config, spark, dynamodb)
    assert ids(config) == list(range(100)) and len(connector_snapshots(config)) == 1
    # the table lies under its database's location, and Glue points at its current metadata
    assert table_of(config).location() == f"s3://{BUCKET}/glue-{unique}/events"
    glue_table = boto3.client("glue").get_table(DatabaseName=f"glue_{unique}", Name="events")["Table"]
    assert glue_table["Parameters"]["table_type"] == "ICEBERG"
    assert glue_table["Parameters"]["metadata_location"] == table_of(config).metadata_location


def test_a_crash_after_the_snapshot_recovers_from_glue(stack, spark, dynamodb, glue_config):
    config = glue_config
    crash_at("after_snapshot_before_commit", config, spark, dynamodb)
    assert committed_offsets(dynamodb, config) == {}
    run_job(config, spark, dynamodb, clock=past_the_lease(config))
    assert ids(config) == list(range(100)) and len(connector_snapshots(config)) == 1
    assert committed_offsets(dynamodb, config) == newest_offsets(config) == {0: 50, 1: 50}
