"""IcebergFormat under enforced IAM: an Iceberg connector (Glue tables, moto's Glue) synthesized for the dev
environment runs as its own job role, with the role's documents taken from the template. The Glue database is
created as the data stack declares it and the connector config published as the admin publishes it. The run
creates and commits its tables; moto checks the S3 calls (pyarrow's included) against the role's S3 resources,
and the Glue calls, recorded, are checked here against the role's Glue ARNs; each Glue action the role grants is
needed, and one removed fails a run naming it.

pyarrow uploads data files in parts, after which moto's state API fails (docs/aws-fidelity.md): this module's
name puts it after the tests that read job runs back through that API."""

from __future__ import annotations

import re
from dataclasses import dataclass

import pytest

from devtools.producer import produce
from tests.iam.acting import acting_as
from tests.iam.actions import needs
from tests.iam.deployment import (
    ICEBERG_CONNECTOR,
    ICEBERG_DATABASE,
    TEST_SETTINGS,
    iceberg_connector_document,
    synthesize,
)
from tests.iam.engine import BAD_VALUES, PARTITIONS, CliResult, run_cli
from tests.iam.evaluate import allows
from tests.iam.policies import without_action
from tests.iam.tables import IcebergDeployment, admin_catalog, iceberg_deployment


@dataclass(frozen=True)
class IcebergRun:
    run: CliResult
    rows: dict[str, int]  # table -> rows
    offsets: dict[str, int]  # OFFSET# sort key -> next offset
    glue_tables: dict[str, dict]  # table -> Glue's GetTable answer
    metadata_locations: dict[str, str]  # table -> the metadata file pyiceberg reads as current
    dead_letters: int  # records under the connector's dead-letter prefix


@pytest.fixture(scope="module")
def iceberg(iam_stack, world, deployed, engine_run, tmp_path_factory) -> IcebergDeployment:
    """The Iceberg connector deployed next to the suite's one (tests/iam/tables.py), after the suite's connector has
    run: the topics hold records."""
    synthesized = synthesize(
        iceberg_connector_document(iam_stack.bootstrap_servers), tmp_path_factory.mktemp("iam-iceberg")
    )
    with iceberg_deployment(world, synthesized) as deployment:
        yield deployment


@pytest.fixture(scope="module")
def iceberg_run(iceberg, world, spark, call_log) -> IcebergRun:
    """`sink-engine run` of the Iceberg connector as its job role (driver and Spark workers), then what it left."""
    with acting_as(iceberg.principal, call_log, spark):
        run = run_cli("run", "--config", iceberg.config_uri)
    settings = iceberg.deployed.synthesized.settings
    glue, catalog = world.admin.client("glue"), admin_catalog(world)
    tables = {t["Name"]: t for t in glue.get_tables(DatabaseName=ICEBERG_DATABASE)["TableList"]}
    items = world.admin.client("dynamodb").query(
        TableName=settings.table_name,
        KeyConditionExpression="pk = :pk",
        ExpressionAttributeValues={":pk": {"S": ICEBERG_CONNECTOR}},
    )["Items"]
    loaded = {name: catalog.load_table(f"{ICEBERG_DATABASE}.{name}") for name in tables}
    s3, prefix = world.admin.client("s3"), f"{settings.retention.dlq_prefix}{ICEBERG_CONNECTOR}/"
    letters = sum(
        s3.get_object(Bucket=settings.bucket_name, Key=o["Key"])["Body"].read().count(b"\n")
        for o in s3.list_objects_v2(Bucket=settings.bucket_name, Prefix=prefix).get("Contents", [])
    )
    return IcebergRun(
        run,
        {name: t.scan().to_arrow().num_rows for name, t in loaded.items()},
        {i["sk"]["S"]: int(i["next_offset"]["N"]) for i in items if i["sk"]["S"].startswith("OFFSET#")},
        tables,
        {name: t.metadata_location for name, t in loaded.items()},
        letters,
    )


def test_an_iceberg_run_as_its_job_role_creates_and_commits_its_glue_tables(iceberg_run, iceberg):
    assert iceberg_run.run.code == 0, iceberg_run.run.err
    # every record read was committed: the good ones as rows of its topic's table, the bad ones (on orders, some
    # replayed there by the DLQ replay's test) dead-lettered
    assert set(iceberg_run.offsets) == {f"OFFSET#{t}#{p}" for t, n in PARTITIONS.items() for p in range(n)}
    orders = sum(n for sk, n in iceberg_run.offsets.items() if sk.startswith("OFFSET#orders#"))
    assert iceberg_run.dead_letters >= len(BAD_VALUES)
    assert iceberg_run.rows == {
        "orders": orders - iceberg_run.dead_letters,
        "payments": iceberg_run.offsets["OFFSET#payments#0"],
    }
    # each table lies under its database's location in the data lake, as the role's S3 grants name it
    bucket = iceberg.deployed.synthesized.settings.bucket_name
    for name, table in iceberg_run.glue_tables.items():
        assert table["StorageDescriptor"]["Location"] == f"s3://{bucket}/iceberg/{ICEBERG_DATABASE}/{name}"


def test_each_glue_table_carries_what_athena_reads_an_iceberg_table_by(iceberg_run):
    # Athena queries a Glue table as Iceberg when table_type is ICEBERG, reading the metadata file that
    # metadata_location names: the current one after the run's commits
    for name, table in iceberg_run.glue_tables.items():
        assert table["Parameters"]["table_type"] == "ICEBERG"
        assert table["Parameters"]["metadata_location"] == iceberg_run.metadata_locations[name]
        assert table["Parameters"]["metadata_location"].startswith(
            table["StorageDescriptor"]["Location"] + "/metadata/"
        )


def _glue_needs(call_log, iceberg, iceberg_run):
    assert iceberg_run.run.code == 0, iceberg_run.run.err
    calls = [c for c in call_log.calls() if c.principal == iceberg.principal.name]
    return [n for c in calls if c.service == "glue" for n in needs(c, iceberg.deployed.facts())]


def test_every_glue_call_of_the_run_is_granted_by_the_role_as_deployed(iceberg_run, iceberg, call_log):
    found = _glue_needs(call_log, iceberg, iceberg_run)
    # the driver's (recovery, commits) and the tasks' (load, create) calls of pyiceberg's Glue catalog
    assert {n.call.operation for n in found} == {"GetDatabase", "GetTable", "CreateTable", "UpdateTable"}
    documents = list(iceberg.principal.documents)
    assert sorted({str(n) for n in found if not allows(documents, n)}) == []


@pytest.mark.parametrize("action", ["glue:GetDatabase", "glue:GetTable", "glue:CreateTable", "glue:UpdateTable"])
def test_each_glue_action_the_role_grants_is_needed_on_its_arns(action, iceberg_run, iceberg, call_log):
    found = _glue_needs(call_log, iceberg, iceberg_run)
    reduced = without_action(list(iceberg.principal.documents), action)
    assert {n.action for n in found if not allows(reduced, n)} == {action}


# what a run needs of the role, each denied at a different step of a later run
REMOVED = {
    "glue:GetTable": "GetTable",  # the run's recovery loads each table before planning
    "glue:UpdateTable": "UpdateTable",  # the snapshot commit, after the tasks wrote their data files
    "s3:ListBucket": "ListObjectsV2",  # pyarrow's look for a new metadata file (ACCESS_DENIED: its words)
}


@pytest.mark.parametrize("action", sorted(REMOVED))
def test_an_action_removed_from_the_role_fails_the_run_naming_it(action, iceberg_run, iceberg, world, iam_stack, spark):
    # given the role's documents without one action, and new records for a commit
    principal = world.role(
        f"iceberg-job-without-{action.replace(':', '-')}", without_action(list(iceberg.principal.documents), action)
    )
    produce(
        iam_stack.bootstrap_servers,
        "payments",
        [b'{"n": 1}'] * int(TEST_SETTINGS["flush.size"]),
        PARTITIONS["payments"],
    )
    # when the connector runs as that role
    with acting_as(principal, spark=spark):
        result = run_cli("run", "--config", iceberg.config_uri)
    # then the run fails, saying which call was denied
    assert result.code != 0, result.out
    assert re.search("AccessDenied|ACCESS_DENIED", result.err) and REMOVED[action] in result.err, result.err
