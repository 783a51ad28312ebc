"""The deployed chain for a continuous connector, end to end, under enforced IAM and from the packaged artifacts:
records produced to the broker -> the MSK event Lambda's event source would deliver for them -> the packaged trigger
(trigger role) -> StartJobRun of an EMR Serverless STREAMING job run -> the job run from exactly that request with
spark-submit and the packaged archive (the connector's job role) on a standalone Spark cluster -> objects in S3 and
offsets in DynamoDB as files close on the 5 s schedule, while the same batch delivered again and the idle-flush tick
start no second run; then the driver's JVM alone is sent SIGTERM (EMR Serverless' CancelJobRun with a grace period
runs the job's JVM shutdown hooks: docs/aws-fidelity.md), and through the engine's hook the job commits, releases its
lease and ends, every process of it within the lease.

The deployment is dev's with the test connector opted in (`continuous.connectors.<name>`; tests/iam/streaming.py),
in a world of its own: a broker and an IAM-enforcing moto whose EMR Serverless keeps a run RUNNING until cancelled
and keeps StartJobRun's `mode` and `retryPolicy` (tests/iam/emr_lifecycle.py; moto 5.2.5 drops them).
`make e2e` runs it with tests/e2e/test_chain.py.
"""

from __future__ import annotations

import json
import signal
import subprocess
import time

import psutil
import pytest
from confluent_kafka import Producer

from devtools.producer import create_topic
from tests.deployed.emr_runner import start_job_run
from tests.deployed.lambda_runner import invoke
from tests.e2e.msk_events import msk_event, read_records
from tests.iam.engine import PARTITIONS
from tests.iam.functions import HANDLERS
from tests.iam.streaming import LEASE_MS, RETRIES_PER_HOUR, SCHEDULE_MS, streaming_world
from tests.spark_cluster import ENTRY_POINT, spark_submit_jvm

FIRST, SECOND = 300, 200  # records produced before the job starts, and while it runs (orders-0 and orders-1)
LAND_WITHIN_S = 120  # Spark's start on the cluster, then the 5 s schedule


def _invoke(trigger, event, environment, creds) -> dict:
    """The packaged trigger, its GetJobRun and ListJobRuns (GETs) signed as an IAM-enforcing moto needs."""
    return invoke(trigger, event, environment, creds, sign_payload_hash=True)


def _asset(uri: str) -> tuple[str, str]:
    bucket, _, key = uri.removeprefix("s3://").partition("/")
    return bucket, key.split("#")[0]


def _as_get_job_run(run: dict) -> dict:
    return {
        "jobDriver": run["job_driver"],
        "configurationOverrides": run.get("configuration_overrides") or {},
        "executionRoleArn": run["execution_role_arn"],
    }


def _produce(bootstrap: str, start: int, count: int) -> None:
    producer = Producer({"bootstrap.servers": bootstrap})
    for n in range(start, start + count):
        producer.produce("orders", value=json.dumps({"n": n}).encode(), partition=n % 2)
    assert producer.flush(30) == 0


def _landed(here) -> list[int]:
    settings = here.deployed.synthesized.settings
    s3 = here.world.admin.client("s3")
    keys = [
        o["Key"]
        for page in s3.get_paginator("list_objects_v2").paginate(Bucket=settings.bucket_name, Prefix="topics/")
        for o in page.get("Contents", [])
    ]
    return sorted(
        json.loads(line)["n"]
        for k in keys
        for line in s3.get_object(Bucket=settings.bucket_name, Key=k)["Body"].read().splitlines()
    )


def _wait_for(here, count: int, job: subprocess.Popen) -> list[int]:
    deadline = time.monotonic() + LAND_WITHIN_S
    while time.monotonic() < deadline:
        landed = _landed(here)
        if len(landed) >= count or job.poll() is not None:
            return landed
        time.sleep(1)
    return _landed(here)


def _lease(here) -> dict:
    settings, connector = here.deployed.synthesized.settings, here.deployed.synthesized.connector
    return (
        here.world.admin.client("dynamodb")
        .get_item(TableName=settings.table_name, Key={"pk": {"S": connector}, "sk": {"S": "LEASE"}})
        .get("Item")
        or {}
    )


def _offsets(here) -> dict[str, int]:
    settings, connector = here.deployed.synthesized.settings, here.deployed.synthesized.connector
    items = here.world.admin.client("dynamodb").query(
        TableName=settings.table_name,
        KeyConditionExpression="pk = :pk AND begins_with(sk, :o)",
        ExpressionAttributeValues={":pk": {"S": connector}, ":o": {"S": "OFFSET#"}},
    )["Items"]
    return {i["sk"]["S"]: int(i["next_offset"]["N"]) for i in items}


@pytest.fixture(scope="module")
def chain(artifacts, spark_cluster, tmp_path_factory) -> dict:
    with streaming_world(tmp_path_factory.mktemp("streaming-e2e-synth")) as here:
        creds = {name: p.credentials.env for name, p in here.principals.items()}
        trigger_env = here.deployed.environment(HANDLERS["trigger"])
        # the job's artifacts where CDK publishes them (the asset bucket, under the template's keys)
        s3 = here.world.admin.client("s3")
        archive = next(w.split("=", 1)[1] for w in trigger_env["SPARK_PARAMETERS"].split() if "spark.archives=" in w)
        for uri, path in ((archive, artifacts.job_archive), (trigger_env["ENTRY_POINT"], ENTRY_POINT)):
            bucket, key = _asset(uri)
            if bucket not in [b["Name"] for b in s3.list_buckets()["Buckets"]]:
                s3.create_bucket(Bucket=bucket, CreateBucketConfiguration={"LocationConstraint": here.world.region})
            s3.put_object(Bucket=bucket, Key=key, Body=path.read_bytes())
        bootstrap = here.stack.bootstrap_servers
        for topic, partitions in PARTITIONS.items():
            create_topic(bootstrap, topic, partitions)
        _produce(bootstrap, 0, FIRST)
        cluster_arn = here.deployed.synthesized.settings.msk.cluster_arn
        event = msk_event(read_records(bootstrap, "orders", PARTITIONS["orders"]), cluster_arn, bootstrap)
        trigger = artifacts.lambda_layout("trigger")
        started = _invoke(trigger, event, trigger_env, creds["trigger"])
        (run,) = here.runs()
        workdir = tmp_path_factory.mktemp("emr-streaming-driver")
        job = start_job_run(
            _as_get_job_run(run),
            here.principals["job"].credentials.client("s3"),
            workdir,
            creds["job"],
            master=spark_cluster.master_url,
        )
        try:
            first = _wait_for(here, FIRST, job)
            # while it runs: the batch delivered again, and the tick
            again = [
                _invoke(trigger, event, trigger_env, creds["trigger"]),
                _invoke(trigger, {"action": "idle-flush"}, trigger_env, creds["trigger"]),
            ]
            runs_while_active = here.runs()
            lease_while_running = _lease(here)
            _produce(bootstrap, FIRST, SECOND)
            produced_at = time.monotonic()
            second = _wait_for(here, FIRST + SECOND, job)
            second_s = time.monotonic() - produced_at
            # CancelJobRun with a grace period: the job's driver JVM gets SIGTERM, and runs its shutdown hooks
            jvm = spark_submit_jvm(job)
            tree = [jvm, *jvm.children(recursive=True)]
            signalled = time.monotonic()
            jvm.send_signal(signal.SIGTERM)
            _, alive = psutil.wait_procs(tree, timeout=120)
            ended_s = time.monotonic() - signalled
            out, err = job.communicate(timeout=120)
        finally:
            if job.poll() is None:
                job.kill()
                job.communicate()
        return {
            "started": started,
            "run": run,
            "first": first,
            "again": again,
            "runs": runs_while_active,
            "lease_while_running": lease_while_running,
            "second": second,
            "second_s": second_s,
            "code": job.returncode,
            "stdout": out,
            "stderr": err,
            "lease": _lease(here),
            "alive": [p.pid for p in alive],
            "ended_s": ended_s,
            "offsets": _offsets(here),
            "landed": _landed(here),
            "principals": here.principals,
            "index": here.index,
        }


def test_an_msk_batch_starts_the_connectors_streaming_job_run_with_its_role(chain):
    (decision,) = chain["started"]["decisions"]
    assert (decision["action"], decision["reason"]) == ("started", "continuous"), decision
    run = chain["run"]
    assert (run["mode"], run["retry_policy"], run["requested_timeout_minutes"]) == (
        "STREAMING",
        {"maxFailedAttemptsPerHour": RETRIES_PER_HOUR},
        0,
    )
    assert run["execution_role_arn"] == chain["principals"]["job"].arn
    assert run["job_driver"]["sparkSubmit"]["entryPointArguments"] == [
        "run",
        "--continuous",
        "--config",
        chain["index"][0]["config_uri"],
    ]


def test_while_it_runs_the_same_batch_again_and_the_tick_start_no_second(chain):
    for answer in chain["again"]:
        (decision,) = answer["decisions"]
        assert (decision["action"], decision["reason"]) == ("skipped", "run-active"), decision
    assert [r["id"] for r in chain["runs"]] == [chain["run"]["id"]]
    assert chain["again"][1]["cancelled"] == []


def test_the_job_from_that_request_lands_what_arrives_as_files_close(chain):
    assert chain["first"] == list(range(FIRST)), chain["stderr"][-4000:]
    assert chain["lease_while_running"] and int(chain["lease_while_running"]["expires_at_ms"]["N"]) > 0
    # records produced into the running job land within the schedule and a few seconds (the cluster is shared)
    assert chain["second"] == list(range(FIRST + SECOND)), chain["stderr"][-4000:]
    assert chain["second_s"] < 30 * SCHEDULE_MS / 1000


def test_sigterm_to_the_driver_jvm_commits_releases_the_lease_and_ends_the_job_within_the_lease(chain):
    assert chain["code"] == 0, chain["stderr"][-4000:]
    assert not chain["alive"] and chain["ended_s"] < LEASE_MS / 1000, (chain["alive"], chain["ended_s"])
    assert "continuous run stopped" in chain["stdout"]
    assert chain["landed"] == list(range(FIRST + SECOND))  # each record once
    assert chain["offsets"]["OFFSET#orders#0"] + chain["offsets"]["OFFSET#orders#1"] == FIRST + SECOND
    assert int(chain["lease"]["expires_at_ms"]["N"]) <= int(time.time() * 1000)
