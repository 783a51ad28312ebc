"""A continuous IcebergFormat connector under enforced IAM: dev synthesized with an Iceberg connector (Glue tables,
moto's Glue) opted into continuous runs (`continuous.connectors.<name>`), and `sink-engine run --continuous` run as
its job role (the driver in this process, its tasks in the session's Spark workers) while records are produced
steadily; once the table has two snapshots of the connector and every record is committed, the run gets SIGTERM
(what EMR Serverless' CancelJobRun with a grace period sends) and exits 0. Every record is then in the table once,
at its partition and offset, and the staged manifests are gone: the driver deleted them with the role's one delete
grant (`s3:DeleteObject` on `<table location>/metadata/sink-engine-stage-*`), which moto checks against the object's
ARN; the role deletes no other object of the table. The run's recorded AWS calls (the tasks' STAGE# puts and the
driver's Query of them included) are granted by the role's documents with their conditions
(`dynamodb:LeadingKeys`); without the delete grant a run still commits, and the spent files stay, each logged
(STAGE_FILE_KEPT) with S3's AccessDenied of DeleteObject.

The run is in-process, as tests/iam runs the engine: SIGTERM is sent to this process, whose handler is the CLI's
while the run runs (and pytest's again after it)."""

from __future__ import annotations

import json
import logging
import os
import signal
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass

import pytest

from devtools.producer import SteadyProducer, create_topic, produce
from infra.settings import ENVIRONMENTS_DIR, parse_settings
from sink_engine.target.iceberg_tables.settings import STAGED_FILES
from sink_engine.target.iceberg_tables.snapshots import CONNECTOR as SNAPSHOT_CONNECTOR
from tests.iam.acting import acting_as
from tests.iam.actions import needs
from tests.iam.deployment import ENV, iceberg_connector_document, synthesize
from tests.iam.engine import CliResult, run_cli
from tests.iam.evaluate import allows
from tests.iam.policies import without_action
from tests.iam.recorder import CallLog
from tests.iam.tables import IcebergDeployment, admin_catalog, iceberg_deployment
from tests.iam.world import IamWorld, Principal

NAME, DATABASE, TOPIC = "orders-iceberg-live", "lake_live", "live"
PARTITIONS = 2
INTERVAL_MS, LEASE_MS = 2000, 10_000  # a snapshot every 2 s; a stop within 5 s
TABLE = f"{DATABASE}.{TOPIC}"
KEPT = "STAGE_FILE_KEPT"


def _settings():
    """dev's settings with the topic TOPIC and the connector continuous."""
    document = json.loads((ENVIRONMENTS_DIR / f"{ENV}.json").read_text())
    document["msk"]["topics"].append(TOPIC)
    document["continuous"] = {"connectors": {NAME: {"freshness_alarm_seconds": 60}}}
    return parse_settings(ENV, document, f"{ENV}.json")


def _document(bootstrap: str) -> dict:
    """tests/iam's Iceberg connector under its own name, reading TOPIC into TABLE, its rows with their Kafka
    metadata, a snapshot every INTERVAL_MS."""
    document = iceberg_connector_document(bootstrap)
    return {
        "name": NAME,
        "config": {
            **document["config"],
            "topics": TOPIC,
            "iceberg.tables": f"{DATABASE}.${{topic}}",
            "iceberg.tables.kafka-metadata-enabled": "true",
            "iceberg.control.commit.interval-ms": str(INTERVAL_MS),
            "sink.lease.duration.ms": str(LEASE_MS),
            "errors.deadletterqueue.s3.prefix": f"dlq/{NAME}",
        },
    }


@dataclass(frozen=True)
class LiveRun:
    run: CliResult
    produced: dict[int, list[int]]  # partition -> ids in offset order
    rows: list[tuple[int, int, int]]  # (partition, offset, id) of every row of the table
    snapshots: int  # the connector's snapshots of the table
    staged: list[str]  # keys of staged files left under the table's metadata
    kept: list[str]  # the STAGE_FILE_KEPT events the driver logged
    waited: str | None  # what the run was stopped without (None: it caught up)


class _Events(logging.Handler):
    def __init__(self):
        super().__init__(logging.WARNING)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


def _committed(world: IamWorld, table: str) -> dict[int, int]:
    items = world.admin.client("dynamodb").query(
        TableName=table,
        KeyConditionExpression="pk = :pk AND begins_with(sk, :o)",
        ExpressionAttributeValues={":pk": {"S": NAME}, ":o": {"S": f"OFFSET#{TOPIC}#"}},
    )["Items"]
    return {int(i["partition"]["N"]): int(i["next_offset"]["N"]) for i in items}


def _snapshots(world: IamWorld) -> int:
    catalog = admin_catalog(world)
    if not catalog.table_exists(TABLE):
        return 0
    return sum(1 for s in catalog.load_table(TABLE).metadata.snapshots if s.summary.get(SNAPSHOT_CONNECTOR) == NAME)


def _staged(world: IamWorld, bucket: str) -> list[str]:
    prefix = f"iceberg/{DATABASE}/{TOPIC}/{STAGED_FILES}"
    return [
        o["Key"] for o in world.admin.client("s3").list_objects_v2(Bucket=bucket, Prefix=prefix).get("Contents", [])
    ]


def _stop_when(ready, running: threading.Event, timeout_s: float, waited: list) -> None:
    """The watcher: once `ready()` (or after `timeout_s`, noting it in `waited`), SIGTERM this process while the run
    runs (its handler is the CLI's by then: the run had committed)."""
    deadline = time.monotonic() + timeout_s
    while running.is_set() and not ready():
        if time.monotonic() > deadline:
            waited.append(f"not ready within {timeout_s:g}s")
            break
        time.sleep(0.5)
    if running.is_set():
        os.kill(os.getpid(), signal.SIGTERM)


def _run_live(
    deployment: IcebergDeployment,
    principal: Principal,
    world: IamWorld,
    spark,
    log: CallLog | None,
    produce_records,
    ready,
    timeout_s: float,
) -> tuple[CliResult, list[str], list[str]]:
    """`run --continuous` as `principal` while `produce_records()` runs (a context manager), stopped by SIGTERM once
    `ready()`; (the run, the driver's STAGE_FILE_KEPT events, what it was stopped without)."""
    handlers = {number: signal.getsignal(number) for number in (signal.SIGTERM, signal.SIGINT)}
    events, running, waited = _Events(), threading.Event(), []
    logging.getLogger("sink_engine").addHandler(events)
    try:
        with produce_records():
            running.set()
            watcher = threading.Thread(target=_stop_when, args=(ready, running, timeout_s, waited), daemon=True)
            watcher.start()
            with acting_as(principal, log, spark):
                run = run_cli("run", "--continuous", "--config", deployment.config_uri)
            running.clear()
            watcher.join(5)
    finally:
        logging.getLogger("sink_engine").removeHandler(events)
        for number, handler in handlers.items():
            signal.signal(number, handler)
    return run, [m for m in events.messages if KEPT in m], waited


@pytest.fixture(scope="module")
def live(iam_stack, world, deployed, tmp_path_factory):
    """The connector deployed (tests/iam/tables.py) with its topic, and the module's call log."""
    create_topic(iam_stack.bootstrap_servers, TOPIC, PARTITIONS)
    synthesized = synthesize(_document(iam_stack.bootstrap_servers), tmp_path_factory.mktemp("iam-live"), _settings())
    with iceberg_deployment(world, synthesized) as deployment:
        yield deployment, CallLog(tmp_path_factory.mktemp("live-calls") / "calls.jsonl")


@pytest.fixture(scope="module")
def live_run(live, iam_stack, world, spark) -> LiveRun:
    """Records produced steadily while the run runs as the job role; SIGTERM once the table has two snapshots of the
    connector and every record produced is committed."""
    deployment, log = live
    settings = deployment.deployed.synthesized.settings
    producer = SteadyProducer(iam_stack.bootstrap_servers, TOPIC, list(range(PARTITIONS)), 100)

    def ready() -> bool:
        if _snapshots(world) < 2:
            return False
        if not producer.done.is_set():
            producer.stop()
        return _committed(world, settings.table_name) == {p: len(ids) for p, ids in producer.produced.items()}

    run, kept, waited = _run_live(deployment, deployment.principal, world, spark, log, lambda: producer, ready, 180)
    rows = (
        admin_catalog(world)
        .load_table(TABLE)
        .scan()
        .to_arrow()
        .select(["_kafka_metadata_partition", "_kafka_metadata_offset", "id"])
        .to_pylist()
    )
    return LiveRun(
        run,
        dict(producer.produced),
        [tuple(r.values()) for r in rows],
        _snapshots(world),
        _staged(world, settings.bucket_name),
        kept,
        waited[0] if waited else None,
    )


def test_a_continuous_run_as_its_job_role_lands_every_record_once_and_stops_on_sigterm(live_run):
    assert live_run.waited is None, live_run.run.err[-3000:]
    # SIGTERM: the tasks stage what they closed, the driver commits it, releases the lease: exit 0
    assert live_run.run.code == 0, live_run.run.err[-3000:]
    assert "continuous run stopped" in live_run.run.out
    assert live_run.snapshots >= 2
    # every record produced is in the table once, at its partition and offset
    expected = sorted((p, offset, n) for p, ids in live_run.produced.items() for offset, n in enumerate(ids))
    assert sorted(live_run.rows) == expected
    assert all(len(ids) > 0 for ids in live_run.produced.values())


def test_the_driver_deleted_every_spent_staged_file_with_the_roles_scoped_grant(live_run):
    assert live_run.run.code == 0, live_run.run.err[-3000:]
    assert live_run.staged == [] and live_run.kept == []


def test_the_role_deletes_no_other_object_of_its_table(live_run, live, world):
    deployment, _ = live
    s3 = world.admin.client("s3")
    bucket = deployment.deployed.synthesized.settings.bucket_name
    keys = [o["Key"] for o in s3.list_objects_v2(Bucket=bucket, Prefix=f"iceberg/{DATABASE}/{TOPIC}/")["Contents"]]
    data, metadata = ([k for k in keys if f"/{part}/" in k] for part in ("data", "metadata"))
    assert data and metadata
    mine = deployment.principal.credentials.client("s3")
    for key in (data[0], metadata[0]):
        with pytest.raises(mine.exceptions.ClientError, match="AccessDenied"):
            mine.delete_object(Bucket=bucket, Key=key)
    # a key under the staged files' prefix is the role's to delete (and there is none left: nothing happens)
    mine.delete_object(Bucket=bucket, Key=f"iceberg/{DATABASE}/{TOPIC}/{STAGED_FILES}none.avro")
    assert s3.head_object(Bucket=bucket, Key=data[0]) and s3.head_object(Bucket=bucket, Key=metadata[0])


def test_every_recorded_call_of_the_run_is_granted_by_the_role_with_its_conditions(live_run, live):
    deployment, log = live
    calls = [c for c in log.calls() if c.principal == deployment.principal.name]
    found = [n for c in calls if c.service in ("dynamodb", "glue", "s3") for n in needs(c, deployment.deployed.facts())]
    # the tasks staged (the transaction's conditional put and lease check) and the driver read the stages back
    stage_puts = [
        n for n in found if n.call.operation == "TransactWriteItems" and "STAGE#" in json.dumps(n.call.params)
    ]
    stage_reads = [n for n in found if n.call.operation == "Query" and "STAGE#" in json.dumps(n.call.params)]
    assert stage_puts and stage_reads
    assert sorted({str(n) for n in found if not allows(deployment.principal.documents, n)}) == []


def test_without_its_delete_grant_a_run_commits_and_leaves_the_spent_files_naming_the_denied_delete(
    live_run, live, iam_stack, world, spark
):
    # given the role without s3:DeleteObject, and new records after what the first run committed
    deployment, _ = live
    settings = deployment.deployed.synthesized.settings
    principal = world.role(
        "live-job-without-s3-DeleteObject", without_action(list(deployment.principal.documents), "s3:DeleteObject")
    )
    before = _committed(world, settings.table_name)
    extra = 50

    @contextmanager
    def records():
        produce(iam_stack.bootstrap_servers, TOPIC, [b'{"id": -1}'] * extra * PARTITIONS, PARTITIONS)
        yield

    def ready() -> bool:
        return _committed(world, settings.table_name) == {p: n + extra for p, n in before.items()}

    # when the connector runs continuously as that role until it committed them, and is stopped
    run, kept, waited = _run_live(deployment, principal, world, spark, None, records, ready, 120)
    # then it committed and stopped as before, and each spent staged file it could not delete stays, logged with
    # S3's denial of DeleteObject
    assert waited == [] and run.code == 0, run.err[-3000:]
    staged = _staged(world, settings.bucket_name)
    assert staged and kept, run.err[-3000:]
    assert all("DeleteObject" in m and "ACCESS_DENIED" in m for m in kept), kept
    assert {json.loads(m)["path"].split("/", 3)[3] for m in kept} == set(staged)
