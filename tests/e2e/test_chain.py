"""The deployed chain, end to end, under enforced IAM and from the packaged artifacts: records produced to the
broker -> the MSK event Lambda's event source would deliver for them -> the packaged trigger (trigger role) ->
StartJobRun -> the job run from exactly that request with spark-submit and the packaged archive (the connector's
job role) -> objects in S3 and offsets in DynamoDB -> `status`; then the run's dead letters replayed by the
packaged replay Lambda (replay role), each once; a retried MSK batch starts no second job and duplicates
nothing; and a restore of the run's objects asked of the packaged trigger (`{"action": "restore", ...}`) runs from
exactly the StartJobRun it sent, as the job role, and puts each backed-up record into the target topic once.
`make e2e` runs this file alone.

Stand-ins, each written down in docs/aws-fidelity.md: moto's server for AWS (its EMR Serverless runs go straight
to SUCCESS; the test runs the request itself), Apache Kafka's broker for MSK (one node, plaintext, no IAM auth),
this machine's
archive and Lambda packages under the keys and layouts of the deployed ones, and a job run read back through
moto's own state API (which authorizes nothing).
"""

from __future__ import annotations

import json
import shlex
import subprocess
from pathlib import Path

import pytest
from confluent_kafka import Producer

from devtools.producer import create_topic
from infra.constructs.admin import RESOURCE_TYPE
from tests.cloudformation import custom_resource_event
from tests.connector_index import read_index
from tests.deployed.emr_runner import run_job_run
from tests.deployed.lambda_runner import invoke
from tests.dlq_corpus import read_topic
from tests.e2e.msk_events import msk_event, read_records
from tests.iam.deployment import TEST_SETTINGS
from tests.iam.engine import PARTITIONS
from tests.iam.functions import HANDLERS
from tests.iam.template import custom_resource_property
from tests.spark_cluster import task_ends

FLUSH = int(TEST_SETTINGS["flush.size"])
RESTORE_TARGET = "orders.restored"  # within the dev settings' restore.connectors.orders-s3-sink.target_topics
BAD_VALUES = (b"{not json", b"[1, 2")  # dead-lettered by the JsonConverter, on orders partition 1


def _asset(uri: str) -> tuple[str, str]:
    bucket, _, key = uri.removeprefix("s3://").partition("/")
    return bucket, key.split("#")[0]


def _job_runs(world) -> list[dict]:
    return world.models("emrserverless").get("JobRun", [])


def _as_get_job_run(run: dict) -> dict:
    """A job run as moto stores it, in the shape of `get_job_run(...)["jobRun"]`."""
    return {
        "jobDriver": run["job_driver"],
        "configurationOverrides": run.get("configuration_overrides") or {},
        "executionRoleArn": run["execution_role_arn"],
    }


@pytest.fixture(scope="module")
def chain(iam_stack, world, deployed, principals, artifacts, cloudformation, spark_cluster, tmp_path_factory) -> dict:
    admin, connector = world.admin, deployed.synthesized.connector
    creds = {name: principal.credentials.env for name, principal in principals.items()}
    # deploy: the admin's Create (packaged, its role) publishes the connector config
    url, responses = cloudformation
    state = deployed.in_moto(
        custom_resource_property(
            deployed.synthesized.templates["service"], RESOURCE_TYPE, "State", deployed.physical["service"]
        )
    )
    create = custom_resource_event("Create", url, {"ServiceToken": "arn", "State": state}, RESOURCE_TYPE, "e2e-create")
    invoke(artifacts.lambda_layout("admin"), create, deployed.environment(HANDLERS["admin"]), creds["admin"])
    assert responses[-1]["Status"] == "SUCCESS", responses[-1]
    # and the job's artifacts where CDK publishes them (the asset bucket, under the template's keys)
    trigger_env = deployed.environment(HANDLERS["trigger"])
    parameters = dict(arg.split("=", 1) for arg in shlex.split(trigger_env["SPARK_PARAMETERS"]) if "=" in arg)
    s3 = admin.client("s3")
    for uri, path in (
        (parameters["spark.archives"], artifacts.job_archive),
        (trigger_env["ENTRY_POINT"], deployed_entry_point()),
    ):
        bucket, key = _asset(uri)
        if bucket not in [b["Name"] for b in s3.list_buckets()["Buckets"]]:
            s3.create_bucket(Bucket=bucket, CreateBucketConfiguration={"LocationConstraint": world.region})
        # one PutObject: moto's state API (read below) fails once its store holds a multipart-uploaded object
        s3.put_object(Bucket=bucket, Key=key, Body=path.read_bytes())
    # records: a file's worth on orders-0, two bad ones on orders-1
    bootstrap = iam_stack.bootstrap_servers
    for topic, partitions in PARTITIONS.items():
        create_topic(bootstrap, topic, partitions)
    _produce(bootstrap, "orders", {0: [json.dumps({"n": n}).encode() for n in range(FLUSH)], 1: list(BAD_VALUES)})
    # the event source's batches (at most trigger.batch_size records each): orders-0, then orders-1
    records = read_records(bootstrap, "orders", PARTITIONS["orders"])
    batch_size = deployed.synthesized.settings.trigger.batch_size
    first = msk_event(
        [r for r in records if r.partition() == 0][:batch_size],
        deployed.synthesized.settings.msk.cluster_arn,
        bootstrap,
    )
    second = msk_event(
        [r for r in records if r.partition() == 1], deployed.synthesized.settings.msk.cluster_arn, bootstrap
    )
    trigger = artifacts.lambda_layout("trigger")
    started = invoke(trigger, first, trigger_env, creds["trigger"])
    runs = _job_runs(world)
    # the job, from exactly the request the trigger sent, as the job role
    workdir, event_log = tmp_path_factory.mktemp("emr-driver"), tmp_path_factory.mktemp("emr-events")
    job = run_job_run(
        _as_get_job_run(runs[0]),
        principals["job"].credentials.client("s3"),
        workdir,
        creds["job"],
        master=spark_cluster.master_url,
        event_log_dir=event_log,
    )
    (entry,) = read_index(trigger_env["CONNECTORS_URI"], s3)  # the connector index the admin's Create published
    config_uri = entry["config_uri"]
    entry_point = workdir / Path(runs[0]["job_driver"]["sparkSubmit"]["entryPoint"]).name  # as EMR fetched it
    status = subprocess.run(
        [str(workdir / "environment" / "bin" / "python"), str(entry_point), "status", "--config", config_uri],
        cwd=workdir,
        capture_output=True,
        text=True,
        env={"PATH": "/usr/bin:/bin", **creds["job"]},
        timeout=120,
    )
    landed_after_run = _landed(admin, deployed)
    # later batches, and the first one again (the event source retries it): no run can close a file
    after = [
        invoke(trigger, second, trigger_env, creds["trigger"]),
        invoke(trigger, first, trigger_env, creds["trigger"]),
    ]
    replay = artifacts.lambda_layout("dlq_replay")
    replay_env = deployed.environment(HANDLERS["replay"])
    replays = [invoke(replay, {"connector": connector}, replay_env, creds["replay"], timeout_s=300) for _ in range(2)]
    return {
        "started": started,
        "runs": runs,
        "job": job,
        "tasks": task_ends(event_log),
        "status": status,
        "landed": landed_after_run,
        "cluster": spark_cluster,
        "after": after,
        "runs_after": _job_runs(world),
        "landed_after": _landed(admin, deployed),
        "replays": replays,
        "bootstrap": bootstrap,
        "principals": principals,
    }


@pytest.fixture(scope="module")
def restored(chain, world, deployed, principals, artifacts, spark_cluster, tmp_path_factory) -> dict:
    """After the run: a restore of its `orders` objects asked of the packaged trigger (trigger role), and the job
    run from exactly the StartJobRun it sent (the job role); the target topic read back."""
    bootstrap, creds = chain["bootstrap"], {name: p.credentials.env for name, p in principals.items()}
    create_topic(bootstrap, RESTORE_TARGET, PARTITIONS["orders"])
    event = {
        "action": "restore",
        "connector": deployed.synthesized.connector,
        "topic": "orders",
        "target_topic": RESTORE_TARGET,
    }
    answer = invoke(
        artifacts.lambda_layout("trigger"), event, deployed.environment(HANDLERS["trigger"]), creds["trigger"]
    )["restore"]
    (run,) = [r for r in _job_runs(world) if r["id"] == answer["job_run_id"]]
    job = run_job_run(
        _as_get_job_run(run),
        principals["job"].credentials.client("s3"),
        tmp_path_factory.mktemp("emr-restore"),
        creds["job"],
        master=spark_cluster.master_url,
    )
    return {"run": run, "job": job, "target": read_topic(bootstrap, RESTORE_TARGET)}


def _produce(bootstrap: str, topic: str, by_partition: dict[int, list[bytes]]) -> None:
    producer = Producer({"bootstrap.servers": bootstrap})
    for partition, values in by_partition.items():
        for value in values:
            producer.produce(topic, value=value, partition=partition)
    assert producer.flush(30) == 0


def _landed(admin, deployed) -> dict:
    """Data objects (key -> records), dead-letter objects (key -> lines) and committed offsets, read as the admin."""
    settings, synthesized = deployed.synthesized.settings, deployed.synthesized
    s3, bucket = admin.client("s3"), settings.bucket_name

    def lines(prefix):
        keys = [o["Key"] for o in s3.list_objects_v2(Bucket=bucket, Prefix=prefix).get("Contents", [])]
        return {k: s3.get_object(Bucket=bucket, Key=k)["Body"].read().splitlines() for k in keys}

    items = admin.client("dynamodb").query(
        TableName=settings.table_name,
        KeyConditionExpression="pk = :pk AND begins_with(sk, :o)",
        ExpressionAttributeValues={":pk": {"S": synthesized.connector}, ":o": {"S": "OFFSET#"}},
    )["Items"]
    return {
        "objects": lines("topics/"),
        "dead_letters": lines(synthesized.dead_letter_prefix),
        "offsets": {i["sk"]["S"]: int(i["next_offset"]["N"]) for i in items},
    }


def deployed_entry_point():
    from infra.packaging import ROOT

    return ROOT / "infra" / "job" / "entrypoint.py"


def test_an_msk_batch_with_a_file_to_close_starts_one_run_with_the_connectors_role(chain):
    (decision,) = chain["started"]["decisions"]
    assert decision["action"] == "started", decision
    (run,) = chain["runs"]
    assert run["execution_role_arn"] == chain["principals"]["job"].arn


def test_the_run_from_that_request_lands_every_record_once_and_commits(chain):
    assert chain["job"].returncode == 0, chain["job"].stderr[-4000:]
    landed = chain["landed"]
    records = [json.loads(line)["n"] for lines in landed["objects"].values() for line in lines]
    assert sorted(records) == list(range(FLUSH))
    assert landed["offsets"] == {"OFFSET#orders#0": FLUSH, "OFFSET#orders#1": len(BAD_VALUES), "OFFSET#payments#0": 0}
    letters = [json.loads(line) for lines in landed["dead_letters"].values() for line in lines]
    assert sorted((d["partition"], d["offset"]) for d in letters) == [(1, 0), (1, 1)]


def test_the_runs_tasks_ran_on_the_workers_executors_from_the_archive_they_unpacked(chain):
    # Spark's event log: every task of the run on one of the standalone workers' executors, none in the driver
    tasks = chain["tasks"]
    assert tasks and all(t.succeeded and t.executor != "driver" for t in tasks), tasks
    # each executor ran the archive's interpreter from its own working directory, where Spark unpacked the archive
    unpacked = [d for worker in chain["cluster"].worker_dirs() for d in worker.glob("app-*/*/environment/bin/python")]
    assert unpacked, "no executor unpacked the job archive"
    assert "tasks ran on executors" in chain["job"].stdout, chain["job"].stdout[-2000:]


def test_status_from_the_archive_shows_no_lag(chain):
    assert chain["status"].returncode == 0, chain["status"].stderr
    rows = [line.split() for line in chain["status"].stdout.splitlines()[1:]]
    assert {row[0]: int(row[3]) for row in rows} == {"orders-0": 0, "orders-1": 0, "payments-0": 0}


def test_a_retried_or_later_batch_starts_no_second_job_and_duplicates_nothing(chain):
    for answer in chain["after"]:
        assert all(d["action"] != "started" for d in answer["decisions"]), answer
    assert len(chain["runs_after"]) == 1
    assert chain["landed_after"]["objects"] == chain["landed"]["objects"]


def test_the_replay_lambda_replays_each_dead_letter_once(chain):
    first, again = chain["replays"]
    assert first["totals"]["replayed"] == len(BAD_VALUES), first
    assert again["totals"]["replayed"] == 0 and again["totals"]["already_replayed"] == len(BAD_VALUES), again
    values = [r["value"] for r in read_topic(chain["bootstrap"], "orders") if r["partition"] == 1]
    assert values == list(BAD_VALUES) * 2  # the originals, then each replayed once


def test_a_restore_through_the_trigger_puts_each_backed_up_record_into_the_target_once(restored, chain):
    assert restored["run"]["execution_role_arn"] == chain["principals"]["job"].arn
    assert restored["run"]["job_driver"]["sparkSubmit"]["entryPointArguments"][:1] == ["restore"]
    assert restored["job"].returncode == 0, restored["job"].stderr[-4000:]
    # orders-0's file, partition for partition, each record with its origin; orders-1 held only dead letters
    assert sorted(json.loads(r["value"])["n"] for r in restored["target"]) == list(range(FLUSH))
    assert {r["partition"] for r in restored["target"]} == {0}
    assert all(any(name == "sink.restore.origin" for name, _ in r["headers"]) for r in restored["target"])
