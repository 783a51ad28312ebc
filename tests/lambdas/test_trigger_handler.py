"""The trigger: MSK batches and idle-flush ticks start at most one run per connector, and retries are safe."""
from __future__ import annotations

import json
import time

import boto3
import pytest
from tests.lambdas.conftest import msk_event

from lambdas.trigger import handler as trigger
from lambdas.trigger.runs import client_token

CONNECTOR = "orders-s3-sink"


@pytest.fixture
def app_id(table, monkeypatch) -> str:
    emr = boto3.client("emr-serverless")
    application = emr.create_application(name="sink-test", releaseLabel="emr-7.12.0", type="SPARK")["applicationId"]
    for name, value in {
        "TABLE_NAME": table, "APPLICATION_ID": application, "JOB_ROLE_ARN": "arn:aws:iam::123456789012:role/job",
        "ENTRY_POINT": "s3://assets/entrypoint.py", "SPARK_PARAMETERS": "--conf spark.archives=s3://assets/env.tar.gz#environment",
        "JOB_TIMEOUT_MINUTES": "60", "MIN_PENDING_RECORDS": "100", "MAX_PENDING_AGE_MS": "300000",
        "RUN_CLAIM_MS": "900000", "POWERTOOLS_SERVICE_NAME": "sink-trigger",
        "CONNECTORS": json.dumps([{"name": CONNECTOR, "topics": ["orders", "payments"],
                                   "config_uri": "s3://lake/_connectors/orders-s3-sink.json"}]),
    }.items():
        monkeypatch.setenv(name, value)
    trigger._service.cache_clear()
    yield application
    trigger._service.cache_clear()


def _now_ms() -> int:
    return int(time.time() * 1000)


def _records(topic: str, partition: int, start: int, count: int, ts: int | None = None) -> list:
    """Records stamped `ts`, by default the moment of the call (the age thresholds compare with the real clock)."""
    stamp = _now_ms() if ts is None else ts
    return [(topic, partition, offset, stamp) for offset in range(start, start + count)]


def _runs(app_id: str) -> list[dict]:
    emr = boto3.client("emr-serverless")
    try:
        return emr.list_job_runs(applicationId=app_id)["jobRuns"]
    except emr.exceptions.ResourceNotFoundException:  # moto knows an application's runs from its first run on
        return []


def _item(table: str, sk: str) -> dict | None:
    return boto3.client("dynamodb").get_item(TableName=table, Key={"pk": {"S": CONNECTOR}, "sk": {"S": sk}}).get("Item")


def _hold_lease(table: str, epoch: int, expires_at_ms: int) -> None:
    boto3.client("dynamodb").put_item(TableName=table, Item={
        "pk": {"S": CONNECTOR}, "sk": {"S": "LEASE"}, "owner": {"S": "run-1"},
        "epoch": {"N": str(epoch)}, "expires_at_ms": {"N": str(expires_at_ms)}})


def _commit(table: str, topic: str, partition: int, next_offset: int) -> None:
    boto3.client("dynamodb").put_item(TableName=table, Item={
        "pk": {"S": CONNECTOR}, "sk": {"S": f"OFFSET#{topic}#{partition}"}, "topic": {"S": topic},
        "partition": {"N": str(partition)}, "next_offset": {"N": str(next_offset)}, "committed_at_ms": {"N": "0"}})


def _set_run_state(app_id: str, job_run_id: str, state: str) -> None:
    """moto's runs go straight to SUCCESS; set the state a real run has while it starts."""
    from moto.core import DEFAULT_ACCOUNT_ID
    from moto.emrserverless.models import emrserverless_backends

    backend = emrserverless_backends[DEFAULT_ACCOUNT_ID]["eu-west-1"]
    next(r for r in backend.job_runs[app_id] if r.id == job_run_id).state = state


def test_the_aws_sample_event_of_an_unknown_topic_starts_nothing(app_id, context):
    from tests.lambdas.conftest import EVENTS

    sample = json.loads((EVENTS / "msk_event.json").read_text())
    assert trigger.handler(sample, context) == {"decisions": []}
    assert _runs(app_id) == []


def test_a_small_batch_waits_and_is_remembered(app_id, table, context):
    answer = trigger.handler(msk_event(_records("orders", 0, 0, 10)), context)
    (decision,) = answer["decisions"]
    assert (decision["action"], decision["reason"], decision["pending_records"]) == ("skipped", "below-thresholds", 10)
    marker = _item(table, "TRIGGER#orders#0")
    assert marker["next_offset"]["N"] == "10" and marker["oldest_offset"]["N"] == "0"
    assert _runs(app_id) == []


def test_enough_pending_records_start_one_run_with_a_deterministic_token(app_id, table, context):
    trigger.handler(msk_event(_records("orders", 0, 0, 60)), context)
    answer = trigger.handler(msk_event(_records("orders", 1, 0, 50)), context)
    (decision,) = answer["decisions"]
    assert (decision["action"], decision["reason"], decision["pending_records"]) == ("started", "records", 110)
    (run,) = _runs(app_id)
    assert run["name"] == f"{CONNECTOR}-1"
    claim = _item(table, "RUN")
    assert claim["attempt"]["N"] == "1" and claim["job_run_id"]["S"] == decision["job_run_id"]
    details = boto3.client("emr-serverless").get_job_run(applicationId=app_id, jobRunId=run["id"])["jobRun"]
    assert details["jobDriver"]["sparkSubmit"]["entryPointArguments"] == [
        "run", "--config", "s3://lake/_connectors/orders-s3-sink.json"]
    assert client_token(CONNECTOR, 1) == client_token(CONNECTOR, 1) != client_token(CONNECTOR, 2)


def test_a_retried_batch_while_the_run_starts_starts_nothing_more(app_id, context):
    event = msk_event(_records("payments", 0, 0, 200))
    first = trigger.handler(event, context)["decisions"][0]
    _set_run_state(app_id, first["job_run_id"], "PENDING")
    again = trigger.handler(event, context)["decisions"][0]
    assert (again["action"], again["reason"], again["job_run_id"]) == ("skipped", "run-starting", first["job_run_id"])
    assert len(_runs(app_id)) == 1


def test_a_held_lease_means_a_run_is_in_progress(app_id, table, context):
    _hold_lease(table, epoch=3, expires_at_ms=_now_ms() + 60_000)  # held from now on
    (decision,) = trigger.handler(msk_event(_records("orders", 0, 0, 500)), context)["decisions"]
    assert (decision["action"], decision["reason"]) == ("skipped", "lease-held")
    assert _runs(app_id) == []


def test_a_claim_whose_run_took_and_released_the_lease_is_spent(app_id, table, context):
    trigger.handler(msk_event(_records("orders", 0, 0, 200)), context)
    _hold_lease(table, epoch=1, expires_at_ms=0)  # the run took the lease (epoch 0 -> 1) and released it
    _commit(table, "orders", 0, 150)
    (decision,) = trigger.handler(msk_event(_records("orders", 0, 200, 60)), context)["decisions"]
    assert (decision["action"], decision["pending_records"]) == ("started", 110)
    assert _item(table, "RUN")["attempt"]["N"] == "2"
    assert len(_runs(app_id)) == 2


def test_a_claim_left_without_a_run_is_resumed_with_the_same_token(app_id, table, context):
    boto3.client("dynamodb").put_item(TableName=table, Item={
        "pk": {"S": CONNECTOR}, "sk": {"S": "RUN"}, "attempt": {"N": "7"}, "lease_epoch": {"N": "0"},
        "expires_at_ms": {"N": str(_now_ms() + 600_000)}})
    (decision,) = trigger.handler(msk_event(_records("orders", 0, 0, 300)), context)["decisions"]
    assert decision["action"] == "resumed"
    (run,) = _runs(app_id)
    assert run["name"] == f"{CONNECTOR}-7"


def test_committed_offsets_clear_the_backlog(app_id, table, context):
    trigger.handler(msk_event(_records("orders", 0, 0, 50)), context)
    _commit(table, "orders", 0, 50)
    (decision,) = trigger.handler({"action": "idle-flush"}, context)["decisions"]
    assert (decision["action"], decision["pending_records"]) == ("skipped", 0)


def test_idle_flush_starts_a_run_for_old_pending_records(app_id, context):
    old = _now_ms() - 600_000
    trigger.handler(msk_event(_records("orders", 0, 0, 5, ts=old)), context)
    (decision,) = trigger.handler({"action": "idle-flush"}, context)["decisions"]
    assert (decision["action"], decision["reason"], decision["pending_records"]) == ("started", "age", 5)
