"""IcebergFormat connectors deploy (issue 13): the data stack creates their Glue databases under the data lake and
keeps them, their job role gets their Glue tables and the tables' files and nothing of `topics.dir`, and a schedule
per connector invokes the trigger for its table upkeep; what the stacks cannot deploy (a SQL catalog, REST without
the environment's table bucket, names Glue or Athena refuse, requests or files elsewhere) fails synthesis naming
the file and the key. S3 Tables connectors (`iceberg.catalog.type=rest`): test_infra_s3_tables.py."""

from __future__ import annotations

import copy
import json

import pytest

from infra.errors import ConnectorSpecError, SettingsError
from infra.job_policy import job_statements
from infra.settings import ENVIRONMENTS_DIR, parse_settings
from tests.infra.iceberg_connector import (
    AUDIT_TABLE,
    DATABASE,
    DEV,
    NAME,
    NAMES,
    iceberg_document,
    load_spec,
    resources,
    settings_with,
    synthesize_with,
)

AUDIT = "audit-iceberg"  # a second Iceberg connector: one table, no auto-create, a schedule of its own
AUDIT_SCHEDULE = "rate(6 hours)"


@pytest.fixture(scope="module")
def synthesized(tmp_path_factory):
    settings = settings_with(connectors={AUDIT: {"maintenance_schedule": AUDIT_SCHEDULE}})
    outdir = tmp_path_factory.mktemp("cdk-iceberg")
    return (outdir, *synthesize_with(outdir, [iceberg_document(), iceberg_document(AUDIT, **AUDIT_TABLE)], settings))


def test_the_data_stack_creates_and_keeps_each_iceberg_database_under_the_data_lake(synthesized):
    _, _, templates = synthesized
    databases = {
        r["Properties"]["DatabaseInput"]["Name"]: r
        for r in resources(templates["data"], "AWS::Glue::Database").values()
    }
    assert sorted(databases) == ["audit", DATABASE]
    for name, resource in databases.items():
        assert resource["Properties"]["DatabaseInput"]["LocationUri"] == f"s3://{DEV.bucket_name}/iceberg/{name}"
        assert (resource["DeletionPolicy"], resource["UpdateReplacePolicy"]) == ("Retain", "Retain")
    # the Athena tables of the service stack stay the object connectors' (an Iceberg table is its own)
    tables = [
        r["Properties"]["TableInput"]["Name"] for r in resources(templates["service"], "AWS::Glue::Table").values()
    ]
    assert tables and all(t.startswith("orders_s3_sink_") for t in tables)
    # and no lifecycle rule reaches iceberg/ (Athena cannot read archived objects)
    (bucket,) = [
        r
        for r in resources(templates["data"], "AWS::S3::Bucket").values()
        if r["Properties"].get("BucketName") == DEV.bucket_name
    ]
    prefixes = [rule.get("Prefix", "") for rule in bucket["Properties"]["LifecycleConfiguration"]["Rules"]]
    assert not any(p.startswith("iceberg") for p in prefixes)


def test_endpoints_egress_reaches_lake_formation_where_the_doctor_checks_it(synthesized):
    # the doctor's Lake Formation check (GetDataLakeSettings) runs in the job, in the VPC, for tables in Glue
    _, deployment, templates = synthesized
    assert deployment.settings.network.egress == "endpoints"
    (endpoint,) = [
        r["Properties"]
        for r in resources(templates["service"], "AWS::EC2::VPCEndpoint").values()
        if r["Properties"]["ServiceName"] == f"com.amazonaws.{DEV.region}.lakeformation"
    ]
    assert endpoint["VpcEndpointType"] == "Interface" and endpoint["PrivateDnsEnabled"] is True


def test_the_templates_pass_cfn_lint_and_cdk_nag(synthesized):
    from tests.infra.test_infra_checks import cfn_lint_findings, nag_violations

    outdir, deployment, _ = synthesized
    assert cfn_lint_findings(outdir / "cdk.out", deployment) == []
    assert nag_violations(outdir / "cdk.out") == []


def test_the_job_role_gets_its_glue_tables_and_their_files_only(tmp_path):
    spec = load_spec(tmp_path, iceberg_document())
    statements = {s["Sid"]: s for s in job_statements(spec, NAMES)}
    glue, bucket = f"arn:aws:glue:{DEV.region}:{DEV.account}", f"arn:aws:s3:::{DEV.bucket_name}"
    tables = [f"{glue}:table/{DATABASE}/{t}" for t in ("orders", "payments")]
    assert statements["ReadIcebergDatabase"] == {
        "Sid": "ReadIcebergDatabase",
        "Effect": "Allow",
        "Action": ["glue:GetDatabase"],
        "Resource": [f"{glue}:catalog", f"{glue}:database/{DATABASE}"],
    }
    assert statements["CommitIcebergTables"]["Action"] == ["glue:GetTable", "glue:UpdateTable", "glue:CreateTable"]
    assert statements["CommitIcebergTables"]["Resource"] == [f"{glue}:catalog", f"{glue}:database/{DATABASE}", *tables]
    assert statements["IcebergTableFiles"]["Action"] == ["s3:GetObject", "s3:PutObject", "s3:AbortMultipartUpload"]
    assert statements["IcebergTableFiles"]["Resource"] == [
        f"{bucket}/iceberg/{DATABASE}/{t}/*" for t in ("orders", "payments")
    ]
    assert statements["FindIcebergFiles"]["Resource"] == [bucket] and "Condition" not in statements["FindIcebergFiles"]
    # nothing under topics.dir: its S3 writes are its dead letters only, and no other Glue or delete action
    assert statements["WriteOwnPrefixes"]["Resource"] == [f"{bucket}/dlq/{NAME}/*"]
    assert "ListUploads" not in statements
    actions = {a for s in statements.values() for a in s["Action"]}
    assert {a for a in actions if a.startswith("glue:")} == {
        "glue:GetDatabase",
        "glue:GetTable",
        "glue:UpdateTable",
        "glue:CreateTable",
    }
    assert not any("Delete" in a for a in actions if a.startswith(("s3:", "glue:")))


def test_without_auto_create_the_role_may_not_create_tables(tmp_path):
    spec = load_spec(tmp_path, iceberg_document(**{"iceberg.tables.auto-create-enabled": None}))
    (commit,) = [s for s in job_statements(spec, NAMES) if s["Sid"] == "CommitIcebergTables"]
    assert commit["Action"] == ["glue:GetTable", "glue:UpdateTable"]


def test_each_iceberg_connector_gets_a_schedule_that_invokes_the_trigger_with_its_maintain_event(synthesized):
    _, _, templates = synthesized
    service = templates["service"]
    (trigger,) = [
        k
        for k, r in resources(service, "AWS::Lambda::Function").items()
        if r["Properties"]["Handler"] == "lambdas.trigger.handler.handler"
    ]
    rules = {}
    for resource in resources(service, "AWS::Events::Rule").values():
        (target,) = resource["Properties"]["Targets"]
        transformer = target.get("InputTransformer")
        if transformer and '"maintain"' in transformer["InputTemplate"]:
            assert target["Arn"] == {"Fn::GetAtt": [trigger, "Arn"]}
            assert transformer["InputPathsMap"] == {"time": "$.time"}
            event = json.loads(transformer["InputTemplate"].replace("<time>", '"2026-03-02T02:30:00Z"'))
            rules[event["connector"]] = (resource["Properties"]["ScheduleExpression"], event)
    assert rules == {
        NAME: (
            DEV.iceberg.maintenance_schedule,
            {"action": "maintain", "connector": NAME, "time": "2026-03-02T02:30:00Z"},
        ),
        AUDIT: (AUDIT_SCHEDULE, {"action": "maintain", "connector": AUDIT, "time": "2026-03-02T02:30:00Z"}),
    }
    # EventBridge may invoke the trigger for each rule
    permitted = [
        r["Properties"]["SourceArn"]
        for r in resources(service, "AWS::Lambda::Permission").values()
        if r["Properties"]["Principal"] == "events.amazonaws.com"
        and r["Properties"]["FunctionName"] == {"Fn::GetAtt": [trigger, "Arn"]}
    ]
    assert len(permitted) == 3  # the idle-flush tick and the two connectors' upkeep


@pytest.mark.parametrize(
    "key, value, message",
    [
        (
            "iceberg.catalog.type",
            "sql",
            "cannot be deployed: a SQL catalog's SQLite file serves the processes of one machine",
        ),
        ("iceberg.catalog.type", "rest", "this environment has none: set iceberg.table_bucket"),
        ("iceberg.tables", "lake.sub.events", "a Glue table is `database.table`"),
        ("iceberg.tables", "lake.Events", "'Events' is not a Glue name Athena can query"),
        ("iceberg.tables", "sink_dev.${topic}", "is the environment's catalog.database"),
        ("iceberg.catalog.warehouse", "s3://elsewhere/tables", "must be unset on AWS"),
        ("iceberg.catalog.glue.endpoint", "https://glue.example.com", "must be unset on AWS"),
        ("iceberg.catalog.s3.access-key-id", "AKIAEXAMPLE", "must be unset on AWS"),
        ("iceberg.catalog.glue.id", "222222222222", "in this environment's account 111111111111"),
        ("iceberg.catalog.glue.region", "us-east-1", "this environment deploys 'eu-west-1'"),
        ("iceberg.tables.auto-create-props.write.data.path", "s3://elsewhere/data", "under the table's location only"),
        (
            "iceberg.tables.auto-create-props.write.metadata.delete-after-commit.enabled",
            "true",
            "may not delete table files",
        ),
        ("iceberg.tables", "lake.orders,lake.sub.refunds", "a Glue table is `database.table`"),
    ],
)
def test_what_the_stacks_cannot_deploy_fails_naming_file_and_key(key, value, message, tmp_path):
    extra = {
        "sql": {"iceberg.catalog.uri": "sqlite:////tmp/catalog.db", "iceberg.catalog.warehouse": "s3://lake/tables"},
        "rest": {"iceberg.catalog.warehouse": "arn:aws:s3tables:eu-west-1:111111111111:bucket/lake"},
    }.get(value, {})
    with pytest.raises(ConnectorSpecError, match=f"dev/{NAME}.json, key '{key}'.*{message}"):
        load_spec(tmp_path, iceberg_document(**{key: value, **extra}))


def test_topics_dir_under_the_iceberg_prefix_is_reserved(tmp_path):
    document = json.loads((DEV.connectors_dir / "orders.json").read_text())
    document["config"]["topics.dir"] = "iceberg/objects"
    with pytest.raises(ConnectorSpecError, match="key 'topics.dir'.*reserved"):
        load_spec(tmp_path, document)


@pytest.mark.parametrize(
    "path, value, message",
    [
        ("retention.dlq_prefix", "iceberg/", "where Iceberg tables lie"),
        ("iceberg.maintenance_schedule", "daily", "does not match"),
        ("iceberg.maintenance_schedule", "rate(1 hours)", "does not match"),
        ("iceberg.connectors", {"orders-iceberg": "rate(1 day)"}, "must be a connector name mapped to"),
        ("iceberg.connectors", {"orders-iceberg": {"maintenance_schedule": "cron(0 3 * *)"}}, "does not match"),
    ],
)
def test_malformed_iceberg_settings_are_named(path, value, message):
    document = json.loads((ENVIRONMENTS_DIR / "dev.json").read_text())
    node = document
    *parents, last = path.split(".")
    for part in parents:
        node = node[part]
    node[last] = copy.deepcopy(value)
    with pytest.raises(SettingsError, match=f"setting '{path}.*{message}"):
        parse_settings("dev", document, "dev.json")


def test_a_schedule_for_a_connector_that_is_not_an_iceberg_one_fails_synthesis(tmp_path):
    settings = settings_with(connectors={"orders-s3-sink": {"maintenance_schedule": "rate(1 day)"}})
    with pytest.raises(SettingsError, match="'iceberg.connectors.orders-s3-sink'.*names no IcebergFormat connector"):
        synthesize_with(tmp_path, [], settings)


def test_an_iceberg_connector_with_a_regex_router_declares_the_routed_tables(tmp_path):
    # given a RegexRouter that renames every topic to <topic>_routed
    document = iceberg_document(
        **{
            "transforms": "route",
            "transforms.route.type": "org.apache.kafka.connect.transforms.RegexRouter",
            "transforms.route.regex": "(.*)",
            "transforms.route.replacement": "$1_routed",
        }
    )
    # when its spec is loaded, then its tables are those of the routed names, where the task writes
    spec = load_spec(tmp_path, document)
    assert spec.iceberg.tables == tuple((DATABASE, f"{topic}_routed") for topic in sorted(spec.topics))


def test_an_upsert_connector_deploys_with_the_grants_of_an_append_one(tmp_path):
    """An upsert table's commit (copy-on-write, docs/iceberg.md "Upsert tables") reads and writes files under the
    table's location and commits an overwrite snapshot through the same catalog operations as an append: it deletes
    no object, so its job role is the append connector's."""
    upsert = iceberg_document(
        **{
            "iceberg.tables.upsert-mode-enabled": "true",
            "iceberg.tables.default-id-columns": "id",
            "iceberg.tables.cdc-field": "__op",
            "behavior.on.null.values": "write",
            "key.converter": "org.apache.kafka.connect.json.JsonConverter",
        }
    )
    (tmp_path / "upsert").mkdir()
    (tmp_path / "append").mkdir()
    spec = load_spec(tmp_path / "upsert", upsert)
    assert spec.config["iceberg.tables.upsert-mode-enabled"]
    assert job_statements(spec, NAMES) == job_statements(load_spec(tmp_path / "append", iceberg_document()), NAMES)


def test_a_statically_routed_connector_deploys_with_each_listed_table_granted(tmp_path):
    # given static routing to two tables of two databases (every record to each: no route field)
    spec = load_spec(tmp_path, iceberg_document(**{"iceberg.tables": "lake.orders,audit.refunds"}))
    # then the stacks know both tables, and the role gets those tables and their files, nothing else of Glue
    assert spec.iceberg.tables == (("audit", "refunds"), ("lake", "orders"))
    statements = {s["Sid"]: s for s in job_statements(spec, NAMES)}
    glue, bucket = f"arn:aws:glue:{DEV.region}:{DEV.account}", f"arn:aws:s3:::{DEV.bucket_name}"
    assert statements["CommitIcebergTables"]["Resource"] == [
        f"{glue}:catalog",
        f"{glue}:database/audit",
        f"{glue}:database/lake",
        f"{glue}:table/audit/refunds",
        f"{glue}:table/lake/orders",
    ]
    assert statements["IcebergTableFiles"]["Resource"] == [
        f"{bucket}/iceberg/audit/refunds/*",
        f"{bucket}/iceberg/lake/orders/*",
    ]
    assert "ListOwnIcebergTables" not in statements  # only a fan-out lists tables
