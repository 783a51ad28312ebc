"""A fan-out connector deploys with the namespaces it declares (issue 41): `iceberg.tables.route-namespaces` and
`iceberg.tables.default-namespace` are the Glue databases (or S3 Tables namespaces) the data stack creates and the job
role is granted, each of them and no other, with any table in them (records name their tables at run time); one that
declares none, or a nested one, fails synthesis naming the key. Run under enforced IAM as the synthesized role:
tests/iam/test_tables_fan_out_under_iam.py."""

from __future__ import annotations

import pytest

from infra.errors import ConnectorSpecError
from infra.job_policy import job_statements
from tests.infra.iceberg_connector import (
    DEV,
    FAN_OUT,
    NAME,
    NAMES,
    iceberg_document,
    load_spec,
    resources,
    synthesize_with,
)
from tests.infra.test_infra_s3_tables import BUCKET_ARN, WITH_BUCKET, s3_tables_document

DECLARED = ("inventory", "sales")
GLUE = f"arn:aws:glue:{DEV.region}:{DEV.account}"
LAKE = f"arn:aws:s3:::{DEV.bucket_name}"


def fan_out_document(**config) -> dict:
    return iceberg_document(**{**FAN_OUT, **config})


@pytest.fixture(scope="module")
def synthesized(tmp_path_factory):
    outdir = tmp_path_factory.mktemp("cdk-fan-out")
    return (outdir, *synthesize_with(outdir, [fan_out_document()]))


def test_the_data_stack_creates_each_declared_database(synthesized):
    _, _, templates = synthesized
    databases = [
        r["Properties"]["DatabaseInput"]["Name"] for r in resources(templates["data"], "AWS::Glue::Database").values()
    ]
    assert sorted(databases) == list(DECLARED)


def test_the_job_role_gets_the_declared_databases_and_no_other(tmp_path):
    # given a fan-out connector declaring a default namespace and one more
    statements = {s["Sid"]: s for s in job_statements(load_spec(tmp_path, fan_out_document()), NAMES)}
    # then its Glue grants name those databases, any table of each, and their files, nothing else
    databases = [f"{GLUE}:database/{d}" for d in DECLARED]
    assert statements["ReadIcebergDatabase"]["Resource"] == [f"{GLUE}:catalog", *databases]
    assert statements["CommitIcebergTables"]["Resource"] == [
        f"{GLUE}:catalog",
        *databases,
        *(f"{GLUE}:table/{d}/*" for d in DECLARED),
    ]
    assert statements["IcebergTableFiles"]["Resource"] == [f"{LAKE}/iceberg/{d}/*/*" for d in DECLARED]
    # `iceberg maintain` lists the tables of those databases (records named them), of no other
    assert statements["ListOwnIcebergTables"]["Action"] == ["glue:GetTables"]
    assert statements["ListOwnIcebergTables"]["Resource"] == statements["CommitIcebergTables"]["Resource"]
    glue = {r for s in statements.values() for r in s["Resource"] if r.startswith(GLUE)}
    assert glue == {f"{GLUE}:catalog", *databases, *(f"{GLUE}:table/{d}/*" for d in DECLARED)}
    lake = {r for s in statements.values() for r in s["Resource"] if r.startswith(f"{LAKE}/")}
    assert lake == {
        *(f"{LAKE}/iceberg/{d}/*/*" for d in DECLARED),
        f"{LAKE}/dlq/{NAME}/*",
        f"{LAKE}/_connectors/{NAME}.json",
    }


def test_the_synthesized_role_is_the_policy_and_passes_cfn_lint_and_cdk_nag(synthesized):
    from tests.infra.test_infra_checks import cfn_lint_findings, nag_violations

    outdir, deployment, templates = synthesized
    statements = [
        s
        for r in resources(templates["service"], "AWS::IAM::Policy").values()
        for s in r["Properties"]["PolicyDocument"]["Statement"]
    ]
    # the only Iceberg connector's role: its Glue tables are those of the declared databases
    tables = {r for s in statements for r in _list(s["Resource"]) if isinstance(r, str) and r.startswith(GLUE)}
    assert {t for t in tables if ":table/" in t} == {f"{GLUE}:table/{d}/*" for d in DECLARED}
    assert cfn_lint_findings(outdir / "cdk.out", deployment) == []
    assert nag_violations(outdir / "cdk.out") == []


def test_on_s3_tables_every_table_action_is_of_the_declared_namespaces(tmp_path):
    document = s3_tables_document(**FAN_OUT)
    statements = {s["Sid"]: s for s in job_statements(load_spec(tmp_path, document, WITH_BUCKET), NAMES)}
    own = {"StringEquals": {"s3tables:namespace": list(DECLARED)}}
    for sid in ("ReadOwnNamespace", "CreateOwnTables", "ListOwnTables", "CommitS3Tables"):
        assert statements[sid]["Condition"] == own, sid
    assert statements["CommitS3Tables"]["Resource"] == [f"{BUCKET_ARN}/table/*"]


@pytest.mark.parametrize(
    "config, key, message",
    [
        (
            {"iceberg.tables.default-namespace": None, "iceberg.tables.route-namespaces": None},
            "iceberg.tables.route-namespaces",
            "deployed with the namespaces its records may reach declared",
        ),
        ({"iceberg.tables.route-namespaces": "sales.eu"}, "iceberg.tables.route-namespaces", "one level"),
        ({"iceberg.tables.default-namespace": "inv-entory"}, "iceberg.tables.default-namespace", "not a Glue name"),
        ({"iceberg.tables.route-namespaces": "sink_dev"}, "iceberg.tables.route-namespaces", "catalog.database"),
    ],
)
def test_what_a_fan_out_connector_cannot_deploy_is_refused_naming_the_key(config, key, message, tmp_path):
    with pytest.raises(ConnectorSpecError) as failed:
        load_spec(tmp_path, fan_out_document(**config))
    assert (failed.value.source, failed.value.key) == (f"dev/{NAME}.json", key)
    assert message in str(failed.value)


def _list(value) -> list:
    return value if isinstance(value, list) else [value]
