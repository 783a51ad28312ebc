"""Continuous IcebergFormat connectors deploy (`continuous.connectors.<name>` naming one): a Glue connector's job
role gets s3:DeleteObject on its tables' staged files (`<table location>/metadata/sink-engine-stage-*`) and no other
object, its STAGE# items fall under its DynamoDB grants as they are; an S3 Tables connector gets nothing more (a table
bucket serves no DeleteObject: the driver leaves spent stages to its unreferenced file removal); the table upkeep of a
continuous connector runs hourly unless it has a schedule of its own; what still cannot be deployed is refused naming
the setting or the file's key. The grants run under enforced IAM in tests/iam/test_tables_streaming_under_iam.py."""

from __future__ import annotations

import json
import os

import pytest

from infra.connectors import connector_index, load_connectors
from infra.constructs.maintenance import CONTINUOUS_SCHEDULE
from infra.errors import ConnectorSpecError, SettingsError
from infra.job_policy import job_statements
from infra.settings import ENVIRONMENTS_DIR, parse_settings
from sink_engine.target.iceberg_tables.settings import IcebergSettings
from tests.infra.iceberg_connector import DATABASE, DEV, ENV, NAME, NAMES, iceberg_document, load_spec, resources

BUCKET_ARN = f"arn:aws:s3tables:{DEV.region}:{DEV.account}:bucket/sink-dev-tables"
SCHEDULED = "audit-iceberg"  # a second continuous connector, with an upkeep schedule of its own
OWN_SCHEDULE = "rate(6 hours)"


def _settings(*names: str, freshness: int = 300, **iceberg):
    """dev's settings with `names` continuous (`freshness` their alarm) and these `iceberg` settings."""
    document = json.loads((ENVIRONMENTS_DIR / f"{ENV}.json").read_text())
    document["iceberg"].update(iceberg)
    document["continuous"] = {"connectors": {n: {"freshness_alarm_seconds": freshness} for n in names}}
    return parse_settings(ENV, document, f"{ENV}.json")


def _statements(spec) -> dict[str, dict]:
    return {s["Sid"]: s for s in job_statements(spec, NAMES)}


def test_a_continuous_glue_connector_may_delete_its_staged_files_and_no_other_object(tmp_path):
    spec = load_spec(tmp_path, iceberg_document(), _settings(NAME))
    assert spec.continuous is not None
    statements = _statements(spec)
    bucket = f"arn:aws:s3:::{DEV.bucket_name}"
    assert statements["DeleteSpentStageFiles"]["Action"] == ["s3:DeleteObject"]
    assert statements["DeleteSpentStageFiles"]["Resource"] == [
        f"{bucket}/iceberg/{DATABASE}/{table}/metadata/sink-engine-stage-*" for table in ("orders", "payments")
    ]
    deleting = [s for s in statements.values() if any("Delete" in a and a.startswith("s3:") for a in s["Action"])]
    assert deleting == [statements["DeleteSpentStageFiles"]]
    # its STAGE# items are under its own partition key, which its item grants cover (Query, the transaction's
    # conditional put and lease check, GetItem)
    items = statements["OwnOffsetsLeaseAndPlans"]
    assert {"dynamodb:Query", "dynamodb:PutItem", "dynamodb:ConditionCheckItem", "dynamodb:GetItem"} <= set(
        items["Action"]
    )
    assert items["Condition"] == {"ForAllValues:StringEquals": {"dynamodb:LeadingKeys": [NAME]}}


def test_a_bounded_glue_connector_deletes_nothing(tmp_path):
    statements = _statements(load_spec(tmp_path, iceberg_document()))
    assert "DeleteSpentStageFiles" not in statements
    assert not [s for s in statements.values() if any("Delete" in a and a.startswith("s3:") for a in s["Action"])]


def test_a_continuous_s3_tables_connector_gets_no_delete_and_its_driver_deletes_nothing(tmp_path):
    settings = _settings(NAME, table_bucket="sink-dev-tables")
    spec = load_spec(
        tmp_path,
        iceberg_document(**{"iceberg.catalog.type": "rest", "iceberg.catalog.warehouse": BUCKET_ARN}),
        settings,
    )
    assert spec.continuous is not None
    actions = {a for s in job_statements(spec, NAMES) for a in s["Action"]}
    assert not [a for a in actions if "Delete" in a and not a.startswith("dynamodb:")]
    # the driver leaves spent stages to the table bucket's unreferenced file removal; a Glue table's it deletes
    assert not IcebergSettings.from_config(spec.config).deletes_spent_stages
    assert IcebergSettings.from_config(load_spec(tmp_path, iceberg_document()).config).deletes_spent_stages


def test_the_freshness_alarm_must_be_above_the_commit_interval_and_its_delay(tmp_path):
    # a record waits up to one interval (60 s by default) for its cut, then the commit delay (5 s)
    with pytest.raises(SettingsError) as failed:
        load_spec(tmp_path, iceberg_document(), _settings(NAME, freshness=65))
    assert failed.value.setting == f"continuous.connectors.{NAME}.freshness_alarm_seconds"
    assert "iceberg.control.commit.interval-ms" in str(failed.value)
    # rotate.schedule.interval.ms does not decide a table's commits: the shipped 600000 ms is no bound here
    assert load_spec(tmp_path, iceberg_document(), _settings(NAME, freshness=66)).continuous is not None


@pytest.mark.parametrize(
    "keys, key, message",
    [
        (
            {
                "iceberg.tables.dynamic-enabled": "true",
                "iceberg.tables.route-field": "__table",
                "iceberg.tables.default-namespace": "lake",
            },
            "iceberg.tables.dynamic-enabled",
            "bounded runs only",
        ),
        (
            {"iceberg.tables.auto-create-props.write.metadata.delete-after-commit.enabled": "true"},
            "iceberg.tables.auto-create-props.write.metadata.delete-after-commit.enabled",
            "may delete its spent staged",
        ),
        ({"sink.lease.duration.ms": "1800000"}, "sink.lease.duration.ms", "CancelJobRun allows at most 1800 s"),
    ],
)
def test_what_a_continuous_iceberg_connector_still_cannot_deploy_is_refused_naming_its_key(
    keys, key, message, tmp_path
):
    with pytest.raises(ConnectorSpecError) as failed:
        load_spec(tmp_path, iceberg_document(**keys), _settings(NAME))
    assert (failed.value.source, failed.value.key) == (f"{ENV}/{NAME}.json", key)
    assert message in str(failed.value)


@pytest.fixture(scope="module")
def synthesized(tmp_path_factory):
    """`cdk synth` of dev for two continuous Iceberg connectors (the shipped one left out: the settings name only
    these): (outdir, deployment, the templates by "data" / "service")."""
    os.environ.setdefault("JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION", "20")
    from infra.application import build, new_app
    from tests.infra.conftest import ensure_artifacts

    ensure_artifacts()
    settings = _settings(NAME, SCHEDULED, connectors={SCHEDULED: {"maintenance_schedule": OWN_SCHEDULE}})
    outdir = tmp_path_factory.mktemp("cdk-continuous-iceberg")
    documents = [
        iceberg_document(),
        iceberg_document(SCHEDULED, **{"topics": "orders", "iceberg.tables": "audit.events"}),
    ]
    app = new_app(str(outdir / "cdk.out"))
    deployment = build(app, ENV, connectors=tuple(load_spec(outdir, d, settings) for d in documents), settings=settings)
    app.synth()
    templates = {
        which: json.loads((outdir / "cdk.out" / f"{stack.stack_name}.template.json").read_text())
        for which, stack in (("data", deployment.data), ("service", deployment.service))
    }
    return outdir, deployment, templates


def test_a_continuous_connectors_upkeep_runs_hourly_unless_it_has_a_schedule_of_its_own(synthesized):
    _, _, templates = synthesized
    schedules = {}
    for rule in resources(templates["service"], "AWS::Events::Rule").values():
        description = rule["Properties"].get("Description", "")
        if "iceberg maintain" in description:
            schedules[description.split("connector ")[1].split(":")[0]] = rule["Properties"]["ScheduleExpression"]
    assert schedules == {NAME: CONTINUOUS_SCHEDULE, SCHEDULED: OWN_SCHEDULE}
    assert CONTINUOUS_SCHEDULE == "rate(1 hour)"


def test_the_synthesized_job_role_may_delete_the_staged_files_of_its_tables(synthesized):
    _, _, templates = synthesized
    granted = [
        s
        for r in resources(templates["service"], "AWS::IAM::Policy").values()
        for s in r["Properties"]["PolicyDocument"]["Statement"]
        if s.get("Sid") == "DeleteSpentStageFiles"
    ]
    resources_of = sorted(json.dumps(s["Resource"]) for s in granted)
    assert len(granted) == 2, granted
    assert [r.count("/metadata/sink-engine-stage-*") for r in resources_of] == [1, 2]  # audit.events; orders, payments


def test_the_templates_pass_cfn_lint_and_cdk_nag(synthesized):
    from tests.infra.test_infra_checks import cfn_lint_findings, nag_violations

    outdir, deployment, _ = synthesized
    assert cfn_lint_findings(outdir / "cdk.out", deployment) == []
    assert nag_violations(outdir / "cdk.out") == []


def test_the_index_says_which_connectors_write_tables_as_their_targets_capabilities_declare(tmp_path):
    # given dev's S3 objects connector and an Iceberg one
    (objects,) = load_connectors(DEV)
    tables = load_spec(tmp_path, iceberg_document())
    # when the trigger's index is written, then `tables` (what `iceberg maintain` and the driver's sizing go by) is
    # each target's `Capabilities.tables`
    entries = connector_index((objects, tables), DEV.bucket_name, {objects.name: "r", tables.name: "r"})
    assert {e["name"]: e["tables"] for e in entries} == {objects.name: False, tables.name: True}
