"""The job archive holds everything the job needs and runs it as EMR Serverless does: unpacked into an empty
folder, its interpreter runs the entry point and imports every engine module and dependency with no other
site-packages; and a real `run` started from a StartJobRun request (read back from moto), the archive and entry
point in S3 under the keys CDK gives them, lands records in S3 and commits their offsets."""

from __future__ import annotations

import json
import subprocess
import tarfile
from pathlib import Path

import boto3
import pytest

from devtools.producer import create_topic, produce_events
from infra.packaging import ROOT
from sink_engine.config import parse_config
from tests.conftest import BUCKET, TABLE
from tests.deployed.emr_runner import run_job_run, sink_job_parameters, upload_asset
from tests.runs import committed_offsets
from tests.s3_reader import landed_records

REGION = "us-east-1"  # the local stack's
# the stack's cluster: unused here, the connector file names the local broker (bootstrap.servers wins)
CLUSTER_ARN = f"arn:aws:kafka:{REGION}:123456789012:cluster/local/0a1b2c3d-4e5f-6a7b-8c9d-0e1f2a3b4c5d-1"
RECORDS, PARTITIONS = 300, 2
CONNECTOR = ROOT / "infra" / "connectors" / "dev" / "orders.json"
IMPORT_ALL = """
import importlib, pkgutil, sink_engine
for mod in pkgutil.walk_packages(sink_engine.__path__, "sink_engine."):
    if mod.name.endswith("__main__"):
        continue
    try:
        importlib.import_module(mod.name)
    except ModuleNotFoundError as e:
        if e.name.split(".")[0] not in ("pyspark", "py4j"):  # Spark brings these on EMR
            raise
for dep in ("pyarrow", "pyarrow.parquet", "confluent_kafka", "orjson", "boto3", "aws_msk_iam_sasl_signer"):
    importlib.import_module(dep)
import sys; assert not any("/.venv/" in p for p in sys.path), sys.path
print("ALL-IMPORTED")
"""


@pytest.fixture(scope="module")
def environment(artifacts, tmp_path_factory) -> Path:
    """The archive unpacked as Spark does (`#environment`) into an empty folder."""
    folder = tmp_path_factory.mktemp("empty") / "environment"
    with tarfile.open(artifacts.job_archive) as tar:
        tar.extractall(folder, filter="tar")
    return folder


def test_archive_runs_the_job_entry_point(environment, tmp_path):
    done = subprocess.run(
        [
            str(environment / "bin" / "python"),
            str(ROOT / "infra" / "job" / "entrypoint.py"),
            "validate",
            "--config",
            str(CONNECTOR),
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env={"PATH": "/usr/bin:/bin", "SINK_MSK_CLUSTER_ARN": CLUSTER_ARN},
    )
    assert done.returncode == 0, done.stderr
    assert "orders-s3-sink" in done.stdout and "flush.size" in done.stdout
    # the shipped file names no brokers: the job's are its cluster's (SINK_MSK_CLUSTER_ARN, as the stack sets it)
    assert f"(from the brokers of MSK cluster {CLUSTER_ARN}, asked for at run time)" in done.stdout


def test_archive_holds_every_module_and_dependency(environment, tmp_path):
    done = subprocess.run(
        [str(environment / "bin" / "python"), "-c", IMPORT_ALL],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env={"PATH": "/usr/bin:/bin"},
    )
    assert done.returncode == 0, done.stderr
    assert "ALL-IMPORTED" in done.stdout


def test_start_job_run_request_runs_the_archive_to_committed_objects(stack, artifacts, unique, tmp_path):
    # given records on the broker and the connector's config published where the admin publishes it
    topic, name = f"deployed-{unique}", f"deployed-{unique}"
    create_topic(stack.bootstrap_servers, topic, PARTITIONS)
    produce_events(stack.bootstrap_servers, topic, RECORDS, PARTITIONS)
    document = {
        "name": name,
        "config": {
            "topics": topic,
            "bootstrap.servers": stack.bootstrap_servers,
            "s3.bucket.name": BUCKET,
            "s3.region": REGION,
            "flush.size": 50,
            "format.class": "io.confluent.connect.s3.format.json.JsonFormat",
            "value.converter": "org.apache.kafka.connect.json.JsonConverter",
            "value.converter.schemas.enable": "false",
            "offset.storage.dynamodb.table": TABLE,
            "tasks.max": 2,
        },
    }
    s3 = boto3.client("s3")
    s3.put_object(Bucket=BUCKET, Key=f"_connectors/{name}.json", Body=json.dumps(document).encode())
    # and the job's artifacts in an asset bucket as CDK publishes them
    assets = f"cdk-assets-{unique}"
    s3.create_bucket(Bucket=assets)
    archive_uri = upload_asset(s3, assets, artifacts.job_archive)
    entry_uri = upload_asset(s3, assets, ROOT / "infra" / "job" / "entrypoint.py")
    # when the request the trigger sends is started on EMR Serverless and read back
    emr = boto3.client("emr-serverless")
    application = emr.create_application(name=f"sink-{unique}", releaseLabel="emr-7.12.0", type="SPARK")
    started = emr.start_job_run(
        applicationId=application["applicationId"],
        clientToken=unique,
        name=f"{name}-1",
        executionRoleArn="arn:aws:iam::123456789012:role/sink-job",
        jobDriver={
            "sparkSubmit": {
                "entryPoint": entry_uri,
                "entryPointArguments": ["run", "--config", f"s3://{BUCKET}/_connectors/{name}.json"],
                "sparkSubmitParameters": sink_job_parameters(archive_uri, REGION, CLUSTER_ARN),
            }
        },
    )
    job_run = emr.get_job_run(applicationId=application["applicationId"], jobRunId=started["jobRunId"])["jobRun"]
    done = run_job_run(job_run, s3, tmp_path, stack.env)
    # then the run succeeded, every record landed once and the offsets are committed
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-4000:]
    assert sorted(r["event_id"] for r in landed_records(s3, topic)) == list(range(RECORDS))
    assert committed_offsets(boto3.client("dynamodb"), parse_config(document)) == {
        p: RECORDS // PARTITIONS for p in range(PARTITIONS)
    }
