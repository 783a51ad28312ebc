"""Fan-out by field deployed with its declared namespaces, under enforced IAM (issue 41): dev synthesized with a
fan-out connector (Glue tables, moto's Glue) that declares a namespace for bare table names
(`iceberg.tables.default-namespace`, as Debezium's `__source_table` gives them) and one more
(`iceberg.tables.route-namespaces`); its databases created as the data stack declares them, another database beside
them as an admin's, and `sink-engine run` run as the synthesized job role (driver and Spark workers). Records routed
inside the declared databases land in their tables; one routed to the other database is a bad record (dead-lettered,
`errors.tolerance=all`) naming its offset and the table, with no call to AWS for it; the run's Glue calls are granted
by the role on their ARNs, and the role can reach no table, database or file of the other database (Glue: the
role's documents evaluated on those ARNs, as moto authorizes Glue by action only; S3: moto denies the writes).

pyarrow uploads data files in parts, after which moto's state API fails (docs/aws-fidelity.md): this module's name
puts it after the tests that read job runs back through that API."""

from __future__ import annotations

import json
from dataclasses import dataclass

import orjson
import pytest

from devtools.producer import create_topic, produce
from infra.settings import ENVIRONMENTS_DIR, parse_settings
from tests.dlq_corpus import read_dlq_s3
from tests.iam.acting import acting_as
from tests.iam.actions import needs
from tests.iam.deployment import ENV, iceberg_connector_document, synthesize
from tests.iam.engine import CliResult, run_cli
from tests.iam.evaluate import allows
from tests.iam.recorder import Call, CallLog
from tests.iam.tables import admin_catalog, iceberg_deployment

NAME, TOPIC = "cdc-fan-out", "cdc"
DEFAULT, OTHER_DECLARED, OUTSIDE = "inventory", "sales", "hr"  # two declared databases, one not
DLQ = f"dlq/{NAME}"
# (route field value, table it lands in, or None: a bad record); offsets 0..4 of partition 0
ROUTES = (
    ("customers", f"{DEFAULT}.customers"),  # Debezium's bare source table name: the default namespace
    ("sales.invoices", f"{OTHER_DECLARED}.invoices"),
    ("hr.salaries", None),  # outside the declared namespaces
    ("Customers", f"{DEFAULT}.customers"),  # lower-cased, as the Iceberg sink reads the field
    ("inventory.items", f"{DEFAULT}.items"),
)
OUTSIDE_OFFSET = 2


def _settings():
    """dev's settings with the topic TOPIC."""
    document = json.loads((ENVIRONMENTS_DIR / f"{ENV}.json").read_text())
    document["msk"]["topics"].append(TOPIC)
    return parse_settings(ENV, document, f"{ENV}.json")


def _document(bootstrap: str) -> dict:
    """tests/iam's Iceberg connector under its own name, reading TOPIC and routing each record by `__source_table`
    into the declared databases; bad records dead-lettered under its own folder."""
    config = {k: v for k, v in iceberg_connector_document(bootstrap)["config"].items() if k != "iceberg.tables"}
    return {
        "name": NAME,
        "config": {
            **config,
            "topics": TOPIC,
            "iceberg.tables.dynamic-enabled": "true",
            "iceberg.tables.route-field": "__source_table",
            "iceberg.tables.default-namespace": DEFAULT,
            "iceberg.tables.route-namespaces": OTHER_DECLARED,
            "errors.deadletterqueue.s3.prefix": DLQ,
        },
    }


@dataclass(frozen=True)
class FanOutRun:
    run: CliResult
    tables: dict[str, list[int]]  # `database.table` -> ids, of the declared databases and OUTSIDE
    letters: list[dict]  # the dead letters' context (topic, partition, offset, error)
    committed: int  # the partition's next offset


@pytest.fixture(scope="module")
def fan_out(iam_stack, world, deployed, tmp_path_factory):
    """The connector deployed (tests/iam/tables.py), OUTSIDE created by the admin as a database of the data lake, the
    topic with ROUTES' records, and the module's call log."""
    create_topic(iam_stack.bootstrap_servers, TOPIC, 1)
    values = [orjson.dumps({"id": n, "__source_table": route}) for n, (route, _) in enumerate(ROUTES)]
    produce(iam_stack.bootstrap_servers, TOPIC, values, 1)
    synthesized = synthesize(
        _document(iam_stack.bootstrap_servers), tmp_path_factory.mktemp("iam-fan-out"), _settings()
    )
    bucket = synthesized.settings.bucket_name
    world.admin.client("glue").create_database(
        DatabaseInput={"Name": OUTSIDE, "LocationUri": f"s3://{bucket}/iceberg/{OUTSIDE}"}
    )
    with iceberg_deployment(world, synthesized) as deployment:
        yield deployment, CallLog(tmp_path_factory.mktemp("fan-out-calls") / "calls.jsonl")


@pytest.fixture(scope="module")
def fan_out_run(fan_out, world, spark) -> FanOutRun:
    deployment, log = fan_out
    with acting_as(deployment.principal, log, spark):
        run = run_cli("run", "--config", deployment.config_uri)
    settings = deployment.deployed.synthesized.settings
    catalog, s3 = admin_catalog(world), world.admin.client("s3")
    tables = {
        ".".join(identifier): sorted(r["id"] for r in catalog.load_table(identifier).scan().to_arrow().to_pylist())
        for database in (DEFAULT, OTHER_DECLARED, OUTSIDE)
        for identifier in catalog.list_tables(database)
    }
    letters = read_dlq_s3(s3, settings.bucket_name, f"{DLQ}/")
    (item,) = world.admin.client("dynamodb").query(
        TableName=settings.table_name,
        KeyConditionExpression="pk = :pk AND sk = :sk",
        ExpressionAttributeValues={":pk": {"S": NAME}, ":sk": {"S": f"OFFSET#{TOPIC}#0"}},
    )["Items"]
    return FanOutRun(run, tables, letters, int(item["next_offset"]["N"]))


def test_the_data_stack_declares_exactly_the_declared_databases(fan_out):
    deployment, _ = fan_out
    data = deployment.deployed.synthesized.templates["data"]["Resources"].values()
    declared = [r["Properties"]["DatabaseInput"]["Name"] for r in data if r["Type"] == "AWS::Glue::Database"]
    assert sorted(declared) == [DEFAULT, OTHER_DECLARED]


def test_routes_inside_the_declared_databases_land_and_one_outside_is_a_bad_record(fan_out_run):
    assert fan_out_run.run.code == 0, fan_out_run.run.err[-3000:]
    # each record routed inside is in its table (created by the run in its declared database)
    expected: dict[str, list[int]] = {}
    for n, (_, table) in enumerate(ROUTES):
        if table is not None:
            expected.setdefault(table, []).append(n)
    assert fan_out_run.tables == expected
    # the one routed to the other database is dead-lettered, naming its offset and the table; the offset moved on
    (letter,) = fan_out_run.letters
    assert (letter["topic"], letter["partition"], letter["offset"]) == (TOPIC, 0, OUTSIDE_OFFSET)
    assert letter["error"]["class"] == "FieldError"
    assert f"names table {OUTSIDE}.salaries, whose namespace {OUTSIDE} is not one" in letter["error"]["message"]
    assert fan_out_run.committed == len(ROUTES)


def _glue_needs(fan_out, fan_out_run):
    deployment, log = fan_out
    assert fan_out_run.run.code == 0, fan_out_run.run.err[-3000:]
    calls = [c for c in log.calls() if c.principal == deployment.principal.name and c.service == "glue"]
    return [n for c in calls for n in needs(c, deployment.deployed.facts())]


def test_every_glue_call_of_the_run_is_granted_on_its_arns_and_none_reaches_another_database(fan_out, fan_out_run):
    deployment, _ = fan_out
    found = _glue_needs(fan_out, fan_out_run)
    assert {n.call.operation for n in found} >= {"GetDatabase", "GetTable", "CreateTable", "UpdateTable"}
    assert sorted({str(n) for n in found if not allows(deployment.principal.documents, n)}) == []
    databases = {n.call.params.get("DatabaseName") or n.call.params.get("Name") for n in found}
    assert databases == {DEFAULT, OTHER_DECLARED}


def test_the_doctor_as_the_role_checks_the_declared_databases(fan_out, fan_out_run):
    # given the deployed connector, when the doctor runs as its job role, then the catalog check finds the declared
    # databases and the Lake Formation check reads each (GetDatabase), within the role's grants. moto keeps no
    # CreateTableDefaultPermissions for a database created without them, where AWS fills in the account's (the
    # unit tests, tests/unit/test_doctor_lake_formation.py): so the check names both databases as governed here
    deployment, _ = fan_out
    with acting_as(deployment.principal):
        result = run_cli("doctor", "--config", deployment.config_uri)
    rows = {line.split("  ", 1)[0].strip(): line for line in result.out.splitlines()}
    assert f"namespaces {DEFAULT}, {OTHER_DECLARED} exist" in rows["iceberg catalog"], result.out
    governed = rows["lake formation"]
    assert f"database {DEFAULT}'s" in governed and f"database {OTHER_DECLARED}'s" in governed, result.out
    assert "AccessDenied" not in result.out and "needs " not in result.out, result.out


def test_iceberg_maintain_as_the_role_lists_and_keeps_up_the_tables_of_the_declared_databases(
    fan_out, fan_out_run, spark
):
    # given the run's tables, when `iceberg maintain` runs as the job role (as the scheduled upkeep does)
    deployment, log = fan_out
    with acting_as(deployment.principal, log, spark):
        result = run_cli("iceberg", "maintain", "--config", deployment.config_uri)
    # then it maintains each table of the declared databases that holds the connector's snapshots, having listed
    # those databases alone (glue:GetTables, granted on them)
    assert result.code == 0, result.err[-3000:]
    maintained = sorted(json.loads(line)["table"] for line in result.out.splitlines() if line.startswith("{"))
    assert maintained == sorted({table for _, table in ROUTES if table})
    listed = [n for n in _glue_needs(fan_out, fan_out_run) if n.call.operation == "GetTables"]
    assert {n.call.params["DatabaseName"] for n in listed} == {DEFAULT, OTHER_DECLARED}
    assert [str(n) for n in listed if not allows(deployment.principal.documents, n)] == []


@pytest.mark.parametrize(
    "operation, params",
    [
        ("GetDatabase", {"Name": OUTSIDE}),
        ("GetTable", {"DatabaseName": OUTSIDE, "Name": "salaries"}),
        ("CreateTable", {"DatabaseName": OUTSIDE, "TableInput": {"Name": "salaries"}}),
        ("UpdateTable", {"DatabaseName": OUTSIDE, "TableInput": {"Name": "salaries"}}),
    ],
)
def test_the_role_can_touch_no_table_of_another_database(operation, params, fan_out, world):
    # given a Glue request of the role on the database it did not declare, then its documents deny it on its ARNs
    deployment, _ = fan_out
    call = Call(deployment.principal.name, "glue", operation, world.region, params)
    denied = [n for n in needs(call, deployment.deployed.facts()) if not allows(deployment.principal.documents, n)]
    assert [n.resource.rsplit(":", 1)[1] for n in denied] == [
        f"database/{OUTSIDE}",
        *([f"table/{OUTSIDE}/salaries"] if operation != "GetDatabase" else []),
    ]


def test_the_role_can_write_no_file_of_another_database(fan_out, fan_out_run):
    # given the run's files in its declared databases, when the role writes and reads under another's location,
    # then moto (which authorizes S3 by resource ARN) denies it
    deployment, _ = fan_out
    bucket = deployment.deployed.synthesized.settings.bucket_name
    mine = deployment.principal.credentials.client("s3")
    mine.put_object(Bucket=bucket, Key=f"iceberg/{DEFAULT}/customers/data/probe.txt", Body=b"x")  # its own: granted
    for call in (
        lambda: mine.put_object(Bucket=bucket, Key=f"iceberg/{OUTSIDE}/salaries/data/probe.txt", Body=b"x"),
        lambda: mine.get_object(Bucket=bucket, Key=f"iceberg/{OUTSIDE}/salaries/metadata/probe.json"),
        lambda: mine.put_object(Bucket=bucket, Key="iceberg/inventory_old/items/data/probe.txt", Body=b"x"),
    ):
        with pytest.raises(mine.exceptions.ClientError, match="AccessDenied"):
            call()


def test_the_roles_glue_tables_are_any_of_the_declared_databases_and_no_other(fan_out):
    # the role as synthesized: its documents name the tables of the declared databases, nothing else
    deployment, _ = fan_out
    resources = {r for d in deployment.principal.documents for s in d.statements for r in _list(s["Resource"])}
    glue_tables = {r.split(":table/", 1)[1] for r in resources if r.startswith("arn:aws:glue:") and ":table/" in r}
    assert glue_tables == {f"{DEFAULT}/*", f"{OTHER_DECLARED}/*"}


def _list(value) -> list:
    return value if isinstance(value, list) else [value]
