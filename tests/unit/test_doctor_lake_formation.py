"""The doctor's Lake Formation check (IcebergFormat on Glue), against moto's Lake Formation and Glue: it passes
while the account's defaults and the connector's database keep "Use only IAM access control" (ALL to
IAM_ALLOWED_PRINCIPALS), and otherwise fails naming each setting Lake Formation governs and the grants needed.

moto's GetDatabase returns a database's CreateTableDefaultPermissions only when its creation gave them; AWS fills
them in from the account's defaults at creation ("DataLakeSettings", Lake Formation API Reference): the tests create
the database with them, as AWS would hold it (docs/aws-fidelity.md)."""

from __future__ import annotations

import boto3
import pytest
from moto import mock_aws

from sink_engine.doctor.checks import FAILED, OK
from sink_engine.doctor.runner import Context
from sink_engine.target.choice import target_for
from sink_engine.target.iceberg_tables.lake_formation import CHECKS, IAM_ONLY, governed
from sink_engine.validation import parse_checked_config

REGION = "eu-west-1"
(CHECK,) = CHECKS
GLUE = {
    "name": "orders-to-table",
    "topics": "orders",
    "bootstrap.servers": "b-1:9098",
    "s3.bucket.name": "lake",
    "s3.region": REGION,
    "flush.size": "1000",
    "format.class": "IcebergFormat",
    "iceberg.tables": "lake_db.orders",
    "iceberg.catalog.type": "glue",
}


@pytest.fixture
def aws(monkeypatch):
    for name in ("AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_S3"):  # the functional tests' stack
        monkeypatch.delenv(name, raising=False)
    with mock_aws():
        yield


def _database(defaults: list) -> None:
    boto3.client("glue", region_name=REGION).create_database(
        DatabaseInput={
            "Name": "lake_db",
            "LocationUri": "s3://lake/iceberg/lake_db",
            "CreateTableDefaultPermissions": defaults,
        }
    )


def _account(databases: list, tables: list) -> None:
    boto3.client("lakeformation", region_name=REGION).put_data_lake_settings(
        DataLakeSettings={
            "DataLakeAdmins": [],
            "CreateDatabaseDefaultPermissions": databases,
            "CreateTableDefaultPermissions": tables,
        }
    )


def _run(config=GLUE):
    parsed = parse_checked_config(config)
    return CHECK(Context(parsed, target_for(parsed)))


def test_iam_access_control_only_passes(aws):
    # given Lake Formation's initial settings (moto's defaults too) and a database created under them
    _database([IAM_ONLY])
    result = _run()
    assert result.status == OK and "IAM access control only" in result.message


@pytest.mark.parametrize(
    "databases, tables, database, named",
    [
        ([], [IAM_ONLY], [IAM_ONLY], ["CreateDatabaseDefaultPermissions (new databases)"]),
        ([IAM_ONLY], [], [IAM_ONLY], ["the account's CreateTableDefaultPermissions (new tables)"]),
        ([IAM_ONLY], [IAM_ONLY], [], ["database lake_db's CreateTableDefaultPermissions"]),
        (
            [],
            [],
            [],
            ["CreateDatabaseDefaultPermissions", "the account's CreateTableDefaultPermissions", "database lake_db's"],
        ),
    ],
)
def test_lake_formation_governing_fails_naming_what_and_the_grants(aws, databases, tables, database, named):
    # given the account (or the database) without IAM_ALLOWED_PRINCIPALS: Lake Formation permissions apply
    _account(databases, tables)
    _database(database)
    result = _run()
    # then the check fails, naming each such setting and the grants the job role needs
    assert result.status == FAILED
    assert all(part in result.message for part in named), result.message
    assert "DESCRIBE (and CREATE_TABLE with auto-create) on database lake_db" in result.message
    assert "SELECT, INSERT, ALTER and DESCRIBE on its tables" in result.message


def test_a_missing_database_is_named_as_glues_call(aws):
    result = _run()
    assert result.status == FAILED and result.message.startswith("GetDatabase: EntityNotFoundException")


@pytest.mark.parametrize(
    "config, applies",
    [
        (GLUE, True),
        (
            {
                **GLUE,
                "iceberg.catalog.type": "rest",
                "iceberg.catalog.warehouse": "arn:aws:s3tables:eu-west-1:111122223333:bucket/t",
            },
            False,
        ),
        ({k: v for k, v in GLUE.items() if not k.startswith("iceberg.")} | {"format.class": "JsonFormat"}, False),
    ],
)
def test_the_check_applies_to_iceberg_tables_in_glue_only(config, applies):
    assert CHECK.applies(parse_checked_config(config)) is applies


def test_a_permission_list_is_iam_only_when_it_grants_all_to_iam_allowed_principals():
    other = {
        "Principal": {"DataLakePrincipalIdentifier": "arn:aws:iam::111122223333:role/admin"},
        "Permissions": ["ALL"],
    }
    database = {"Name": "d", "CreateTableDefaultPermissions": [other, IAM_ONLY]}
    assert (
        governed(
            {"CreateDatabaseDefaultPermissions": [IAM_ONLY], "CreateTableDefaultPermissions": [IAM_ONLY]}, database
        )
        == []
    )
    assert governed({"CreateDatabaseDefaultPermissions": [other]}, {"Name": "d"}) == [
        "the account's CreateDatabaseDefaultPermissions (new databases)",
        "the account's CreateTableDefaultPermissions (new tables)",
        "database d's CreateTableDefaultPermissions (its new tables)",
    ]
