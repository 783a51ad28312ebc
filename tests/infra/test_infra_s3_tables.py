"""S3 Tables connectors deploy (issue 13): with `iceberg.table_bucket` in the settings the data stack creates and
keeps that table bucket and the namespaces the connectors' `iceberg.tables` name; a connector whose
`iceberg.catalog.type=rest` names the bucket's ARN as its warehouse gets exactly the s3tables actions AWS maps the
Iceberg REST operations it calls to, on that bucket and its tables, and a scheduled `iceberg maintain`; any other
REST catalog fails synthesis naming the file and the key.

moto has no S3 Tables: the grants are checked against AWS's documented mapping (docs/aws-fidelity.md), not run."""

from __future__ import annotations

import json

import pytest

from infra.errors import ConnectorSpecError
from infra.job_policy import job_statements
from tests.infra.iceberg_connector import (
    AUDIT_TABLE,
    DEV,
    NAME,
    NAMES,
    iceberg_document,
    load_spec,
    resources,
    settings_with,
    synthesize_with,
)

TABLE_BUCKET = "sink-dev-tables"
BUCKET_ARN = f"arn:aws:s3tables:{DEV.region}:{DEV.account}:bucket/{TABLE_BUCKET}"
NAMESPACE = "lake"
AUDIT = "audit-s3tables"  # a second connector in another namespace of the bucket, without auto-create


WITH_BUCKET = settings_with(table_bucket=TABLE_BUCKET)


def s3_tables_document(name: str = NAME, **config) -> dict:
    """The dev Iceberg connector on the stack's table bucket (`config` overrides keys, None removes one)."""
    return iceberg_document(name, **{"iceberg.catalog.type": "rest", "iceberg.catalog.warehouse": BUCKET_ARN, **config})


@pytest.fixture(scope="module")
def synthesized(tmp_path_factory):
    outdir = tmp_path_factory.mktemp("cdk-s3tables")
    documents = [s3_tables_document(), s3_tables_document(AUDIT, **AUDIT_TABLE)]
    return (outdir, *synthesize_with(outdir, documents, WITH_BUCKET))


def test_the_data_stack_creates_and_keeps_the_table_bucket_and_each_namespace(synthesized):
    _, _, templates = synthesized
    ((bucket_id, bucket),) = resources(templates["data"], "AWS::S3Tables::TableBucket").items()
    assert bucket["Properties"]["TableBucketName"] == TABLE_BUCKET
    namespaces = {
        r["Properties"]["Namespace"]: r for r in resources(templates["data"], "AWS::S3Tables::Namespace").values()
    }
    assert sorted(namespaces) == ["audit", NAMESPACE]
    for resource in (bucket, *namespaces.values()):
        assert (resource["DeletionPolicy"], resource["UpdateReplacePolicy"]) == ("Retain", "Retain")
    for resource in namespaces.values():
        assert resource["Properties"]["TableBucketARN"] == {"Fn::GetAtt": [bucket_id, "TableBucketARN"]}
    # no Glue database for them: their catalog is S3 Tables'
    assert resources(templates["data"], "AWS::Glue::Database") == {}


def test_the_job_roles_get_their_table_bucket_in_the_template(synthesized):
    _, _, templates = synthesized
    documents = [
        r["Properties"]["PolicyDocument"]["Statement"]
        for r in resources(templates["service"], "AWS::IAM::Policy").values()
    ]
    s3tables = [
        s for statements in documents for s in statements if any(a.startswith("s3tables:") for a in _list(s["Action"]))
    ]
    granted = {(a, r) for s in s3tables for a in _list(s["Action"]) for r in _list(s["Resource"])}
    table = f"{BUCKET_ARN}/table/*"
    reads_and_commits = {
        (a, table)
        for a in (
            "s3tables:GetTableMetadataLocation",
            "s3tables:GetTableData",
            "s3tables:PutTableData",
            "s3tables:UpdateTableMetadataLocation",
        )
    }
    # two roles: the auto-creating connector's also may CreateTable; each may GetNamespace its own namespace
    assert granted == {
        ("s3tables:GetTableBucket", BUCKET_ARN),
        ("s3tables:CreateTable", BUCKET_ARN),
        ("s3tables:GetNamespace", BUCKET_ARN),
        *reads_and_commits,
    }
    assert sum(("s3tables:CreateTable" in _list(s["Action"])) for s in s3tables) == 1
    # each role's namespace actions and table actions are of its own namespace only
    assert sorted(
        s["Condition"]["StringEquals"]["s3tables:namespace"]
        for s in s3tables
        if "s3tables:GetNamespace" in _list(s["Action"])
    ) == [["audit"], [NAMESPACE]]
    assert all("Condition" in s for s in s3tables if s["Action"] != "s3tables:GetTableBucket")


def test_the_templates_pass_cfn_lint_and_cdk_nag(synthesized):
    from tests.infra.test_infra_checks import cfn_lint_findings, nag_violations

    outdir, deployment, _ = synthesized
    assert cfn_lint_findings(outdir / "cdk.out", deployment) == []
    assert nag_violations(outdir / "cdk.out") == []


def test_endpoints_egress_reaches_s3_tables_and_each_connector_is_maintained(synthesized):
    _, _, templates = synthesized
    services = [
        r["Properties"]["ServiceName"] for r in resources(templates["service"], "AWS::EC2::VPCEndpoint").values()
    ]
    assert f"com.amazonaws.{DEV.region}.s3tables" in services
    assert f"com.amazonaws.{DEV.region}.lakeformation" not in services  # S3 Tables' connectors only: no Glue tables
    maintained = {
        json.loads(t["InputTransformer"]["InputTemplate"].replace("<time>", '""'))["connector"]
        for r in resources(templates["service"], "AWS::Events::Rule").values()
        for t in r["Properties"]["Targets"]
        if '"maintain"' in t.get("InputTransformer", {}).get("InputTemplate", "")
    }
    assert maintained == {NAME, AUDIT}


def test_the_job_role_gets_the_documented_s3tables_actions_and_nothing_of_glue_or_the_lake(tmp_path):
    spec = load_spec(tmp_path, s3_tables_document(), WITH_BUCKET)
    statements = {s["Sid"]: s for s in job_statements(spec, NAMES)}
    # getConfig -> GetTableBucket; createTable -> CreateTable (+ PutTableData); loadTable ->
    # GetTableMetadataLocation, GetTableData; updateTable -> UpdateTableMetadataLocation, PutTableData, GetTableData
    own = {"StringEquals": {"s3tables:namespace": [NAMESPACE]}}
    assert statements["ReadTableBucket"] == {
        "Sid": "ReadTableBucket",
        "Effect": "Allow",
        "Action": ["s3tables:GetTableBucket"],
        "Resource": [BUCKET_ARN],
    }
    # createTable, and each table action, in the connector's own namespace only
    assert statements["CreateOwnTables"] == {
        "Sid": "CreateOwnTables",
        "Effect": "Allow",
        "Action": ["s3tables:CreateTable"],
        "Resource": [BUCKET_ARN],
        "Condition": own,
    }
    assert statements["CommitS3Tables"] == {
        "Sid": "CommitS3Tables",
        "Effect": "Allow",
        "Action": [
            "s3tables:GetTableMetadataLocation",
            "s3tables:GetTableData",
            "s3tables:PutTableData",
            "s3tables:UpdateTableMetadataLocation",
        ],
        "Resource": [f"{BUCKET_ARN}/table/*"],
        "Condition": own,
    }
    # loadNamespaceMetadata (the doctor's check of the namespace) -> GetNamespace, on the bucket, for the
    # connector's own namespace only
    assert statements["ReadOwnNamespace"] == {
        "Sid": "ReadOwnNamespace",
        "Effect": "Allow",
        "Action": ["s3tables:GetNamespace"],
        "Resource": [BUCKET_ARN],
        "Condition": own,
    }
    actions = {a for s in statements.values() for a in s["Action"]}
    assert not {a for a in actions if a.startswith("glue:")}
    assert not any(
        "Delete" in a or ("Namespace" in a and a != "s3tables:GetNamespace")
        for a in actions
        if a.startswith(("s3tables:", "s3:"))
    )
    bucket = f"arn:aws:s3:::{DEV.bucket_name}"
    lake = {r for s in statements.values() for r in s["Resource"] if r.startswith(bucket)}
    assert lake == {f"{bucket}/dlq/{NAME}/*", f"{bucket}/_connectors/{NAME}.json"}  # dead letters, its config


def test_without_auto_create_the_role_may_not_create_tables(tmp_path):
    spec = load_spec(tmp_path, s3_tables_document(**{"iceberg.tables.auto-create-enabled": None}), WITH_BUCKET)
    assert not [a for s in job_statements(spec, NAMES) for a in s["Action"] if a == "s3tables:CreateTable"]


@pytest.mark.parametrize(
    "key, config, message",
    [
        (
            "iceberg.catalog.warehouse",
            {"iceberg.catalog.warehouse": "arn:aws:s3tables:eu-west-1:111111111111:bucket/other"},
            f"is the stack's S3 table bucket '{BUCKET_ARN}'",
        ),
        (
            "iceberg.catalog.warehouse",
            {
                "iceberg.catalog.warehouse": "s3://elsewhere/tables",
                "iceberg.catalog.uri": "https://catalog.example.com",
            },
            f"is the stack's S3 table bucket '{BUCKET_ARN}'",
        ),
        (
            "iceberg.catalog.uri",
            {"iceberg.catalog.uri": "https://catalog.example.com/iceberg"},
            "reached at S3 Tables' regional endpoint",
        ),
        (
            "iceberg.catalog.rest.signing-region",
            {"iceberg.catalog.rest.signing-region": "us-east-1"},
            "signs its requests to S3 Tables",
        ),
        (
            "iceberg.catalog.s3.endpoint",
            {"iceberg.catalog.s3.endpoint": "https://s3.example.com"},
            "must be unset on AWS",
        ),
        ("iceberg.tables", {"iceberg.tables": "lake.sub.events"}, "an S3 table is `namespace.table`"),
    ],
)
def test_another_rest_catalog_fails_naming_file_and_key(key, config, message, tmp_path):
    with pytest.raises(ConnectorSpecError, match=f"dev/{NAME}.json, key '{key}'.*{message}"):
        load_spec(tmp_path, s3_tables_document(**config), WITH_BUCKET)


def test_rest_without_a_table_bucket_in_the_settings_fails_naming_the_key(tmp_path):
    with pytest.raises(
        ConnectorSpecError,
        match=f"dev/{NAME}.json, key 'iceberg.catalog.type'.*set iceberg.table_bucket in its settings",
    ):
        load_spec(tmp_path, s3_tables_document())


def test_a_malformed_table_bucket_setting_is_named():
    from infra.errors import SettingsError

    with pytest.raises(SettingsError, match="setting 'iceberg.table_bucket'.*does not match"):
        settings_with(table_bucket="Tables_Bucket")


def _list(value) -> list:
    return value if isinstance(value, list) else [value]
