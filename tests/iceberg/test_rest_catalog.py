"""IcebergFormat with an Iceberg REST catalog (`iceberg.catalog.type=rest`, as S3 Tables' endpoint is reached):
pyiceberg's RestCatalog against tests/iceberg_rest_server.py (the spec's endpoints over a SQL catalog, the
warehouse in moto's S3), with the S3 Tables defaults that a table bucket's ARN as warehouse brings."""

from __future__ import annotations

import os

import pyarrow as pa
import pytest
from pyiceberg.catalog import load_catalog
from pyiceberg.exceptions import CommitFailedException

from devtools.producer import produce_events
from sink_engine.driver.job import now_ms, run_job
from sink_engine.target.iceberg_tables.catalog import without_commit_retries
from sink_engine.target.iceberg_tables.errors import TableCommitConflictError
from tests.conftest import BUCKET
from tests.iceberg.runs import CatalogGate, ParkedRun, gate_first_catalog
from tests.iceberg.tables import (
    catalog_of,
    connector_snapshots,
    create_namespace,
    ids,
    newest_offsets,
    table_name,
    table_of,
)
from tests.iceberg_rest_server import IcebergRestServer
from tests.runs import committed_offsets, crash_at, past_the_lease

TABLE_BUCKET_ARN = "arn:aws:s3tables:us-east-1:123456789012:bucket/lake-tables"


@pytest.fixture
def rest_server(stack, tmp_path, unique):
    """The REST catalog, its tables kept by a SQL catalog with the warehouse in moto's S3."""
    backing = load_catalog(
        "rest-backing",
        **{
            "type": "sql",
            "uri": f"sqlite:///{tmp_path / 'rest.db'}",
            "warehouse": f"s3://{BUCKET}/rest-{unique}",
            "s3.region": "us-east-1",
            "s3.endpoint": os.environ["AWS_ENDPOINT_URL"],
        },
    )
    with IcebergRestServer(backing) as server:
        yield server


@pytest.fixture
def rest_config(new_topic, connector, rest_server, unique):
    """A connector writing `rest_<unique>.events` through the REST catalog, configured as for S3 Tables (a table
    bucket's ARN as warehouse) but for the endpoint; the namespace exists, the topic holds 100 events."""
    config = connector(
        **{
            "format.class": "IcebergFormat",
            "iceberg.tables": f"rest_{unique}.events",
            "iceberg.catalog.type": "rest",
            "iceberg.catalog.uri": rest_server.url,
            "iceberg.catalog.warehouse": TABLE_BUCKET_ARN,
            "iceberg.tables.auto-create-enabled": "true",
            "sink.lease.duration.ms": 2000,
        }
    )
    create_namespace(config)
    new_topic(config, 2, events=100)
    return config


def test_requests_are_signed_with_sigv4_as_s3tables(rest_server, rest_config):
    """S3 Tables authenticates SigV4 requests signed for the service `s3tables` (the server records, AWS checks)."""
    assert rest_server.authorizations
    for authorization in rest_server.authorizations:
        assert authorization.startswith("AWS4-HMAC-SHA256 Credential=testing/")
        assert "/us-east-1/s3tables/aws4_request" in authorization


def test_records_land_once_across_a_rerun(stack, spark, dynamodb, rest_server, rest_config):
    config = rest_config
    run_job(config, spark, dynamodb)
    run_job(config, spark, dynamodb)
    assert ids(config) == list(range(100)) and len(connector_snapshots(config)) == 1
    assert committed_offsets(dynamodb, config) == newest_offsets(config) == {0: 50, 1: 50}
    # the table lies where the catalog put it, in moto's S3, and the server's catalog holds the same head
    table = table_of(config)
    assert table.location().startswith(f"s3://{BUCKET}/rest-")
    stored = rest_server.catalog.load_table(table_name(config))
    assert stored.metadata_location == table.metadata_location


def test_a_crash_after_the_snapshot_recovers_from_the_rest_catalog(stack, spark, dynamodb, rest_config):
    config = rest_config
    crash_at("after_snapshot_before_commit", config, spark, dynamodb)
    assert committed_offsets(dynamodb, config) == {} and len(connector_snapshots(config)) == 1
    produce_events(stack.bootstrap_servers, config["topics"][0], 20, 2, first_id=100)
    run_job(config, spark, dynamodb, clock=past_the_lease(config))
    assert ids(config) == list(range(120))
    assert [s.summary["added-records"] for s in connector_snapshots(config)] == ["100", "20"]
    assert committed_offsets(dynamodb, config) == newest_offsets(config) == {0: 60, 1: 60}


def test_an_append_on_a_stale_base_is_refused_with_409(stack, spark, dynamodb, rest_server, rest_config):
    """The commit asserts the head it was built on; the server checks it against the stored table and answers 409
    (pyiceberg's CommitFailedException) when another commit moved the head, and nothing is appended."""
    config = rest_config
    run_job(config, spark, dynamodb)
    refused = len(rest_server.refused_commits)  # a create that lost to another task's is refused too
    stale = without_commit_retries(table_of(config))
    table_of(config).append(pa.table({"event_id": pa.array([-1], pa.int64())}))
    with pytest.raises(CommitFailedException, match="branch main has changed"):
        stale.append(pa.table({"event_id": pa.array([-2], pa.int64())}))
    assert len(rest_server.refused_commits) == refused + 1
    assert ids(config) == [-1] + list(range(100))


def test_a_zombie_parked_with_its_append_built_cannot_commit(
    stack, spark, dynamodb, rest_server, rest_config, monkeypatch
):
    """Run A is parked with its append built on the head it read while run B, a lease period ahead, takes the lease
    and commits the same records: the server refuses A's stale base (409) and A stops, its lease gone."""
    config = rest_config
    gate = CatalogGate(catalog_of(config), "commit_table")
    gate_first_catalog(monkeypatch, gate)
    zombie = ParkedRun(config, spark, dynamodb, gate)
    refused = len(rest_server.refused_commits)  # a create that lost to another task's is refused too
    winner = run_job(config, spark, dynamodb, clock=lambda: now_ms() + 2 * config["sink.lease.duration.ms"])
    assert winner.records_written == 100
    outcome = zombie.finish()
    assert isinstance(outcome, TableCommitConflictError) and outcome.exit_code == 4
    assert len(rest_server.refused_commits) == refused + 1
    assert ids(config) == list(range(100)) and len(connector_snapshots(config)) == 1


def test_a_continuous_run_on_an_s3_table_bucket_leaves_its_spent_stages_to_the_bucket(
    stack, dynamodb, rest_server, new_topic, connector, unique, tmp_path
):
    """A table bucket serves no DeleteObject: the driver deletes no staged file (S3 Tables' unreferenced file removal
    does), where on any other catalog it deletes each once committed (tests/iam/test_tables_continuous_under_iam.py)."""
    import boto3

    from sink_engine.target.iceberg_tables.settings import STAGED_FILES
    from tests.continuous.runs import caught_up, kill_group, start_continuous, stop, wait_for
    from tests.iceberg.runs import write_config

    # given a continuous run of a connector configured for S3 Tables (its endpoint the local REST catalog)
    config = connector(
        **{
            "format.class": "IcebergFormat",
            "iceberg.tables": f"rest_{unique}.events",
            "iceberg.catalog.type": "rest",
            "iceberg.catalog.uri": rest_server.url,
            "iceberg.catalog.warehouse": TABLE_BUCKET_ARN,
            "iceberg.tables.auto-create-enabled": "true",
            "iceberg.control.commit.interval-ms": 2000,
            "sink.lease.duration.ms": 8000,
        }
    )
    create_namespace(config)
    new_topic(config, 2, events=100)
    run = start_continuous(str(write_config(config, tmp_path / "connector.json")))
    try:
        # when it has committed every record and is stopped
        wait_for(caught_up(dynamodb, config, {0: [0] * 50, 1: [0] * 50}), 120, "the run's commits")
        code, _, err = stop(run, 8000)
        assert code == 0, err[-3000:]
    finally:
        if run.poll() is None:
            kill_group(run)
    # then the records are in the table once, and the staged manifests it committed are still there
    assert ids(config) == list(range(100))
    location = table_of(config).location().removeprefix(f"s3://{BUCKET}/")
    listed = boto3.client("s3").list_objects_v2(Bucket=BUCKET, Prefix=f"{location}/{STAGED_FILES}")
    assert [o["Key"] for o in listed.get("Contents", [])], "no staged file left: the driver deleted them"
    assert "STAGE_FILE_KEPT" not in err  # none was tried
