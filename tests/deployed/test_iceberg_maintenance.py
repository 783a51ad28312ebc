"""An IcebergFormat connector's scheduled upkeep, from the deployed artifacts: the dev environment synthesized with
an Iceberg connector has a schedule rule for it; the rule's event (EventBridge's scheduled event, through the rule's
input transformer) makes the packaged trigger start a job run whose arguments run `iceberg maintain` for that
connector, with its role (read back from moto's StartJobRun); and that request, run as EMR Serverless runs it
from the job archive, rewrites the table's small files into one."""

from __future__ import annotations

import json
import os
import re
import shlex
import uuid

import boto3
import pyarrow as pa
import pytest

from infra.connectors import connector_index
from infra.iceberg import database_location
from infra.packaging import ROOT
from tests.conftest import TABLE
from tests.connector_index import publish_index
from tests.deployed.emr_runner import run_job_run
from tests.deployed.lambda_runner import invoke
from tests.deployed.template import Templates
from tests.infra.iceberg_connector import DATABASE, NAME, iceberg_document, synthesize_with

ROLE_ARN = "arn:aws:iam::123456789012:role/orders-iceberg-job"
SMALL_FILES = 3


@pytest.fixture(scope="module")
def deployment(tmp_path_factory):
    """The dev stacks with the Iceberg connector (one topic: one table) next to the shipped one."""
    deployment, templates = synthesize_with(
        tmp_path_factory.mktemp("cdk-maintain"), [iceberg_document(topics="orders")]
    )
    settings = deployment.settings
    return deployment, Templates(
        {deployment.data.stack_name: templates["data"], deployment.service.stack_name: templates["service"]},
        settings.account,
        settings.region,
    )


def scheduled_event(rule: dict, time: str) -> dict:
    """What EventBridge delivers to the rule's target at `time`: its scheduled event (AWS's sample shape), through
    the target's input transformer (a JSON path per name, each `<name>` replaced by its value as JSON)."""
    event = {
        "version": "0",
        "id": str(uuid.uuid4()),
        "detail-type": "Scheduled Event",
        "source": "aws.events",
        "account": "123456789012",
        "time": time,
        "region": "eu-west-1",
        "resources": ["arn:aws:events:eu-west-1:123456789012:rule/maintain"],
        "detail": {},
    }
    (target,) = rule["Properties"]["Targets"]
    transformer = target["InputTransformer"]
    values = {name: event[path.removeprefix("$.")] for name, path in transformer["InputPathsMap"].items()}
    return json.loads(re.sub(r"<(\w+)>", lambda m: json.dumps(values[m[1]]), transformer["InputTemplate"]))


def _catalog(region: str):
    from pyiceberg.catalog import load_catalog

    return load_catalog(
        "test",
        type="glue",
        **{"glue.region": region, "s3.region": region, "s3.endpoint": os.environ["AWS_ENDPOINT_URL"]},
    )


def test_the_schedule_starts_iceberg_maintain_which_compacts_the_table(stack, artifacts, deployment, tmp_path):
    deployed, templates = deployment
    settings = deployed.settings
    # given the connector's index entry and config published where the trigger and the job read them (the
    # index's bucket is the data lake's)
    (spec,) = [c for c in deployed.connectors if c.name == NAME]
    application = boto3.client("emr-serverless").create_application(
        name=f"sink-{uuid.uuid4().hex[:6]}", releaseLabel=settings.emr.release_label, type="SPARK"
    )["applicationId"]
    environment = templates.function_environment(
        "trigger",
        {
            ("AWS::DynamoDB::Table", "Ref"): TABLE,
            ("AWS::DynamoDB::GlobalTable", "Ref"): TABLE,
            ("AWS::EMRServerless::Application", "ApplicationId"): application,
            ("AWS::IAM::Role", "Arn"): ROLE_ARN,
        },
    )
    publish_index(environment["CONNECTORS_URI"], connector_index((spec,), settings.bucket_name, {NAME: ROLE_ARN}))
    s3 = boto3.client("s3")
    s3.put_object(Bucket=settings.bucket_name, Key=spec.config_key, Body=json.dumps(spec.document).encode())
    # and the database the data stack declares, and a table in it with small files (three appends)
    (database,) = [
        r for stack_name, _, r in templates.resources("AWS::Glue::Database") if stack_name == deployed.data.stack_name
    ]
    assert database["Properties"]["DatabaseInput"]["LocationUri"] == database_location(settings.bucket_name, DATABASE)
    boto3.client("glue", region_name=settings.region).create_database(
        DatabaseInput=database["Properties"]["DatabaseInput"]
    )
    identifier = f"{DATABASE}.orders"  # the connector's table (iceberg.tables lake.${topic}, topics orders)
    catalog = _catalog(settings.region)
    rows = pa.table({"id": pa.array(range(30), pa.int64())})
    table = catalog.create_table(identifier, rows.schema)
    for start in range(0, 30, 30 // SMALL_FILES):
        table.append(rows.slice(start, 30 // SMALL_FILES))
    # and the job's artifacts under the keys the template names (this machine's archive)
    parameters = dict(arg.split("=", 1) for arg in shlex.split(environment["SPARK_PARAMETERS"]) if "=" in arg)
    for uri, path in (
        (parameters["spark.archives"], artifacts.job_archive),
        (environment["ENTRY_POINT"], ROOT / "infra" / "job" / "entrypoint.py"),
    ):
        bucket, _, key = uri.removeprefix("s3://").partition("/")
        if bucket not in [b["Name"] for b in s3.list_buckets()["Buckets"]]:
            s3.create_bucket(Bucket=bucket)
        s3.upload_file(str(path), bucket, key.split("#")[0])
    # when the connector's schedule rule fires and the packaged trigger gets its event
    (rule,) = [
        r
        for _, _, r in templates.resources("AWS::Events::Rule")
        if NAME in r["Properties"].get("Description", "") and "maintain" in r["Properties"]["Description"]
    ]
    assert (
        rule["Properties"]["ScheduleExpression"] == settings.iceberg.maintenance_schedule
    )  # (not continuous, no schedule of its own)
    answer = invoke(
        artifacts.lambda_layout("trigger"), scheduled_event(rule, "2026-03-02T02:30:00Z"), environment, stack.env
    )
    # then it started a job run of `iceberg maintain` for the connector, with its role
    started = answer["maintenance"]
    assert (started["connector"], started["action"]) == (NAME, "started")
    job_run = boto3.client("emr-serverless").get_job_run(applicationId=application, jobRunId=started["job_run_id"])[
        "jobRun"
    ]
    assert job_run["jobDriver"]["sparkSubmit"]["entryPointArguments"] == [
        "iceberg",
        "maintain",
        "--config",
        f"s3://{settings.bucket_name}/_connectors/{NAME}.json",
    ]
    assert job_run["executionRole"] == ROLE_ARN
    # and that request, run from the archive, rewrote the three small files as one, holding the same rows
    done = run_job_run(job_run, s3, tmp_path, stack.env)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    upkeep = json.loads(done.stdout.strip().splitlines()[-1])
    assert (upkeep["table"], upkeep["files_rewritten"], upkeep["files_written"]) == (identifier, SMALL_FILES, 1)
    table = catalog.load_table(identifier)
    assert len(list(table.scan().plan_files())) == 1
    assert sorted(table.scan().to_arrow()["id"].to_pylist()) == list(range(30))
